// Feature detection (core/src/features.cpp, docs/features.md):
//  (1) every preset, and every NVIDIA fp16-output variant, is recovered from its probe results;
//  (2) randomly drawn configurations of the generalised datapath are recovered;
//  (3) the emitted files round-trip: d read back from a d file decides the same features;
//  (4) the canonical form used by the comparison is sound: a datapath and its canonical form
//      give the same d on the probe vectors and on random samples (so the fields it sets aside
//      really cannot change a result).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "matcore/features.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/vectors.hpp"

using namespace mc;

namespace {

/// Every preset whose operands the probes take (8 bits or more: not the fp6/fp4 mixes, which
/// features refuses: FeatureNarrow below), and its binary16-output variant.
std::vector<Datapath> presets_and_fp16_variants() {
  std::vector<Datapath> v;
  for (const Datapath& d : all_presets())  // mi350x: the same hypotheses as mi355x
    if (d.a_fmt.width() >= 8 && d.b_fmt.width() >= 8 && d.arch != "mi350x") v.push_back(d);
  for (const Datapath& d : all_presets()) {
    if (!(d.out_fmt == kBinary32) || d.a_fmt.width() > 16 || d.a_fmt.width() < 8 || d.b_fmt.width() < 8) continue;
    try {
      Datapath h = find_preset(d.arch, d.type, "fp16", d.variant);
      if (h.out_fmt == kBinary16) v.push_back(h);
    } catch (const std::invalid_argument&) {
    }
  }
  return v;
}

std::string label(const Datapath& d) {
  return d.name() + (d.variant.empty() ? "" : "/" + d.variant) + " -> " + d.out_fmt.name;
}

// --- random configurations of the generalised datapath ----------------------------------------
// The documented space (datapath.hpp) with the combinations left out that validate_datapath
// rejects or that are physically meaningless:
//  * fused adders keep at least the output precision: F >= P (n_eab >= 0) and F >= the product's
//    own fraction bits (ma + mb), F <= 30; exactly F = P only for early c with unnormalised
//    products (V100, NVIDIA e8m13), otherwise F >= P + 1 (a round bit);
//  * fused adders sum at least two products (one product is an FMA, characterised as exact);
//    late c, and c added after all groups, with at least 4 products per group (Algorithms 1 and
//    2 use 4, 8, 16; the fp8 HMMA units 16): the probes of a fused group's window then use
//    three products of one group;
//  * the c-aligner keeps at least a round bit: c_frac, sum_frac, acc_frac >= P+1, c_drop_gap
//    >= P+2; with the normalisation round-down, sum_frac <= acc_frac + 1 (CDNA3: 32 and 31:
//    more bits of the shifted sum would only show in deep cancellations) and acc_frac <= P+F-1
//    (a sum one binade below c, whose round-down the bits of the products can reach); with RD
//    output, sum_frac <= F (RD after RD shows only where products cancel c); the odd-even partial
//    sums keep at least the products' bits: partial_frac >= F (CDNA3: both 24);
//  * fused adders keep subnormal inputs and outputs, as every characterised one (flushing them
//    hides the alignment of the smallest terms, the only place some features show);
//  * c_final_add with the exact or the early-c fused adder only (a pairwise tree already adds c
//    after the rounded product sum; no late-c unit adds c twice);
//  * fp32 / fp64 inputs only with the exact and pairwise adders (a fused adder would need more
//    than 46 alignment bits), as every characterised fp32 unit;
//  * out_prec only 13 (e8m13) besides all bits, on binary32 outputs;
//  * e_min^lim and e_c=0 within 14 binades below the output's smallest normal exponent and above
//    its smallest subnormal (below it only sums of many tiny products could show them), and only
//    with subnormal inputs and outputs (every characterised unit with them keeps subnormals;
//    flushing hides nearly all of their effect: they change only sums below 2^emin); e_min^lim
//    only with early c (NVIDIA), e_c=0 with either (CDNA3: late c);
struct TypePair {
  const Format* a;
  const Format* b;
};
const TypePair kTypes[] = {
    {&kBinary16, &kBinary16}, {&kBfloat16, &kBfloat16}, {&kTf32, &kTf32},
    {&kE4M3, &kE4M3},         {&kE5M2, &kE5M2},         {&kE4M3, &kE5M2},
    {&kE4M3Fnuz, &kE4M3Fnuz}, {&kE5M2Fnuz, &kE5M2Fnuz}, {&kE5M2Fnuz, &kE4M3Fnuz},
    {&kBinary32, &kBinary32}};

Datapath random_config(std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto range = [&](int lo, int hi) { return lo + pick(hi - lo + 1); };
  auto coin = [&]() { return pick(2) == 1; };
  const Rounding modes[4] = {Rounding::RNE, Rounding::RTZ, Rounding::RD, Rounding::RU};
  for (;;) {
    Datapath d;
    const TypePair t = kTypes[pick(10)];
    d.arch = "random";
    d.type = t.a->name + "," + t.b->name;
    d.a_fmt = *t.a;
    d.b_fmt = *t.b;
    const bool small_in = t.a->width() <= 16 && t.b->width() <= 16;
    d.out_fmt = (small_in && pick(4) == 0) ? kBinary16 : kBinary32;
    const Format& O = d.out_fmt;
    const bool fp32in = *t.a == kBinary32;
    const int kind = fp32in ? pick(2) : pick(4);  // 0 Exact, 1 Pairwise, 2-3 Fused
    d.adder = kind == 0 ? AdderKind::Exact : kind == 1 ? AdderKind::Pairwise : AdderKind::Fused;
    const int ns[6] = {1, 2, 4, 8, 16, 32};
    d.n_fma = ns[pick(6)];
    if (d.adder == AdderKind::Fused && d.n_fma == 1) d.n_fma = 2;
    d.out_round = modes[pick(4)];
    d.out_prec = (O == kBinary32 && pick(4) == 0) ? 13 : -1;
    const int P = d.out_prec < 0 ? O.mbits : d.out_prec;
    d.sub_in = coin();
    d.sub_out = coin();
    d.overflow_to_inf = coin();
    d.prod_round_out = pick(3) == 0;
    d.prod_overflow_exp = pick(3) == 0 ? O.emax() + 1 : kNone;
    d.pair_interleave = coin();
    d.c_final_add = d.adder != AdderKind::Pairwise && pick(4) == 0;
    if (d.c_final_add && d.adder == AdderKind::Fused && d.n_fma < 4) d.n_fma = 4;
    d.c_final_round = modes[pick(4)];
    d.late_c = false;
    if (d.adder == AdderKind::Fused) {
      d.sub_in = d.sub_out = true;
      d.late_c = !d.c_final_add && d.n_fma >= 4 && coin();
      const int lo = std::max(d.late_c || d.prod_round_out ? P + 1 : P, d.a_fmt.mbits + d.b_fmt.mbits);
      d.frac_bits = range(lo, std::max(lo, 30));
      d.prod_align = coin() ? AlignRound::RD : AlignRound::Truncate;
      const int flo = std::max(O.emin() - 14, O.emin() - P + 2);
      d.emin_lim = coin() ? kNone : range(flo, O.emin());
      d.c_zero_exp = pick(3) == 0 ? kNone : pick(2) ? O.emin() : range(flo, O.emin());
      if (d.late_c) d.emin_lim = kNone;
      if (d.late_c) {
        d.c_frac = range(P + 1, 30);
        d.sum_frac = range(P + 1, 34);
        d.acc_frac = range(P + 1, 34);
        d.late_norm_rd = pick(4) != 0;
        if (d.late_norm_rd) {
          d.acc_frac = std::min(d.acc_frac, std::max(P + 1, P + d.frac_bits - 1));
          d.sum_frac = std::min(d.sum_frac, d.acc_frac + 1);
        }
        if (d.out_round == Rounding::RD) d.sum_frac = std::min(d.sum_frac, d.frac_bits);
        d.c_drop_gap = coin() ? kNone : range(P + 2, 40);
        d.interleave = coin() ? 2 : 1;
        d.partial_frac = range(d.frac_bits, std::max(d.frac_bits, 30));
      }
    }
    const uint64_t nans[3] = {O.qnan_bits(false), O.qnan_bits(true),
                              O.inf_bits(false) | ((uint64_t{1} << O.mbits) - 1)};
    d.nan_invalid = nans[pick(3)];
    d.nan_propagate = nans[pick(3)];
    d.nan_keep_sign = coin();
    int K = d.n_fma * (1 << pick(3));
    K = std::max(K, 4);
    if (K > 64) K = d.n_fma;
    d.k_default = K;
    try {
      validate_datapath(d);
    } catch (const std::invalid_argument&) {
      continue;
    }
    return d;
  }
}

std::vector<Datapath> random_configs(int n) {
  std::mt19937 rng(20240611u);
  std::vector<Datapath> v;
  for (int i = 0; i < n; ++i) {
    Datapath d = random_config(rng);
    d.arch = "random" + std::to_string(i);
    v.push_back(d);
  }
  return v;
}

// Random witness samples: zeros, subnormals, values near the bottom, the top and 1.
uint64_t draw(std::mt19937& rng, const Format& f) {
  const int kind = static_cast<int>(rng() % 16);
  const uint64_t mmask = (uint64_t{1} << f.mbits) - 1;
  if (kind == 0) return 0;
  if (kind == 1) return rng() & mmask;  // subnormal (or 0)
  const int top = (1 << f.ebits) - 1;
  uint64_t E;
  if (kind < 6) E = 1 + rng() % 3;                       // near the bottom
  else if (kind < 8) E = static_cast<uint64_t>(top - 1 - static_cast<int>(rng() % 3));  // near the top
  else E = static_cast<uint64_t>(f.bias + static_cast<int>(rng() % 9) - 4);  // near 1
  uint64_t M = (static_cast<uint64_t>(rng()) << 32 | rng()) & mmask;
  if (rng() % 2) M &= ~(mmask >> 2);  // few bits
  uint64_t bits = (E << f.mbits) | M;
  if (rng() % 2) bits |= uint64_t{1} << (f.width() - 1);
  const Unpacked u = decode(f, bits);
  if (u.cls == Class::NaN || u.cls == Class::Inf) return 0;
  return bits;
}

}  // namespace

namespace mc {
void PrintTo(const Datapath& d, std::ostream* os) { *os << label(d); }
}  // namespace mc

// (0) operands the probes do not take ----------------------------------------------------------------
// fp6/fp4 operands: the probes' terms need at least 8 bits; features refuses them (exit 2 from the
// command line) instead of giving fields it cannot have decided.
TEST(FeatureNarrow, Fp6Fp4OperandsAreRefused) {
  for (const char* t : {"e2m1", "e3m2", "e4m3,e2m3"}) {
    const Datapath dp = find_preset("b200", t);
    EXPECT_THROW(detect_features(dp), std::invalid_argument) << t;
  }
  EXPECT_NO_THROW(feature_vectors(kE4M3, kE5M2, kBinary32, 32, ""));
}

// (1) presets ------------------------------------------------------------------------------------
class FeaturePreset : public ::testing::TestWithParam<Datapath> {};

TEST_P(FeaturePreset, Recovered) {
  const Datapath& dp = GetParam();
  const DetectedFeatures f = detect_features(dp);
  EXPECT_EQ(compare_features(dp, f.dp), "") << label(dp) << "\n" << format_feature_table(f);
  EXPECT_EQ(f.reproduced, f.samples) << label(dp) << "\n" << format_feature_table(f);
}

INSTANTIATE_TEST_SUITE_P(All, FeaturePreset, ::testing::ValuesIn(presets_and_fp16_variants()),
                         [](const ::testing::TestParamInfo<Datapath>& i) {
                           std::string s = label(i.param) + "_" + std::to_string(i.index);
                           for (char& ch : s)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

// (2) random configurations ---------------------------------------------------------------------
TEST(FeatureRandom, TwoHundredFiftyConfigurations) {
  const auto v = random_configs(250);
  int failed = 0;
  int kinds[3] = {0, 0, 0}, late = 0, odd_even = 0, cfa = 0, floors = 0, e8m13 = 0, fp16out = 0;
  for (const Datapath& dp : v) {
    ++kinds[static_cast<int>(dp.adder)];
    late += dp.adder == AdderKind::Fused && dp.late_c;
    odd_even += dp.adder == AdderKind::Fused && dp.late_c && dp.interleave == 2;
    cfa += dp.c_final_add;
    floors += dp.adder == AdderKind::Fused && (dp.emin_lim != kNone || dp.c_zero_exp != kNone);
    e8m13 += dp.out_prec == 13;
    fp16out += dp.out_fmt == kBinary16;
  }
  std::printf("random configurations: %d exact, %d pairwise, %d fused (%d late c, %d odd-even), "
              "%d c_final_add, %d with floors, %d e8m13, %d fp16 output\n",
              kinds[0], kinds[1], kinds[2], late, odd_even, cfa, floors, e8m13, fp16out);
  for (const Datapath& dp : v) {
    const DetectedFeatures f = detect_features(dp);
    const std::string diff = compare_features(dp, f.dp);
    if (!diff.empty() || f.reproduced != f.samples) {
      ++failed;
      ADD_FAILURE() << dp.arch << " " << dp.type << " -> " << dp.out_fmt.name
                    << " K=" << dp.k_default << "\n"
                    << diff << format_feature_table(f);
    }
  }
  EXPECT_EQ(failed, 0);
}

// (3) files -------------------------------------------------------------------------------------
TEST(FeatureFiles, RoundTrip) {
  char tmpl[] = "/tmp/matcore_features_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  for (const Datapath& dp : presets_and_fp16_variants()) {
    const FeatureVectors v = feature_vectors(dp.a_fmt, dp.b_fmt, dp.out_fmt, std::min(dp.k_default, 64), dp.type);
    emit_feature_vectors(v, dir);
    // The device's side: read a/b/c back as any collector would, run, write d.
    Datapath run = dp;
    const int w = dp.a_fmt == kBinary64 ? 64 : 32;
    const AbFile A = read_ab_file(dir + "/a.txt", v.K, dp.a_fmt), B = read_ab_file(dir + "/b.txt", v.K, dp.b_fmt);
    const auto C = read_cd_file(dir + "/c.txt", w);
    ASSERT_EQ(C.size(), v.size());
    std::vector<uint64_t> d;
    for (size_t i = 0; i < v.size(); ++i) {
      std::vector<uint64_t> a(v.K), b(v.K);
      for (int k = 0; k < v.K; ++k) {
        a[k] = ingest_value(dp.a_fmt, Rounding::RNE, A.v[i * v.K + k], w, "a");
        b[k] = ingest_value(dp.b_fmt, Rounding::RNE, B.v[i * v.K + k], w, "b");
        ASSERT_EQ(a[k], v.a[i * v.K + k]) << label(dp) << " sample " << i;
        ASSERT_EQ(b[k], v.b[i * v.K + k]) << label(dp) << " sample " << i;
      }
      const uint64_t c = w == 64 ? C[i] : c_from_binary32(dp, C[i]);
      ASSERT_EQ(c, v.c[i]) << label(dp) << " sample " << i;
      d.push_back(feature_result_to_file(dp.out_fmt, dot(dp, a.data(), b.data(), v.K, c)));
    }
    write_cd_file(dir + "/d.txt", d, dp.out_fmt == kBinary64 ? 64 : 32);
    const DetectedFeatures from_files = decide_features(v, read_feature_results(v, dir + "/d.txt"));
    const DetectedFeatures model = detect_features(dp);
    EXPECT_EQ(compare_features(model.dp, from_files.dp), "") << label(dp);
    EXPECT_EQ(format_feature_table(model), format_feature_table(from_files)) << label(dp);
  }
  for (const char* f : {"a.txt", "b.txt", "c.txt", "d.txt", "manifest.txt"})
    std::remove((dir + "/" + f).c_str());
  rmdir(dir.c_str());
}

TEST(FeatureFiles, Fp16NaNPayloadKept) {
  EXPECT_EQ(feature_result_to_file(kBinary16, 0x7FFF), 0x7FFFE000u);
  EXPECT_EQ(feature_result_from_file(kBinary16, 0x7FFFE000), 0x7FFFu);
  EXPECT_EQ(feature_result_from_file(kBinary16, 0xFFC00000), 0xFE00u);
  EXPECT_EQ(feature_result_to_file(kBinary16, 0x3C00), 0x3F800000u);
  EXPECT_EQ(feature_result_from_file(kBinary16, 0x3F800000), 0x3C00u);
}

// (4) the canonical form is sound ----------------------------------------------------------------
namespace {
std::string raw_fields(const Datapath& d) {
  char b[400];
  std::snprintf(b, sizeof b,
                "adder=%d n=%d pi=%d cfa=%d cfr=%d late=%d F=%d pa=%d L=%d z=%d il=%d pf=%d cf=%d "
                "sf=%d af=%d g=%d norm=%d R=%d prec=%d subin=%d subout=%d ovf=%d pro=%d X=%d "
                "keep=%d np=%llx ni=%llx",
                static_cast<int>(d.adder), d.n_fma, d.pair_interleave, d.c_final_add,
                static_cast<int>(d.c_final_round), d.late_c, d.frac_bits,
                static_cast<int>(d.prod_align), d.emin_lim, d.c_zero_exp, d.interleave,
                d.partial_frac, d.c_frac, d.sum_frac, d.acc_frac, d.c_drop_gap, d.late_norm_rd,
                static_cast<int>(d.out_round), d.out_prec, d.sub_in, d.sub_out, d.overflow_to_inf,
                d.prod_round_out, d.prod_overflow_exp, d.nan_keep_sign,
                static_cast<unsigned long long>(d.nan_propagate),
                static_cast<unsigned long long>(d.nan_invalid));
  return b;
}

void expect_equivalent(const Datapath& dp, int K, std::mt19937& rng, int n_random) {
  const Datapath c = canonical_features(dp, K);
  const FeatureVectors v = feature_vectors(dp.a_fmt, dp.b_fmt, dp.out_fmt, K, dp.type);
  for (size_t i = 0; i < v.size(); ++i) {
    const uint64_t x = dot(dp, &v.a[i * K], &v.b[i * K], K, v.c[i]);
    const uint64_t y = dot(c, &v.a[i * K], &v.b[i * K], K, v.c[i]);
    if (x != y) {
      ADD_FAILURE() << label(dp) << " K=" << K << ": canonical form differs on probe " << v.probe[i]
                    << "\n  datapath  " << raw_fields(dp) << "\n  canonical " << raw_fields(c);
      return;
    }
  }
  std::vector<uint64_t> a(K), b(K);
  for (int s = 0; s < n_random; ++s) {
    for (int k = 0; k < K; ++k) {
      a[k] = draw(rng, dp.a_fmt);
      b[k] = draw(rng, dp.b_fmt);
    }
    const uint64_t cc = draw(rng, dp.out_fmt);
    const uint64_t x = dot(dp, a.data(), b.data(), K, cc), y = dot(c, a.data(), b.data(), K, cc);
    if (x != y) {
      std::string in;
      for (int k = 0; k < K; ++k) in += " " + to_hex(a[k]) + "*" + to_hex(b[k]);
      ADD_FAILURE() << label(dp) << " K=" << K << ": canonical form differs on random sample"
                    << in << " c=" << to_hex(cc) << "\n  datapath  " << raw_fields(dp)
                    << "\n  canonical " << raw_fields(c);
      return;
    }
  }
}
}  // namespace

TEST(FeatureCanonical, EquivalentForPresets) {
  std::mt19937 rng(7);
  for (const Datapath& dp : presets_and_fp16_variants()) expect_equivalent(dp, std::min(dp.k_default, 64), rng, 3000);
}

TEST(FeatureCanonical, EquivalentForRandomConfigurations) {
  std::mt19937 rng(11);
  for (const Datapath& dp : random_configs(250)) expect_equivalent(dp, dp.k_default, rng, 1500);
}

TEST(FeatureVectorsTest, FixedAndNamed) {
  const FeatureVectors a = feature_vectors(kBinary16, kBinary16, kBinary32, 16);
  const FeatureVectors b = feature_vectors(kBinary16, kBinary16, kBinary32, 16);
  EXPECT_EQ(a.a, b.a);
  EXPECT_EQ(a.b, b.b);
  EXPECT_EQ(a.c, b.c);
  EXPECT_EQ(a.probe, b.probe);
  std::set<std::string> names(a.probe.begin(), a.probe.end());
  EXPECT_EQ(names.size(), a.probe.size()) << "probe names must be unique";
  EXPECT_EQ(a.a.size(), a.size() * 16);
  EXPECT_THROW(decide_features(a, std::vector<uint64_t>(3)), std::invalid_argument);
}
