// Benchmark: dot products per second per core for every preset, beside a native binary32 dot
// product of the same length measured in the same run. Prints a Markdown table.
// Usage: bench_dot [seconds-per-preset] [preset filter] [interleaved runs]. Times are the thread's
// CPU time (clock_gettime CLOCK_THREAD_CPUTIME_ID), the best of the interleaved runs.
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cpu_time.hpp"
#include "matcore/fast.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/sample.hpp"

using namespace mc;

namespace {

volatile float g_sink_f;
volatile uint64_t g_sink_u;

double native_rate(int K, double secs) {
  std::mt19937 rng(1);
  const int N = 4096;
  std::vector<float> a(static_cast<size_t>(N) * K), b(a.size()), c(N);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  for (auto& x : c) x = u(rng);
  uint64_t done = 0;
  float acc = 0;
  const double t0 = cpu_now();
  double el = 0;
  do {
    for (int s = 0; s < N; ++s) {
      float d = c[s];
      const float* pa = &a[static_cast<size_t>(s) * K];
      const float* pb = &b[static_cast<size_t>(s) * K];
      for (int k = 0; k < K; ++k) d += pa[k] * pb[k];
      acc += d;
    }
    done += N;
    el = cpu_now() - t0;
  } while (el < secs);
  g_sink_f = acc;
  return static_cast<double>(done) / el;
}

/// fast: FastDot (the kernels every command uses); else the reference stage path dot().
double model_rate(const Datapath& dp, double secs, bool fast) {
  const FastDot fd(dp);
  const SampleSpec s = sample_spec_for(dp);
  const int K = dp.k_default, N = 4096;
  std::mt19937 rng(0);
  std::vector<uint64_t> a(static_cast<size_t>(N) * K), b(a.size()), c(N), d(N);
  auto draw = [&](const Format& f, int lo, int hi) {
    const int e = lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
    const int bits = f.mbits + 1 > 24 ? 53 : 32;
    const uint64_t u = bits == 32 ? rng() : ((static_cast<uint64_t>(rng()) << 21) ^ rng()) & ((uint64_t{1} << 53) - 1);
    const uint64_t x = draw_expmant(f, e, u, bits);
    // a value that rounds past the largest finite (e4m3 at 2^8) is drawn again: the table is
    // about finite inputs (NaN/Inf samples go to the reference, bench_check counts them)
    return decode(f, x).is_finite() ? x : draw_expmant(f, e - 1, u, bits);
  };
  for (auto& x : a) x = draw(s.a_fmt, s.ea_lo, s.ea_hi);
  for (auto& x : b) x = draw(s.b_fmt, s.eb_lo, s.eb_hi);
  for (auto& x : c) x = draw(dp.out_fmt, dp.out_fmt.emin(), dp.out_fmt == kBinary16 ? 15 : 127);
  // block-scaled: every sample's scales, normal patterns of the scale format with exponents
  // within 2^-4 .. 2^4 (E8M0: powers of two, the lane kernels; UE4M3: the reference stages)
  const int per = dp.scaled() ? (K + dp.scale_block - 1) / dp.scale_block : 0;
  std::vector<uint64_t> sa(static_cast<size_t>(N) * per), sb(sa.size());
  for (std::vector<uint64_t>* v : {&sa, &sb})
    for (auto& x : *v)
      x = (static_cast<uint64_t>(dp.scale_fmt.bias + static_cast<int>(rng() % 9) - 4) << dp.scale_fmt.mbits) |
          (rng() & ((uint64_t{1} << dp.scale_fmt.mbits) - 1));
  // formats of at most 32 bits: the operands as 32-bit words (batch's 32-bit form), as the
  // native loop's are binary32
  const bool w32 = fast && !per && dp.a_fmt.width() <= 32 && dp.b_fmt.width() <= 32 && dp.out_fmt.width() <= 32;
  std::vector<uint32_t> a32, b32, c32, d32;
  if (w32) {
    a32.assign(a.begin(), a.end());
    b32.assign(b.begin(), b.end());
    c32.assign(c.begin(), c.end());
    d32.resize(N);
  }
  uint64_t done = 0, acc = 0;
  const double t0 = cpu_now();
  double el = 0;
  do {
    if (w32) {
      fd.batch(a32.data(), b32.data(), c32.data(), d32.data(), N, K);
      for (int i = 0; i < N; ++i) acc ^= d32[i];
    } else if (fast && per) {
      fd.batch(a.data(), b.data(), c.data(), d.data(), N, K, sa.data(), sb.data());
      for (int i = 0; i < N; ++i) acc ^= d[i];
    } else if (fast) {
      fd.batch(a.data(), b.data(), c.data(), d.data(), N, K);
      for (int i = 0; i < N; ++i) acc ^= d[i];
    } else {
      for (int i = 0; i < N; ++i) {
        const size_t o = static_cast<size_t>(i) * K;
        const ScaleRefs r = per ? ScaleRefs{&sa[static_cast<size_t>(i) * per], &sb[static_cast<size_t>(i) * per]} : ScaleRefs{};
        acc ^= dot(dp, &a[o], &b[o], K, c[i], r);
      }
    }
    done += N;
    el = cpu_now() - t0;
  } while (el < secs);
  g_sink_u = acc;
  return static_cast<double>(done) / el;
}

}  // namespace

int main(int argc, char** argv) {
  const double secs = argc > 1 ? std::atof(argv[1]) : 0.54;
  const std::string only = argc > 2 ? argv[2] : "";  // optional: presets whose name contains this
  const int reps = argc > 3 ? std::atoi(argv[3]) : 9;  // interleaved runs; the best counts
  std::printf("| preset | variant | k | kernel | matcore dots/s/core | native binary32 dots/s/core | time ratio | reference stage path dots/s/core | fast / reference |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const Datapath& dp : all_presets()) {
    if (!only.empty() && dp.name().find(only) == std::string::npos) continue;
    // best of `reps` short runs each, interleaved: this machine's speed drifts by up to 3x
    // between runs (neighbours on the host), which the best run filters out
    double m = 0, n = 0, r = 0;
    for (int rep = 0; rep < reps; ++rep) {
      m = std::max(m, model_rate(dp, secs / reps, true));
      n = std::max(n, native_rate(dp.k_default, secs / reps));
    }
    for (int rep = 0; rep < 2; ++rep) r = std::max(r, model_rate(dp, secs / reps, false));
    std::printf("| %s | %s | %d | %s | %.3g | %.3g | %.1fx | %.3g | %.1fx |\n", dp.name().c_str(),
                dp.variant.empty() ? "-" : dp.variant.c_str(), dp.k_default, FastDot(dp).strategy(),
                m, n, n / m, r, m / r);
    std::fflush(stdout);
  }
  return 0;
}
