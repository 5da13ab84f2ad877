// Benchmark: GEMM through the model (mc::gemm, what `matcore gemm`, `mfma`, Python's gemm and
// the applications call) against the lane kernels alone (FastDot::batch on the same number of
// instruction-sized dots), one thread, same run. Prints a Markdown table: the gemm path's rate
// in instruction dots per second and as a fraction of the kernel's (issue 29's goal: >= 0.5).
// Usage: bench_gemm [M=N] [K] [reps]. Times are the thread's CPU time; best of `reps` runs.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "cpu_time.hpp"
#include "matcore/fast.hpp"
#include "matcore/instructions.hpp"
#include "matcore/presets.hpp"
#include "matcore/sample.hpp"

using namespace mc;

namespace {

volatile uint64_t g_sink;

/// A finite value of f with an exponent in [lo, hi] (the preset's sampling ranges).
uint64_t draw(const Format& f, int lo, int hi, std::mt19937& rng) {
  const int e = lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
  const uint64_t x = draw_expmant(f, e, rng(), 32);
  return decode(f, x).is_finite() ? x : draw_expmant(f, e - 1, rng(), 32);
}

Matrix random_matrix(int r, int c, const Format& f, int lo, int hi, std::mt19937& rng) {
  Matrix m{r, c, std::vector<uint64_t>(static_cast<size_t>(r) * c)};
  for (auto& x : m.v) x = draw(f, lo, hi, rng);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const int MN = argc > 1 ? std::atoi(argv[1]) : 256;
  const int K = argc > 2 ? std::atoi(argv[2]) : 1024;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  std::printf("| preset | instruction k | gemm %dx%d by %dx%d s | gemm instruction dots/s/core | kernel dots/s/core | gemm / kernel |\n",
              MN, K, K, MN);
  std::printf("|---|---|---|---|---|---|\n");
  const char* presets[][3] = {{"h100", "fp16", ""},   {"mi300x", "fp16", ""}, {"mi300x", "xf32", ""},
                              {"mi250", "fp16", ""},  {"mi100", "fp16", ""},  {"b200", "e4m3", "tcgen05"},
                              {"mi300x", "fp64", ""}, {"a100", "fp64", ""}};
  for (const auto& p : presets) {
    const Datapath dp = find_preset(p[0], p[1], "", p[2]);
    const SampleSpec s = sample_spec_for(dp);
    std::mt19937 rng(1);
    const Matrix A = random_matrix(MN, K, s.a_fmt, s.ea_lo, s.ea_hi, rng);
    const Matrix B = random_matrix(K, MN, s.b_fmt, s.eb_lo, s.eb_hi, rng);
    const Matrix C = random_matrix(MN, MN, dp.out_fmt, -4, 4, rng);
    const int ik = dp.k_default;
    const double dots = static_cast<double>(MN) * MN * ((K + ik - 1) / ik);
    // the kernel alone: the same number of dots of ik products, operands in place
    const FastDot fd(dp);
    const size_t n = 4096;
    std::vector<uint64_t> a(n * ik), b(n * ik), c(n), d(n);
    for (size_t i = 0; i < a.size(); ++i) a[i] = A.v[i % A.v.size()], b[i] = B.v[i % B.v.size()];
    for (size_t i = 0; i < n; ++i) c[i] = C.v[i % C.v.size()];
    double tg = 1e30, rk = 0;
    for (int r = 0; r < reps; ++r) {
      double t0 = cpu_now();
      const Matrix D = gemm(dp, ik, A, B, C, 1);
      tg = std::min(tg, cpu_now() - t0);
      g_sink = D.v[0];
      uint64_t done = 0;
      t0 = cpu_now();
      double el = 0;
      do {
        fd.batch(a.data(), b.data(), c.data(), d.data(), n, ik);
        done += n;
        el = cpu_now() - t0;
      } while (el < 0.3);
      rk = std::max(rk, static_cast<double>(done) / el);
    }
    const double rg = dots / tg;
    std::printf("| %s %s%s%s | %d | %.3f | %.3g | %.3g | %.2f |\n", p[0], p[1], p[2][0] ? " " : "", p[2], ik, tg,
                rg, rk, rg / rk);
    std::fflush(stdout);
  }
  return 0;
}
