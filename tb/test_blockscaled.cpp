// The block-scaled datapaths (issue 27): ST-FDPA (tcgen05 / mma.sync kind::mxf8f6f4) and
// GST-FDPA (kind::mxf4, kind::mxf4nvf4, NVFP4) on b200 and rtxpro6000.
//
// 1. The published examples of ../shared/spec/block-scaled.md (paper Eq. 10, Table 8).
// 2. An independent re-implementation written here from the spec's description (MMA-Sim's
//    formulation: every term as (s, e) with e its alignment exponent, cut toward zero at
//    2^(e_max - F), summed exactly, converted to binary32 toward zero with subnormals and
//    |sum| >= 2^128 giving Inf). It has its own element and scale decoders (a table of the OCP
//    formats) and its own conversion to binary32; it shares no code with core/ but the preset.
//    The reference dot() and FastDot must equal it on random and edge-case samples: subnormal
//    elements, zero and NaN scales, extreme E8M0 exponents, groups cancelling to zero, overflow.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "matcore/explore.hpp"
#include "matcore/fast.hpp"
#include "matcore/fields.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/sample.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"

using namespace mc;

namespace {

// ---- the independent model ------------------------------------------------------------------

/// An OCP element or scale format, from the spec's table.
struct Ocp {
  int e, m, bias;
  bool has_sign, sign_ignored, ieee_specials, fn_nan, pow2;
};
const Ocp kOcpE4M3{4, 3, 7, true, false, false, true, false};
const Ocp kOcpE5M2{5, 2, 15, true, false, true, false, false};
const Ocp kOcpE3M2{3, 2, 3, true, false, false, false, false};
const Ocp kOcpE2M3{2, 3, 1, true, false, false, false, false};
const Ocp kOcpE2M1{2, 1, 1, true, false, false, false, false};
const Ocp kOcpE8M0{8, 0, 127, false, false, false, false, true};
const Ocp kOcpUE4M3{4, 3, 7, true, true, false, true, false};

const Ocp& ocp(const Format& f) {
  if (f.name == "e4m3") return kOcpE4M3;
  if (f.name == "e5m2") return kOcpE5M2;
  if (f.name == "e3m2") return kOcpE3M2;
  if (f.name == "e2m3") return kOcpE2M3;
  if (f.name == "e2m1") return kOcpE2M1;
  if (f.name == "e8m0") return kOcpE8M0;
  return kOcpUE4M3;
}

/// x = (-1)^neg * s * 2^(e - m) with s an integer (the spec's s in [0, 2) times 2^m), e the
/// format's exponent (subnormals at the minimum normal exponent, not renormalised).
struct Val {
  bool nan = false, inf = false, neg = false;
  int64_t s = 0;  // integer significand
  int m = 0;      // its fraction bits
  int e = 0;
};

Val decode_ocp(const Ocp& f, uint64_t bits) {
  Val v;
  const int width = (f.has_sign ? 1 : 0) + f.e + f.m;
  const uint64_t E = (bits >> f.m) & ((1u << f.e) - 1), M = bits & ((1u << f.m) - 1);
  v.neg = f.has_sign && !f.sign_ignored && ((bits >> (width - 1)) & 1);
  v.m = f.m;
  if (f.pow2) {
    if (E == 0xFF) v.nan = true;
    v.s = 1;
    v.e = static_cast<int>(E) - f.bias;
    return v;
  }
  const uint64_t top = (1u << f.e) - 1;
  if (f.ieee_specials && E == top) {
    (M ? v.nan : v.inf) = true;
    return v;
  }
  if (f.fn_nan && E == top && M == (1u << f.m) - 1) {
    v.nan = true;
    return v;
  }
  v.s = static_cast<int64_t>(E ? (M | (1u << f.m)) : M);
  v.e = E ? static_cast<int>(E) - f.bias : 1 - f.bias;
  return v;
}

Val decode_b32(uint32_t c) {
  Val v;
  const uint32_t E = (c >> 23) & 0xFF, M = c & 0x7FFFFF;
  v.neg = c >> 31;
  v.m = 23;
  if (E == 0xFF) {
    (M ? v.nan : v.inf) = true;
    return v;
  }
  v.s = E ? (M | 0x800000) : M;
  v.e = E ? static_cast<int>(E) - 127 : -126;
  return v;
}

using i128 = __int128;

/// binary32 toward zero of sum * 2^q (sum an integer): subnormals kept, |x| >= 2^128 -> Inf.
uint32_t to_b32_rz(i128 sum, int q, bool zero_neg) {
  if (sum == 0) return zero_neg ? 0x80000000u : 0;
  const bool neg = sum < 0;
  unsigned __int128 mag = neg ? -static_cast<unsigned __int128>(sum) : static_cast<unsigned __int128>(sum);
  int top = 127;
  while (!((mag >> top) & 1)) --top;
  const int lead = q + top;  // exponent of the leading bit
  const uint32_t sb = neg ? 0x80000000u : 0;
  if (lead >= 128) return sb | 0x7F800000u;
  int lsb = (lead < -126 ? -126 : lead) - 23;  // the kept grid
  unsigned __int128 kept = lsb - q >= 128 ? 0 : lsb >= q ? mag >> (lsb - q) : mag << (q - lsb);
  if (kept == 0) return sb;
  if (lead < -126) return sb | static_cast<uint32_t>(kept);  // subnormal
  return sb | (static_cast<uint32_t>(lead + 127) << 23) | (static_cast<uint32_t>(kept) & 0x7FFFFF);
}

/// One term for the fused sum: value (-1)^neg * s * 2^(e - m) aligned at exponent e (its
/// alignment exponent), or a zero that reads e_zero.
struct Term {
  bool zero = true, neg = false;
  i128 s = 0;
  int m = 0, e = 0;
};

/// The spec's fused sum: e_max over the terms (zeros at e_zero), each cut toward zero to a
/// multiple of 2^(e_max - F), summed exactly, converted toward zero.
uint32_t fused_sum(const std::vector<Term>& t, int F, int e_zero, bool all_neg_zero) {
  int e_max = INT32_MIN;
  for (const Term& x : t) e_max = std::max(e_max, x.zero ? e_zero : x.e);
  i128 sum = 0;
  for (const Term& x : t) {
    if (x.zero || x.s == 0) continue;
    // s * 2^(e - m) in units of 2^(e_max - F): shift by (e - m) - (e_max - F)
    const int sh = (x.e - x.m) - (e_max - F);
    i128 v = sh >= 0 ? x.s << sh : (-sh >= 120 ? 0 : x.s >> -sh);  // magnitude: toward zero
    sum += x.neg ? -v : v;
  }
  return to_b32_rz(sum, e_max - F, all_neg_zero);
}

constexpr uint32_t kNaN = 0x7FFFFFFF;

/// The independent model of one K-chunk (K = the instruction's K) with c in binary32.
uint32_t oracle_chunk(const Datapath& dp, const uint64_t* a, const uint64_t* b, const uint64_t* sa,
                      const uint64_t* sb, int K, uint32_t c) {
  const Ocp &fa = ocp(dp.a_fmt), &fb = ocp(dp.b_fmt), &fs = ocp(dp.scale_fmt);
  const int F = dp.frac_bits, e_zero = dp.emin_lim;
  bool nan = false, pinf = false, ninf = false, all_neg_zero = true;
  std::vector<Val> pa(K), pb(K);
  for (int k = 0; k < K; ++k) {
    pa[k] = decode_ocp(fa, a[k]);
    pb[k] = decode_ocp(fb, b[k]);
  }
  const Val vc = decode_b32(c);
  std::vector<Term> terms;
  // the product x * y * s1 * s2 when it is special: NaN if any factor is NaN or Inf meets a
  // zero; else an infinity of the product's sign. Returns false for a finite product.
  auto special = [&](const Val& x, const Val& y, const Val& s1, const Val& s2) {
    if (x.nan || y.nan || s1.nan || s2.nan) return nan = true;
    if (!x.inf && !y.inf) return false;
    const bool zero = (!x.inf && x.s == 0) || (!y.inf && y.s == 0) || s1.s == 0 || s2.s == 0;
    if (zero) return nan = true;
    (x.neg != y.neg ? ninf : pinf) = true;
    return true;
  };
  Val one;
  one.s = 1;
  if (dp.group_size == 0) {  // ST-FDPA: each product scaled
    for (int k = 0; k < K; ++k) {
      const Val s1 = decode_ocp(fs, sa[k / dp.scale_block]), s2 = decode_ocp(fs, sb[k / dp.scale_block]);
      if (special(pa[k], pb[k], s1, s2)) continue;
      Term t;
      t.neg = pa[k].neg != pb[k].neg;
      t.s = static_cast<i128>(pa[k].s) * pb[k].s * s1.s * s2.s;
      t.m = pa[k].m + pb[k].m + s1.m + s2.m;
      t.e = pa[k].e + pb[k].e + s1.e + s2.e;
      t.zero = t.s == 0;
      if (!t.zero || !t.neg) all_neg_zero = false;
      terms.push_back(t);
    }
  } else {  // GST-FDPA: group sums at the scale exponents
    const int G = dp.group_size;
    for (int g = 0; g < K / G; ++g) {
      const Val s1 = decode_ocp(fs, sa[g * G / dp.scale_block]), s2 = decode_ocp(fs, sb[g * G / dp.scale_block]);
      if (s1.nan || s2.nan) nan = true;
      i128 S = 0;  // the exact group sum in units of 2^-(2 * 6) (E2M1 and the fp6/fp8 products
      bool all_zero = true;  // are multiples of 2^(emin_a - m_a + emin_b - m_b) >= 2^-20 here)
      for (int k = g * G; k < (g + 1) * G; ++k) {
        if (special(pa[k], pb[k], one, one)) continue;
        const i128 p = static_cast<i128>(pa[k].s) * pb[k].s;
        if (p == 0) {
          if (!(pa[k].neg != pb[k].neg)) all_neg_zero = false;
          continue;
        }
        all_zero = false;
        all_neg_zero = false;
        const int sh = (pa[k].e - pa[k].m + pb[k].e - pb[k].m) + 40;
        S += (pa[k].neg != pb[k].neg) ? -(p << sh) : (p << sh);
      }
      Term t;
      t.zero = all_zero || s1.s * s2.s == 0;
      t.neg = S < 0;
      t.s = (S < 0 ? -S : S) * s1.s * s2.s;
      t.m = 40 + s1.m + s2.m;
      t.e = s1.e + s2.e;
      terms.push_back(t);
    }
  }
  if (vc.nan) nan = true;
  if (vc.inf) (vc.neg ? ninf : pinf) = true;
  if (nan || (pinf && ninf)) return kNaN;
  if (pinf || ninf) return pinf ? 0x7F800000u : 0xFF800000u;
  Term tc;
  tc.zero = vc.s == 0;
  tc.neg = vc.neg;
  tc.s = vc.s;
  tc.m = 23;
  tc.e = vc.e;
  if (!tc.zero || !tc.neg) all_neg_zero = false;
  terms.push_back(tc);
  return fused_sum(terms, F, e_zero, all_neg_zero);
}

/// K beyond the instruction's K chains through c.
uint32_t oracle(const Datapath& dp, const std::vector<uint64_t>& a, const std::vector<uint64_t>& b,
                const std::vector<uint64_t>& sa, const std::vector<uint64_t>& sb, uint32_t c) {
  const int K = static_cast<int>(a.size()), L = dp.n_fma;
  for (int k0 = 0; k0 < K; k0 += L)
    c = oracle_chunk(dp, a.data() + k0, b.data() + k0, sa.data() + k0 / dp.scale_block,
                     sb.data() + k0 / dp.scale_block, std::min(L, K - k0), c);
  return c;
}

// ---- samples ----------------------------------------------------------------------------------

struct Sample {
  std::vector<uint64_t> a, b, sa, sb;
  uint32_t c = 0;
};

/// Random samples of dp: element patterns of every kind (subnormals and zeros included; NaN and
/// Inf where the format has them, one sample in 8), scales spread over the whole E8M0 range or
/// every UE4M3 pattern, with edge cases mixed in: zero and NaN scales, 2^-127 and 2^127, groups
/// that cancel (b negated on the second half of a group), c zero, subnormal, huge or special.
Sample random_sample(const Datapath& dp, int K, std::mt19937_64& g, int kind) {
  Sample s;
  const uint64_t ma = (uint64_t{1} << dp.a_fmt.width()) - 1, mb = (uint64_t{1} << dp.b_fmt.width()) - 1;
  const int ns = (K + dp.scale_block - 1) / dp.scale_block;
  const bool specials = kind % 8 == 7;
  auto element = [&](const Format& f, uint64_t m) {
    for (;;) {
      const uint64_t v = g() & m;
      const Unpacked u = decode(f, v);
      if (specials || u.is_finite()) return v;
    }
  };
  for (int k = 0; k < K; ++k) {
    s.a.push_back(element(dp.a_fmt, ma));
    s.b.push_back(element(dp.b_fmt, mb));
  }
  if (kind % 4 == 1 && dp.group_size) {  // cancelling groups: a repeated, b negated
    const uint64_t sign_b = uint64_t{1} << (dp.b_fmt.width() - 1);
    for (int k = 0; k + 1 < K; k += 2) {
      s.a[k + 1] = s.a[k];
      s.b[k + 1] = s.b[k] ^ sign_b;
    }
  }
  const uint64_t sm = (uint64_t{1} << dp.scale_fmt.width()) - 1;
  for (int j = 0; j < ns; ++j) {
    uint64_t x = g() & sm, y = g() & sm;
    if (kind % 4 == 2) {  // products near the middle of the range, scales near 1
      x = unit_scale_bits(dp.scale_fmt) + (g() % 9) - 4;
      y = unit_scale_bits(dp.scale_fmt) + (g() % 9) - 4;
    }
    if (kind % 16 == 3) x = g() % 2 ? 0x00 : sm - 1;  // extremes (e8m0: 2^-127, 2^127)
    if (!specials && decode(dp.scale_fmt, x).cls == Class::NaN) x = unit_scale_bits(dp.scale_fmt);
    if (!specials && decode(dp.scale_fmt, y).cls == Class::NaN) y = unit_scale_bits(dp.scale_fmt);
    s.sa.push_back(x);
    s.sb.push_back(y);
  }
  const uint32_t cs[] = {0, 0x80000000u, 0x00000001u, 0x7F7FFFFFu, 0x4B000000u, 0x7F800000u, 0x7FC00000u};
  s.c = kind % 5 == 0 ? cs[g() % (specials ? 7 : 5)] : static_cast<uint32_t>(g());
  if (!specials && ((s.c >> 23) & 0xFF) == 0xFF) s.c &= 0xBFFFFFFFu;
  return s;
}

std::string sanitize_name(std::string t) {
  for (char& ch : t)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return t;
}

std::vector<const Datapath*> scaled_presets() {
  std::vector<const Datapath*> v;
  for (const Datapath& d : all_presets())  // the NVIDIA structure the model above describes
    if (d.scaled() && !d.late_c && d.interleave == 1) v.push_back(&d);
  return v;
}


}  // namespace

// The spec's Eq. 10 example: a = [-2^13, -0.5, -0.25, -0.125, 0...], b = [2^10, 1, 1, 1, 0...],
// c = 2^23, exact -0.875. MXFP8 with the same a, b as E5M2 and unit scales gives -0.75 (F = 25
// keeps 2^-2 but not 2^-3); the GST-FDPA example gives -0.875 (F = 35 keeps every bit).
TEST(BlockScaled, PaperEq10Examples) {
  for (const char* arch : {"b200", "rtxpro6000"}) {
    const Datapath& mx = find_preset(arch, "mxf8f6f4.e5m2.e5m2");
    std::vector<uint64_t> a(32, 0), b(32, 0);
    a[0] = 0xF0; a[1] = 0xB8; a[2] = 0xB4; a[3] = 0xB0;  // -2^13, -0.5, -0.25, -0.125
    b[0] = 0x64; b[1] = b[2] = b[3] = 0x3C;              // 2^10, 1, 1, 1
    const uint64_t unit = 0x7F;
    EXPECT_EQ(dot(mx, a.data(), b.data(), 32, 0x4B000000, ScaleRefs{&unit, &unit}), 0xBF400000u) << arch;  // -0.75
    // GST-FDPA: group 0 (-4)(4) with scales 2^11, 2^8; group 1 (-1)(1), (-1)(0.5), (-0.5)(0.5) with
    // scales 1, 2^-1; groups 2 and 3 zero with unit scales; c = 2^23
    const Datapath& g = find_preset(arch, "mxf4nvf4.e8m0");
    std::vector<uint64_t> ga(64, 0), gb(64, 0);
    ga[0] = 0xE; gb[0] = 0x6;                             // -4, 4
    ga[16] = 0xA; gb[16] = 0x2;                           // -1, 1
    ga[17] = 0xA; gb[17] = 0x1;                           // -1, 0.5
    ga[18] = 0x9; gb[18] = 0x1;                           // -0.5, 0.5
    const uint64_t sa[4] = {127 + 11, 127, 127, 127}, sb[4] = {127 + 8, 126, 127, 127};
    EXPECT_EQ(dot(g, ga.data(), gb.data(), 64, 0x4B000000, ScaleRefs{sa, sb}), 0xBF600000u) << arch;  // -0.875
    // the same scales as text (dot --sa / --sb)
    EXPECT_EQ(parse_scale_list(g, "2^11,1,0x7f,1", 64, "--sa"), (std::vector<uint64_t>{138, 127, 127, 127}));
  }
}

// GST-FDPA's alignment exponent is the scale exponents only: a group whose sum is large but
// whose scales are small sits low, and a group that cancels to zero still sets e_max.
TEST(BlockScaled, GroupsAlignAtTheirScaleExponents) {
  const Datapath& d = find_preset("b200", "mxf4");
  std::vector<uint64_t> a(64, 0), b(64, 0);
  a[0] = 0x6; b[0] = 0x2;   // group 0: 4 * 1 = 4 ...
  a[1] = 0x6; b[1] = 0xA;   // ... + 4 * -1: cancels to 0, scales 2^40 (block 0: groups 0 and 1)
  a[16] = 0x2; b[16] = 0x2;  // group 1: 1 * 1, same block: 2^40
  a[32] = 0x2; b[32] = 0x2;  // group 2 (block 1, scales 1): 1
  const uint64_t sa[2] = {127 + 40, 127}, sb[2] = {127, 127};
  // e_max = 40: group 2 (1.0) sits 40 bits below, beyond F = 35: cut to 0. d = 2^40 (group 1)
  EXPECT_EQ(dot(d, a.data(), b.data(), 64, 0, ScaleRefs{sa, sb}), 0x53800000u);  // 2^40
  // group 1 zero as well: group 0 cancels but keeps e_max = 40, so group 2's 1.0 is still cut
  b[16] = 0;
  EXPECT_EQ(dot(d, a.data(), b.data(), 64, 0, ScaleRefs{sa, sb}), 0x00000000u);
  // with group 0 all zero (e_zero) too, group 2's 1.0 is exact
  a[0] = a[1] = 0;
  EXPECT_EQ(dot(d, a.data(), b.data(), 64, 0, ScaleRefs{sa, sb}), 0x3F800000u);
  // a NaN scale gives NaN, even on a block of zeros
  const uint64_t nan_sa[2] = {127, 0xFF};
  EXPECT_EQ(dot(d, a.data(), b.data(), 64, 0, ScaleRefs{nan_sa, sb}), 0x7FFFFFFFu);
  // group_align = sum (a design choice): a group sits at its own sum's exponent, and one that
  // cancels reads e_zero, so group 2's 1.0 survives a cancelled group 0 scaled by 2^40
  Datapath s = d;
  set_field(s, "group_align", "sum");
  a[0] = a[1] = 0x6;
  b[0] = 0x2;
  b[1] = 0xA;  // group 0: 4 - 4 = 0 at scale 2^40
  EXPECT_EQ(dot(d, a.data(), b.data(), 64, 0, ScaleRefs{sa, sb}), 0x00000000u);  // scale: cut
  EXPECT_EQ(dot(s, a.data(), b.data(), 64, 0, ScaleRefs{sa, sb}), 0x3F800000u);  // sum: 1.0
  s.group_size = 0;
  EXPECT_THROW(validate_datapath(s), std::invalid_argument);  // "sum" needs groups
}

// The reference stages and the fast path equal the independent model on every block-scaled
// preset: 600 samples each, with the edge cases of random_sample, K = the instruction's K and
// twice it (chained through c).
TEST(BlockScaled, EqualsAnIndependentModel) {
  std::mt19937_64 g(2027);
  for (const Datapath* dp : scaled_presets()) {
    const FastDot fd(*dp);
    int mismatches = 0;
    for (int i = 0; i < 600; ++i) {
      const int K = dp->k_default * (i % 3 == 2 ? 2 : 1);
      const Sample s = random_sample(*dp, K, g, i);
      const uint32_t want = oracle(*dp, s.a, s.b, s.sa, s.sb, s.c);
      const uint64_t got = dot(*dp, s.a.data(), s.b.data(), K, s.c, ScaleRefs{s.sa.data(), s.sb.data()});
      // the fast kernel with the scales (ST-FDPA: the fused kernel; GST-FDPA: the stages)
      EXPECT_EQ(fd(s.a.data(), s.b.data(), K, s.c, ScaleRefs{s.sa.data(), s.sb.data()}), want) << dp->name() << " sample " << i;
      if (got != want && ++mismatches <= 3) {
        std::string in;
        for (int k = 0; k < K; ++k) in += to_hex_bits(dp->a_fmt, s.a[k]) + "*" + to_hex_bits(dp->b_fmt, s.b[k]) + " ";
        std::string sc;
        for (size_t j = 0; j < s.sa.size(); ++j) sc += to_hex_bits(dp->scale_fmt, s.sa[j]) + "/" + to_hex_bits(dp->scale_fmt, s.sb[j]) + " ";
        ADD_FAILURE() << dp->name() << " sample " << i << ": dot 0x" << to_hex_bits(kBinary32, got) << " independent 0x"
                      << to_hex_bits(kBinary32, want) << "\n  c=0x" << to_hex_bits(kBinary32, s.c) << " scales " << sc
                      << "\n  " << in;
      }
    }
    EXPECT_EQ(mismatches, 0) << dp->name();
    // unit scales: the fast path (its strategy table sends scaled datapaths to the reference)
    const Sample s = random_sample(*dp, dp->k_default, g, 2);
    std::vector<uint64_t> one(s.sa.size(), unit_scale_bits(dp->scale_fmt));
    EXPECT_EQ(fd(s.a.data(), s.b.data(), dp->k_default, s.c), oracle(*dp, s.a, s.b, one, one, s.c)) << dp->name();
  }
}

// The block-scaled samples on the fast kernel (FastDot with scales: ST-FDPA with E8M0 scales
// on the fused kernel, the CDNA4 late-c and odd/even datapaths included) against the reference
// stages, on every block-scaled preset: NaN, zero and extreme scales, specials, K of one
// instruction, of several (the last partial) and K = 1.
TEST(BlockScaled, FastKernelWithScalesEqualsTheStages) {
  std::mt19937_64 g(777);
  int presets = 0;
  for (const Datapath& dp : all_presets()) {
    if (!dp.scaled()) continue;
    ++presets;
    const FastDot fd(dp);
    int mismatches = 0;
    for (int i = 0; i < 300; ++i) {
      const int K = i % 3 == 0 ? dp.k_default : i % 3 == 1 ? 2 * dp.n_fma + 3 : 1;
      const Sample s = random_sample(dp, K, g, i);
      const ScaleRefs r{s.sa.data(), s.sb.data()};
      const uint64_t want = dot(dp, s.a.data(), s.b.data(), K, s.c, r), got = fd(s.a.data(), s.b.data(), K, s.c, r);
      if (got != want && ++mismatches <= 2)
        ADD_FAILURE() << dp.name() << " sample " << i << " K=" << K << ": fast 0x" << to_hex(got) << " stages 0x" << to_hex(want);
    }
    EXPECT_EQ(mismatches, 0) << dp.name();
  }
  EXPECT_GT(presets, 100);
}

// FastDot::batch with the scales (ST-FDPA with E8M0 scales: the fused lane kernels, 16 samples
// at once, the scale exponents added to the products'; GST-FDPA: the stages) against the
// reference stages sample by sample, on every block-scaled preset and every lane instruction
// set this CPU has: 16 x 12 + 5 samples a K (a partial last block of lanes), the edge cases of
// random_sample (NaN, zero and extreme scales, specials, subnormal elements) among them, K of one
// instruction, of two (chained through c) and of one product.
TEST(BlockScaled, LaneBatchWithScalesEqualsTheStages) {
  int lane_presets = 0, st_presets = 0;
  for (const char* isa : {"", "generic", "avx2", "avx512"}) {
    if (*isa) ::setenv("MATCORE_LANES", isa, 1);
    std::mt19937_64 g(4242);
    for (const Datapath& dp : all_presets()) {
      if (!dp.scaled()) continue;
      const FastDot fd(dp);
      if (*isa && (std::string(fd.lanes()) != isa || dp.group_size > 0)) continue;  // not on this CPU; GST: once
      if (!*isa && dp.group_size == 0) ++st_presets, lane_presets += std::string(fd.lane_kernel()) != "none";
      for (const int K : {dp.k_default, 2 * dp.k_default, 1}) {
        const int n = 16 * 12 + 5, per = (K + dp.scale_block - 1) / dp.scale_block;
        std::vector<uint64_t> a, b, sa, sb, c, d(n);
        for (int i = 0; i < n; ++i) {
          const Sample s = random_sample(dp, K, g, i);
          a.insert(a.end(), s.a.begin(), s.a.end());
          b.insert(b.end(), s.b.begin(), s.b.end());
          sa.insert(sa.end(), s.sa.begin(), s.sa.end());
          sb.insert(sb.end(), s.sb.begin(), s.sb.end());
          c.push_back(s.c);
        }
        fd.batch(a.data(), b.data(), c.data(), d.data(), n, K, sa.data(), sb.data());
        int mismatches = 0;
        for (int i = 0; i < n; ++i) {
          const size_t o = static_cast<size_t>(i) * K, q = static_cast<size_t>(i) * per;
          const uint64_t want = dot(dp, &a[o], &b[o], K, c[i], ScaleRefs{&sa[q], &sb[q]});
          if (d[i] != want && ++mismatches <= 2)
            ADD_FAILURE() << dp.name() << " lanes " << fd.lanes() << " K=" << K << " sample " << i << ": batch 0x"
                          << to_hex(d[i]) << " stages 0x" << to_hex(want);
        }
        ASSERT_EQ(mismatches, 0) << dp.name() << " lanes " << fd.lanes() << " K=" << K;
      }
    }
  }
  ::unsetenv("MATCORE_LANES");
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) EXPECT_EQ(lane_presets, st_presets);  // every ST-FDPA preset runs in lanes
  EXPECT_GT(st_presets, 90);
#endif
}

// The grouper's kernel (fast_grouped.cpp) off the presets' path, through check_fast (every
// sample's scales drawn, one in 16 any pattern; batch, single-sample kernel and stages compared):
// groups aligned at their sums' leading bits, an adder too wide for 64-bit integers (F = 50),
// e4m3 elements (a NaN among them: the flags' path of the product table), RD alignment and
// rounding, a smaller group and scale block, e4m3 x e4m3 (no table: the elements decoded).
TEST(BlockScaled, GrouperKernelEqualsTheStagesOffThePresets) {
  const char* settings[] = {"group_align=sum", "frac_bits=50", "a_fmt=e4m3", "prod_align=rd,out_round=rd",
                            "group_size=8,scale_block=16", "a_fmt=e4m3,b_fmt=e4m3"};
  for (const char* arch : {"b200", "rtxpro6000"})
    for (const char* type : {"nvfp4", "mxf4"})
      for (const char* set : settings) {
        Datapath dp = find_preset(arch, type);
        apply_settings(dp, set);
        EXPECT_STREQ(FastDot(dp).strategy(), "grouped/scaled") << arch << " " << type << " " << set;
        const FastCheck r = check_fast(dp, 3000, 11);
        EXPECT_EQ(r.mismatches, 0u) << arch << " " << type << " " << set << "\n" << r.first;
        EXPECT_EQ(r.samples, 3000u);
      }
}

// The fused lane kernels with scales off the presets' path (check_fast: batch with every
// sample's scales = single-sample kernel = stages): products aligned by round-down, products
// that overflow (prod_overflow_exp = 8: tested on the product's own exponent, before the
// scaler), a wider F, late c with odd/even sums (mi355x's datapath) rounding down.
TEST(BlockScaled, ScaledLanesEqualTheStagesOffThePresets) {
  const std::pair<const char*, const char*> cases[] = {
      {"b200", "prod_align=rd"}, {"b200", "prod_overflow_exp=8"}, {"b200", "frac_bits=40"},
      {"mi355x", "prod_overflow_exp=8"}, {"mi355x", "out_round=rd"}};
  for (const auto& [arch, set] : cases) {
    Datapath dp = find_preset(arch, std::string(arch) == "b200" ? "mxf8f6f4.e4m3.e2m1" : "scale.e4m3.e2m1");
    apply_settings(dp, set);
    EXPECT_STRNE(FastDot(dp).lane_kernel(), "none") << arch << " " << set;
    const FastCheck r = check_fast(dp, 4000, 12);
    EXPECT_EQ(r.mismatches, 0u) << arch << " " << set << "\n" << r.first;
  }
}

// The CDNA4 hypotheses (v_mfma_scale_f32_*_f8f6f4: the CDNA3 odd/even datapath with a scaler,
// docs/architectures/cdna4.md), checked against their own unscaled types, two relations that
// hold by the ISA's description whatever the open fields are:
//   * unit scales (2^0) give the unscaled type's d bit for bit, specials included;
//   * one scale 2^u for every block (u = s_a + s_b) gives 2^u times the unscaled d of c * 2^-u:
//     every alignment and rounding is relative, so it moves with the scale (inputs and results
//     kept far from the subnormal and overflow ranges, where the relation does not hold).
TEST(BlockScaled, Cdna4ScaledTypesScaleTheirUnscaledTypes) {
  std::mt19937_64 g(4950);
  int types = 0, scaled = 0;
  for (const Datapath& dp : all_presets()) {
    if (dp.family != "cdna4" || !dp.scaled() || dp.arch != "mi355x") continue;
    ++types;
    const std::string t = dp.a_fmt == dp.b_fmt ? dp.a_fmt.name : dp.a_fmt.name + "," + dp.b_fmt.name;
    const Datapath& plain = find_preset("mi355x", t);
    ASSERT_FALSE(plain.scaled());
    const int K = dp.k_default, ns = K / dp.scale_block;
    for (int i = 0; i < 200; ++i) {
      const Sample s = random_sample(dp, K, g, i);
      const std::vector<uint64_t> one(ns, unit_scale_bits(kE8M0));
      const uint64_t want = dot(plain, s.a.data(), s.b.data(), K, s.c);
      ASSERT_EQ(dot(dp, s.a.data(), s.b.data(), K, s.c, ScaleRefs{one.data(), one.data()}), want)
          << dp.name() << " unit scales, sample " << i;
      // a uniform scale: finite elements, |c| in [2^-20, 2^20), u in [-12, 12]
      const int sa = static_cast<int>(g() % 13) - 6, sb = static_cast<int>(g() % 13) - 6, u = sa + sb;
      const Sample f = random_sample(dp, K, g, 0);
      const uint32_t c = static_cast<uint32_t>((g() & 0x807FFFFF) | (uint64_t(127 + static_cast<int>(g() % 40) - 20) << 23));
      const uint64_t d0 = dot(plain, f.a.data(), f.b.data(), K, c);
      const std::vector<uint64_t> xa(ns, 127 + sa), xb(ns, 127 + sb);
      const uint32_t cu = c + static_cast<uint32_t>(u * (1 << 23));
      const uint64_t du = dot(dp, f.a.data(), f.b.data(), K, cu, ScaleRefs{xa.data(), xb.data()});
      const int e0 = static_cast<int>((d0 >> 23) & 0xFF);
      if (e0 < 40 || e0 > 215) continue;  // zero, tiny or huge: outside the relation
      EXPECT_EQ(du, d0 + static_cast<uint64_t>(static_cast<int64_t>(u) * (1 << 23)))
          << dp.name() << " sample " << i << " scale 2^" << u << ": d 0x" << to_hex_bits(kBinary32, du)
          << ", unscaled 0x" << to_hex_bits(kBinary32, d0);
      ++scaled;
    }
  }
  EXPECT_EQ(types, 25);
  EXPECT_GT(scaled, 25 * 150);
}

// Bad scales on the command line and in files: clear errors naming what and where.
TEST(BlockScaled, ScaleTextAndFilesAreChecked) {
  const Datapath& nv = find_preset("b200", "nvfp4");
  EXPECT_EQ(parse_scale(kUE4M3, "1.5"), 0x3Cu);
  EXPECT_EQ(parse_scale(kUE4M3, "0x80"), 0x80u);  // the ignored sign bit: zero
  EXPECT_EQ(parse_scale(kE8M0, "2^-127"), 0x00u);
  EXPECT_EQ(parse_scale(kE8M0, "nan"), 0xFFu);
  EXPECT_THROW(parse_scale(kE8M0, "3"), InputError);       // not a power of two
  EXPECT_THROW(parse_scale(kE8M0, "2^128"), InputError);   // out of range
  EXPECT_THROW(parse_scale(kE8M0, "0"), InputError);       // e8m0 has no zero
  EXPECT_THROW(parse_scale(kUE4M3, "-1"), InputError);     // scales are not negative
  EXPECT_THROW(parse_scale(kE8M0, "0x100"), InputError);   // 9 bits
  EXPECT_EQ(kE8M0.emax(), 127);                             // 0xfe; 0xff is NaN
  EXPECT_THROW(format_by_name("e8m0"), std::invalid_argument);  // a scale, not an element format
  EXPECT_EQ(find_format("ue8m0"), &kE8M0);
  EXPECT_THROW(parse_scale_list(nv, "1,1", 16, "--sa"), InputError);  // K = 16: one scale
  EXPECT_THROW(parse_scale_list(find_preset("b200", "fp16"), "1", 16, "--sa"), InputError);
  const std::string dir = ::testing::TempDir();
  auto write = [&](const std::string& name, const std::string& text) {
    FILE* f = std::fopen((dir + name).c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return dir + name;
  };
  const ScaleFile ok = read_scale_file(write("sa_ok.txt", "# sa\n7f 80 01 fe\n00 7f 7f 7f\n"), 4, kE8M0);
  EXPECT_EQ(ok.samples(), 2u);
  EXPECT_EQ(ok.v[1], 0x80u);
  EXPECT_EQ(ok.lines[1], 3u);
  EXPECT_EQ(scale_file_text(ok.v, 4), "7f 80 01 fe\n00 7f 7f 7f\n");
  auto err = [&](const std::string& text) {
    try {
      read_scale_file(write("sa_bad.txt", text), 4, kE8M0);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(err("7f 7f 7f\n"), dir + "sa_bad.txt:1: scales: line holds 3 scales, expected 4");
  EXPECT_EQ(err("7f 7f 7f 7f\n7f 7g 7f 7f\n"), dir + "sa_bad.txt:2: scale 2: '7g' is not 2 hex digits of a e8m0 pattern");
  EXPECT_EQ(err(""), dir + "sa_bad.txt: no samples (empty file)");
  // a scale file written for another scale format (its header says so) is refused by the commands
  const std::string other = write("sa_e8m0.txt", "# matcore sample sa=e8m0 block=16\n7f 7f 7f 7f\n");
  EXPECT_THROW(check_header(other, "sa", kUE4M3), InputError);
  EXPECT_NO_THROW(check_header(other, "sa", kE8M0));
}

// The vector files of a block-scaled type: sample writes sa.txt and sb.txt beside a/b/c (fp4
// elements as their own 2-digit patterns), stream_files (run, validate) reads them, and its d
// equals dot() over the same samples read back; without scale files, or with a short one, the
// error names the file. fp4 written widened to binary32 gives the same d as its native form.
TEST(BlockScaled, VectorFilesWithScales) {
  for (const char* type : {"nvfp4", "mxf8f6f4.e4m3.e2m1"}) {
    const Datapath& dp = find_preset("b200", type);
    SampleSpec s = sample_spec_for(dp);
    s.N = 300;
    const std::string dir = ::testing::TempDir() + "bs_" + sanitize_name(type), wdir = dir + "_w";
    write_samples(s, dir, 2);
    s.native = false;
    write_samples(s, wdir, 2);
    const StreamResult r = stream_files(dp, dir + "/a.txt", dir + "/b.txt", dir + "/c.txt", "", dir + "/d.txt", 0,
                                        false, 2, 0, false);
    EXPECT_EQ(r.n, 300u);
    const AbFile A = read_ab_file(dir + "/a.txt", 0, dp.a_fmt), B = read_ab_file(dir + "/b.txt", 0, dp.b_fmt);
    EXPECT_EQ(A.digits(), 2) << type;  // e4m3 and e2m1 alike: 2 hex digits
    const std::vector<uint64_t> C = read_cd_file(dir + "/c.txt", 32), D = read_cd_file(dir + "/d.txt", 32);
    const int per = scales_per_sample(dp, A.K);
    const ScaleFile SA = read_scale_file(dir + "/sa.txt", per, dp.scale_fmt), SB = read_scale_file(dir + "/sb.txt", per, dp.scale_fmt);
    ASSERT_EQ(D.size(), 300u);
    for (size_t i = 0; i < 300; ++i)
      ASSERT_EQ(D[i], dot(dp, &A.v[i * A.K], &B.v[i * A.K], A.K, C[i], ScaleRefs{&SA.v[i * per], &SB.v[i * per]})) << i;
    // the widened files (and the scale files beside them) give the same d
    const StreamResult w = validate_files(dp, wdir + "/a.txt", wdir + "/b.txt", wdir + "/c.txt", dir + "/d.txt", 0, false, 2);
    EXPECT_EQ(w.n, 300u);
    EXPECT_EQ(w.mismatches, 0u);
    // explicit scale files: the b scales as a's too changes d (and mismatches name the scales)
    const StreamResult x = validate_files(dp, dir + "/a.txt", dir + "/b.txt", dir + "/c.txt", dir + "/d.txt", 0, false, 2,
                                          3, false, ScaleFiles{dir + "/sb.txt", dir + "/sb.txt"});
    EXPECT_GT(x.mismatches, 0u);
    ASSERT_FALSE(x.first.empty());
    EXPECT_EQ(x.first[0].sa.size(), static_cast<size_t>(per));
    EXPECT_EQ(x.first[0].line, x.first[0].index + 2);  // the files' line numbers: a header line first
    // a missing scale file
    try {
      validate_files(dp, dir + "/a.txt", dir + "/b.txt", dir + "/c.txt", dir + "/d.txt", 0, false, 2, 3, false,
                     ScaleFiles{dir + "/none.txt", ""});
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).find(dir + "/none.txt: missing scale file"), 0u) << e.what();
    }
  }
}

// explore on a block-scaled datapath: the workload's values quantised into blocks as the OCP MX
// spec chooses scales (E8M0: 2^(floor(log2 amax) - emax of the element format)), the design and
// the exact reference with the same scales. One instruction of fp4 products sums exactly
// (G = 16, F = 35), so every sample of mxf4 at k = 64 is correctly rounded; MXFP8 at k = 1024
// chains 32 instructions through binary32 toward zero: biased toward zero.
TEST(BlockScaled, ExploreQuantisesIntoBlocks) {
  const Datapath& mx = find_preset("b200", "mxf8f6f4.e4m3.e4m3");
  std::vector<uint64_t> a(64), b(64), sa(2), sb(2);
  workload_scaled_inputs(Workload::Normal, mx, 64, 1, 7, a.data(), b.data(), sa.data(), sb.data());
  for (int blk = 0; blk < 2; ++blk) {
    int emax = -1000;
    for (int i = blk * 32; i < blk * 32 + 32; ++i) {
      const Unpacked u = decode(kE4M3, a[i]);
      ASSERT_NE(u.cls, Class::NaN);
      if (u.cls == Class::Normal) emax = std::max(emax, u.exp);
    }
    // the block's largest element lands in the top binade of E4M3 (2^8 .. 448, saturating)
    EXPECT_EQ(emax, 8) << blk;
    EXPECT_LT(sa[blk], 0xFFu);
  }
  ExploreSpec spec;
  spec.n = 2000;
  spec.threads = 2;
  const ErrorStats fp4 = measure_error(find_preset("b200", "mxf4"), 64, spec);
  EXPECT_EQ(fp4.correct, fp4.finite);
  EXPECT_EQ(fp4.finite, 2000u);
  const ErrorStats fp8 = measure_error(mx, 1024, spec);
  EXPECT_LT(fp8.mean_ulp, -0.2);  // toward zero
  EXPECT_LT(fp8.correct, fp8.finite);
}
