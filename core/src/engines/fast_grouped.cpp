// The grouper's scalar kernel (GST-FDPA: tcgen05 kind::mxf4 and kind::mxf4nvf4, NVFP4): a second,
// fixed-width implementation of the grouper stage (stages.hpp group_term) and the fused adder
// after it (aligner, adder, rounder with early c), for FastDot with scales. The reference stays
// the definition: a NaN or Inf element, a NaN scale, NaN/Inf c, and every datapath outside the
// ranges checked in choose_grouped go to dot() (tb/test_blockscaled.cpp compares the two).
//
//   group m (G products):  S_m = sum of a_k b_k in units of 2^lsb (exact, int64)
//                          term_m = |S_m| * alpha.sig * beta.sig at 2^(e_alpha + e_beta),
//                                   frac = -lsb + scale.frac            (group_align = "scale")
//                          or the same value at its leading bit         (group_align = "sum")
//   aligner:  e = max(exponents of the nonzero-scaled groups, c's), >= e_zero (emin_lim)
//   adder:    sum of every term shifted to 2^(e - F) (align_v: the datapath's prod_align)
//   rounder:  the sum rounded once to out_fmt
#include <algorithm>

#include "matcore/model.hpp"
#include "matcore/stages.hpp"
#include "fast_align.hpp"
#include "fast_impl.hpp"

namespace mc::fastk {

namespace {

using Impl = FastDot::Impl;

/// A group term (or c) as the aligner takes it: value (-1)^neg sig 2^(exp - frac); normal:
/// false for a Zero term (no exponent; all products zero or a zero scale).
struct GTerm {  // (no member initialisers: grouped_chunk's array of them is not cleared on every call)
  uint64_t sig;
  int exp, frac;
  bool neg, normal;
};
constexpr GTerm kZeroTerm{0, 0, 0, false, false};

/// The exact product x y (finite, nonzero) in units of 2^lsb, signed: a group sum's term.
inline int64_t product_units(const Impl& I, const Op& x, const Op& y, int lsb) {
  const int64_t m = static_cast<int64_t>((x.sig * y.sig) << (x.exp + y.exp - I.raw_frac - lsb));
  return x.sign != y.sign ? -m : m;
}

/// Group [i, i + n) of a chunk: false where the reference must take the sample (a NaN/Inf
/// element; the NaN scale is tested by the caller).
inline bool gst_group(const Impl& I, const uint64_t* a, const uint64_t* b, int n, const ScaleProduct& sp, int lsb,
                      GTerm& t) {
  int64_t S = 0;
  bool any = false, all_neg = true;
  if (!I.group_products.empty()) {  // narrow elements: every product from the table
    const int wb = I.B.width;
    auto at = [&](int k) { return ((a[k] & I.A.wmask) << wb) | (b[k] & I.B.wmask); };
    int64_t nz = 0;
    for (int k = 0; k < n; ++k) {
      const int64_t v = I.group_products[at(k)];
      S += v;
      nz |= v;
    }
    any = nz != 0;
    // the flags (a NaN/Inf element where the formats have one; the signs, for a group of zero
    // products) only where they can matter
    if (I.group_specials || !any) {
      uint8_t f_and = 3, f_or = 0;
      for (int k = 0; k < n; ++k) f_and &= I.group_flags[at(k)], f_or |= I.group_flags[at(k)];
      if (f_or & 2) return false;
      all_neg = (f_and & 1) != 0;
    }
  } else {
    for (int k = 0; k < n; ++k) {
      const Op x = I.A.get(a[k]), y = I.B.get(b[k]);
      if (x.special | y.special) return false;
      all_neg &= x.sign != y.sign;
      if (!x.sig || !y.sig) continue;
      any = true;
      S += product_units(I, x, y, lsb);
    }
  }
  t = kZeroTerm;
  if (!any) { t.neg = all_neg && n > 0; return true; }  // a Zero term: -0 for a group of -0 products
  if (sp.cls == Class::Zero) return true;                  // a zero scale: a Zero term
  t.normal = true;  // also when the group cancels to 0: it keeps its scale exponent
  t.neg = S < 0;
  t.sig = static_cast<uint64_t>(S < 0 ? -S : S) * static_cast<uint64_t>(sp.sig);
  t.exp = sp.exp;
  t.frac = -lsb + sp.frac;
  if (I.dp.group_by_sum) {  // the same value at the exponent of its leading bit
    if (t.sig == 0) { t = kZeroTerm; return true; }
    const int m = 63 - __builtin_clzll(t.sig);
    t.exp += m - t.frac;
    t.frac = m;
  }
  return true;
}

/// scale_product (stages.hpp) with the scales decoded by I.Sc's table.
inline ScaleProduct fast_scale(const Impl& I, uint64_t alpha, uint64_t beta) {
  const Op x = I.Sc.get(alpha), y = I.Sc.get(beta);
  ScaleProduct s;
  if (x.special || y.special) { s.cls = Class::NaN; return s; }  // (the scale formats have no Inf)
  if (!x.sig || !y.sig) { s.cls = Class::Zero; s.sig = 0; return s; }
  s.sig = static_cast<u128>(x.sig * y.sig);
  s.frac = 2 * I.Sc.mbits;
  s.exp = x.exp + y.exp;
  return s;
}

/// One chunk of n_fma products (its groups) and c: d rounded, as the stages' grouper, aligner,
/// adder and rounder; false: the reference. T: the adder's sum (int64_t where choose_grouped's
/// bound allows, else i128).
template <class T>
bool grouped_chunk(const Impl& I, const uint64_t* a, const uint64_t* b, int k0, int n, const ScaleRefs& sr,
                   uint64_t cbits, uint64_t& out) {
  const Datapath& dp = I.dp;
  const int G = dp.group_size, lsb = I.group_lsb, F = dp.frac_bits;
  const uint64_t one = unit_scale_bits(dp.scale_fmt);
  GTerm t[kMaxGroupsPerChunk + 1];
  int m = 0, jlast = -1;
  ScaleProduct sp;
  for (int i = 0; i < n; i += G, ++m) {
    const int j = (k0 + i) / dp.scale_block;
    if (j != jlast) {  // (the groups of one scale block share it)
      sp = fast_scale(I, sr.a ? sr.a[j] : one, sr.b ? sr.b[j] : one);
      jlast = j;
    }
    if (sp.cls == Class::NaN) return false;
    if (!gst_group(I, a + i, b + i, std::min(G, n - i), sp, lsb, t[m])) return false;
  }
  const Op u = I.Cg.get(cbits);  // decode_operand of out_fmt
  if (u.special) return false;
  const GTerm c{u.sig, u.exp, I.cmb, u.sign, u.sig != 0};
  // the sign of an exact zero (zero_sum_sign over the group terms and c)
  bool all_zero = !c.normal, all_neg = c.neg;
  int e = kNone;
  for (int i = 0; i < m; ++i) {
    all_zero &= !t[i].normal;
    all_neg &= t[i].neg;
    if (t[i].normal) e = std::max(e, t[i].exp);
  }
  const bool zs = all_zero ? all_neg : dp.out_round == Rounding::RD;
  if (c.normal) e = std::max(e, c.exp);
  else if (dp.c_zero_exp != kNone) e = std::max(e, dp.c_zero_exp);
  if (e == kNone) { out = I.R.zero(zs); return true; }
  if (dp.emin_lim != kNone && e < dp.emin_lim) e = dp.emin_lim;
  T s = 0;
  t[m] = c;
  for (int i = 0; i <= m; ++i)
    if (t[i].normal && t[i].sig) s += align_v<uint64_t, T>(t[i].sig, (e - F) - (t[i].exp - t[i].frac), t[i].neg, dp.prod_align);
  out = I.R.round_fixed_t(s, e - F, zs);
  return true;
}

template <class T>
uint64_t dot_grouped(const Impl& I, const uint64_t* a, const uint64_t* b, int K, uint64_t c, const ScaleRefs& sr) {
  const Datapath& dp = I.dp;
  uint64_t acc = c;
  for (int k0 = 0; k0 < K || k0 == 0; k0 += dp.n_fma) {
    const int n = std::max(0, std::min(dp.n_fma, K - k0));
    if (!grouped_chunk<T>(I, a + k0, b + k0, k0, n, sr, acc, acc)) return dot(dp, a, b, K, c, sr);
    if (K == 0) break;
  }
  return acc;
}

}  // namespace

ScaledFn choose_grouped(Impl& I) {
  const Datapath& dp = I.dp;
  if (!dp.scaled() || dp.group_size <= 0 || dp.adder != AdderKind::Fused || dp.late_c || dp.pair_interleave ||
      dp.c_final_add || dp.prod_round_out || dp.prod_overflow_exp != kNone || dp.n_fma / dp.group_size > kMaxGroupsPerChunk)
    return nullptr;
  // S in int64: a product is below 2^(emax_a + emax_b + 2), G of them, in units of 2^lsb; times
  // the scale significand (e8m0: 1 bit, ue4m3: 8) in uint64; the adder in i128 at most (a term
  // below 2^(64 + F), c below 2^(F + 1), the carries of the chunk's terms)
  const int lsb = group_lsb(dp);
  const int sum_bits = dp.a_fmt.emax() + dp.b_fmt.emax() + 2 - lsb + clog2(dp.group_size);
  const int scale_bits = dp.scale_fmt.mbits == 0 ? 1 : 2 * (dp.scale_fmt.mbits + 1);
  if (sum_bits > 62 || sum_bits + scale_bits > 63 || 64 + dp.frac_bits + 8 > 126) return nullptr;
  // the adder in int64: a term below 2^(sum_bits + scale_bits + F - its frac) (at the scale
  // exponent; at its leading bit, or c: below 2^(F + 1)), the carries of the chunk's terms
  const int frac_min = -lsb + 2 * dp.scale_fmt.mbits;
  const int term_bits = std::max(sum_bits + scale_bits + dp.frac_bits - frac_min, dp.frac_bits + 1);
  const bool i64 = term_bits + clog2(dp.n_fma / dp.group_size + 2) <= 62;
  // elements of 12 bits together at most (fp4, fp6): every product in a table (4096 entries)
  const int wa = dp.a_fmt.width(), wb = dp.b_fmt.width();
  if (wa + wb <= 12) {
    I.group_products.assign(size_t{1} << (wa + wb), 0);
    I.group_flags.assign(I.group_products.size(), 0);
    for (uint64_t x = 0; x < (uint64_t{1} << wa); ++x)
      for (uint64_t y = 0; y < (uint64_t{1} << wb); ++y) {
        const Op u = I.A.get(x), v = I.B.get(y);
        const size_t i = (x << wb) | y;
        const bool special = u.special || v.special;
        I.group_flags[i] = static_cast<uint8_t>((u.sign != v.sign ? 1 : 0) | (special ? 2 : 0));
        I.group_specials |= special;
        I.group_products[i] = special || !u.sig || !v.sig ? 0 : product_units(I, u, v, lsb);
      }
  }
  I.Sc.build(dp.scale_fmt, true);
  I.Cg.build(dp.out_fmt, dp.sub_in);
  I.group_lsb = lsb;
  return i64 ? &dot_grouped<int64_t> : &dot_grouped<i128>;
}

}  // namespace mc::fastk
