// The fast kernels (fast.hpp). Every function here is a second, fixed-width implementation of a
// stage of stages.hpp; the reference remains the definition (docs/performance.md, "Fast
// kernels"). Anything outside a kernel's range returns false and the sample goes to dot().
#include "matcore/fast.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "matcore/model.hpp"
#include "matcore/stages.hpp"
#include "matcore/wide.hpp"
#include "fast_align.hpp"
#include "fast_lanes.hpp"
#include "fast_impl.hpp"

namespace mc {

namespace {

constexpr int kGroupMax = 64;    // validate_datapath: n_fma <= 64
constexpr int kReorderMax = 512; // pair_interleave reorders K <= this on the stack

using Impl = FastDot::Impl;
using fastk::InFmt;
using fastk::Kernel;
using fastk::Op;
using fastk::RoundK;
using fastk::align_v;
using fastk::shift_rd;

template <class S>
inline int msb_of(S x) {
  if constexpr (sizeof(S) == 8) return 63 - __builtin_clzll(x);
  else return msb_index(x);
}

/// Product stage (multiply): exact product, overflow to Inf (-> false: reference), optional
/// rounding to out_fmt. sig == 0 <=> the product is zero.
template <class S>
inline bool product(const Impl& I, uint64_t abits, uint64_t bbits, S& sig, int& ex, bool& ng) {
  const Op x = I.A.get(abits), y = I.B.get(bbits);
  if (x.special | y.special) return false;
  ng = x.sign != y.sign;
  sig = static_cast<S>(x.sig) * static_cast<S>(y.sig);
  ex = x.exp + y.exp;
  if (sig == 0) return true;
  const Datapath& dp = I.dp;
  if (dp.prod_overflow_exp != kNone && msb_of(sig) + ex - I.raw_frac >= dp.prod_overflow_exp)
    return false;
  if (dp.prod_round_out) {
    uint64_t r;
    if constexpr (sizeof(S) == 8) r = I.Rprod.round(ng, sig, ex - I.raw_frac);
    else r = round_to_format(I.Rprod.f, Exact{ng, sig, ex - I.raw_frac, false}, I.Rprod.o);
    const Unpacked u = decode(dp.out_fmt, r);
    if (!u.is_finite()) return false;
    sig = u.sig;
    ex = u.exp;
  }
  return true;
}

template <class T>
inline T shl(T v, int s) { return v * (static_cast<T>(1) << s); }

struct CTerm {
  uint64_t sig;
  int exp;
  bool sign, nz;
};
inline bool c_term(const Impl& I, uint64_t cbits, CTerm& c) {
  const Unpacked u = decode_operand(I.dp.out_fmt, cbits, I.dp.sub_in);
  if (!u.is_finite()) return false;
  c = CTerm{u.sig, u.exp, u.sign, u.sig != 0};
  return true;
}

/// The late-c part of the fused adder for one sample: the odd-even recombination (interleave 2),
/// the c-aligner with its round-downs, the normaliser and the rounder. so/eo: the product sum
/// (or the odd one) at its e_max with F fraction bits (eo = kNone: no nonzero product); sn/en:
/// the even one (interleave 2).
template <class T>
uint64_t late_tail(const Impl& I, T so, int eo, T sn, int en, const CTerm& c, bool zs) {
  const Datapath& dp = I.dp;
  const int F = dp.frac_bits;
  T sv;
  int se, sf;
  if (dp.interleave == 2) {
    const int pf = dp.partial_frac;
    se = std::max(eo, en);
    sf = pf;
    sv = 0;
    if (se != kNone) {
      if (eo != kNone) sv += shift_rd<T>(so, (se - pf) - (eo - F));
      if (en != kNone) sv += shift_rd<T>(sn, (se - pf) - (en - F));
    }
  } else {
    sv = so;
    se = eo;
    sf = F;
  }
  const int e_c = c.nz ? c.exp : dp.c_zero_exp;
  if (e_c == kNone) return se == kNone ? I.R.zero(zs) : I.R.round_fixed_t(sv, se - sf, zs);
  const T cv = c.nz ? (c.sign ? -static_cast<T>(c.sig) : static_cast<T>(c.sig)) : T{0};
  if (se != kNone && se >= e_c) {
    // c shifted to e_max: RD to c_frac bits (dropped beyond c_drop_gap)
    T cs = 0;
    if (c.nz && !(dp.c_drop_gap != kNone && se - e_c > dp.c_drop_gap))
      cs = shift_rd<T>(cv, (se - dp.c_frac) - (c.exp - I.cmb));
    const int f = std::max(sf, dp.c_frac);
    const T acc = shl<T>(sv, f - sf) + shl<T>(cs, f - dp.c_frac);
    return I.R.round_fixed_t(acc, se - f, zs);
  }
  // e_c > e_max: the product sum shifted to e_c, RD to sum_frac bits; then normalise + RD.
  T ss = 0;
  if (se != kNone && sv != 0) ss = shift_rd<T>(sv, (e_c - dp.sum_frac) - (se - sf));
  const int cf = c.nz ? I.cmb : dp.c_frac;
  const int f = std::max(dp.sum_frac, cf);
  T acc = shl<T>(ss, f - dp.sum_frac) + shl<T>(cv, f - cf);
  int ae = e_c, af = f;
  if (dp.late_norm_rd) {
    if (acc != 0) {
      const u128 mag = acc < 0 ? static_cast<u128>(-static_cast<i128>(acc)) : static_cast<u128>(acc);
      const int lead = ae - af + msb_index(mag);
      const int e2 = std::max(lead, I.R.emin);
      acc = shift_rd<T>(acc, (e2 - dp.acc_frac) - (ae - af));
      ae = e2;
    }
    af = dp.acc_frac;
  }
  return I.R.round_fixed_t(acc, ae - af, zs);
}

// ---------------------------------------------------------------------------------------------
// Fused multi-term adder (CDNA3, NVIDIA): aligner, adder, [oddeven], [cadd, normaliser], rounder.
// eoff (ST-FDPA): each product's exponent moves by its block's scale exponents (power-of-two
// scales, the scaler stage of stages.hpp scale_term); nullptr: unscaled.
template <class S, class T>
bool fused_terms(const Impl& I, const uint64_t* a, const uint64_t* b, int n, uint64_t cbits,
                 uint64_t& out, const int* eoff) {
  const Datapath& dp = I.dp;
  S sig[kGroupMax];
  int ex[kGroupMax];
  bool ng[kGroupMax];
  bool any_nz = false, all_neg = true;
  for (int i = 0; i < n; ++i) {
    if (!product<S>(I, a[i], b[i], sig[i], ex[i], ng[i])) return false;
    if (eoff) ex[i] += eoff[i];
    any_nz |= sig[i] != 0;
    all_neg &= ng[i];
  }
  CTerm c;
  if (!c_term(I, cbits, c)) return false;
  any_nz |= c.nz;
  all_neg &= c.sign;
  const bool zs = any_nz ? dp.out_round == Rounding::RD : all_neg;
  const int F = dp.frac_bits;
  const AlignRound mode = dp.prod_align;

  if (!dp.late_c) {
    int e = kNone;
    for (int i = 0; i < n; ++i)
      if (sig[i] && ex[i] > e) e = ex[i];
    if (c.nz) e = std::max(e, c.exp);
    else if (dp.c_zero_exp != kNone) e = std::max(e, dp.c_zero_exp);
    if (e == kNone) { out = I.R.zero(zs); return true; }
    if (dp.emin_lim != kNone && e < dp.emin_lim) e = dp.emin_lim;
    T s = 0;
    const int base = e - F + I.pfrac;
    for (int i = 0; i < n; ++i)
      if (sig[i]) s += align_v<S, T>(sig[i], base - ex[i], ng[i], mode);
    if (c.nz) s += align_v<S, T>(static_cast<S>(c.sig), (e - F) - (c.exp - I.cmb), c.sign, mode);
    out = I.R.round_fixed_t(s, e - F, zs);
    return true;
  }

  // Late c: the product sum at its own e_max (S_sum), then the c-aligner.
  auto psum = [&](int first, int stride, T& v, int& e) {
    e = kNone;
    for (int i = first; i < n; i += stride)
      if (sig[i] && ex[i] > e) e = ex[i];
    v = 0;
    if (e == kNone) return;
    if (dp.emin_lim != kNone && e < dp.emin_lim) e = dp.emin_lim;
    const int base = e - F + I.pfrac;
    for (int i = first; i < n; i += stride)
      if (sig[i]) v += align_v<S, T>(sig[i], base - ex[i], ng[i], mode);
  };
  T so = 0, sn = 0;
  int eo, en = kNone;
  if (dp.interleave == 2) {
    psum(0, 2, so, eo);
    psum(1, 2, sn, en);
  } else {
    psum(0, 1, so, eo);
  }
  out = late_tail<T>(I, so, eo, sn, en, c, zs);
  return true;
}

template <class S, class T>
bool fused_group(const Impl& I, const uint64_t* a, const uint64_t* b, int n, uint64_t cbits, uint64_t& out) {
  return fused_terms<S, T>(I, a, b, n, cbits, out, nullptr);
}

/// A scale pair the fused kernels take: finite, nonzero, with a significand product of 1 (a
/// power of two: every E8M0 pair); the others go to the stages.
inline bool power_of_two(const ScaleProduct& p) { return p.cls == Class::Normal && p.sig == (u128{1} << p.frac); }

/// ST-FDPA with power-of-two scales (E8M0; any scale pair whose significand product is 1) on
/// the fused kernel: the scale exponents added to the products' (the scaler), then the same
/// aligner, adder and rounder. A NaN or zero scale, a scale pair with a significand, or a group
/// that leaves the kernel's range: the whole sample on the reference stages.
template <class S, class T>
uint64_t dot_scaled(const Impl& I, const uint64_t* a, const uint64_t* b, int K, uint64_t c, const ScaleRefs& sr) {
  const Datapath& dp = I.dp;
  const uint64_t one = unit_scale_bits(dp.scale_fmt);
  int eoff[kGroupMax];
  uint64_t acc = c;
  int jlast = -1, elast = 0;
  for (int k0 = 0; k0 < K || k0 == 0; k0 += dp.n_fma) {
    const int n = std::max(0, std::min(dp.n_fma, K - k0));
    for (int i = 0; i < n; ++i) {
      const int j = (k0 + i) / dp.scale_block;
      if (j != jlast) {
        const ScaleProduct p = scale_product(dp.scale_fmt, sr.a ? sr.a[j] : one, sr.b ? sr.b[j] : one);
        if (!power_of_two(p)) return dot(dp, a, b, K, c, sr);
        jlast = j;
        elast = p.exp;
      }
      eoff[i] = elast;
    }
    if (!fused_terms<S, T>(I, a + k0, b + k0, n, acc, acc, eoff)) return dot(dp, a, b, K, c, sr);
    if (K == 0) break;
  }
  return acc;
}

// ---------------------------------------------------------------------------------------------
// Exact two-term and n-term sums in 128-bit integers (pairwise tree, exact adder, final c).
struct Term {
  u128 sig;  // 0: zero
  int lsb;   // value = sig * 2^lsb
  bool neg;
};

/// Terms whose range exceeds 120 bits (several terms, or two that overlap): the exact sum in
/// the reference's accumulator of 64-bit limbs (mc::Wide, as stages.cpp's exact adder), its
/// top bits with a sticky for the rest rounded once. False beyond Wide::kMaxLimbs limbs
/// (there the reference's accumulator refuses the range too).
inline bool wide_sum_round(const RoundK& R, const Term* t, int n, int lo, int hi, bool zero_sign,
                           uint64_t& out) {
  const int nbits = hi - lo + 1 + 8;  // + carries of up to 2^7 terms
  if ((nbits + 2 + 63) / 64 + 1 > Wide::kMaxLimbs) return false;  // Wide::reset's limb count
  Wide w;
  w.reset(lo, nbits);
  for (int i = 0; i < n; ++i) w.add(t[i].neg, t[i].sig, t[i].lsb);
  out = w.is_zero() ? R.zero(zero_sign) : round_to_format(R.f, w.to_exact(), R.o);
  return true;
}

/// exact_sum_round over terms (wide_sum_round for ranges over 120 bits).
inline bool sum_round(const RoundK& R, const Term* t, int n, bool zero_sign, uint64_t& out) {
  int lo = 0, hi = 0;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    if (!t[i].sig) continue;
    const int h = t[i].lsb + msb_index(t[i].sig);
    if (!any) { lo = t[i].lsb; hi = h; any = true; continue; }
    lo = std::min(lo, t[i].lsb);
    hi = std::max(hi, h);
  }
  if (!any) { out = R.zero(zero_sign); return true; }
  if (hi - lo + 1 + 2 + msb_index(static_cast<u128>(n)) > 120) {
    // Two terms far apart (a pair of the tree, acc + c): the small one y lies wholly below the
    // large one X shifted left by g guard bits, where X * 2^g has at least 56 significant bits
    // (3 more than any output keeps), so y only says on which side of X the exact sum lies:
    // X * 2^g (+ or - 1) with a sticky rounds as the exact sum does.
    if (n != 2 || !t[0].sig || !t[1].sig) return wide_sum_round(R, t, n, lo, hi, zero_sign, out);
    const int h0 = t[0].lsb + msb_index(t[0].sig), h1 = t[1].lsb + msb_index(t[1].sig);
    const Term& X = h0 >= h1 ? t[0] : t[1];
    const bool y_neg = h0 >= h1 ? t[1].neg : t[0].neg;
    const int y_hi = h0 >= h1 ? h1 : h0, xm = msb_index(X.sig);
    const int g = std::max(3, 56 - xm);
    if (y_hi >= X.lsb - g || xm + g > 120) return wide_sum_round(R, t, n, lo, hi, zero_sign, out);
    u128 mag = X.sig << g;
    if (X.neg != y_neg) mag -= 1;  // X - y = (X 2^g - 1) + (1 - y 2^g), the last part in (0, 1)
    out = round_to_format(R.f, Exact{X.neg, mag, X.lsb - g, true}, R.o);
    return true;
  }
  i128 acc = 0;
  for (int i = 0; i < n; ++i)
    if (t[i].sig) {
      const i128 v = static_cast<i128>(t[i].sig << (t[i].lsb - lo));
      acc += t[i].neg ? -v : v;
    }
  out = R.round_fixed_t(acc, lo, R.mode == Rounding::RD);
  return true;
}

inline bool zero_sign_of(const Datapath& dp, const Term* t, int n) {
  bool all_zero = true, all_neg = true;
  for (int i = 0; i < n; ++i) {
    all_zero &= t[i].sig == 0;
    all_neg &= t[i].neg;
  }
  return all_zero ? all_neg : dp.out_round == Rounding::RD;
}

inline bool term_of(const Format& f, uint64_t bits, Term& t) {
  const Unpacked u = decode(f, bits);
  if (!u.is_finite()) return false;
  t = Term{u.sig, u.exp - u.mbits, u.sign};
  return true;
}

/// The group's products as terms t[0..n) and c as t[n] (the pairwise tree and the exact adder).
template <class S>
bool group_terms(const Impl& I, const uint64_t* a, const uint64_t* b, int n, uint64_t cbits, Term* t) {
  for (int i = 0; i < n; ++i) {
    S sig;
    int ex;
    bool ng;
    if (!product<S>(I, a[i], b[i], sig, ex, ng)) return false;
    t[i] = Term{static_cast<u128>(sig), ex - I.pfrac, ng};
  }
  CTerm c;
  if (!c_term(I, cbits, c)) return false;
  t[n] = Term{c.sig, c.exp - I.cmb, c.sign};
  return true;
}

/// Pairwise tree (CDNA2): fl(p1+p2), ..., then fl(c + tree); a level that rounds to Inf goes
/// to the reference (its Inf meets the other terms there).
template <class S>
bool pairwise_group(const Impl& I, const uint64_t* a, const uint64_t* b, int n, uint64_t cbits,
                    uint64_t& out) {
  if (n == 0) return false;
  const Datapath& dp = I.dp;
  Term lv[kGroupMax + 1];
  if (!group_terms<S>(I, a, b, n, cbits, lv)) return false;
  const Term c = lv[n];
  int m = n;
  while (m > 1) {
    int k = 0;
    for (int i = 0; i + 1 < m; i += 2) {
      uint64_t r;
      if (!sum_round(I.R, &lv[i], 2, zero_sign_of(dp, &lv[i], 2), r)) return false;
      if (!term_of(dp.out_fmt, r, lv[k++])) return false;
    }
    if (m & 1) lv[k++] = lv[m - 1];
    m = k;
  }
  const Term two[2] = {c, lv[0]};
  return sum_round(I.R, two, 2, zero_sign_of(dp, two, 2), out);
}

/// Exact adder (CDNA1, SFMA): the products and c summed exactly, one rounding.
template <class S>
bool exact_group(const Impl& I, const uint64_t* a, const uint64_t* b, int n, uint64_t cbits,
                 uint64_t& out) {
  Term t[kGroupMax + 1];
  if (!group_terms<S>(I, a, b, n, cbits, t)) return false;
  return sum_round(I.R, t, n + 1, zero_sign_of(I.dp, t, n + 1), out);
}

/// add_c_final: d = fl(acc + c) with c_final_round.
inline bool c_final(const Impl& I, uint64_t acc, uint64_t cbits, uint64_t& out) {
  Term two[2];
  if (!term_of(I.dp.out_fmt, acc, two[0])) return false;
  CTerm c;
  if (!c_term(I, cbits, c)) return false;
  two[1] = Term{c.sig, c.exp - I.cmb, c.sign};
  return sum_round(I.Rc, two, 2, zero_sign_of(I.dp, two, 2), out);
}

using GroupFn = bool (*)(const Impl&, const uint64_t*, const uint64_t*, int, uint64_t, uint64_t&);

/// dot(): the k order, the chaining of groups through c, the final c addition; any group that
/// leaves its kernel's range sends the whole sample to the reference.
template <GroupFn G>
uint64_t dot_with(const Impl& I, const uint64_t* a, const uint64_t* b, int K, uint64_t c) {
  const Datapath& dp = I.dp;
  const uint64_t* pa = a;
  const uint64_t* pb = b;
  uint64_t ra[kReorderMax], rb[kReorderMax];
  if (dp.pair_interleave && K > 2) {
    if (K > kReorderMax) return dot(dp, a, b, K, c);
    int j = 0;
    for (int pass = 0; pass < 2; ++pass)
      for (int k = 0; k < K; ++k)
        if (((k >> 1) & 1) == pass) { ra[j] = a[k]; rb[j] = b[k]; ++j; }
    pa = ra;
    pb = rb;
  }
  uint64_t acc = dp.c_final_add ? I.R.z_p : c;
  const int g = dp.n_fma;
  for (int k0 = 0; k0 < K || k0 == 0; k0 += g) {
    const int n = K - k0 < g ? K - k0 : g;
    if (!G(I, pa + k0, pb + k0, n < 0 ? 0 : n, acc, acc)) return dot(dp, a, b, K, c);
    if (K == 0) break;
  }
  if (dp.c_final_add && !c_final(I, acc, c, acc)) return dot(dp, a, b, K, c);
  return acc;
}

uint64_t reference_dot(const Impl& I, const uint64_t* a, const uint64_t* b, int K, uint64_t c) {
  return dot(I.dp, a, b, K, c);
}

/// The scalar kernels' strategy table (docs/architecture.md): the first row whose predicate holds
/// runs the datapath sample by sample (narrow_prod: products of at most 62 bits, else
/// wide_prod); no row: the reference interpreter (mc::dot). The lane kernels are chosen after
/// it, from fast_lower.cpp's tables.
using DotFn = uint64_t (*)(const Impl&, const uint64_t*, const uint64_t*, int, uint64_t);
struct ScalarStrategy {
  Kernel kernel;
  bool (*applies)(const Impl&);
  DotFn narrow_prod, wide_prod;
};
/// The fused adder's sums fit 62 bits: every width of its registers, the carries of n_fma + 2
/// terms and 4 guard bits.
bool fused_fits_i64(const Impl& I) {
  const Datapath& dp = I.dp;
  const int w = std::max({dp.frac_bits, dp.partial_frac, dp.c_frac, dp.sum_frac, dp.acc_frac, I.cmb});
  return w + clog2(dp.n_fma + 2) + 4 <= 62;
}
const ScalarStrategy kScalarStrategies[] = {
    // block-scaled datapaths (scaler, grouper stages): the reference stages, unless the scaled
    // kernel takes them (choose_scaled: ST-FDPA on the fused adder, unit scales included)
    {Kernel::Reference, [](const Impl& I) { return I.dp.scaled(); }, nullptr, nullptr},
    {Kernel::FusedI64, [](const Impl& I) { return I.dp.adder == AdderKind::Fused && fused_fits_i64(I); },
     &dot_with<fused_group<uint64_t, int64_t>>, &dot_with<fused_group<u128, int64_t>>},
    {Kernel::FusedI128, [](const Impl& I) { return I.dp.adder == AdderKind::Fused; },
     &dot_with<fused_group<uint64_t, i128>>, &dot_with<fused_group<u128, i128>>},
    {Kernel::PairwiseI128, [](const Impl& I) { return I.dp.adder == AdderKind::Pairwise; },
     &dot_with<pairwise_group<uint64_t>>, &dot_with<pairwise_group<u128>>},
    {Kernel::ExactI128, [](const Impl& I) { return I.dp.adder == AdderKind::Exact; },
     &dot_with<exact_group<uint64_t>>, &dot_with<exact_group<u128>>},
};
const ScalarStrategy kReferenceOnly{Kernel::Reference, nullptr, nullptr, nullptr};

/// The block-scaled samples' kernel (FastDot::operator() with scales): ST-FDPA on the fused
/// adder in k order, without the final c addition; GST-FDPA's grouper kernel
/// (fast_grouped.cpp); nullptr: the reference stages (the other adders).
fastk::ScaledFn choose_scaled(Impl& I) {
  const Datapath& dp = I.dp;
  if (dp.scaled() && dp.group_size > 0) return fastk::choose_grouped(I);
  if (!dp.scaled() || dp.adder != AdderKind::Fused || dp.pair_interleave || dp.c_final_add)
    return nullptr;
  const bool wide = I.raw_frac + 2 > 64, i64 = fused_fits_i64(I);
  if (i64) return wide ? &dot_scaled<u128, int64_t> : &dot_scaled<uint64_t, int64_t>;
  return wide ? &dot_scaled<u128, i128> : &dot_scaled<uint64_t, i128>;
}
const ScalarStrategy& choose_scalar(const Impl& I) {
  for (const ScalarStrategy& s : kScalarStrategies)
    if (s.applies(I)) return s;
  return kReferenceOnly;
}

}  // namespace

FastDot::FastDot(const Datapath& dp) {
  validate_datapath(dp);
  auto I = std::make_shared<Impl>();
  I->dp = dp;
  I->A.build(dp.a_fmt, dp.sub_in);
  I->B.build(dp.b_fmt, dp.sub_in);
  I->R.build(dp.out_fmt, out_opts(dp));
  I->Rprod.build(dp.out_fmt, RoundOpts{Rounding::RNE, dp.sub_out, -1, false});
  I->Rc.build(dp.out_fmt, RoundOpts{dp.c_final_round, dp.sub_out, -1, false});
  I->raw_frac = dp.a_fmt.mbits + dp.b_fmt.mbits;
  I->cmb = dp.out_fmt.mbits;
  I->pfrac = dp.prod_round_out ? I->cmb : I->raw_frac;
  const ScalarStrategy& st = choose_scalar(*I);
  I->kernel = st.kernel;
  I->fn = I->raw_frac + 2 > 64 ? st.wide_prod : st.narrow_prod;
  if (!I->fn) I->fn = &reference_dot;
  I->name = fastk::kernel_name(I->kernel);
  I->scaled_fn = choose_scaled(*I);
  I->scaled_lanes = I->scaled_fn && dp.group_size == 0 && fused_fits_i64(*I) && !dp.prod_round_out;
  if (dp.scaled() && I->scaled_fn && I->kernel == fastk::Kernel::Reference) {
    // a block-scaled sample without its scales (batch(), operator() without ScaleRefs) has unit
    // scales: the scaled kernel with them, not the reference stages
    I->fn = [](const Impl& J, const uint64_t* a, const uint64_t* b, int K, uint64_t c) {
      return J.scaled_fn(J, a, b, K, c, ScaleRefs{});
    };
    I->name = dp.group_size > 0 ? "grouped/scaled" : "fused/scaled";
  }
  fastk::lower_for_lanes(*I);
  impl_ = std::move(I);
}

uint64_t FastDot::operator()(const uint64_t* a, const uint64_t* b, int K, uint64_t c) const {
  return impl_->fn(*impl_, a, b, K, c);
}

uint64_t FastDot::operator()(const uint64_t* a, const uint64_t* b, int K, uint64_t c, const ScaleRefs& s) const {
  const Impl& I = *impl_;
  if (!I.dp.scaled()) return I.fn(I, a, b, K, c);
  return I.scaled_fn ? I.scaled_fn(I, a, b, K, c, s) : dot(I.dp, a, b, K, c, s);
}

namespace {

/// The scalar kernel of one sample of rows of words T (32-bit words widened first, into w,
/// reused from one sample to the next).
template <class T>
uint64_t one_sample(const Impl& I, const T* a, const T* b, int K, uint64_t c, std::vector<uint64_t>& w) {
  if constexpr (sizeof(T) == 8) {
    return I.fn(I, a, b, K, c);
  } else {
    w.assign(a, a + K);
    w.insert(w.end(), b, b + K);
    return I.fn(I, w.data(), w.data() + K, K, c);
  }
}

/// Block-scaled samples' scales in batch(): sample i's scale patterns at a + i * per (b too);
/// a null pointer: unit scales. None at all (per = 0): the unscaled batch.
struct BatchScales {
  const uint64_t* a = nullptr;
  const uint64_t* b = nullptr;
  int per = 0;
  ScaleRefs of(size_t i) const { return {a ? a + i * per : nullptr, b ? b + i * per : nullptr}; }
};

/// The scale exponents of a block's lanes for block_scaled (Et[j * kLanes + l]: e_alpha +
/// e_beta of sample l's scale block j); pre_bad: the samples whose scales the fused kernel does
/// not take (power_of_two, dot_scaled's rule).
void lane_scale_exponents(const Impl& I, const BatchScales& s, size_t i0, int m, std::vector<int64_t>& Et,
                          uint8_t* pre_bad) {
  constexpr int L = lanes::kLanes;
  const uint64_t one = unit_scale_bits(I.dp.scale_fmt);
  Et.assign(static_cast<size_t>(s.per) * L, 0);
  for (int l = 0; l < L; ++l) {
    pre_bad[l] = 0;
    if (l >= m) continue;
    const ScaleRefs r = s.of(i0 + l);
    for (int j = 0; j < s.per; ++j) {
      const ScaleProduct p = scale_product(I.dp.scale_fmt, r.a ? r.a[j] : one, r.b ? r.b[j] : one);
      if (!power_of_two(p)) pre_bad[l] = 1;
      Et[static_cast<size_t>(j) * L + l] = pre_bad[l] ? 0 : p.exp;
    }
  }
}

/// The k order of the lane kernels (pair_interleave: k mod 4 in {0,1} first, then {2,3}), as dot().
std::vector<int> k_order(const Datapath& dp, int K) {
  std::vector<int> order;
  order.reserve(static_cast<size_t>(K));
  if (dp.pair_interleave && K > 2) {
    for (int pass = 0; pass < 2; ++pass)
      for (int k = 0; k < K; ++k)
        if (((k >> 1) & 1) == pass) order.push_back(k);
  } else {
    for (int k = 0; k < K; ++k) order.push_back(k);
  }
  return order;
}

/// FastDot::batch on rows of words T (uint64_t; uint32_t for formats of at most 32 bits), with
/// the block scales of sc (uint64_t rows only; sc.per = 0: none).
template <class T>
void batch_rows(const Impl& I, const T* a, const T* b, const T* c, T* d, size_t n, int K, const BatchScales& sc = {}) {
  const size_t Ks = static_cast<size_t>(K);
  std::vector<uint64_t> w;
  const bool scaled = sc.per > 0 || sc.a || sc.b;
  // one sample by the scalar kernels (the scaled one with its scales)
  auto scalar = [&](size_t i) -> T {
    if constexpr (sizeof(T) == 8) {
      const uint64_t *ai = a + i * Ks, *bi = b + i * Ks;
      if (scaled) return I.scaled_fn ? I.scaled_fn(I, ai, bi, K, c[i], sc.of(i)) : dot(I.dp, ai, bi, K, c[i], sc.of(i));
    }
    return static_cast<T>(one_sample(I, a + i * Ks, b + i * Ks, K, c[i], w));
  };
  if (!I.lane_block || K <= 0 || (scaled && !I.scaled_lanes)) {
    for (size_t i = 0; i < n; ++i) d[i] = scalar(i);
    return;
  }
  const Datapath& dp = I.dp;
  constexpr int L = lanes::kLanes;
  const std::vector<int> order = k_order(dp, K);
  // the last, partial block of samples is copied into zero-padded rows; each block is turned
  // into columns (operand k of the block's samples side by side) once for all its groups
  std::vector<T> padA, padB;
  std::vector<uint64_t> At, Bt;  // allocated when a block goes through the lanes
  std::vector<int64_t> Et;        // block_scaled's scale exponents
  alignas(64) uint64_t C[L], Cf[L];
  lanes::LaneOut o, o2;
  for (size_t i0 = 0; i0 < n; i0 += L) {
    const int m = static_cast<int>(std::min<size_t>(L, n - i0));
    const T* pa = a + i0 * Ks;
    const T* pb = b + i0 * Ks;
    if (m < L && Ks > (size_t{1} << 14)) {
      // a partial block of very long samples (validate's blocks of K = 2^20 hold one): the
      // scalar kernel (the same bits) instead of L zero-padded rows and their columns, 4 L K
      // words (512 MiB at K = 2^20)
      for (int i = 0; i < m; ++i) d[i0 + i] = scalar(i0 + i);
      continue;
    }
    if (At.empty()) {
      At.resize(static_cast<size_t>(L) * Ks);
      Bt.resize(At.size());
    }
    if (m < L) {
      padA.assign(static_cast<size_t>(L) * Ks, 0);
      padB.assign(padA.size(), 0);
      std::copy(pa, pa + m * Ks, padA.begin());
      std::copy(pb, pb + m * Ks, padB.begin());
      pa = padA.data();
      pb = padB.data();
    }
    if constexpr (sizeof(T) == 8) {
      I.lane_transpose(pa, Ks, K, At.data());
      I.lane_transpose(pb, Ks, K, Bt.data());
    } else {
      I.lane_transpose32(pa, Ks, K, At.data());
      I.lane_transpose32(pb, Ks, K, Bt.data());
    }
    if (m == L && !dp.c_final_add) {
      std::copy(c + i0, c + i0 + L, C);
    } else {
      for (int l = 0; l < L; ++l) C[l] = l < m && !dp.c_final_add ? c[i0 + l] : I.R.z_p;
    }
    if (scaled) {
      uint8_t pre_bad[L];
      lane_scale_exponents(I, sc, i0, m, Et, pre_bad);
      I.lane_block_scaled(I.LP, At.data(), Bt.data(), Et.data(), order.data(), K, C, o);
      for (int l = 0; l < L; ++l) o.bad[l] |= pre_bad[l];
    } else {
      I.lane_block(I.LP, At.data(), Bt.data(), order.data(), K, C, o);
    }
    const lanes::LaneOut* r = &o;
    if (dp.c_final_add) {
      // d = fl(acc + c); a NaN/Inf goes to the reference (through c_final)
      for (int l = 0; l < L; ++l) Cf[l] = l < m ? c[i0 + l] : I.R.z_p;
      I.lane_c_final(I.LP, o.d, Cf, o2);
      for (int l = 0; l < m; ++l)
        if (!o.bad[l] && o2.bad[l]) o2.bad[l] = !c_final(I, o.d[l], Cf[l], o2.d[l]);
        else o2.bad[l] |= o.bad[l];
      r = &o2;
    }
    bool any_bad = false;
    for (int l = 0; l < m; ++l) any_bad |= r->bad[l] != 0;
    if (!any_bad) {  // the usual case: every lane's d is done
      if (m == L) {  // (a fixed count: vector moves, not a string copy)
        for (int l = 0; l < L; ++l) d[i0 + l] = static_cast<T>(r->d[l]);
      } else {
        for (int l = 0; l < m; ++l) d[i0 + l] = static_cast<T>(r->d[l]);
      }
      continue;
    }
    for (int l = 0; l < m; ++l) {
      const size_t i = i0 + l;
      // a lane the kernel left (NaN/Inf, overflow, a range it does not hold): the scalar
      // kernel of the sample, which itself hands NaN/Inf and overflows to the reference
      d[i] = r->bad[l] ? scalar(i) : static_cast<T>(r->d[l]);
    }
  }
}

}  // namespace

void FastDot::batch(const uint64_t* a, const uint64_t* b, const uint64_t* c, uint64_t* d,
                    size_t n, int K) const {
  batch_rows(*impl_, a, b, c, d, n, K);
}

void FastDot::batch(const uint64_t* a, const uint64_t* b, const uint64_t* c, uint64_t* d, size_t n, int K,
                    const uint64_t* sa, const uint64_t* sb) const {
  const Impl& I = *impl_;
  if (!I.dp.scaled()) return batch_rows(I, a, b, c, d, n, K);
  const int per = (K + I.dp.scale_block - 1) / I.dp.scale_block;  // scales_per_sample (vectors.hpp)
  batch_rows(I, a, b, c, d, n, K, BatchScales{sa, sb, per});
}

void FastDot::batch(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d,
                    size_t n, int K) const {
  const Datapath& dp = impl_->dp;
  if (dp.a_fmt.width() > 32 || dp.b_fmt.width() > 32 || dp.out_fmt.width() > 32)
    throw std::invalid_argument("FastDot::batch of 32-bit words: datapath " + dp.name() +
                                " has a format wider than 32 bits");
  batch_rows(*impl_, a, b, c, d, n, K);
}

const char* FastDot::strategy() const { return impl_->name; }
const char* FastDot::lanes() const { return impl_->lane_isa; }
const char* FastDot::lane_kernel() const {
  return impl_->lane_block ? lanes::lane_kernel_name(impl_->LP.kernel) : "none";
}
const Datapath& FastDot::datapath() const { return impl_->dp; }

}  // namespace mc
