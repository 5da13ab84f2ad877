#include "matcore/stages.hpp"

#include <algorithm>
#include <stdexcept>

#include "matcore/wide.hpp"

namespace mc {

uint64_t special_bits(const Datapath& dp, SpecialKind k) {
  switch (k) {
    case SpecialKind::NaNIn: return dp.nan_propagate;
    case SpecialKind::Invalid: return dp.nan_invalid;
    case SpecialKind::PosInf:
      return dp.out_fmt.has_inf() ? dp.out_fmt.inf_bits(false) : dp.nan_invalid;
    case SpecialKind::NegInf:
      return dp.out_fmt.has_inf() ? dp.out_fmt.inf_bits(true) : dp.nan_invalid;
    default: return 0;
  }
}

uint64_t nan_with_sign(const Datapath& dp, uint64_t r, const Product* t, int n, const Product& c) {
  bool neg = false, found = false;
  if (c.cls == Class::NaN) { neg = c.sign; found = true; }
  for (int i = 0; i < n && !found; ++i)
    if (t[i].cls == Class::NaN && !t[i].invalid) { neg = t[i].sign; found = true; }
  const uint64_t sbit = uint64_t{1} << (dp.out_fmt.width() - 1);
  return neg ? (r | sbit) : (r & ~sbit);
}

std::string TraceRow::bits() const {
  if (signals.empty()) return "";
  const TraceSignal& s = signals[0];
  return std::to_string(s.width) + "'h" + to_hex(s.bits);
}

std::string Trace::text(const std::string& indent) const {
  std::string s;
  for (const TraceRow& r : rows) {
    std::string line = indent + r.name;
    line.resize(std::max(line.size() + 1, indent.size() + 25), ' ');
    line += r.value;
    if (!r.signals.empty()) {
      line.resize(std::max(line.size() + 2, indent.size() + 70), ' ');
      line += r.bits();
    }
    s += line + "\n";
  }
  return s;
}

std::string render(const Fixed& x) {
  return to_binary_fixed(x.v, x.frac) + " x2^" + std::to_string(x.exp);
}

Fixed normalise_rd(const Fixed& x, int emin, int frac, bool* sticky) {
  if (x.v == 0) return Fixed{0, x.exp, frac};
  const u128 mag = x.v < 0 ? static_cast<u128>(-x.v) : static_cast<u128>(x.v);
  const int lead = x.exp - x.frac + msb_index(mag);  // exponent of the leading one
  const int e = lead > emin ? lead : emin;
  return shift_to(x, e, frac, AlignRound::RD, sticky);
}

CAlignOut c_align(const Fixed& sum, const Product& c, int e_c, const CAlignCfg& cfg) {
  CAlignOut o;
  const int e_max = sum.exp;  // kNone when no product term
  Fixed cf;  // c as fixed: sig with its fraction bits at exponent e_c
  if (c.cls == Class::Normal) {
    cf.v = static_cast<i128>(c.sig);
    if (c.sign) cf.v = -cf.v;
    cf.exp = c.exp;
    cf.frac = c.frac;
  } else {
    cf.v = 0;
    cf.exp = e_c;
    cf.frac = cfg.c_frac;
  }
  if (e_max != kNone && (e_c == kNone || e_max >= e_c)) {
    o.c_shifted = true;
    Fixed cs{0, e_max, cfg.c_frac};
    if (e_c != kNone && cf.v != 0) {
      if (cfg.c_drop_gap != kNone && e_max - e_c > cfg.c_drop_gap) {
        o.c_dropped = true;
      } else {
        cs = shift_to(cf, e_max, cfg.c_frac, AlignRound::RD, &o.sticky);
      }
    }
    const int f = std::max(sum.frac, cfg.c_frac);
    Fixed a = shift_to(sum, e_max, f, AlignRound::RD);
    Fixed b = shift_to(cs, e_max, f, AlignRound::RD);
    o.acc = Fixed{a.v + b.v, e_max, f};
    return o;
  }
  // e_c > e_max (or no products): shift the product sum.
  Fixed ss{0, e_c, cfg.sum_frac};
  if (e_max != kNone && sum.v != 0) ss = shift_to(sum, e_c, cfg.sum_frac, AlignRound::RD, &o.sticky);
  const int f = std::max(cfg.sum_frac, cf.frac);
  Fixed a = shift_to(ss, e_c, f, AlignRound::RD);
  Fixed b = shift_to(cf, e_c, f, AlignRound::RD);
  o.acc = Fixed{a.v + b.v, e_c, f};
  if (cfg.norm_rd) {
    o.acc = normalise_rd(o.acc, cfg.emin, cfg.acc_frac, &o.sticky);
    o.normalised = true;
  }
  return o;
}

uint64_t round_fixed(const Fixed& x, const Format& out, const RoundOpts& o, bool zero_sign) {
  if (x.v == 0) return zero_bits(out, zero_sign);
  Exact e;
  e.sign = x.v < 0;
  e.mag = e.sign ? static_cast<u128>(-x.v) : static_cast<u128>(x.v);
  e.lsb_exp = x.exp - x.frac;
  return round_to_format(out, e, o);
}

namespace {

/// The record of an exact sum, one form whatever the accumulator: the 124 bits from the leading
/// one down (the sticky: nonzero bits below them), trailing zeros dropped (mag odd). The same
/// value; the RTL's view of its wide accumulator computes the same record (rtl.cpp).
Exact canonical(Exact e) {
  if (e.mag == 0) return e;
  const uint64_t low = static_cast<uint64_t>(e.mag);
  const int tz = low ? __builtin_ctzll(low) : 64 + __builtin_ctzll(static_cast<uint64_t>(e.mag >> 64));
  e.mag >>= tz;
  e.lsb_exp += tz;
  return e;
}

}  // namespace

uint64_t exact_sum_round(const Product* t, int n, const Format& out, const RoundOpts& o,
                         bool zero_sign, Exact* exact_out) {
  int lo = 0, hi = 0;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    if (t[i].cls != Class::Normal) continue;
    const int l = t[i].exp - t[i].frac;
    const int h = l + msb_index(t[i].sig);
    if (!any) { lo = l; hi = h; any = true; }
    lo = std::min(lo, l);
    hi = std::max(hi, h);
  }
  if (!any) {
    if (exact_out) *exact_out = Exact{zero_sign, 0, 0, false};
    return zero_bits(out, zero_sign);
  }
  // Fast path: the whole range fits a 128-bit two's complement accumulator with headroom for
  // the carries of n terms.
  const int head = 2 + msb_index(static_cast<u128>(n));
  if (hi - lo + 1 + head <= 120) {
    i128 acc = 0;
    for (int i = 0; i < n; ++i)
      if (t[i].cls == Class::Normal) {
        const i128 v = static_cast<i128>(t[i].sig << (t[i].exp - t[i].frac - lo));
        acc += t[i].sign ? -v : v;
      }
    if (acc == 0) {
      const bool s = (o.mode == Rounding::RD);
      if (exact_out) *exact_out = Exact{s, 0, 0, false};
      return zero_bits(out, s);
    }
    const Exact e{acc < 0, acc < 0 ? static_cast<u128>(-acc) : static_cast<u128>(acc), lo, false};
    if (exact_out) *exact_out = canonical(e);
    return round_to_format(out, e, o);
  }
  // Otherwise a Kulisch accumulator over the whole range (binary64 products span ~4300 bits).
  Wide w;
  const int nbits = hi - lo + 1 + head;
  w.reset(lo, nbits);
  for (int i = 0; i < n; ++i)
    if (t[i].cls == Class::Normal) w.add(t[i].sign, t[i].sig, t[i].exp - t[i].frac);
  if (w.is_zero()) {
    const bool s = (o.mode == Rounding::RD);
    if (exact_out) *exact_out = Exact{s, 0, 0, false};
    return zero_bits(out, s);
  }
  const Exact e = w.to_exact();
  if (exact_out) *exact_out = canonical(e);
  return round_to_format(out, e, o);
}

int group_lsb(const Datapath& dp) {
  int lsb = dp.a_fmt.emin() + dp.b_fmt.emin() - dp.a_fmt.mbits - dp.b_fmt.mbits;
  if (dp.prod_round_out) lsb = std::min(lsb, dp.out_fmt.emin() - dp.out_fmt.mbits);
  return std::min(lsb, 0);
}

Fixed group_sum(const Product* p, int n, int lsb) {
  Fixed f{0, 0, -lsb};
  for (int i = 0; i < n; ++i) {
    if (p[i].cls != Class::Normal) continue;
    const int sh = p[i].exp - p[i].frac - lsb;
    if (sh < 0) throw std::logic_error("group_sum: a product below the group's unit 2^" + std::to_string(lsb));
    if (sh + msb_index(p[i].sig) >= 120) throw std::overflow_error("group_sum: products more than 120 bits apart");
    const i128 v = static_cast<i128>(p[i].sig << sh);
    f.v += p[i].sign ? -v : v;
  }
  return f;
}

Product group_term(const Product* p, int n, const ScaleProduct& s, bool by_sum, int lsb) {
  Product r{};
  const SpecialKind k = resolve_specials(p, n);
  if (s.cls == Class::NaN || k == SpecialKind::NaNIn) { r.cls = Class::NaN; return r; }
  if (k == SpecialKind::Invalid) { r.cls = Class::NaN; r.invalid = true; return r; }
  if (k == SpecialKind::PosInf || k == SpecialKind::NegInf) {
    r.sign = k == SpecialKind::NegInf;
    r.cls = s.cls == Class::Zero ? Class::NaN : Class::Inf;
    r.invalid = s.cls == Class::Zero;
    return r;
  }
  bool any = false, all_neg = true;
  for (int i = 0; i < n; ++i) {
    any |= p[i].cls == Class::Normal;
    all_neg &= p[i].sign;
  }
  // a Zero term (it reads e_zero): -0 only for a group of -0 products, so that the sign of an
  // exact zero sum over the terms is the one over the products (zero_sum_sign)
  if (!any) { r.sign = all_neg && n > 0; return r; }
  if (s.cls == Class::Zero) return r;
  const Fixed f = group_sum(p, n, lsb);
  r.cls = Class::Normal;  // also when the group cancels to 0: it keeps its scale exponent
  r.sign = f.v < 0;
  r.sig = static_cast<u128>(f.v < 0 ? -f.v : f.v) * s.sig;
  r.exp = s.exp;
  r.frac = f.frac + s.frac;
  if (by_sum) {  // the same value, at the exponent of its leading bit: value = sig * 2^(exp - frac)
    if (r.sig == 0) return Product{};
    const int m = msb_index(r.sig);
    r.exp += m - r.frac;
    r.frac = m;
  }
  return r;
}

Fixed combine_odd_even(const Fixed& odd, const Fixed& even, int partial_frac) {
  int e = odd.exp;
  if (even.exp != kNone && (e == kNone || even.exp > e)) e = even.exp;
  Fixed sum{0, e, partial_frac};
  if (e == kNone) return sum;
  const Fixed a = odd.exp == kNone ? Fixed{0, e, partial_frac} : shift_to(odd, e, partial_frac, AlignRound::RD);
  const Fixed b = even.exp == kNone ? Fixed{0, e, partial_frac} : shift_to(even, e, partial_frac, AlignRound::RD);
  sum.v = a.v + b.v;
  return sum;
}

PairSum pair_sum(const Datapath& dp, const Product& p, const Product& q) {
  Product two[2] = {p, q};
  const SpecialKind sk = resolve_specials(two, 2);
  PairSum r;
  r.bits = sk != SpecialKind::None ? special_bits(dp, sk)
                                   : exact_sum_round(two, 2, dp.out_fmt, out_opts(dp), zero_sum_sign(dp, two, 2));
  r.sum = addend(decode(dp.out_fmt, r.bits));
  if (sk == SpecialKind::Invalid) r.sum.invalid = true;
  return r;
}

uint64_t add_c_final(const Datapath& dp, uint64_t acc, uint64_t c) {
  Product two[2] = {addend(decode(dp.out_fmt, acc)), addend(decode_operand(dp.out_fmt, c, dp.sub_in))};
  const SpecialKind sk = resolve_specials(two, 2);
  if (sk != SpecialKind::None) return special_bits(dp, sk);
  const RoundOpts o{dp.c_final_round, dp.sub_out, -1, false};
  return exact_sum_round(two, 2, dp.out_fmt, o, zero_sum_sign(dp, two, 2));
}

}  // namespace mc
