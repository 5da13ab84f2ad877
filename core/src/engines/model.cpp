#include "matcore/model.hpp"

#include "matcore/plan.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <vector>

namespace mc {

namespace {

constexpr int kMaxGroup = 64;

std::string hexu(uint64_t v) { return "0x" + to_hex(v); }

// ---- the trace records ----------------------------------------------------------------------
/// Writes the stage records of one dot product into a Trace: each record's signals with the
/// widths of signal_table(dp), the widths the SystemC probes and the RTL views have, so a row's
/// bits are those the VCDs show under the same name; and the rendering `dot --trace` prints.
class Rec {
 public:
  Rec(const Datapath& dp, Trace* tr) : dp_(dp), tr_(tr) {
    if (tr) table_ = signal_table(dp);
  }
  Trace* trace() const { return tr_; }
  void text(const std::string& name, const std::string& value) const { tr_->add(name, value); }
  void flag(const std::string& name, bool v) const { put(name, v ? "1" : "0", {sig(name, v)}); }
  void integer(const std::string& name, int v, const std::string& value) const { put(name, value, {sig(name, v)}); }
  void integer(const std::string& name, int v) const { integer(name, v, std::to_string(v)); }
  /// A bit pattern of f; number: its value, when f is the output format (c, d, a pair sum).
  void pattern(const std::string& name, const Format& f, uint64_t bits, const std::string& value) const {
    TraceRow& r = put(name, value, {sig(name, static_cast<i128>(bits))});
    const Unpacked u = decode(f, bits);
    if (f == dp_.out_fmt && (u.cls == Class::Normal || u.cls == Class::Subnormal))
      r.number = digits(u.sign, u.sig, u.exp - u.mbits, u.mbits + 1);
  }
  void pattern(const std::string& name, const Format& f, uint64_t bits) const { pattern(name, f, bits, describe(f, bits)); }
  /// A fixed-point value: NAME (two's complement), NAME_e, NAME_f.
  void fixed(const std::string& name, const Fixed& x, const std::string& value) const {
    TraceRow& r = put(name, value, {sig(name, x.v), sig(name + "_e", x.exp), sig(name + "_f", x.frac)});
    if (x.exp != kNone) r.number = number_of(x);
  }
  void fixed(const std::string& name, const Fixed& x) const { fixed(name, x, render(x)); }
  /// An aligned term (aligner.v<i>): its bits at frac fraction bits below e_max, shown as that
  /// fixed-point value; one signal, the lane of the adder.
  void term(const std::string& name, const Fixed& x) const {
    put(name, render(x), {sig(name, x.v)}).number = number_of(x);
  }
  /// A product (or c) as the multiplier gives it: NAME (significand), NAME_e, NAME_s, NAME_cls.
  void product(const std::string& name, const Product& p, const std::string& value) const {
    TraceRow& r = put(name, value, {sig(name, static_cast<i128>(p.sig)), sig(name + "_e", p.exp), sig(name + "_s", p.sign),
                                    sig(name + "_cls", static_cast<int>(p.cls))});
    if (p.cls != Class::Normal) return;
    r.number = digits(p.sign, p.sig, p.exp - p.frac, msb_index(p.sig) + 1);
    r.number.msb = std::max(r.number.msb, p.exp);  // the integer digit(s) of the unnormalised significand
  }
  /// An exact sum: NAME (the magnitude), NAME_e, NAME_s, NAME_sticky.
  void exact(const std::string& name, const Exact& x, const std::string& value) const {
    TraceRow& r = put(name, value, {sig(name, static_cast<i128>(x.mag)), sig(name + "_e", x.lsb_exp), sig(name + "_s", x.sign),
                                    sig(name + "_sticky", x.sticky)});
    r.number = digits(x.sign, x.mag, x.lsb_exp, x.mag ? msb_index(x.mag) + 1 : 1);
  }

 private:
  TraceSignal sig(const std::string& name, i128 v) const {
    const SignalField* f = find_signal(table_, name);
    if (!f) throw std::logic_error("trace: '" + name + "' is not a signal of " + dp_.name() + "'s plan");
    u128 b = static_cast<u128>(v);
    if (f->width < 128) b &= (static_cast<u128>(1) << f->width) - 1;
    return TraceSignal{name, f->width, b};
  }
  TraceRow& put(const std::string& name, const std::string& value, std::vector<TraceSignal> s) const {
    tr_->add(TraceRow{name, value, std::move(s), {}});
    return tr_->rows.back();
  }
  static TraceNumber digits(bool neg, u128 mag, int lsb, int n) {
    return TraceNumber{true, neg, mag, lsb, lsb + std::max(n, 1) - 1};
  }
  /// A fixed-point value's digits as render() writes them: at least one integer digit.
  static TraceNumber number_of(const Fixed& x) {
    const u128 m = x.v < 0 ? static_cast<u128>(-x.v) : static_cast<u128>(x.v);
    return digits(x.v < 0, m, x.exp - x.frac, std::max(msb_index(m) + 1, x.frac + 1));
  }
  const Datapath& dp_;
  Trace* tr_;
  std::vector<SignalField> table_;
};

// ---- the reference interpreter --------------------------------------------------------------
// mc::dot folds each group of products through stage_list(dp), the same list plan() names and
// the SystemC top, the RTL generator and the layouts are built from. Each stage is one entry of
// kStages: a function from the group's record (the registers between stages) to the next, with
// the trace rows it shows under the names of docs/systemc.md.

/// The registers of one group between stages.
struct Group {
  const uint64_t* a;
  const uint64_t* b;
  const uint64_t* sa = nullptr;  ///< block scales of a and b (scale j covers k in
  const uint64_t* sb = nullptr;  ///< [j*scale_block, (j+1)*scale_block)); nullptr: unit scales
  int k0 = 0;                  ///< k of this group's first product
  int n;                       ///< products in this group (<= n_fma)
  uint64_t c;                  ///< c in out_fmt (the previous group's d)
  Product t[kMaxGroup + 1];    ///< multiplier: the products, then c in t[n] (early c: c's term)
  bool zero_sign = false;      ///< the sign of an exact zero sum
  bool resolved = false;       ///< d is final (specials, or a stage that rounds itself)
  uint64_t d = 0;              ///< the group's result in out_fmt
  // aligner -> adder: one or two sets (odd and even products summed apart)
  int sets = 1;
  int e_max[2] = {kNone, kNone};
  bool sticky[2] = {false, false};
  i128 v[kMaxGroup + 1];       ///< aligned terms, in t's order
  int terms = 0;               ///< aligned terms (early c: n + 1)
  // adder -> oddeven -> cadd -> normaliser -> rounder
  Fixed sum[2];
  Fixed acc;
  bool acc_zero = false;       ///< no finite nonzero term: the rounder gives a signed zero
  bool c_added = false;        ///< cadd ran c_align (the normaliser shows its result)
  CAlignOut ca;
  // the pairwise tree
  Product level[kMaxGroup];
  int m = 0;
};

const char* set_tag(const Group& g, int s) { return g.sets == 1 ? "" : s == 0 ? "_odd" : "_even"; }

void issue(const Datapath&, const StageStep&, Group&, const Rec*) {}  // operand registers only

/// Exact products and c (stage 2); d's zero sign is fixed here.
void multiplier(const Datapath& dp, const StageStep&, Group& g, const Rec* tr) {
  MulCfg mc;
  mc.overflow_exp = dp.prod_overflow_exp;
  mc.round_out = dp.prod_round_out;
  mc.out = &dp.out_fmt;
  mc.sub_out = dp.sub_out;
  for (int i = 0; i < g.n; ++i) {
    const Product& p = g.t[i] = multiply(decode_operand(dp.a_fmt, g.a[i], dp.sub_in), decode_operand(dp.b_fmt, g.b[i], dp.sub_in), mc);
    if (tr)
      tr->product("multiplier.p" + std::to_string(i), p,
                  p.cls == Class::Normal ? std::string(p.sign ? "-" : "+") + "0x" + to_hex(p.sig) + " frac=" +
                                               std::to_string(p.frac) + " exp=" + std::to_string(p.exp)
                                         : std::string(p.sign ? "-" : "+") + to_string(p.cls) + (p.overflow ? " (overflow)" : ""));
  }
  g.t[g.n] = addend(decode_operand(dp.out_fmt, g.c, dp.sub_in));
  if (tr) tr->pattern("multiplier.c", dp.out_fmt, g.c);
  g.zero_sign = zero_sum_sign(dp, g.t, g.n + 1);
}

/// The scale pair of block j (unit scales where none were given).
ScaleProduct block_scale(const Datapath& dp, const Group& g, int j, const Rec* tr, const char* stage, int local) {
  const uint64_t one = unit_scale_bits(dp.scale_fmt);
  const uint64_t x = g.sa ? g.sa[j] : one, y = g.sb ? g.sb[j] : one;
  if (tr) {
    const std::string l = std::to_string(local);
    tr->pattern(std::string(stage) + ".sa" + l, dp.scale_fmt, x);
    tr->pattern(std::string(stage) + ".sb" + l, dp.scale_fmt, y);
  }
  return scale_product(dp.scale_fmt, x, y);
}

/// ST-FDPA: every product times its block's alpha * beta (exact; the exponents add).
void scaler(const Datapath& dp, const StageStep&, Group& g, const Rec* tr) {
  const int blk = dp.scale_block;
  for (int i = 0, local = 0; i < g.n; ++local) {
    const int j = (g.k0 + i) / blk, end = std::min(g.n, (j + 1) * blk - g.k0);
    const ScaleProduct s = block_scale(dp, g, j, tr, "scaler", local);
    if (tr) tr->integer("scaler.e_s" + std::to_string(local), s.exp, s.cls == Class::Normal ? std::to_string(s.exp) : s.cls == Class::Zero ? "zero" : "nan");
    for (; i < end; ++i) g.t[i] = scale_term(g.t[i], s);
  }
  g.zero_sign = zero_sum_sign(dp, g.t, g.n + 1);  // a zero scale makes a zero term
}

/// GST-FDPA: groups of G products summed exactly, each sum times its alpha * beta, aligned at
/// e_alpha + e_beta; the groups and c are the aligner's terms (c moves to t[groups]).
void grouper(const Datapath& dp, const StageStep&, Group& g, const Rec* tr) {
  const int G = dp.group_size, blk = dp.scale_block;
  int m = 0;
  for (int i = 0; i < g.n; i += G, ++m) {
    const int n = std::min(G, g.n - i);
    const ScaleProduct s = block_scale(dp, g, (g.k0 + i) / blk, tr, "grouper", m);
    const Product t = group_term(g.t + i, n, s, dp.group_by_sum, group_lsb(dp));
    if (tr) {  // the group term S * alpha.sig * beta.sig at its alignment exponent
      const std::string l = std::to_string(m);
      const i128 v = static_cast<i128>(t.sig);
      if (t.cls == Class::Normal) tr->fixed("grouper.s" + l, Fixed{t.sign ? -v : v, t.exp, t.frac});
      tr->integer("grouper.e" + l, t.cls == Class::Normal ? t.exp : t.cls == Class::Zero ? dp.emin_lim : 0,
                  t.cls == Class::Normal ? std::to_string(t.exp)
                  : t.cls == Class::Zero ? std::to_string(dp.emin_lim) + " (e_zero)" : to_string(t.cls));
    }
    g.t[m] = t;
  }
  g.t[m] = g.t[g.n];  // c
  g.n = m;
  g.zero_sign = zero_sum_sign(dp, g.t, g.n + 1);  // over the group terms, as the specials detector
}

/// The specials detector, the control register of the stage after the multiplier: NaN and
/// Inf inputs decide d there (an infinity among the terms of a pairwise tree is left to the
/// tree: special_at_inputs).
void specials(const Datapath& dp, Group& g, const Rec* tr) {
  const SpecialKind sk = resolve_specials(g.t, g.n + 1);
  if (!special_at_inputs(dp, sk)) return;
  g.d = special_bits(dp, sk);
  if (sk == SpecialKind::NaNIn && dp.nan_keep_sign) g.d = nan_with_sign(dp, g.d, g.t, g.n, g.t[g.n]);
  g.resolved = true;
  if (tr)
    tr->integer("specials.kind", static_cast<int>(sk), sk == SpecialKind::NaNIn ? "nan_in" : sk == SpecialKind::Invalid ? "invalid" : "inf");
}

/// Aligner: e_max of each set and every term aligned to it. Early c: c is one more term (c = 0
/// takes part with c_zero_exp and no significand bits). Late c: the products only, each set
/// (odd, even) at its own e_max; a set without a finite nonzero product shows nothing.
void aligner(const Datapath& dp, const StageStep&, Group& g, const Rec* tr) {
  if (!dp.late_c) {
    Product& c = g.t[g.n];
    if (c.cls == Class::Zero && dp.c_zero_exp != kNone) {
      c.cls = Class::Normal;
      c.sig = 0;
      c.frac = 0;
      c.exp = dp.c_zero_exp;
    }
    g.terms = g.n + 1;
    const int e = g.e_max[0] = align_exponent(g.t, g.terms, dp.emin_lim);
    for (int i = 0; e != kNone && i < g.terms; ++i) {
      const Aligned a = align_term(g.t[i], e, dp.frac_bits, dp.prod_align);
      g.v[i] = a.v;
      g.sticky[0] |= a.sticky;
    }
    if (tr) {
      tr->integer("aligner.e_max", e, e == kNone ? "none" : std::to_string(e));
      tr->flag("aligner.sticky", g.sticky[0]);
      for (int i = 0; e != kNone && i < g.terms; ++i)
        tr->term(i < g.n ? "aligner.v" + std::to_string(i) : "aligner.vc", Fixed{g.v[i], e, dp.frac_bits});
    }
    return;
  }
  g.sets = dp.interleave == 2 ? 2 : 1;
  g.terms = g.n;
  for (int s = 0; s < g.sets; ++s) {
    const int e = g.e_max[s] = align_exponent(g.t, g.n, dp.emin_lim, s, g.sets);
    if (e == kNone) continue;
    for (int i = s; i < g.n; i += g.sets) {
      if (g.t[i].cls != Class::Normal) {
        g.v[i] = 0;
        continue;
      }
      const Aligned a = align_term(g.t[i], e, dp.frac_bits, dp.prod_align);
      g.v[i] = a.v;
      g.sticky[s] |= a.sticky;
    }
    if (tr) {
      tr->integer(std::string("aligner.e_max") + set_tag(g, s), e);
      tr->flag(std::string("aligner.sticky") + set_tag(g, s), g.sticky[s]);
    }
  }
  for (int i = 0; tr && i < g.n; ++i)  // the aligned products, each at its set's e_max
    if (g.e_max[i % g.sets] != kNone) tr->term("aligner.v" + std::to_string(i), Fixed{g.v[i], g.e_max[i % g.sets], dp.frac_bits});
}

/// The fused multi-term adder: the exact sum of each set's aligned terms (frac_bits fraction
/// bits at its e_max). Early c: that sum is the accumulator (adder.s_acc).
void adder(const Datapath& dp, const StageStep&, Group& g, const Rec* tr) {
  const int stride = dp.late_c ? g.sets : 1;
  for (int s = 0; s < g.sets; ++s) {
    Fixed& f = g.sum[s] = Fixed{0, g.e_max[s], dp.frac_bits};
    if (f.exp == kNone) continue;
    for (int i = s; i < g.terms; i += stride) f.v += g.v[i];
  }
  if (!dp.late_c) {
    g.acc = g.sum[0];
    g.acc_zero = g.acc.exp == kNone;
    if (tr) tr->fixed("adder.s_acc", g.acc, g.acc_zero ? "0" : render(g.acc));
    return;
  }
  for (int s = 0; s < g.sets; ++s)
    if (tr && g.sum[s].exp != kNone) tr->fixed(std::string("adder.s_sum") + set_tag(g, s), g.sum[s]);
  g.acc = g.sum[0];
}

/// The odd and even sums combined at the larger e_max (interleave 2).
void oddeven(const Datapath& dp, const StageStep&, Group& g, const Rec* tr) {
  g.acc = combine_odd_even(g.sum[0], g.sum[1], dp.partial_frac);
  if (tr) tr->fixed("adder.s_sum", g.acc, g.acc.exp == kNone ? "0" : render(g.acc));
}

/// Late c (Algorithms 1 and 2): c aligned against the product sum with its round-down and
/// added; c = 0 without c_zero_exp is discarded (the product sum is the result).
void cadd(const Datapath& dp, const StageStep&, Group& g, const Rec* tr) {
  const Product& c = g.t[g.n];
  const int e_c = c.cls == Class::Normal ? c.exp : dp.c_zero_exp;
  if (e_c == kNone) {
    g.acc_zero = g.acc.exp == kNone;
    return;
  }
  CAlignCfg cc;
  cc.c_frac = dp.c_frac;
  cc.sum_frac = dp.sum_frac;
  cc.acc_frac = dp.acc_frac;
  cc.c_drop_gap = dp.c_drop_gap;
  cc.norm_rd = dp.late_norm_rd;
  cc.emin = dp.out_fmt.emin();
  g.ca = c_align(g.acc, c, e_c, cc);
  g.c_added = true;
  if (tr) {
    tr->integer("cadd.e_c", e_c);
    tr->integer("cadd.branch", g.ca.c_shifted, g.ca.c_shifted ? "c_shifted" : "sum_shifted");
    tr->flag("cadd.c_dropped", g.ca.c_dropped);
  }
}

/// The normalisation point of the late-c sum (c_align's normalise + RD step; its sticky covers
/// the c alignment too).
void normaliser(const Datapath&, const StageStep&, Group& g, const Rec* tr) {
  if (!g.c_added) return;
  g.acc = g.ca.acc;
  if (tr) {
    tr->flag("normaliser.sticky", g.ca.sticky);
    tr->fixed(g.ca.normalised ? "normaliser.s_acc" : "cadd.s_acc", g.ca.acc);
  }
}

/// The exact (Kulisch) sum of the products and c, rounded once.
void exact(const Datapath& dp, const StageStep&, Group& g, const Rec* tr) {
  Exact ex;
  g.d = exact_sum_round(g.t, g.n + 1, dp.out_fmt, out_opts(dp), g.zero_sign, &ex);
  g.resolved = true;
  if (tr) tr->exact("adder.exact", ex, (ex.sign ? "-0x" : "0x") + to_hex(ex.mag) + "*2^" + std::to_string(ex.lsb_exp) + (ex.sticky ? " +sticky" : ""));
}

/// One level of the pairwise tree (CDNA2): fl(p_2k + p_2k+1), an odd last term passed on.
/// Infinite terms reach the tree: each fl() resolves the specials of its two terms.
void pair_level(const Datapath& dp, const StageStep& st, Group& g, const Rec* tr) {
  if (st.level == 0) {
    g.m = g.n;
    for (int i = 0; i < g.n; ++i) g.level[i] = g.t[i];
    if (g.n == 0) g.level[0] = Product{};  // K = 0: the tree is +0
  }
  if (g.m <= 1) return;
  int k = 0;
  for (int i = 0; i + 1 < g.m; i += 2) {
    const PairSum ps = pair_sum(dp, g.level[i], g.level[i + 1]);
    if (tr) tr->pattern("adder.pair" + std::to_string(st.level) + "_" + std::to_string(k), dp.out_fmt, ps.bits, hexu(ps.bits));
    g.level[k++] = ps.sum;
  }
  if (g.m & 1) g.level[k++] = g.level[g.m - 1];
  g.m = k;
}

/// The tree's final fl(c + tree).
void pair_cadd(const Datapath& dp, const StageStep&, Group& g, const Rec*) {
  if (g.n <= 1 && g.m == 0) g.level[0] = g.n ? g.t[0] : Product{};  // no level ran
  g.d = pair_sum(dp, g.t[g.n], g.level[0]).bits;
  g.resolved = true;
}

/// Rounding of the accumulator to out_fmt; rounder.d is d whichever stage decided it.
void rounder(const Datapath& dp, const StageStep&, Group& g, const Rec* tr) {
  if (!g.resolved) g.d = g.acc_zero ? zero_bits(dp.out_fmt, g.zero_sign) : round_fixed(g.acc, dp.out_fmt, out_opts(dp), g.zero_sign);
  g.resolved = true;
  if (tr) tr->pattern("rounder.d", dp.out_fmt, g.d);
}

/// The stages of one group, by kind (StageKind order); nullptr: a stage of the whole dot
/// product (cfinal, after the last group) or of the files (outconv), not of a group.
using GroupStage = void (*)(const Datapath&, const StageStep&, Group&, const Rec*);
struct StageEntry {
  StageKind kind;
  GroupStage run;
  bool after_resolved;  ///< runs when d is already decided (the rounder shows it)
};
constexpr StageEntry kStages[] = {
    {StageKind::Issue, issue, false},        {StageKind::Multiplier, multiplier, false},
    {StageKind::Aligner, aligner, false},    {StageKind::Adder, adder, false},
    {StageKind::OddEven, oddeven, false},    {StageKind::CAdd, cadd, false},
    {StageKind::Normaliser, normaliser, false}, {StageKind::Exact, exact, false},
    {StageKind::PairLevel, pair_level, false},  {StageKind::PairCAdd, pair_cadd, false},
    {StageKind::Rounder, rounder, true},     {StageKind::CFinal, nullptr, false},
    {StageKind::OutConv, nullptr, false},    {StageKind::Scaler, scaler, false},
    {StageKind::GroupSum, grouper, false},
};
static_assert(sizeof kStages / sizeof kStages[0] == kStageKinds, "one entry per kind");

uint64_t run_group(const Datapath& dp, const StageList& l, const uint64_t* a, const uint64_t* b, int k0, int n,
                   uint64_t c, const ScaleRefs& sc, const Rec* tr) {
  Group g;
  g.a = a + k0;
  g.b = b + k0;
  g.sa = sc.a;
  g.sb = sc.b;
  g.k0 = k0;
  g.n = n;
  g.c = c;
  // the specials detector: the control register of the stage after the multiplier (and the
  // scale stages), as in the SystemC top and the RTL
  const int spec = specials_index(l);
  for (int i = 0; i < l.n; ++i) {
    const StageEntry& e = kStages[static_cast<int>(l.step[i].kind)];
    if (i == spec && !g.resolved) specials(dp, g, tr);
    if (!e.run || (g.resolved && !e.after_resolved)) continue;
    e.run(dp, l.step[i], g, tr);
  }
  return g.d;
}

}  // namespace

uint64_t c_from_binary32(const Datapath& dp, uint64_t c32) {
  if (dp.out_fmt == kBinary32) return c32;
  return convert(kBinary32, c32, dp.out_fmt, Rounding::RNE);
}

uint64_t dot_group(const Datapath& dp, const uint64_t* a, const uint64_t* b, int n, uint64_t c,
                   Trace* tr) {
  if (n > kMaxGroup) throw std::invalid_argument("dot_group: group larger than 64 products");
  const Rec rec(dp, tr);
  return run_group(dp, stage_list(dp), a, b, 0, n, c, ScaleRefs{}, tr ? &rec : nullptr);
}

uint64_t dot(const Datapath& dp, const uint64_t* a, const uint64_t* b, int K, uint64_t c,
             Trace* tr) {
  return dot(dp, a, b, K, c, ScaleRefs{}, tr);
}

uint64_t dot(const Datapath& dp, const uint64_t* a, const uint64_t* b, int K, uint64_t c,
             const ScaleRefs& sc, Trace* trace) {
  const StageList l = stage_list(dp);
  const Rec rec(dp, trace);
  const Rec* tr = trace ? &rec : nullptr;
  // Optional reordering of k (pair interleave): k mod 4 in {0,1} first, then {2,3}.
  std::vector<uint64_t> ra, rb;
  if (dp.pair_interleave && K > 2) {
    ra.reserve(K);
    rb.reserve(K);
    for (int pass = 0; pass < 2; ++pass)
      for (int k = 0; k < K; ++k)
        if (((k >> 1) & 1) == pass) { ra.push_back(a[k]); rb.push_back(b[k]); }
    a = ra.data();
    b = rb.data();
    if (tr) tr->text("order", "pair_interleave: k%4 in {0,1} then {2,3}");
  }
  uint64_t acc = dp.c_final_add ? zero_bits(dp.out_fmt, false) : c;
  const int g = dp.n_fma;
  if (g > kMaxGroup) throw std::invalid_argument("dot: group larger than 64 products");
  for (int k0 = 0; k0 < K || k0 == 0; k0 += g) {
    const int n = K - k0 < g ? K - k0 : g;
    if (tr && (K > g || dp.c_final_add)) tr->text("group", std::to_string(k0 / g));
    acc = run_group(dp, l, a, b, k0, n < 0 ? 0 : n, acc, sc, tr);
    if (K == 0) break;
  }
  if (dp.c_final_add) {
    acc = add_c_final(dp, acc, c);  // d = fl(acc + c): an IEEE two-term addition in out_fmt
    if (tr) tr->pattern("cfinal.d", dp.out_fmt, acc);
  }
  return acc;
}

namespace {
/// The block-scale fields (docs/blockscaled.md): element formats, not scales, in a, b and out;
/// a scale format in scale_fmt; groups that tile the adder's group and the scale blocks.
template <class Bad>
void validate_scales(const Datapath& d, Bad bad) {
  if (d.a_fmt.is_scale()) bad("a_fmt", "must be an element format (" + d.a_fmt.name + " is a scale format)");
  if (d.b_fmt.is_scale()) bad("b_fmt", "must be an element format (" + d.b_fmt.name + " is a scale format)");
  if (d.group_by_sum && (!d.scaled() || d.group_size == 0)) bad("group_align", "\"sum\" needs groups (group_size)");
  if (!d.scaled()) {
    if (d.group_size != 0) bad("group_size", "needs block scales (scale_block)");
    return;
  }
  if (!d.scale_fmt.is_scale()) bad("scale_fmt", "must be a scale format: e8m0 or ue4m3 (got " + d.scale_fmt.name + ")");
  if (d.scale_block < 1) bad("scale_block", "must be positive or \"none\"");
  if (d.pair_interleave) bad("pair_interleave", "cannot reorder k of a block-scaled datapath");
  if (d.n_fma % d.scale_block && d.scale_block % d.n_fma)
    bad("scale_block", "must divide n_fma (" + std::to_string(d.n_fma) + ") or be a multiple of it");
  if (d.group_size == 0) return;
  if (d.adder != AdderKind::Fused || d.late_c || d.interleave != 1)
    bad("group_size", "needs the fused adder with early c (late_c false, interleave 1)");
  if (d.n_fma % d.group_size) bad("group_size", "must divide n_fma (" + std::to_string(d.n_fma) + ")");
  if (d.scale_block % d.group_size) bad("group_size", "must divide scale_block (" + std::to_string(d.scale_block) + ")");
  auto span = [](const Format& f) { return f.emax() - f.emin() + f.mbits + 2; };
  if (span(d.a_fmt) + span(d.b_fmt) + 7 > 120)
    bad("group_size", "needs element formats whose exact group sum fits 120 bits (" + d.a_fmt.name + " x " + d.b_fmt.name + " does not)");
}
}  // namespace

void validate_datapath(const Datapath& d) {
  auto bad = [&](const std::string& field, const std::string& why) {
    throw std::invalid_argument("datapath " + d.name() + ": field '" + field + "' " + why);
  };
  if (d.n_fma < 1 || d.n_fma > kMaxGroup) bad("n_fma", "must be in 1..64");
  if (d.interleave != 1 && d.interleave != 2) bad("interleave", "must be 1 or 2");
  if (d.adder == AdderKind::Fused) {
    if (d.frac_bits < 0 || d.frac_bits > 100) bad("frac_bits", "must be in 0..100");
    if (d.late_c && (d.sum_frac > 100 || d.c_frac > 100 || d.acc_frac > 100))
      bad("sum_frac/c_frac/acc_frac", "must be at most 100");
  }
  if (d.adder == AdderKind::Pairwise && (d.n_fma & (d.n_fma - 1)))
    bad("n_fma", "must be a power of two for the pairwise adder");
  if (d.k_default < 1) bad("k_default", "must be positive");
  if (!(d.out_fmt == kBinary16) && !(d.out_fmt == kBinary32) && !(d.out_fmt == kBinary64))
    bad("out_fmt", "must be binary16, binary32 or binary64 (got " + d.out_fmt.name + ")");
  if (d.out_prec < -1 || d.out_prec > d.out_fmt.mbits)
    bad("out_prec", "must be \"all\" or at most the " + std::to_string(d.out_fmt.mbits) +
                        " fraction bits of out_fmt " + d.out_fmt.name);
  validate_scales(d, bad);
  const uint64_t wmask = d.out_fmt.width() >= 64 ? ~uint64_t{0} : (uint64_t{1} << d.out_fmt.width()) - 1;
  if (d.nan_invalid & ~wmask) bad("nan_invalid", "must fit the " + std::to_string(d.out_fmt.width()) + " bits of out_fmt " + d.out_fmt.name);
  if (d.nan_propagate & ~wmask)
    bad("nan_propagate", "must fit the " + std::to_string(d.out_fmt.width()) + " bits of out_fmt " + d.out_fmt.name);
}

}  // namespace mc
