// The fast kernels (core/src/engines/fast.cpp) against the reference stage path: every preset and its
// binary16-output variant, and random datapath designs over the field table's ranges (every
// adder kind, frac_bits up to 100 for the 128-bit path, every alignment rounding, late and
// early c, odd-even, floors, FTZ/DAZ, reduced output precision). `make bench-check` runs the
// same comparison on 10^7 samples per preset.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "matcore/fast.hpp"
#include "matcore/fields.hpp"
#include "matcore/model.hpp"
#include "matcore/sample.hpp"
#include "preset_refs.hpp"

using namespace mc;

namespace {

class FastPreset : public ::testing::TestWithParam<std::string> {};

TEST_P(FastPreset, SameBitsAsTheReference) {
  const Datapath& dp = mc_test::preset_ref(GetParam()).dp;
  const FastCheck r = check_fast(dp, 4000, 7);
  EXPECT_EQ(r.samples, 4000u);
  // NaN/Inf operands really were there (the OCP MX fp6/fp4 elements have none: c only, about
  // 10 in 4000 samples)
  EXPECT_GT(r.specials, dp.a_fmt.has_nan() || dp.b_fmt.has_nan() ? 40u : 4u);
  EXPECT_LT(r.specials, 2000u);  // and most samples reach the kernels
  EXPECT_EQ(r.mismatches, 0u) << r.first;
  // k that is not a multiple of n_fma, and k = 1
  for (int K : {dp.n_fma + 3, 1}) {
    const FastCheck q = check_fast(dp, 500, 8, K);
    EXPECT_EQ(q.mismatches, 0u) << "K=" << K << "\n" << q.first;
  }
}

// (the block-scaled presets run on the reference stages: tb/test_blockscaled.cpp checks them)
INSTANTIATE_TEST_SUITE_P(All, FastPreset, ::testing::ValuesIn(mc_test::rtl_preset_keys()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// The OCP MX element formats (e3m2, e2m3, e2m1: no Inf/NaN) of the f8f6f4 presets (b200
// tcgen05, rtxpro6000 mma.sync: every mix of five formats; the multi-level testbenches take a
// sample of them, tb/preset_refs.hpp): the fast kernels (scalar and lanes) give the reference's
// bits, and one hand-computed sum: 6 * 4 + (-0.5) * 0.5 = 23.75 = 0x41be0000 in binary32.
TEST(FastKernel, MxElementFormatsEqualTheReference) {
  size_t n = 0;
  for (const Datapath& dp : all_presets()) {
    if (dp.scaled() || (dp.a_fmt.width() >= 8 && dp.b_fmt.width() >= 8)) continue;  // scaled: test_blockscaled
    const FastCheck r = check_fast(dp, 1500, 7);
    EXPECT_EQ(r.samples, 1500u);
    EXPECT_EQ(r.mismatches, 0u) << dp.name() << "\n" << r.first;
    EXPECT_STRNE(FastDot(dp).lane_kernel(), "none") << dp.name();
    ++n;
  }
  // 21 types with fp6/fp4 on each of b200 (tcgen05), rtxpro6000, mi350x and mi355x (hypotheses)
  EXPECT_EQ(n, 84u);
  const Datapath dp = find_preset("b200", "e2m1");
  const uint64_t a[2] = {0x7, 0x9}, b[2] = {0x6, 0x1};  // 6, -0.5 and 4, 0.5
  EXPECT_EQ(dot(dp, a, b, 2, 0), 0x41be0000u);
  EXPECT_EQ(FastDot(dp)(a, b, 2, 0), 0x41be0000u);
}

TEST(FastKernel, StrategiesOfThePresets) {
  // the families go to the kernels the issue names: fused in 64-bit integers, the CDNA2 trees
  // and the CDNA1 exact sums in 128-bit ones; none is left to the reference
  EXPECT_STREQ(FastDot(find_preset("mi300x", "fp16")).strategy(), "fused/i64");
  EXPECT_STREQ(FastDot(find_preset("h100", "e4m3", "", "mma.sync")).strategy(), "fused/i64");
  EXPECT_STREQ(FastDot(find_preset("mi250", "fp16")).strategy(), "pairwise/i128");
  EXPECT_STREQ(FastDot(find_preset("mi100", "fp16")).strategy(), "exact/i128");
  Datapath wide = find_preset("h100", "fp16");
  wide.frac_bits = 100;
  EXPECT_STREQ(FastDot(wide).strategy(), "fused/i128");
}

TEST(FastKernel, RandomDesigns) {
  // random values of the numerical fields on random presets; designs validate_datapath refuses
  // are skipped (counted). The block-scaled presets run on the reference stages (no kernel).
  std::mt19937 g(20261203u);
  std::vector<Datapath> presets;
  for (const Datapath& d : all_presets())
    if (!d.scaled()) presets.push_back(d);
  int run = 0, refused = 0;
  for (int i = 0; i < 400; ++i) {
    Datapath dp = presets[g() % presets.size()];
    auto pick = [&](std::initializer_list<const char*> v) { return std::string(*(v.begin() + g() % v.size())); };
    set_field(dp, "frac_bits", std::to_string(g() % 4 == 0 ? 60 + g() % 41 : 3 + g() % 40));
    set_field(dp, "prod_align", pick({"truncate", "rd", "rne", "rna"}));
    if (dp.adder == AdderKind::Fused) {
      set_field(dp, "late_c", pick({"true", "false"}));
      set_field(dp, "interleave", pick({"1", "2"}));
      set_field(dp, "n_fma", std::to_string(1 + g() % 32));
      set_field(dp, "c_frac", std::to_string(10 + g() % 40));
      set_field(dp, "sum_frac", std::to_string(10 + g() % 40));
      set_field(dp, "acc_frac", std::to_string(10 + g() % 40));
      set_field(dp, "partial_frac", std::to_string(10 + g() % 40));
      set_field(dp, "c_drop_gap", pick({"none", "5", "30"}));
      set_field(dp, "late_norm_rd", pick({"true", "false"}));
      set_field(dp, "emin_lim", pick({"none", "-133", "-20"}));
      set_field(dp, "c_zero_exp", pick({"none", "-126", "-10"}));
    }
    if (dp.adder == AdderKind::Exact) set_field(dp, "n_fma", std::to_string(1 + g() % 8));
    set_field(dp, "out_round", pick({"rne", "rtz", "rd", "ru", "rna"}));
    set_field(dp, "sub_in", pick({"true", "false"}));
    set_field(dp, "sub_out", pick({"true", "false"}));
    set_field(dp, "overflow_to_inf", pick({"true", "false"}));
    set_field(dp, "prod_overflow_exp", pick({"none", "128", "20"}));
    set_field(dp, "prod_round_out", pick({"false", "false", "true"}));
    set_field(dp, "out_prec", pick({"all", "all", "13"}));
    set_field(dp, "pair_interleave", pick({"false", "true"}));
    set_field(dp, "c_final_add", pick({"false", "true"}));
    set_field(dp, "c_final_round", pick({"rne", "rtz", "rd", "ru", "rna"}));
    try {
      validate_datapath(dp);
    } catch (const std::invalid_argument&) {
      ++refused;
      continue;
    }
    ++run;
    const FastCheck r = check_fast(dp, 600, 100 + i, 1 + static_cast<int>(g() % 40));
    ASSERT_EQ(r.mismatches, 0u) << "design " << i << ":\n" << r.first;
  }
  std::printf("random designs: %d run, %d refused by validate_datapath\n", run, refused);
  EXPECT_GT(run, 300);
}

// Every instruction set's lane kernel (the CPU permitting: a set it lacks falls back to the next
// one down) on the fused presets, the pairwise trees and the exact adders, against the reference.
TEST(FastKernel, EveryLaneKernel) {
  for (const char* isa : {"generic", "avx2", "avx512", "avx512x2"}) {
    ::setenv("MATCORE_LANES", isa, 1);
    for (const char* name : {"mi300x/fp16", "mi300x/e5m2fnuz,e4m3fnuz", "h100/fp16", "b200/e4m3",
                             "h100/e4m3/mma.sync", "mi250/fp16", "mi210/bf16", "mi100/fp16",
                             "mi100/bf16", "mi300x/fp32", "mi210/fp64"}) {
      const std::string s = name;
      const size_t p1 = s.find('/'), p2 = s.find('/', p1 + 1);
      const std::string variant = p2 == std::string::npos ? "" : s.substr(p2 + 1);
      const Datapath dp = find_preset(s.substr(0, p1), s.substr(p1 + 1, p2 - p1 - 1), "", variant);
      const FastCheck r = check_fast(dp, 3000, 21);
      EXPECT_EQ(r.mismatches, 0u) << isa << "\n" << r.first;
      // the lanes really ran (a set this CPU lacks falls back to the next one down, or to none)
      if (std::string(isa) == "generic") {
        EXPECT_STREQ(FastDot(dp).lanes(), "generic");
      }
    }
  }
  ::unsetenv("MATCORE_LANES");
  // the fused adder in 128-bit integers (F = 100): one by one
  Datapath wide = find_preset("h100", "fp16");
  wide.frac_bits = 100;
  EXPECT_STREQ(FastDot(wide).lanes(), "none");
}

// The kernels of one product a group (fma_chain_fixed: the fp32 and fp64 FMA chains), the
// trees on the encodings (add_rne_ftz) and CDNA1's exact adders (exact_sorted) on more samples:
// roundings decided by a sticky far below are rare (the fp64 sum's bits below its top 64,
// jammed, decide about one sample in 10^5).
TEST(FastKernel, ChainsAndTreesManySamples) {
  for (const char* type : {"fp64", "fp32"}) {
    const FastCheck r = check_fast(find_preset("mi300x", type), 400000, 31);
    EXPECT_EQ(r.mismatches, 0u) << type << "\n" << r.first;
  }
  for (const char* type : {"fp16", "bf16"}) {
    const FastCheck r = check_fast(find_preset("mi250", type), 100000, 32);
    EXPECT_EQ(r.mismatches, 0u) << type << "\n" << r.first;
  }
  // the exact adders of a few narrow products (exact_sorted): the presets, and 7 products a
  // group (the most terms its 64-bit sum holds) with a short last group
  for (const char* type : {"fp16", "bf16"}) {
    Datapath dp = find_preset("mi100", type);
    FastCheck r = check_fast(dp, 100000, 34);
    EXPECT_EQ(r.mismatches, 0u) << type << "\n" << r.first;
    set_field(dp, "n_fma", "7");
    r = check_fast(dp, 50000, 35, 19);
    EXPECT_EQ(r.mismatches, 0u) << type << " n_fma 7\n" << r.first;
  }
}

// The FMA chains off the presets' path (fma_chain_fixed<Wide, false>: another rounding, with
// and without subnormals in and out; the binary32 chains with a binary16 d too), against the
// reference.
TEST(FastKernel, ChainsOtherRoundings) {
  int n = 0;
  for (const char* type : {"fp64", "fp32"})
    for (const char* mode : {"rtz", "rd", "ru", "rna"})
      for (const char* sub : {"true", "false"}) {
        Datapath dp = find_preset("mi300x", type);
        set_field(dp, "out_round", mode);
        set_field(dp, "sub_in", sub);
        set_field(dp, "sub_out", sub);
        if (std::string(type) == "fp32" && n % 2) {
          set_field(dp, "out_fmt", "binary16");
          set_field(dp, "nan_invalid", "0x7e00");
          set_field(dp, "nan_propagate", "0x7e00");
        }
        const FastCheck r = check_fast(dp, 40000, 33 + n++);
        EXPECT_EQ(r.mismatches, 0u) << type << " " << mode << " sub " << sub << "\n" << r.first;
        EXPECT_STRNE(FastDot(dp).lanes(), "none") << type << " " << mode;
      }
}

TEST(FastKernel, BatchEqualsOneByOne) {
  const Datapath dp = find_preset("mi300x", "e4m3fnuz");
  const FastDot fd(dp);
  std::mt19937 g(3);
  const int K = 32, n = 200;
  std::vector<uint64_t> a(n * K), b(n * K), c(n), d(n);
  for (auto& x : a) x = g() & 0xff;
  for (auto& x : b) x = g() & 0xff;
  for (auto& x : c) x = g();
  fd.batch(a.data(), b.data(), c.data(), d.data(), n, K);
  for (int i = 0; i < n; ++i) ASSERT_EQ(d[i], dot(dp, &a[i * K], &b[i * K], K, c[i])) << i;
}

// batch() on 32-bit words: the reference's bits for every kind of kernel (random bit patterns,
// NaN/Inf and the scalar fallback included; 203 samples: a short last block), on every lane set;
// refused for a datapath with a 64-bit format.
TEST(FastKernel, Batch32EqualsTheReference) {
  std::mt19937_64 g(4);
  for (const char* isa : {"generic", "avx2", "avx512", "avx512x2", ""}) {
    ::setenv("MATCORE_LANES", isa, 1);
    for (const char* name : {"mi300x/fp16", "mi300x/xf32", "h100/e4m3", "mi250/bf16", "mi100/bf16",
                             "mi300x/fp32", "b200/e4m3"}) {
      const std::string s = name;
      const size_t p1 = s.find('/');
      const Datapath dp = find_preset(s.substr(0, p1), s.substr(p1 + 1));
      const FastDot fd(dp);
      const int K = dp.k_default, n = 203;
      const uint32_t ma = static_cast<uint32_t>((uint64_t{1} << dp.a_fmt.width()) - 1);
      const uint32_t mb = static_cast<uint32_t>((uint64_t{1} << dp.b_fmt.width()) - 1);
      const uint32_t mc = static_cast<uint32_t>((uint64_t{1} << dp.out_fmt.width()) - 1);
      std::vector<uint32_t> a(n * K), b(n * K), c(n), d(n);
      for (auto& x : a) x = static_cast<uint32_t>(g()) & ma;
      for (auto& x : b) x = static_cast<uint32_t>(g()) & mb;
      for (auto& x : c) x = static_cast<uint32_t>(g()) & mc;
      fd.batch(a.data(), b.data(), c.data(), d.data(), n, K);
      for (int i = 0; i < n; ++i) {
        const std::vector<uint64_t> wa(&a[i * K], &a[i * K] + K), wb(&b[i * K], &b[i * K] + K);
        ASSERT_EQ(d[i], dot(dp, wa.data(), wb.data(), K, c[i])) << isa << " " << name << " " << i;
      }
    }
  }
  ::unsetenv("MATCORE_LANES");
  const FastDot f64(find_preset("mi300x", "fp64"));
  std::vector<uint32_t> w(4);
  EXPECT_THROW(f64.batch(w.data(), w.data(), w.data(), w.data(), 1, 4), std::invalid_argument);
}

// Products beyond binary32's largest finite that cancel in pairs (a_{j+1} = a_j or one ulp
// above, b_{j+1} = -b_j): the reference rounds each product to Inf before the levels (Inf - Inf:
// NaN), so a tree that added them as they are would give a finite sum. Random operands seldom
// meet two such products in one pair of a level.
TEST(FastKernel, TreesOverflowingProductsThatCancel) {
  std::mt19937 g(6);
  for (const char* type : {"bf16", "bf16_1k"}) {
    const Datapath dp = find_preset("mi250", type);
    const FastDot fd(dp);
    const int K = dp.k_default, n = 256;
    std::vector<uint64_t> a(n * K), b(n * K), c(n), d(n);
    for (int j = 0; j < n * K; j += 2) {
      a[j] = draw_expmant(kBfloat16, 20 + static_cast<int>(g() % 61), g(), 32);
      b[j] = draw_expmant(kBfloat16, 20 + static_cast<int>(g() % 61), g(), 32) | (g() & 0x8000);
      a[j + 1] = (a[j] & 0x7f) == 0x7f ? a[j] : a[j] + (g() & 1);
      b[j + 1] = b[j] ^ 0x8000;
    }
    for (auto& x : c) x = draw_expmant(kBinary32, static_cast<int>(g() % 60), g(), 32);
    fd.batch(a.data(), b.data(), c.data(), d.data(), n, K);
    int nan = 0;
    for (int i = 0; i < n; ++i) {
      const uint64_t ref = dot(dp, &a[i * K], &b[i * K], K, c[i]);
      ASSERT_EQ(d[i], ref) << type << " sample " << i;
      nan += decode(kBinary32, ref).cls == Class::NaN;
    }
    EXPECT_GT(nan, n / 5) << type;  // the case is reached: Inf - Inf in a level
    EXPECT_LT(nan, n) << type;
  }
}

}  // namespace
