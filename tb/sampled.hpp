// Random samples for the multi-level testbenches (SystemC, RTL): both sampling strategies of
// core (sample.hpp: exponent-mantissa with the normal or the subnormal exponent ranges, and
// independent bits), written by mc::write_samples and read back like hardware files, and the
// special values injected into them.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "matcore/explain.hpp"
#include "matcore/model.hpp"
#include "matcore/sample.hpp"

namespace mc_test {

struct Sample {
  std::vector<uint64_t> a, b;
  uint64_t c = 0;  ///< out_fmt
  std::vector<uint64_t> sa, sb;  ///< block scales (block-scaled datapaths)
};

/// n samples of dp's formats and k: strategy "expmant", "expmant_sub" or "bits".
inline std::vector<Sample> random_samples(const mc::Datapath& dp, const std::string& strategy, uint64_t n,
                                          uint32_t seed) {
  mc::SampleSpec sp = mc::sample_spec_for(dp);
  sp.N = n;
  sp.seed = seed;
  sp.strategy = strategy == "bits" ? mc::Strategy::Bits : mc::Strategy::ExpMant;
  mc::default_ranges(sp, strategy == "expmant_sub");
  char tmpl[] = "/tmp/matcore_samples_XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  mc::write_samples(sp, dir, 1);
  std::vector<uint64_t> idx(n);
  for (uint64_t i = 0; i < n; ++i) idx[i] = i;
  const std::vector<mc::ExplainSample> xs = mc::load_dir_samples(dp, dir, idx, false);
  for (const char* f : {"a.txt", "b.txt", "c.txt", "sa.txt", "sb.txt"}) std::remove((dir + "/" + f).c_str());
  ::rmdir(dir.c_str());
  std::vector<Sample> s(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) s[i] = Sample{xs[i].a, xs[i].b, xs[i].c, xs[i].sa, xs[i].sb};
  return s;
}

/// Zeros, extreme finite values, NaNs, infinities and the smallest subnormal of a format.
inline std::vector<uint64_t> specials_of(const mc::Format& f) {
  std::vector<uint64_t> v = {mc::zero_bits(f, false), mc::zero_bits(f, true), f.max_finite_bits(),
                             f.max_finite_bits() | (uint64_t{1} << (f.width() - 1)), 1};
  if (f.has_nan()) v.push_back(f.qnan_bits(false));
  if (f.has_inf()) {
    v.push_back(f.inf_bits(false));
    v.push_back(f.inf_bits(true));
  }
  if (f.has_nan() && f.enc != mc::Encoding::FNUZ) v.push_back(f.qnan_bits(true));
  return v;
}

/// n independent-bit samples with special values injected (a, b: 1 in 12; c: 1 in 6).
inline std::vector<Sample> special_samples(const mc::Datapath& dp, uint64_t n) {
  std::vector<Sample> s = random_samples(dp, "bits", n, 11);
  std::mt19937 g(5);
  const auto sa = specials_of(dp.a_fmt), sb = specials_of(dp.b_fmt), sc = specials_of(dp.out_fmt);
  for (Sample& x : s) {
    for (auto& v : x.a)
      if (g() % 12 == 0) v = sa[g() % sa.size()];
    for (auto& v : x.b)
      if (g() % 12 == 0) v = sb[g() % sb.size()];
    if (g() % 6 == 0) x.c = sc[g() % sc.size()];
    // block scales: zero (ue4m3), the smallest and largest, NaN, 1
    const mc::Format& f = dp.scale_fmt;
    const uint64_t ss[] = {0, f.max_finite_bits(), f.qnan_bits(false), mc::unit_scale_bits(f), 0x01};
    for (auto* v : {&x.sa, &x.sb})
      for (auto& y : *v)
        if (g() % 8 == 0) y = ss[g() % 5];
  }
  return s;
}

}  // namespace mc_test
