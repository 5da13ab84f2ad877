// The lane kernels' two-term sums (fast.cpp sum_round on every lane): Term2, sum2, add2,
// add2_term, as_term, pack_term and add_rne_ftz, shared by the pairwise trees (tree.cpp), the FMA
// chains (fma.cpp), the exact adder (exact.cpp) and c_final (block.cpp).
#pragma once
#include "simd.hpp"

namespace mc::lanes::MC_LANES_NS {
// internal to the lane files (the linkage the compiler inlines and specialises freely)
namespace {

/// A term of an exact sum on every lane: (-1)^sign sig 2^lsb (sig 0: a zero of that sign).
struct Term2 {
  VU sig;
  VI lsb;
  VU sign;
};

/// fast.cpp sum_round of two terms: fl(x + y) rounded by R, as a floating-point adder does it
/// (sum2: the sum before the rounding; add2: rounded and encoded; add2_term: rounded, as a term).
/// X, the term with the higher top bit, goes to bits 60..; y is shifted to X's last bit. Bits of
/// y shifted out only say on which side of a value the exact sum lies: X + y' (or X - y' - 1,
/// signs differing) with a sticky rounds as the exact sum does, because y' < 2^(my) lies far
/// below X >= 2^60 whenever bits are shifted out, so the sum keeps at least 59 bits (p + 2 and
/// more). Without bits shifted out the sum is exact. fb: terms too wide for this (over 2^58;
/// none of the kernels' terms), left to the caller.
struct Sum2 {
  VU sign, mag;
  VI base;
  VU st;
  VI exact_zero;  ///< the sum is exactly zero: the zero of sign zs
  VU zs;
  VI fb;  ///< a term too wide for this (left to the caller)
};
inline Sum2 sum2(const LaneRound& R, const Term2& x, const Term2& y) {
  const VI xnz = x.sig != 0, ynz = y.sig != 0;
  const VI mx = 63 - clz(x.sig), my = 63 - clz(y.sig);  // -1 for a zero
  const VI tx = xnz ? x.lsb + mx : bc(kNoExp), ty = ynz ? y.lsb + my : bc(kNoExp);
  const VI xa = tx >= ty;
  const VU Xs = xa ? x.sig : y.sig, Ys = xa ? y.sig : x.sig;
  const VU Xn = xa ? x.sign : y.sign, Yn = xa ? y.sign : x.sign;
  const VI mX = xa ? mx : my, mY = xa ? my : mx, lX = xa ? x.lsb : y.lsb, lY = xa ? y.lsb : x.lsb;
  const VI sx = 60 - mX;
  const VU Xp = sll(Xs, sx);
  const VI base = lX - sx;  // the sum's last bit
  const VI k = lY - base;   // y's last bit above it (a zero y: any; it adds 0 and no sticky)
  const VU Yp = k >= 0 ? sll(Ys, k) : srl(Ys, -k);
  const VU st = U((k < 0) & ((Ys & (sll(VU{} + 1, -k) - 1)) != 0)) & 1;
  const VI xv = S(Xp), yv = S(Yp);
  const VI v = S((Xn != 0 ? VU{} - U(xv) : U(xv)) + (Yn != 0 ? VU{} - U(yv) : U(yv)));
  const VI vneg = v < 0;
  const VI has_st = st != 0;
  const VU sign = has_st ? Xn : U(vneg) & 1;
  const VU mag = has_st ? ((Xn ^ Yn) != 0 ? Xp - Yp - 1 : Xp + Yp) : (vneg ? VU{} - U(v) : U(v));
  // zero sign: both terms zero: their common sign; a sum that cancels: RD gives -0
  const VU zs = (xnz | ynz) != 0 ? VU{} + (R.mode == Rounding::RD ? 1 : 0) : x.sign & y.sign;
  return Sum2{sign, mag, base, st, ~has_st & (v == 0), zs, (mX > 58) | (mY > 58)};
}
inline VU add2(const LaneRound& R, const Term2& x, const Term2& y, VI& fb) {
  const Sum2 q = sum2(R, x, y);
  fb = q.fb;
  const VU r = round_mag(R, q.sign, q.mag, q.base, q.st);
  return q.exact_zero ? (q.zs != 0 ? VU{} + R.z_n : VU{} + R.z_p) : r;
}

/// term(dec(f, encode(R, sign, q)), cmb) without the encoding and the decoding (R rounds to
/// the format f): the rounded value as the next level's term. A lane that overflows (Inf, NaN
/// or the largest finite) is marked in bad (the scalar kernel takes the sample).
inline Term2 as_term(const LaneRound& R, const LaneFmt& f, int cmb, VU sign, const Rounded& q, VI& bad) {
  const VU sig = q.kept << (R.mbits - R.p);
  const VI esub = q.sub | ((sig >> R.mbits) == 0);  // the encoding's exponent field is 0
  const VI exp = esub ? bc(1 - f.bias) : q.e + (R.bias - f.bias);
  const VU zsign = sign != 0 ? VU{} + ((R.z_n >> f.sign_shift) & 1) : VU{} + ((R.z_p >> f.sign_shift) & 1);
  bad |= q.ovf & ~q.zero;
  return Term2{q.zero ? VU{} : (esub ? sig & f.sub_mask : sig), exp - cmb, q.zero ? zsign : sign};
}

/// The sum of two terms rounded by R, as a term in f (term(dec(f, add2(R, x, y)), cmb)).
inline Term2 add2_term(const LaneRound& R, const LaneFmt& f, int cmb, const Term2& x, const Term2& y, VI& bad) {
  const Sum2 s = sum2(R, x, y);
  Rounded q = round_core(R, s.sign, s.mag, s.base, s.st);
  q.zero |= s.exact_zero;
  bad |= s.fb;
  return as_term(R, f, cmb, s.exact_zero ? s.zs : s.sign, q, bad);
}

inline Term2 term(const Dec& d, int mbits) { return Term2{d.sig, d.exp - mbits, d.sign}; }

/// The encoding in R's format of a term that it holds exactly (a normal number or a zero: the
/// tree's products and sums under pairwise_run's fast levels).
inline VU pack_term(const LaneRound& R, const Term2& t) {
  const VI top = 63 - clz(t.sig);
  const VU E = U(t.lsb + top + R.bias);
  const VU frac = sll(t.sig, bc(R.mbits) - top) & ((uint64_t{1} << R.mbits) - 1);
  const VU sb = t.sign != 0 ? VU{} + R.sbit : VU{};
  return t.sig != 0 ? sb | (E << R.mbits) | frac : sb;
}

/// fl(a + b) for a and b encoded in R's format (IEEE encoding, normal numbers or zeros; an
/// exponent field of 0 reads as zero), rounded to nearest even with no subnormal results: a
/// floating-point adder on the encodings. X, the operand of the larger magnitude (one compare of
/// the encodings), goes with its hidden bit to bit 61; Y is shifted right by the exponents'
/// difference, the bits shifted out (only when Y lies more than 61 - mbits bits below) kept
/// as a sticky, so X + Y' or X - Y' - 1 with the sticky rounds as the exact sum does (sum2;
/// binary32 sums keep 37 bits below the round bit, too many for the sticky ever to decide a
/// rounding there: tb/test_fast.cpp does not catch it dropped. It keeps wider formats exact).
/// The rounding adds 2^(round bit) - 1 + the last kept bit to the sum with the sticky or-ed
/// into its bit 0 (at least 9 bits below the round bit), and the exponent field to the kept
/// bits, the hidden one included, so that a carry out of the rounding moves into the exponent.
/// Lanes whose sum may leave the normal range (an exponent field outside [1, emax field - 1]
/// before the rounding), and with Subnormals those with a subnormal operand, are marked in
/// slow: the caller takes them through add2_term (add2).
template <bool Subnormals>
inline VU add_rne_ftz(const LaneRound& R, VU a, VU b, VI& slow) {
  const int mb = R.mbits, G = 61 - R.mbits;
  const uint64_t hid = uint64_t{1} << mb, mm = hid - 1, absm = R.sbit - 1;
  const VU ma = a & absm, mbv = b & absm;
  const VI sw = mbv > ma;
  const VU X = sw ? b : a, mX = sw ? mbv : ma, mY = sw ? ma : mbv;
  const VU eX = mX >> mb, eY = mY >> mb;
  const VU fX = (mX & mm) | hid, fY = eY != 0 ? (mY & mm) | hid : VU{};
  const VI d = S(eX - eY);  // >= 0
  const VU Y0 = fY << G, Ys = srl(Y0, d);
  const VU st = U(sll(Ys, d) != Y0) & 1;  // bits of Y shifted out
  const VI differ = ((a ^ b) & R.sbit) != 0;
  const VU Xs = fX << G;
  const VU v = differ ? Xs - Ys - st : Xs + Ys;  // >= 0 (|X| >= |Y|), < 2^63
  const VI lz = clz(v);                           // >= 1
  const VU r = (sll(v, lz) >> 1) | st;            // the leading one at bit 62
  const VU kept = (r + ((uint64_t{1} << (61 - mb)) - 1) + ((r >> (62 - mb)) & 1)) >> (62 - mb);
  const VI e = S(eX) + 2 - lz;  // the biased exponent before the rounding
  const VI nz = (v != 0) & (eX != 0);
  slow |= nz & (U(e - 1) >= static_cast<uint64_t>(R.emax + R.bias - 1));
  // a subnormal operand, which this adder reads as zero (DAZ): slow too where that is not meant
  if (Subnormals) slow |= ((eX == 0) & (mX != 0)) | ((eY == 0) & (mY != 0));
  const VU bits = (X & R.sbit) | ((U(e - 1) << mb) + kept);
  // a zero: both terms zero: their common sign; a sum that cancels: +0
  const VU z = ((eX == 0) & (((a & b) & R.sbit) != 0)) ? VU{} + R.z_n : VU{} + R.z_p;
  return nz ? bits : z;
}

/// Each product of lv[0..n) rounded to out_fmt (RNE); one that rounds to Inf: bad (the
/// reference takes the sample).
}  // namespace
}  // namespace mc::lanes::MC_LANES_NS
