// matcore-sc: the text trace of the top: per clock cycle, every valid stage's lines, written by
// its kind's registry entry (`text`, sc/src/stages.hpp): binary values, '.' the binary point,
// '|' where the stage cuts.
#include <algorithm>
#include <cstdio>
#include <string>

#include "matcore/format.hpp"
#include "matcore/plan.hpp"
#include "stages.hpp"

namespace mcsc {

using namespace mc;

namespace {

std::string describe_bits(const Format& f, uint64_t bits) { return mc::describe(f, bits); }

const char* special_name(SpecialKind k) {
  switch (k) {
    case SpecialKind::NaNIn: return "nan_in";
    case SpecialKind::Invalid: return "invalid";
    case SpecialKind::PosInf: return "+inf";
    case SpecialKind::NegInf: return "-inf";
    default: return "none";
  }
}

/// mag * 2^lsb in binary, the units digit at weight 2^e_ref, `keep` fraction bits, then '|'
/// and the bits that do not fit (dropped by the stage).
std::string bin_cut(bool neg, u128 mag, int lsb, int e_ref, int keep) {
  if (mag == 0) return "0";
  const int top = lsb + msb_index(mag);
  const int hi = std::max(top, e_ref);
  const int cut = e_ref - keep;  // lowest kept weight
  const int lo = std::min(lsb, cut);
  std::string s = neg ? "-" : "+";
  int dropped = 0;
  for (int w = hi; w >= lo; --w) {
    if (w < cut && ++dropped > 48) {
      s += "...(" + std::to_string(w - lo + 1) + " more)";
      break;
    }
    const int i = w - lsb;
    s += (i >= 0 && i < 128 && ((mag >> i) & 1)) ? '1' : '0';
    if (w == e_ref) s += '.';
    if (w == cut && lo < cut) s += '|';
  }
  return s + " x2^" + std::to_string(e_ref);
}

/// An exact magnitude mag * 2^lsb as a normalised binary number.
std::string exact_str(bool neg, u128 mag, int lsb, bool sticky) {
  if (mag == 0) return "0";
  const int m = msb_index(mag);
  return std::string(neg ? "-" : "+") + to_binary_fixed(static_cast<i128>(mag), m) + " x2^" +
         std::to_string(lsb + m) + (sticky ? " +sticky" : "");
}

std::string fixed_str(const Fixed& x) {
  if (x.exp == kNone) return "none (no nonzero term)";
  return render(x);
}

std::string prod_str(const Product& p) {
  if (p.cls != Class::Normal)
    return std::string(p.sign ? "-" : "+") + to_string(p.cls) + (p.overflow ? " (overflow)" : "") +
           (p.invalid ? " (invalid)" : "");
  return std::string(p.sign ? "-" : "+") + to_binary_fixed(static_cast<i128>(p.sig), p.frac) + " x2^" +
         std::to_string(p.exp);
}

}  // namespace

void DatapathTop::monitor() {
  for (const StageView& v : views_) {
    const Ctl& c = v.ctl->read();
    if (!c.valid) continue;
    if (!text_tags_.empty() && !text_tags_.count(c.tag)) continue;
    char head[96];
    std::snprintf(head, sizeof head, "[cycle %3llu] %-11s sample %u group %d\n",
                  static_cast<unsigned long long>(cycle_), v.name.c_str(), c.tag, c.grp);
    text_ << head;
    TextCtx ctx{dp_, seen_};
    sc_stage(v.kind).text(ctx, text_, v, c);
  }
}

// ------------------------------------------------------------------ each kind's text
// The context of a kind's text function: dp_, of (out_fmt), ind (indent), F (frac_bits), the
// monitor's memory of the group's earlier stages, prev_acc() the accumulator before this stage.
#define TEXT_CONTEXT                                                                 \
  const Datapath& dp_ = ctx.dp;                                                      \
  [[maybe_unused]] const Format& of = dp_.out_fmt;                                   \
  [[maybe_unused]] const std::string ind = "      ";                                 \
  [[maybe_unused]] const int F = dp_.frac_bits;                                      \
  [[maybe_unused]] auto& seen_products_ = ctx.seen.products;                         \
  [[maybe_unused]] auto& seen_acc_ = ctx.seen.acc;                                   \
  [[maybe_unused]] auto& seen_res_ = ctx.seen.res;                                   \
  [[maybe_unused]] auto prev_acc = [&]() -> const AccBus* {                          \
    auto it = seen_acc_.find(c.seq);                                                 \
    return it == seen_acc_.end() ? nullptr : &it->second;                            \
  }

void text_issue(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const OperandBus& x = bus<OperandBus>(v.data);
  os << ind << "a =";
  for (int i = 0; i < x.n; ++i) os << " " << to_hex_bits(dp_.a_fmt, x.a[i]);
  os << "\n" << ind << "b =";
  for (int i = 0; i < x.n; ++i) os << " " << to_hex_bits(dp_.b_fmt, x.b[i]);
  os << "\n" << ind << "c = " << describe_bits(of, x.c)
     << (c.grp > 0 ? "  (previous group's d)" : dp_.c_final_add ? "  (+0: c is added at the end)" : "")
     << "\n";
}

void text_multiplier(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const ProductBus& x = bus<ProductBus>(v.data);
  if (ctx.seen.keep_products) seen_products_[c.seq] = x;  // for the aligner
  for (int i = 0; i < x.m; ++i) os << ind << "p" << i << " = " << prod_str(x.p[i]) << "\n";
  os << ind << "c  = " << prod_str(x.c) << "\n";
}

void text_aligner(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const AlignBus& x = bus<AlignBus>(v.data);
  auto pit = seen_products_.find(c.seq);
  const bool ie = dp_.late_c && dp_.interleave == 2;
  os << ind << (ie ? "e_max(odd k) = " : "e_max = ") << (x.e_max == kNone ? std::string("none") : std::to_string(x.e_max));
  if (ie) os << ", e_max(even k) = " << (x.e_even == kNone ? std::string("none") : std::to_string(x.e_even));
  os << "   F = " << F << " fraction bits, "
     << (dp_.prod_align == AlignRound::RD    ? "round-down"
         : dp_.prod_align == AlignRound::RNE ? "round to nearest even"
         : dp_.prod_align == AlignRound::RNA ? "round to nearest away"
                                             : "truncation") << ", '|' = cut\n";
  if (pit != seen_products_.end()) {
    const ProductBus& p = pit->second;
    for (int i = 0; i < x.m; ++i) {
      Product t = i < p.m ? p.p[i] : p.c;
      const bool isc = i >= p.m;
      if (isc && t.cls == Class::Zero && dp_.c_zero_exp != kNone) {
        os << ind << "c : 0 at exponent " << dp_.c_zero_exp << " (c_zero_exp)\n";
        continue;
      }
      const int e_ref = ie && (i & 1) ? x.e_even : x.e_max;
      os << ind << (isc ? std::string("c ") : "p" + std::to_string(i)) << ": ";
      if (t.cls != Class::Normal || e_ref == kNone) os << prod_str(t) << "\n";
      else
        os << bin_cut(t.sign, t.sig, t.exp - t.frac, e_ref, F) << "  -> v = "
           << to_binary_fixed(x.v[i], F) << "\n";
    }
    seen_products_.erase(pit);
  }
  os << ind << "sticky = " << x.sticky << (ie ? std::string(" (odd), ") + (x.sticky_even ? "1" : "0") + " (even)" : "") << "\n";
}

void text_adder(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const AccBus& x = bus<AccBus>(v.data);
  seen_acc_[c.seq] = x;
  if (dp_.late_c && dp_.interleave == 2)
    os << ind << "s_sum_odd  = " << fixed_str(x.odd) << "\n" << ind << "s_sum_even = " << fixed_str(x.even) << "\n";
  else
    os << ind << (dp_.late_c ? "s_sum = " : "s_acc = ") << fixed_str(x.s) << "\n";
}

void text_oddeven(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const AccBus& x = bus<AccBus>(v.data);
  if (x.s.exp != kNone) {
    for (const Fixed* p : {&x.odd, &x.even}) {
      if (p->exp == kNone) continue;
      const bool neg = p->v < 0;
      const u128 mag = neg ? static_cast<u128>(-p->v) : static_cast<u128>(p->v);
      os << ind << (p == &x.odd ? "odd : " : "even: ") << bin_cut(neg, mag, p->exp - p->frac, x.s.exp, dp_.partial_frac)
         << "  (round-down to " << dp_.partial_frac << " bits)\n";
    }
  }
  os << ind << "s_sum = " << fixed_str(x.s) << "\n";
  seen_acc_[c.seq] = x;
}

void text_cadd(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const AccBus& x = bus<AccBus>(v.data);
  const AccBus* in = prev_acc();
  if (!x.cadd) {
    os << ind << "c = 0 discarded (c_zero_exp none)\n";
  } else if (in) {
    const Product& cc = x.c;
    const int e_max = in->s.exp;
    os << ind << "e_c = " << x.e_c << ", e_max = " << (e_max == kNone ? std::string("none") : std::to_string(e_max)) << " -> "
       << (x.c_shifted ? "c shifted to e_max, round-down to c_frac = " + std::to_string(dp_.c_frac)
                       : "sum shifted to e_c, round-down to sum_frac = " + std::to_string(dp_.sum_frac))
       << (x.c_dropped ? " (c dropped: gap > c_drop_gap)" : "") << "\n";
    if (x.c_shifted && cc.cls == Class::Normal)
      os << ind << "c    : " << bin_cut(cc.sign, cc.sig, cc.exp - cc.frac, e_max, dp_.c_frac) << "\n";
    if (!x.c_shifted && in->s.exp != kNone && in->s.v != 0) {
      const bool neg = in->s.v < 0;
      const u128 mag = neg ? static_cast<u128>(-in->s.v) : static_cast<u128>(in->s.v);
      os << ind << "s_sum: " << bin_cut(neg, mag, in->s.exp - in->s.frac, x.e_c, dp_.sum_frac) << "\n";
    }
  }
  os << ind << "s_acc = " << fixed_str(x.s) << "   sticky = " << x.sticky << "\n";
  seen_acc_[c.seq] = x;
}

void text_normaliser(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const AccBus& x = bus<AccBus>(v.data);
  const AccBus* in = prev_acc();
  if (x.normalised && in && in->s.v != 0) {
    const bool neg = in->s.v < 0;
    const u128 mag = neg ? static_cast<u128>(-in->s.v) : static_cast<u128>(in->s.v);
    os << ind << "in   : " << bin_cut(neg, mag, in->s.exp - in->s.frac, x.s.exp, dp_.acc_frac)
       << "  (leading one to 2^" << x.s.exp << ", emin " << of.emin() << "; round-down to acc_frac = " << dp_.acc_frac << ")\n";
  } else if (!x.normalised) {
    os << ind << "pass (no normalisation in this branch)\n";
  }
  os << ind << "s_acc = " << fixed_str(x.s) << "\n";
  seen_acc_[c.seq] = x;
}

void text_exact(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const AccBus& x = bus<AccBus>(v.data);
  os << ind << "exact sum (products and c, no rounding) = " << exact_str(x.ex.sign, x.ex.mag, x.ex.lsb_exp, x.ex.sticky)
     << "\n";
  seen_acc_[c.seq] = x;
}

void text_pair_level(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const ProductBus& x = bus<ProductBus>(v.data);
  if (x.pairs == 0) os << ind << "pass (short group)\n";
  for (int k = 0; k < x.pairs; ++k)
    os << ind << "pair" << v.level << "_" << k << " = " << describe_bits(of, x.pair_bits[k]) << "\n";
}

void text_pair_cadd(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const AccBus& x = bus<AccBus>(v.data);
  if (x.mode == AccMode::Bits) os << ind << "c + tree: special -> 0x" << to_hex_bits(of, x.bits) << "\n";
  else
    os << ind << "c + tree, exact = " << exact_str(x.ex.sign, x.ex.mag, x.ex.lsb_exp, x.ex.sticky) << "\n";
  seen_acc_[c.seq] = x;
}

void text_rounder(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const ResultBus& x = bus<ResultBus>(v.data);
  const AccBus* in = prev_acc();
  const int p = dp_.out_prec >= 0 ? dp_.out_prec : of.mbits;
  if (c.special != SpecialKind::None) {
    os << ind << "special: " << special_name(c.special) << "\n";
  } else if (in && in->mode == AccMode::Bits) {
    os << ind << "special from the tree (c + tree)\n";
  } else if (in) {
    bool neg = false;
    u128 mag = 0;
    int lsb = 0;
    bool sticky = false;
    if (in->mode == AccMode::Fixed) {
      neg = in->s.v < 0;
      mag = neg ? static_cast<u128>(-in->s.v) : static_cast<u128>(in->s.v);
      lsb = in->s.exp - in->s.frac;
    } else if (in->mode == AccMode::Exact) {
      neg = in->ex.sign;
      mag = in->ex.mag;
      lsb = in->ex.lsb_exp;
      sticky = in->ex.sticky;
    }
    if (mag != 0) {
      const int lead = lsb + msb_index(mag);
      os << ind << "in   : " << bin_cut(neg, mag, lsb, std::max(lead, of.emin()), p) << (sticky ? " +sticky" : "")
         << "  (" << p << " fraction bits kept, " << to_string(dp_.out_round)
         << (dp_.sub_out ? "" : ", FTZ") << ")\n";
    }
  }
  os << ind << "d = " << describe_bits(of, x.d) << "\n";
  seen_acc_.erase(c.seq);
  if (dp_.c_final_add) seen_res_[c.seq] = x;
}

void text_cfinal(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const ResultBus& x = bus<ResultBus>(v.data);
  auto it = seen_res_.find(c.seq);
  if (c.last && it != seen_res_.end())
    os << ind << "acc = " << describe_bits(of, it->second.d) << "\n"
       << ind << "  + c = " << describe_bits(of, c.c0) << "  (one addition, " << to_string(dp_.c_final_round) << ")\n";
  else
    os << ind << "pass (not the last group: its d is the next group's c)\n";
  if (it != seen_res_.end()) seen_res_.erase(it);
  os << ind << "d = " << describe_bits(of, x.d) << "\n";
}

void text_outconv(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) {
  TEXT_CONTEXT;
  const ResultBus& x = bus<ResultBus>(v.data);
  os << ind << "d32 = 0x" << to_hex_bits(kBinary32, x.d32) << "\n";
}

/// The scale stages: each block's scales and their exponent sum, then the scaled terms
/// (`what`: "p" products, "group " group sums).
static void scale_text(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c, const char* what) {
  TEXT_CONTEXT;
  const ProductBus& x = bus<ProductBus>(v.data);
  if (ctx.seen.keep_products) seen_products_[c.seq] = x;  // the aligner's terms
  for (int j = 0; j < x.ns; ++j) {
    const ScaleProduct s = scale_product(dp_.scale_fmt, x.sa[j], x.sb[j]);
    os << ind << "block " << (x.k0 / dp_.scale_block + j) << ": sa = " << describe_bits(dp_.scale_fmt, x.sa[j])
       << ", sb = " << describe_bits(dp_.scale_fmt, x.sb[j]) << ", e_alpha + e_beta = "
       << (s.cls == Class::Normal ? std::to_string(s.exp) : s.cls == Class::Zero ? std::string("zero") : std::string("nan"))
       << "\n";
  }
  for (int i = 0; i < x.m; ++i) os << ind << what << i << " = " << prod_str(x.p[i]) << "\n";
}

void text_scaler(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) { scale_text(ctx, os, v, c, "p"); }
void text_grouper(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c) { scale_text(ctx, os, v, c, "group "); }

#undef TEXT_CONTEXT

}  // namespace mcsc
