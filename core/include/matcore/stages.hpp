// matcore: the datapath stages, each a pure bit-exact function over explicit records.
//
// The fast model (model.cpp), the CLI trace and the tests all call these same functions; the
// signal names in the comments (multiplier.sig, aligner.e_max, ...) are the names used in
// traces. Values are integers with an explicit binary point: no host floating point.
#pragma once
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "matcore/datapath.hpp"
#include "matcore/format.hpp"

namespace mc {

/// One signal of a trace record as the SystemC VCD and the Verilated RTL carry it: the name and
/// width of its signal_table entry (plan.hpp) and its bits (a signed value in two's
/// complement, cut to the width as the probe cuts it).
struct TraceSignal {
  std::string name;
  int width = 1;
  u128 bits = 0;
};

/// The number a record stands for, for drawings: (-1)^neg * mag * 2^lsb, its digits shown from
/// weight lsb up to weight msb. on == false: nothing to draw (a flag, an exponent, a special).
struct TraceNumber {
  bool on = false;
  bool neg = false;
  u128 mag = 0;
  int lsb = 0, msb = 0;
};

/// One stage record of a trace: its signals (the bits) and their readable rendering.
///
///   name     aligner.e_max          the record's first signal (docs/systemc.md)
///   value    "-24"                  what `dot --trace` prints
///   signals  {aligner.e_max, 32, 0xffffffe8}
///   number   the value as digits at weights, where it has one (products, sums, d)
///
/// "group" and "order" rows annotate the dot product: a value, no signals.
struct TraceRow {
  std::string name;
  std::string value;
  std::vector<TraceSignal> signals;
  TraceNumber number;
  /// The first signal's bits as Verilog writes them (W'hX), "" for an annotation.
  std::string bits() const;
};

/// Optional stage-by-stage record of one evaluation (mc::dot): the rows in stage order.
struct Trace {
  std::vector<TraceRow> rows;
  void add(const std::string& name, const std::string& value) { rows.push_back(TraceRow{name, value, {}, {}}); }
  void add(TraceRow r) { rows.push_back(std::move(r)); }
  /// The rows as `dot --trace` prints them, one a line: name, rendering, bits (W'hX).
  std::string text(const std::string& indent = "  ") const;
};

// ---------------------------------------------------------------------------------------------
// Stage 1: operand decode.
//   Contract: exact decode of `bits` in format f; with sub_in == false a subnormal becomes a
//   zero of the same sign (denormals-are-zero).
inline Unpacked decode_operand(const Format& f, uint64_t bits, bool sub_in);

// ---------------------------------------------------------------------------------------------
// Stage 2: multiplier.
//
//   a: 1.fffffff (ma frac bits) x 2^ea        b: 1.ffff (mb frac bits) x 2^eb
//   p = a.sig * b.sig  -> up to 2 integer bits, ma+mb fraction bits, exponent ea+eb
//        ii.ffffffffffffffffff  x 2^(ea+eb)     (kept UNNORMALISED: in [1,4) for normals)
//
//   multiplier.sig / multiplier.exp / multiplier.frac name these fields.
/// Trivially constructible (arrays of it sit on the hot path): Product{} is a +0.
struct Product {
  Class cls;       ///< Zero, Normal (any finite nonzero), Inf, NaN
  bool sign;
  bool invalid;    ///< Inf * 0
  bool overflow;   ///< |p| >= 2^prod_overflow_exp turned into Inf
  int exp;         ///< value = sig * 2^(exp - frac)
  int frac;
  u128 sig;
  bool finite_nonzero() const { return cls == Class::Normal; }
};

struct MulCfg {
  int overflow_exp = kNone;     ///< |p| >= 2^overflow_exp -> Inf
  bool round_out = false;       ///< round the product to `out` (RNE) before the adder
  const Format* out = nullptr;
  bool sub_out = true;          ///< with round_out: flush subnormal products to zero
};

/// Contract: exact product of two decoded operands (NaN in -> NaN; Inf*0 -> NaN with
/// invalid; Inf*x -> Inf); optional magnitude overflow to Inf and optional rounding to `out`.
inline Product multiply(const Unpacked& a, const Unpacked& b, const MulCfg& cfg);

/// The addend c as a term: sig with the format's fraction bits, exponent of its leading
/// position (subnormal: emin).
inline Product addend(const Unpacked& c);

// ---------------------------------------------------------------------------------------------
// Stage 2b: block scales (OCP MX E8M0, NVFP4 UE4M3; ../shared/spec/block-scaled.md).
//
//   alpha (a's scale), beta (b's scale), each decoded exactly (e8m0: 2^(E-127), sig 1;
//   ue4m3: 1.mmm x 2^(E-7), subnormal 0.mmm x 2^-6):
//        scale.sig = alpha.sig * beta.sig     scale.exp = e_alpha + e_beta    (exact)
//   NaN if either is NaN (e8m0 0xff, ue4m3 0x7f/0xff); Zero if either is zero (ue4m3 0x00/0x80).
struct Fixed;
struct ScaleProduct {
  Class cls = Class::Normal;  ///< Normal (finite nonzero), Zero or NaN
  int exp = 0;                ///< e_alpha + e_beta: value = sig * 2^(exp - frac)
  int frac = 0;               ///< fraction bits of sig (e8m0: 0, ue4m3: 6)
  u128 sig = 1;
};
inline ScaleProduct scale_product(const Format& f, uint64_t alpha, uint64_t beta);

/// ST-FDPA (kind::mxf8f6f4): the product scaled by its block's alpha * beta, exactly.
//   Contract: p * alpha * beta as a product term: exponent e_a + e_b + e_alpha + e_beta, sig
//   multiplied by the scales' significands (1 for e8m0). A NaN scale gives NaN (also for a zero
//   product: 0 * NaN); Inf times a zero scale is the invalid NaN; a zero scale gives a zero.
//
//      multiplier.p:  ii.ffffff x 2^(ea+eb)   ->   scaler: ii.ffffff x 2^(ea+eb+e_alpha+e_beta)
inline Product scale_term(const Product& p, const ScaleProduct& s);

/// GST-FDPA (kind::mxf4, mxf4nvf4): one group of n products summed exactly and scaled.
//   Contract: S = the exact sum of the n products (all finite); the group term is
//   S * scale.sig at the ALIGNMENT exponent e_alpha + e_beta (not S's own magnitude):
//
//      p_0 .. p_(n-1)  --exact sum-->  S = sss.ssss (any magnitude, exact)
//      grouper.s<g> = S * alpha * beta, term exponent = e_alpha + e_beta   (sig may exceed [1,4))
//
//   Every product zero, or a zero scale: a Zero term (it reads e_zero: Datapath::emin_lim).
//   A group that cancels to S = 0 keeps its scale exponent (a Normal term with sig 0).
//   NaN among the products or a NaN scale: NaN; Inf - Inf or Inf * zero scale: the invalid NaN;
//   one infinity (or several of one sign): that Inf.
/// by_sum: the term is aligned at the exponent of its own leading bit instead (a design choice,
/// Datapath::group_by_sum), and a group that cancels to 0 is a Zero term.
/// lsb: the unit of the exact sum (group_lsb), so that the term's frac is the register's
/// fixed binary point -lsb + scale.frac whatever the data.
Product group_term(const Product* p, int n, const ScaleProduct& s, bool by_sum, int lsb);
/// The exact sum of n finite products as a fixed-point value (grouper.s<g>, before the scale):
/// value = v * 2^(exp - frac) with exp = 0 and frac = -lsb. Throws std::overflow_error beyond
/// 120 bits.
Fixed group_sum(const Product* p, int n, int lsb);
/// The unit of a datapath's exact group sums: the weight of the lowest bit any product can
/// have (2^(emin_a + emin_b - mbits_a - mbits_b); products rounded to out_fmt: its lowest),
/// never above 2^0 (an integer sum keeps its unit bit). A register of that binary point holds
/// every group sum exactly (the grouper's, rtl_model/mc_grouper.sv).
int group_lsb(const Datapath& dp);

// ---------------------------------------------------------------------------------------------
// Special values (resolved before the adders, as the hardware detects them at the inputs).
enum class SpecialKind : uint8_t { None, NaNIn, Invalid, PosInf, NegInf };
inline SpecialKind resolve_specials(const Product* terms, int n);

/// Result-selection rules (they pick bit patterns; no arithmetic):
/// the output rounding options of a datapath,
inline RoundOpts out_opts(const Datapath& dp);
/// the bits of d for a resolved special case (NaN in, invalid, +/-Inf; NaN for Inf in a format
/// without Inf),
uint64_t special_bits(const Datapath& dp, SpecialKind k);
/// with nan_keep_sign, the NaN result takes the sign of the first NaN: c, then the products
/// in order (r is special_bits(dp, NaNIn)),
uint64_t nan_with_sign(const Datapath& dp, uint64_t r, const Product* products, int n,
                       const Product& c);
/// and the sign of an exact zero sum: -0 only when every addend is a -0 (or in RD mode).
inline bool zero_sum_sign(const Datapath& dp, const Product* terms, int n);
/// Whether the special value resolved over the inputs and products (k) decides d before the
/// adder. A NaN input or an invalid term (Inf * 0, +Inf and -Inf together) always does: no later
/// sum changes a NaN. An infinity does only where nothing is rounded before the last rounding.
/// The pairwise tree rounds every pair: a pair that overflows to the opposite infinity turns
/// Inf into Inf - Inf = NaN, so there the infinities are ordinary terms of each fl() and the
/// tree's levels resolve them (docs/decisions.md, "Overflow inside the pairwise tree").
inline bool special_at_inputs(const Datapath& dp, SpecialKind k);

// ---------------------------------------------------------------------------------------------
// Fixed-point value with explicit binary point: value = v * 2^(exp - frac).
//   v (two's complement):   s iii.ffffffffffffffffffffffff
//                                ^ weight 2^exp   (frac bits below it)
struct Fixed {
  i128 v = 0;
  int exp = 0;
  int frac = 0;
};
std::string render(const Fixed& x);

// Stage 3: aligner.
//   Contract: e_max = max over the exponents of the finite nonzero terms (and of c = 0 when
//   c_zero_exp != kNone), never below emin_lim; kNone if there is no such term.
//   first/stride select a subset (odd-even: stride 2).
inline int align_exponent(const Product* terms, int n, int emin_lim, int first = 0, int stride = 1);

/// Contract: the term shifted to the reference exponent e_ref and cut to `frac` fractional
/// bits below 2^e_ref, with truncation toward zero, round-down (floor), or round to nearest
/// (RNE: ties to even, RNA: ties away) of the magnitude from its guard bit (the first bit cut)
/// and the sticky OR of the bits below it.
///
///      before:      1.xxxxxxxxxxxxxxxxxxxx  x 2^e
///      after:   0.000001xxxxxxxxx|xxxxxxx   x 2^e_ref     (| = frac-th fractional bit)
///                               kept  ^ aligner.sticky = OR of the dropped bits
struct Aligned {
  i128 v = 0;           ///< two's complement, `frac` fractional bits below 2^e_ref
  bool sticky = false;  ///< some nonzero bits were dropped
};
inline Aligned align_term(const Product& t, int e_ref, int frac, AlignRound mode);

/// Shift a fixed-point value to a larger exponent and reduce it to `frac` fractional bits with
/// the given rounding (used for the odd/even partial sums and the late-c shifts).
inline Fixed shift_to(const Fixed& x, int e_ref, int frac, AlignRound mode, bool* sticky = nullptr);

// ---------------------------------------------------------------------------------------------
// Stage 4b: odd-even combine (CDNA3 fp8/bf8, interleave 2).
//   Contract: the odd and the even products were summed apart, each at its own e_max
//   (adder.s_sum_odd, adder.s_sum_even); both are shifted to e = max of the two and cut to
//   `partial_frac` fraction bits by round-down (floor), then added exactly. kNone exponents
//   (no finite nonzero term) count as 0; both kNone gives Fixed{0, kNone, partial_frac}.
//
//      s_sum_odd:   1x.xxxxxxxxxxxxxxxxxxxxxx  x 2^e_odd          (e = e_odd >= e_even)
//      s_sum_even:  00.0001xxxxxxxxxxxxx|xxxx  x 2^e   floor to partial_frac bits
//      adder.s_sum = odd + even (partial_frac fraction bits at e)
Fixed combine_odd_even(const Fixed& odd, const Fixed& even, int partial_frac);

// Stage 4c: one pair of the pairwise tree (CDNA2): fl(p + q) in out_fmt.
//   Contract: NaN and Inf-Inf among the two give the datapath's NaN (special_bits), one
//   infinity gives it; otherwise the exact sum of the two is rounded once to out_fmt with the
//   datapath's rounding and subnormal handling (an overflow becomes +-Inf or +-max per the
//   rounding). `bits` is the rounded value (adder.pair<level>_<k>), `sum` the same value as a
//   term of the next level; an invalid NaN keeps its flag so that d is the invalid NaN.
//
//      p:  1.xxxxxxxxxx x 2^ep    q: 1.xxxxxxx x 2^eq   ->  exact p + q  ->  round to out_fmt
struct PairSum {
  uint64_t bits = 0;
  Product sum;
};
PairSum pair_sum(const Datapath& dp, const Product& p, const Product& q);

// ---------------------------------------------------------------------------------------------
// Stage 5: c-aligner with round-down (late c; Algorithms 1 and 2 of the paper).
//
//   e_max >= e_c:  s_c' = RD(s_c >> (e_max - e_c)) at c_frac bits   (dropped if gap > c_drop_gap)
//                  S_acc = S_sum + s_c'                            at e_max
//   e_max <  e_c:  S'   = RD(S_sum >> (e_c - e_max)) at sum_frac bits
//                  S_acc = S' + s_c                                at e_c, then normalise + RD
struct CAlignCfg {
  int c_frac = 24, sum_frac = 32, acc_frac = 31;
  int c_drop_gap = kNone;
  bool norm_rd = true;
  int emin = -126;  ///< subnormal-aware normalisation stops here
};
struct CAlignOut {
  Fixed acc;                ///< cadd.s_acc
  bool c_shifted = false;   ///< true: branch e_max >= e_c (c shifted), false: sum shifted
  bool c_dropped = false;   ///< c more than c_drop_gap below: dropped
  bool sticky = false;      ///< bits lost by the RD shifts
  bool normalised = false;  ///< the normalise + RD step ran
};
/// `sum` is S_sum at e_max (exp = e_max; e_max == kNone when every product is zero);
/// `c` the addend term, `e_c` its alignment exponent (c_zero_exp for c = 0).
CAlignOut c_align(const Fixed& sum, const Product& c, int e_c, const CAlignCfg& cfg);

// Stage 6: subnormal-aware normaliser with round-down.
//   Contract: moves the leading one of |x| to 2^exp' (exp' >= emin), then rounds down (floor)
//   to `frac` fractional bits below 2^exp'.
Fixed normalise_rd(const Fixed& x, int emin, int frac, bool* sticky = nullptr);

// ---------------------------------------------------------------------------------------------
// Stage 7: rounder. Contract: the fixed-point value rounded to the output format (mode,
// FTZ, reduced precision, overflow policy); an exact zero gets the sign `zero_sign`.
uint64_t round_fixed(const Fixed& x, const Format& out, const RoundOpts& o, bool zero_sign);

// Stage 8: final c addition (NVIDIA c_final_add: the fp8 mma.sync of Hopper, fp16 output).
//   Contract: d = fl(acc + c) in out_fmt, rounded once with c_final_round and the datapath's
//   subnormal output; acc is the rounded result of the groups (out_fmt bits), c is taken with
//   the datapath's subnormal input rule. NaN / Inf-Inf give the datapath's NaN (cfinal.d).
uint64_t add_c_final(const Datapath& dp, uint64_t acc, uint64_t c);

/// Exact adder: the exact sum of n finite terms, rounded once (Kulisch accumulator).
/// Non-finite terms must have been resolved before. exact_out: the sum's record (adder.exact,
/// cadd.exact): the 124 bits from the leading one down with the sticky of the rest, trailing
/// zeros dropped (mag odd); a zero sum is mag 0 at 2^0.
uint64_t exact_sum_round(const Product* terms, int n, const Format& out, const RoundOpts& o,
                         bool zero_sign, Exact* exact_out = nullptr);

// ---------------------------------------------------------------------------------------------
// Definitions of the small stages above that sit on the hot path of every product (inline so
// that the model, the SystemC modules and the tests all get them inlined; still one definition).

inline Unpacked decode_operand(const Format& f, uint64_t bits, bool sub_in) {
  Unpacked u = decode(f, bits);
  if (!sub_in && u.cls == Class::Subnormal) {
    u.cls = Class::Zero;
    u.sig = 0;
  }
  return u;
}

inline Product multiply(const Unpacked& a, const Unpacked& b, const MulCfg& cfg) {
  Product p{};
  p.sign = a.sign != b.sign;
  if (a.cls == Class::NaN || b.cls == Class::NaN) { p.cls = Class::NaN; return p; }
  const bool ainf = a.cls == Class::Inf, binf = b.cls == Class::Inf;
  if (ainf || binf) {
    if (a.is_zero() || b.is_zero()) { p.cls = Class::NaN; p.invalid = true; return p; }
    p.cls = Class::Inf;
    return p;
  }
  if (a.is_zero() || b.is_zero()) { p.cls = Class::Zero; return p; }
  p.cls = Class::Normal;
  p.sig = static_cast<u128>(a.sig) * b.sig;
  p.frac = a.mbits + b.mbits;
  p.exp = a.exp + b.exp;
  if (cfg.overflow_exp != kNone) {
    // |p| = sig * 2^(exp - frac) >= 2^overflow_exp  <=>  msb(sig) + exp - frac >= overflow_exp
    if (msb_index(p.sig) + p.exp - p.frac >= cfg.overflow_exp) {
      p.cls = Class::Inf;
      p.overflow = true;
      p.sig = 0;
      return p;
    }
  }
  if (cfg.round_out) {
    const Format& f = *cfg.out;
    Exact x{p.sign, p.sig, p.exp - p.frac, false};
    const uint64_t r = round_to_format(f, x, RoundOpts{Rounding::RNE, cfg.sub_out, -1, false});
    const Unpacked u = decode(f, r);
    if (u.cls == Class::Inf) { p.cls = Class::Inf; p.overflow = true; p.sig = 0; return p; }
    p = addend(u);
  }
  return p;
}

inline Product addend(const Unpacked& c) {
  Product p{};
  p.sign = c.sign;
  switch (c.cls) {
    case Class::NaN: p.cls = Class::NaN; return p;
    case Class::Inf: p.cls = Class::Inf; return p;
    case Class::Zero: p.cls = Class::Zero; p.exp = c.exp; return p;
    default: break;
  }
  p.cls = Class::Normal;
  p.sig = c.sig;
  p.frac = c.mbits;
  p.exp = c.exp;
  return p;
}

inline ScaleProduct scale_product(const Format& f, uint64_t alpha, uint64_t beta) {
  const Unpacked x = decode(f, alpha), y = decode(f, beta);
  ScaleProduct s;
  if (x.cls == Class::NaN || y.cls == Class::NaN) { s.cls = Class::NaN; return s; }
  if (x.is_zero() || y.is_zero()) { s.cls = Class::Zero; s.sig = 0; return s; }
  s.sig = static_cast<u128>(x.sig) * y.sig;
  s.frac = x.mbits + y.mbits;
  s.exp = x.exp + y.exp;
  return s;
}

inline Product scale_term(const Product& p, const ScaleProduct& s) {
  Product r = p;
  if (s.cls == Class::NaN) { r.cls = Class::NaN; r.invalid = false; r.overflow = false; return r; }
  switch (p.cls) {
    case Class::NaN: return r;
    case Class::Inf:
      if (s.cls == Class::Zero) { r.cls = Class::NaN; r.invalid = true; }
      return r;
    case Class::Zero: return r;
    default: break;
  }
  if (s.cls == Class::Zero) {  // +0: a finite nonzero product leaves the zero sum positive
    r.cls = Class::Zero;
    r.sign = false;
    r.sig = 0;
    return r;
  }
  r.sig = p.sig * s.sig;
  r.frac = p.frac + s.frac;
  r.exp = p.exp + s.exp;
  return r;
}

inline SpecialKind resolve_specials(const Product* t, int n) {
  bool nan = false, invalid = false, pinf = false, ninf = false;
  for (int i = 0; i < n; ++i) {
    if (t[i].cls == Class::NaN) {
      if (t[i].invalid) invalid = true;
      else nan = true;
    } else if (t[i].cls == Class::Inf) {
      (t[i].sign ? ninf : pinf) = true;
    }
  }
  if (nan) return SpecialKind::NaNIn;
  if (invalid || (pinf && ninf)) return SpecialKind::Invalid;
  if (pinf) return SpecialKind::PosInf;
  if (ninf) return SpecialKind::NegInf;
  return SpecialKind::None;
}

inline RoundOpts out_opts(const Datapath& dp) {
  return RoundOpts{dp.out_round, dp.sub_out, dp.out_prec, dp.overflow_to_inf};
}

inline bool zero_sum_sign(const Datapath& dp, const Product* t, int n) {
  bool all_zero = true, all_neg = true;
  for (int i = 0; i < n; ++i) {
    if (t[i].cls != Class::Zero) all_zero = false;
    if (!t[i].sign) all_neg = false;
  }
  if (all_zero) return all_neg;
  return dp.out_round == Rounding::RD;
}

inline bool special_at_inputs(const Datapath& dp, SpecialKind k) {
  if (k == SpecialKind::None) return false;
  if (k == SpecialKind::NaNIn || k == SpecialKind::Invalid) return true;
  return dp.adder != AdderKind::Pairwise;
}

inline int align_exponent(const Product* t, int n, int emin_lim, int first, int stride) {
  int e = kNone;
  for (int i = first; i < n; i += stride)
    if (t[i].cls == Class::Normal && t[i].exp > e) e = t[i].exp;
  if (e != kNone && emin_lim != kNone && e < emin_lim) e = emin_lim;
  return e;
}

inline Aligned align_term(const Product& t, int e_ref, int frac, AlignRound mode) {
  Aligned a;
  if (t.cls != Class::Normal) return a;
  // value = sig * 2^(exp - t.frac); target unit 2^(e_ref - frac)
  // v = sig * 2^((exp - t.frac) - (e_ref - frac)) = sig * 2^(-s)
  const int s = (e_ref - frac) - (t.exp - t.frac);
  u128 m;
  if (s <= 0) {
    if (-s + msb_index(t.sig) >= 125) throw std::overflow_error("align_term: term above e_ref");
    m = t.sig << (-s);
    a.v = static_cast<i128>(m);
    if (t.sign) a.v = -a.v;
    return a;
  }
  bool st = false;
  if (mode == AlignRound::RNE || mode == AlignRound::RNA)
    m = shr_nearest(t.sig, s, mode == AlignRound::RNE, st);  // nearest on the magnitude
  else
    m = shr_sticky(t.sig, s, st);
  a.sticky = st;
  a.v = static_cast<i128>(m);
  if (t.sign) {
    a.v = -a.v;
    if (mode == AlignRound::RD && st) a.v -= 1;  // floor of a negative value with lost bits
  }
  return a;
}

inline Fixed shift_to(const Fixed& x, int e_ref, int frac, AlignRound mode, bool* sticky) {
  Fixed r;
  r.exp = e_ref;
  r.frac = frac;
  // x.v * 2^(x.exp - x.frac) in units of 2^(e_ref - frac): shift right by s
  const int s = (e_ref - frac) - (x.exp - x.frac);
  if (s <= 0) {
    r.v = x.v * (static_cast<i128>(1) << (-s));  // callers guarantee it fits
    return r;
  }
  const bool neg = x.v < 0;
  const u128 mag = neg ? static_cast<u128>(-x.v) : static_cast<u128>(x.v);
  bool st = false;
  const u128 m = mode == AlignRound::RNE || mode == AlignRound::RNA
                     ? shr_nearest(mag, s, mode == AlignRound::RNE, st)
                     : shr_sticky(mag, s, st);
  if (sticky) *sticky |= st;
  r.v = static_cast<i128>(m);
  if (neg) {
    r.v = -r.v;
    if (mode == AlignRound::RD && st) r.v -= 1;
  }
  return r;
}

}  // namespace mc
