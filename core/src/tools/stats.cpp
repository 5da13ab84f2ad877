// Statistics are reported numbers, not model results: host floating point is fine here.
#include "matcore/stats.hpp"

#include <cmath>

namespace mc {

namespace {
// Continued fraction for the incomplete beta (modified Lentz).
double betacf(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-15;
  double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 100000; ++m) {
    const int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < eps) break;
  }
  return h;
}
}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double lbt = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                     b * std::log1p(-x);
  const double bt = std::exp(lbt);
  if (x < (a + 1) / (a + b + 2)) return bt * betacf(a, b, x) / a;
  return 1 - bt * betacf(b, a, 1 - x) / b;
}

double mismatch_upper_bound(uint64_t n, uint64_t m, double eps) {
  if (m == 0) return -std::expm1(std::log(eps) / (static_cast<double>(n) + 1));
  if (m >= n) return 1.0;
  const double a = static_cast<double>(m) + 1, b = static_cast<double>(n - m) + 1;
  double lo = 0, hi = 1;
  for (int it = 0; it < 200; ++it) {  // bisection on the posterior CDF
    const double mid = 0.5 * (lo + hi);
    if (incomplete_beta(a, b, mid) < 1 - eps) lo = mid;
    else hi = mid;
  }
  return hi;
}

}  // namespace mc
