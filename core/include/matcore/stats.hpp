// matcore: the Bayesian upper bound on the mismatch probability (section 5.4 of the paper).
// With a uniform prior and m mismatches in N samples, the posterior of p is Beta(m+1, N-m+1);
// p_upper is its (1 - eps) quantile. For m = 0 it is 1 - eps^(1/(N+1)).
#pragma once
#include <cstdint>

namespace mc {

/// Regularised incomplete beta function I_x(a, b).
double incomplete_beta(double a, double b, double x);
/// The eps-upper bound on the mismatch probability after m mismatches in n samples.
double mismatch_upper_bound(uint64_t n, uint64_t m, double eps = 1e-6);

}  // namespace mc
