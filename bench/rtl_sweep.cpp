// rtl_sweep: cost (yosys, matcore cost's method) and accuracy of variants of one datapath, one
// parameter changed at a time: the table of docs/rtl.md ("Sweeps").
//
//   rtl_sweep [ARCH TYPE]        (default mi300x fp16)
//
// Accuracy: dot products of k = 16 and k = 4096 (exponent-mantissa samples of the preset's
// ranges, seed 1; 2000 and 100 samples) through the fast model of the variant -- which equals
// its RTL bit for bit (tb/test_rtl.cpp checks the presets; RtlSensitivity a variant) -- against
// the exact sum (a Kulisch accumulator of the exact products, rounded to binary64). The relative
// errors are statistics of the results, computed in host double precision; the model results
// themselves are integer arithmetic.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/rtl_driver.hpp"
#include "matcore/sample.hpp"
#include "matcore/stages.hpp"

using namespace mc;

namespace {

struct Err {
  double rms = 0, max = 0;
};

/// Relative error of dp's d against the exact a.b + c over n samples of k products.
Err error_of(const Datapath& dp, int k, uint64_t n) {
  SampleSpec sp = sample_spec_for(dp);
  sp.K = k;
  sp.N = n;
  sp.seed = 1;
  default_ranges(sp, false);
  // draw the samples in memory the way write_samples does: through the sampling functions
  std::vector<uint64_t> a, b, c;
  {
    char tmpl[] = "/tmp/rtl_sweep_XXXXXX";
    const std::string dir = ::mkdtemp(tmpl);
    write_samples(sp, dir, 1);
    auto read = [&](const std::string& f, const Format& fmt, std::vector<uint64_t>& v) {
      FILE* in = std::fopen((dir + "/" + f).c_str(), "r");
      char line[1 << 16];
      while (in && std::fgets(line, sizeof line, in)) {
        if (line[0] == '#') continue;
        char* p = line;
        char* end;
        while (true) {
          const unsigned long long x = std::strtoull(p, &end, 16);
          if (end == p) break;
          v.push_back(x & ((fmt.width() >= 64) ? ~0ull : ((1ull << fmt.width()) - 1)));
          p = end;
        }
      }
      if (in) std::fclose(in);
      std::remove((dir + "/" + f).c_str());
    };
    read("a.txt", dp.a_fmt, a);
    read("b.txt", dp.b_fmt, b);
    read("c.txt", kBinary32, c);
    ::rmdir(dir.c_str());
  }
  Err e;
  double sum2 = 0;
  uint64_t counted = 0;
  std::vector<Product> terms(k + 1);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t ci = c_from_binary32(dp, c[i]);
    const uint64_t d = dot(dp, &a[i * k], &b[i * k], k, ci);
    for (int j = 0; j < k; ++j)
      terms[j] = multiply(decode(dp.a_fmt, a[i * k + j]), decode(dp.b_fmt, b[i * k + j]), MulCfg{});
    terms[k] = addend(decode(dp.out_fmt, ci));
    const uint64_t x = exact_sum_round(terms.data(), k + 1, kBinary64, RoundOpts{}, false);
    const double xv = to_host_double(kBinary64, x), dv = to_host_double(dp.out_fmt, d);
    if (xv == 0 || !std::isfinite(xv) || !std::isfinite(dv)) continue;
    const double r = std::fabs(dv - xv) / std::fabs(xv);
    sum2 += r * r;
    e.max = std::max(e.max, r);
    ++counted;
  }
  e.rms = counted ? std::sqrt(sum2 / counted) : 0;
  return e;
}

void row(const std::string& label, const Datapath& dp) {
  const RtlCost c = rtl_cost(dp);
  const Err e16 = error_of(dp, 16, 2000), e4k = error_of(dp, 4096, 100);
  std::printf("| %-22s | %8ld | %9.0f | %5d (%s) | %9.2e | %9.2e | %9.2e | %9.2e |\n", label.c_str(), c.cells, c.nand2,
              c.widest_adder, c.widest_stage.c_str(), e16.rms, e16.max, e4k.rms, e4k.max);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string arch = argc > 2 ? argv[1] : "mi300x", type = argc > 2 ? argv[2] : "fp16";
  const Datapath base = find_preset(arch, type);
  std::printf("sweeps of %s (one parameter changed at a time)\n\n", base.name().c_str());
  std::printf("| %-22s | %8s | %9s | %13s | %9s | %9s | %9s | %9s |\n", "variant", "cells", "NAND2-eq", "widest adder",
              "rms k=16", "max k=16", "rms k=4096", "max k=4096");
  std::printf("|---|---:|---:|---|---:|---:|---:|---:|\n");
  row("preset (F=" + std::to_string(base.frac_bits) + ", n_fma=" + std::to_string(base.n_fma) + ")", base);
  for (int f : {16, 20, 28, 32}) {
    Datapath d = base;
    d.frac_bits = f;
    row("F = " + std::to_string(f), d);
  }
  for (int n : {4, 16}) {
    Datapath d = base;
    d.n_fma = n;
    row("n_fma = " + std::to_string(n), d);
  }
  if (base.late_c)
    for (int w : {24, 40}) {
      Datapath d = base;
      d.sum_frac = w;
      d.acc_frac = w - 1;
      row("sum_frac = " + std::to_string(w) + ", acc_frac = " + std::to_string(w - 1), d);
    }
  return 0;
}
