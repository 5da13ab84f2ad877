// The lane kernels' two-limb (128-bit) arithmetic: W2 and its shifts and sums, the 53 x 53-bit
// product, the exact adder's level sums, and the fixed-frame two-term sums and rounder of the FMA
// chains (sum2w, sum2n, round_top). Shared by exact.cpp and fma.cpp.
#pragma once
#include "terms.hpp"

namespace mc::lanes::MC_LANES_NS {
// internal to the lane files (the linkage the compiler inlines and specialises freely)
namespace {
/// A signed 128-bit value per lane in two limbs (two's complement).
struct W2 {
  VU lo, hi;
};
inline W2 w_sel(VI m, W2 a, W2 b) { return W2{m ? a.lo : b.lo, m ? a.hi : b.hi}; }
inline W2 w_add(W2 a, W2 b) {
  const VU lo = a.lo + b.lo;
  return W2{lo, a.hi + b.hi + (U(lo < a.lo) & 1)};  // lo < a.lo: a carry
}
inline W2 w_sub(W2 a, W2 b) {
  const VU lo = a.lo - b.lo;
  return W2{lo, a.hi - b.hi - (U(a.lo < b.lo) & 1)};
}
/// sig << off, 0 <= off <= 127 (sig < 2^64; the bits above 128 are lost: callers keep them 0).
inline W2 w_shl(VU sig, VI off) {
  const VI hi_sh = off - 64;
  return W2{sll(sig, off), hi_sh >= 0 ? sll(sig, hi_sh) : srl(sig, 64 - off)};
}
/// floor(x / 2^s), s >= 0 (any size), and whether the bits shifted out were nonzero.
inline W2 w_sra(W2 x, VI s, VI& st) {
  const VI big = s >= 64;
  const VI s1 = big ? s - 64 : s;  // 0 .. : the shift within the limb pair
  const VU lo_m = big ? x.hi : x.lo, hi_m = big ? U(sra(S(x.hi), bc(63))) : x.hi;
  // dropped: big: x.lo whole and the low s1 bits of x.hi; else the low s bits of x.lo
  const VU low_mask = sll(VU{} + 1, s1) - 1;  // s1 > 63: every bit
  st = big ? ((x.lo != 0) | ((x.hi & low_mask) != 0)) : ((x.lo & low_mask) != 0);
  const VU lo = (srl(lo_m, s1)) | (s1 > 0 ? sll(hi_m, 64 - s1) : VU{});
  // s1 > 63 (only when big): lo = hi >> s1 arithmetically, i.e. the sign
  const VU lo2 = s1 > 63 ? U(sra(S(hi_m), bc(63))) : lo;
  return W2{lo2, U(sra(S(hi_m), s1))};
}
/// Leading bit of a nonzero 128-bit magnitude (-1 for zero).
inline VI w_msb(W2 x) { return x.hi != 0 ? 127 - clz(x.hi) : 63 - clz(x.lo); }

/// x << off, 0 <= off <= 127, for x < 2^128 whose bits stay below 2^128; 0 for a negative off.
inline W2 w_shl2(W2 x, VI off) {
  W2 r = w_shl(x.lo, off);
  r.hi |= sll(x.hi, off);  // 0 for off > 63: those bits would lie above 2^128
  return r;
}
/// The exact product of two significands below 2^54 (binary64: 53 bits): 128 bits from four
/// 32 x 32-bit products.
inline W2 mul53(VU a, VU b) {
  const VU a1 = a >> 32, b1 = b >> 32;
  const VU ll = mul32(a, b), hh = mul32(a1, b1), mid = mul32(a, b1) + mul32(a1, b);  // mid < 2^55
  const VU lo = ll + (mid << 32);
  return W2{lo, hh + (mid >> 32) + (U(lo < ll) & 1)};
}

/// Term k of exact_run's terms (k = n: c) shifted left by off (the products of Wide have two
/// limbs; off < 0 or a shift past 127 bits gives 0).
template <bool Wide>
inline W2 term_at(const W2* sig, int k, int n, VI off) {
  return k < n && Wide ? w_shl2(sig[k], off) : w_shl(sig[k].lo, off);
}

/// One level of exact_run's terms below its first grid: the terms of lows[] whose last bit lies
/// at or above the grid Gn, summed exactly on it; they leave lows[]. rest_top: the highest top
/// of the terms still below.
struct Level {
  W2 sum;
  VI rest_top;
};
template <bool Wide>
inline Level level_sum(const W2* sig, const VI* lsb, const VI* top, const VU* ng, VI* lows, int n, VI Gn) {
  W2 low{VU{}, VU{}};
  VI rest_top = bc(kNoExp);
  for (int k = 0; k <= n; ++k) {
    const VI off = lsb[k] - Gn;
    const W2 t = term_at<Wide>(sig, k, n, off);
    low = w_sel(lows[k] & (off >= 0), w_sel(ng[k] != 0, w_sub(low, t), w_add(low, t)), low);
    lows[k] &= off < 0;
    rest_top = lows[k] ? vmax(rest_top, top[k]) : rest_top;
  }
  return Level{low, rest_top};
}

/// exact_run's terms below its second grid G (lows[k]: term k lies below; low_top: their
/// highest top): further grids, each 118 bits below the top of the terms still left, summed
/// exactly (level_sum); then folded bottom up, each level's sum shifted down to the grid above
/// it with a sticky, the last one to G. Terms beyond kLevels more levels: bad (the scalar
/// kernel). Out of line, so that the common case does not pay for it.
struct LowSum {
  W2 sum;      ///< the levels' sum on G (floored)
  VI st, bad;  ///< bits dropped below G; lanes left to the scalar kernel
};
template <bool Wide>
__attribute__((noinline)) LowSum low_levels(const W2* sig, const VI* lsb, const VI* top, const VU* ng, VI* lows,
                                            int n, VI G, VI low_top) {
  VI st{}, bad{};
  constexpr int kLevels = 6;
  W2 lv_sum[kLevels];
  VI lv_G[kLevels];
  int nl = 0;
  VI has_low = low_top != kNoExp, above = G;
  while (any(has_low)) {
    if (nl == kLevels) {
      bad |= has_low;
      break;
    }
    const VI Gn = has_low ? low_top - 118 : above;
    const Level lv = level_sum<Wide>(sig, lsb, top, ng, lows, n, Gn);
    lv_sum[nl] = lv.sum;
    low_top = lv.rest_top;
    lv_G[nl++] = Gn;
    above = Gn;
    has_low = low_top != kNoExp;
  }
  W2 acc = lv_sum[nl - 1];
  for (int i = nl - 1; i >= 0; --i) {
    VI s1;
    const W2 f = w_sra(acc, (i ? lv_G[i - 1] : G) - lv_G[i], s1);
    st |= s1;
    acc = i ? w_add(lv_sum[i - 1], f) : f;
  }
  return LowSum{acc, st, bad};
}

/// x >> s for x >= 0, s >= 0 (any size), and whether bits were shifted out (0/-1). The counts
/// out of range give 0 (srl, sll), so no selects: 64 <= s < 128 takes lo from hi >> (s - 64)
/// (for s = 64 the two terms are both hi).
inline W2 w_srl_st(W2 x, VI s, VI& st) {
  const VI sc = vmin(s, bc(128));
  st = (sll(x.lo, vmax(64 - sc, VI{})) | sll(x.hi, vmax(128 - sc, VI{}))) != 0;
  return W2{srl(x.lo, sc) | sll(x.hi, 64 - sc) | srl(x.hi, sc - 64), srl(x.hi, sc)};
}
/// w_srl_st of W2{0, h}.
inline W2 w_srl_st_hi(VU h, VI s, VI& st) {
  const VI sc = vmin(s, bc(128));
  st = sll(h, vmax(128 - sc, VI{})) != 0;
  return W2{sll(h, 64 - sc) | srl(h, sc - 64), srl(h, sc)};
}

/// A significand of up to NP + 1 bits normalised: its leading one moved to bit NP, the exponent
/// lowered by as much (a zero stays zero).
template <int NP>
inline void norm_sig(VU& sig, VI& exp) {
  const VI sh = clz(sig) - (63 - NP);
  sig = sll(sig, sh);
  exp -= sh;
}

/// A product of binary64 significands as a term: (-1)^sign sig 2^lsb, sig 0 (nz false) or in
/// [2^104, 2^106) (normalised factors, norm_sig<52>).
struct TermW {
  W2 sig;
  VI lsb;
  VU sign;
  VI nz;
};

/// The exact sum of c and a product, for the rounder: (-1)^sign top 2^lsb, top's leading one at
/// bit 63 with every bit of the sum below top's last bit jammed into that bit (exact_zero: the
/// sum is exactly zero).
struct SumW {
  VU sign, top;
  VI lsb, exact_zero;
  VU zs;
};
/// c (its significand normalised: bit 52 leading, or 0) plus a product p, exactly, on a frame
/// of 128 bits whose bit 124 is the higher of the two terms' tops T:
///
///   bit   127  124                     72                 19            0
///          |00 | C = c.sig << 72, 53 bits |                 |            |   c at T
///          |00 |   P << 19, 106 bits (its top bit 124 or 123)            |   p at T
///
/// the other term shifted right by its distance below T, the bits shifted out jammed into its
/// last bit (w_srl_st). A term loses bits only when it lies far below (C more than 72 bits,
/// P more than 19), so the other, at T, has at least 123 bits and so has the sum: the jammed
/// bit lies at least 2 bits below the rounding position, where a value strictly between two
/// integers and the odd one of them round alike. The sum (or difference, made nonnegative)
/// normalised to its leading one: its top 64 bits, the rest jammed into the last.
inline SumW sum2w(const LaneRound& R, const Term2& c, const TermW& p) {
  const VI cnz = c.sig != 0;
  const VI tc = cnz ? c.lsb + 52 : bc(kNoExp), tp = p.nz ? p.lsb + 105 : bc(kNoExp);
  const VI T = vmax(tc, tp);
  VI stp, stc;
  W2 Pf = w_srl_st(W2{p.sig.lo << 19, (p.sig.hi << 19) | (p.sig.lo >> 45)}, T - tp, stp);
  W2 Cf = w_srl_st_hi(c.sig << 8, T - tc, stc);
  Pf.lo |= U(stp) & 1;
  Cf.lo |= U(stc) & 1;
  const VI differ = (c.sign ^ p.sign) != 0;
  const W2 s = w_sel(differ, w_sub(Pf, Cf), w_add(Pf, Cf));
  const VI neg = S(s.hi) < 0;  // only when the signs differ: C - P > 0
  const W2 mag = w_sel(neg, w_sub(W2{VU{}, VU{}}, s), s);
  // the leading one to bit 127: its top 64 bits, the rest jammed (sll/srl: counts out of range
  // give 0; lz = 64 makes the two lo terms equal)
  const VI lz = mag.hi == 0 ? 64 + clz(mag.lo) : clz(mag.hi);
  const VU top = sll(mag.hi, lz) | srl(mag.lo, 64 - lz) | sll(mag.lo, lz - 64) | (U(sll(mag.lo, lz) != 0) & 1);
  const VI zero = (mag.lo | mag.hi) == 0;
  const VU zs = (cnz | p.nz) != 0 ? VU{} + (R.mode == Rounding::RD ? 1 : 0) : c.sign & p.sign;
  return SumW{neg ? c.sign : p.sign, top, T - 124 + 64 - lz, zero, zs};
}

/// sum2w for the binary32 FMA chains, in 64 bits: c's significand normalised to bit 23 (or 0),
/// the product's factors to bit 23, so that a nonzero product lies in [2^46, 2^48):
///
///   bit   63 60            37                13           0
///         |00| C = c.sig << 37 |               |           |   c at T
///         |00|   P << 13, 48 bits (its top bit 60 or 59)   |   p at T
///
/// the lower term shifted right with its bits jammed (C loses bits more than 37 bits below T,
/// P more than 13, and the other keeps at least 59 bits). The sum normalised in one shift.
inline SumW sum2n(const LaneRound& R, const Term2& c, const Term2& p, VI pnz) {
  const VI cnz = c.sig != 0;
  const VI tc = cnz ? c.lsb + 23 : bc(kNoExp), tp = pnz ? p.lsb + 47 : bc(kNoExp);
  const VI T = vmax(tc, tp);
  // counts over 63 shift every bit out, as 63 does (the values lie below 2^61)
  const VI dp = vmin(T - tp, bc(63)), dc = vmin(T - tc, bc(63));
  const VU P0 = p.sig << 13, C0 = c.sig << 37;
  const VU Pf = srl(P0, dp) | (U(sll(P0, 64 - dp) != 0) & 1);
  const VU Cf = srl(C0, dc) | (U(sll(C0, 64 - dc) != 0) & 1);
  const VI differ = (c.sign ^ p.sign) != 0;
  const VI sum = differ ? S(Pf - Cf) : S(Pf + Cf);
  const VI neg = sum < 0;  // only when the signs differ: C - P > 0
  const VU mag = U(neg ? -sum : sum);
  const VI lz = clz(mag);
  const VU zs = (cnz | pnz) != 0 ? VU{} + (R.mode == Rounding::RD ? 1 : 0) : c.sign & p.sign;
  return SumW{neg ? c.sign : p.sign, sll(mag, lz), T - 60 - lz, mag == 0, zs};
}

/// round_core for sum2w's and sum2n's sums whose result is normal (the rounding position at bit 63 - R.p
/// of top, fixed): q.sub and q.zero 0; lanes with a subnormal result (nsub) are left to
/// round_core (zeros excepted: their q is not used).
inline Rounded round_top(const LaneRound& R, VU sign, VU top, VI lsb, VI& nsub) {
  VI e = lsb + 63;
  nsub = e < R.emin;
  VU kept = top >> (63 - R.p);
  const VU rb = (top >> (62 - R.p)) & 1;
  const VU st = U((top << (R.p + 2)) != 0) & 1;
  VI ovf;
  round_up(R, sign, kept, rb, st, e, ovf);
  return Rounded{kept, e, VI{}, VI{}, ovf};
}

}  // namespace
}  // namespace mc::lanes::MC_LANES_NS
