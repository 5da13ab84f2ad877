// matcore-sc: stage modules. Each compute() is a call of the pure stage functions of core.
#include "matcore_sc/modules.hpp"

#include <algorithm>

#include "matcore/model.hpp"
#include "matcore/validate.hpp"

namespace mcsc {

using namespace mc;

// ------------------------------------------------------------------------------ specials
Specials::Specials(sc_core::sc_module_name nm, const Datapath& dp) : sc_core::sc_module(nm), dp_(dp) {
  SC_METHOD(tick);
  sensitive << clk.pos();
  dont_initialize();
}

void Specials::tick() {
  Ctl c = in.read();
  if (c.valid) {
    const ProductBus& x = prod.read();
    Product all[kLanes + 1];
    std::copy(x.p.begin(), x.p.begin() + x.m, all);
    all[x.m] = x.c;
    c.special = resolve_specials(all, x.m + 1);
    // an infinity of a pairwise tree is resolved by the tree's levels (PairLevel, PairCAdd)
    if (!special_at_inputs(dp_, c.special)) c.special = SpecialKind::None;
    c.sbits = 0;
    if (c.special != SpecialKind::None) {
      c.sbits = special_bits(dp_, c.special);
      if (c.special == SpecialKind::NaNIn && dp_.nan_keep_sign)
        c.sbits = nan_with_sign(dp_, c.sbits, x.p.data(), x.m, x.c);
    }
    c.zsign = zero_sum_sign(dp_, all, x.m + 1);
  }
  out.write(c);
}

// ---------------------------------------------------------------------------- multiplier
void Multiplier::compute(const Ctl&, const OperandBus& x, ProductBus& y) {
  MulCfg mc;
  mc.overflow_exp = dp_.prod_overflow_exp;
  mc.round_out = dp_.prod_round_out;
  mc.out = &dp_.out_fmt;
  mc.sub_out = dp_.sub_out;
  y.m = x.n;
  for (int i = 0; i < x.n; ++i)
    y.p[i] = multiply(decode_operand(dp_.a_fmt, x.a[i], dp_.sub_in),
                      decode_operand(dp_.b_fmt, x.b[i], dp_.sub_in), mc);
  y.c = addend(decode_operand(dp_.out_fmt, x.c, dp_.sub_in));
  y.k0 = x.k0;
  y.ns = x.ns;
  y.sa = x.sa;
  y.sb = x.sb;
}

// ------------------------------------------------------------------- scaler and grouper
void Scaler::compute(const Ctl&, const ProductBus& x, ProductBus& y) {
  y = x;
  const int blk = dp_.scale_block, j0 = x.k0 / blk;
  for (int i = 0; i < x.m; ++i) {
    const int j = (x.k0 + i) / blk - j0;
    y.p[i] = scale_term(x.p[i], scale_product(dp_.scale_fmt, x.sa[j], x.sb[j]));
  }
}

void Grouper::compute(const Ctl&, const ProductBus& x, ProductBus& y) {
  y = x;
  const int G = dp_.group_size, blk = dp_.scale_block, j0 = x.k0 / blk;
  int m = 0;
  for (int i = 0; i < x.m; i += G, ++m) {
    const int j = (x.k0 + i) / blk - j0;
    y.p[m] = group_term(x.p.data() + i, std::min(G, x.m - i), scale_product(dp_.scale_fmt, x.sa[j], x.sb[j]),
                        dp_.group_by_sum, group_lsb(dp_));
  }
  y.m = m;
}

// ------------------------------------------------------------------------------- aligner
void Aligner::compute(const Ctl&, const ProductBus& x, AlignBus& y) {
  const int n = x.m;
  const int F = dp_.frac_bits;
  y.c = x.c;
  if (!dp_.late_c) {
    // Early c: c is one more lane; c = 0 takes part with the exponent c_zero_exp.
    Product all[kLanes + 1];
    std::copy(x.p.begin(), x.p.begin() + n, all);
    Product cz = x.c;
    if (cz.cls == Class::Zero && dp_.c_zero_exp != kNone) {
      cz.cls = Class::Normal;
      cz.sig = 0;
      cz.frac = 0;
      cz.exp = dp_.c_zero_exp;
    }
    all[n] = cz;
    y.m = n + 1;
    y.e_max = align_exponent(all, y.m, dp_.emin_lim);
    if (y.e_max != kNone)
      for (int i = 0; i < y.m; ++i) {
        const Aligned a = align_term(all[i], y.e_max, F, dp_.prod_align);
        y.v[i] = a.v;
        y.sticky |= a.sticky;
      }
    return;
  }
  y.m = n;
  if (dp_.interleave == 2) {
    y.e_max = align_exponent(x.p.data(), n, dp_.emin_lim, 0, 2);   // k = 1, 3, 5, ... ("odd")
    y.e_even = align_exponent(x.p.data(), n, dp_.emin_lim, 1, 2);  // k = 2, 4, 6, ...
  } else {
    y.e_max = align_exponent(x.p.data(), n, dp_.emin_lim);
  }
  for (int i = 0; i < n; ++i) {
    if (x.p[i].cls != Class::Normal) continue;
    const bool even = dp_.interleave == 2 && (i & 1);
    const Aligned a = align_term(x.p[i], even ? y.e_even : y.e_max, F, dp_.prod_align);
    y.v[i] = a.v;
    (even ? y.sticky_even : y.sticky) |= a.sticky;
  }
}

// ---------------------------------------------------------------------------- adder tree
void AdderTree::compute(const Ctl&, const AlignBus& x, AccBus& y) {
  const int F = dp_.frac_bits;
  y.c = x.c;
  auto tree = [&](int first, int stride, int e) {
    Fixed s{0, e, F};
    if (e == kNone) return s;
    for (int i = first; i < x.m; i += stride) s.v += x.v[i];
    return s;
  };
  if (dp_.late_c && dp_.interleave == 2) {
    y.odd = tree(0, 2, x.e_max);
    y.even = tree(1, 2, x.e_even);
    y.sticky = x.sticky || x.sticky_even;
    return;
  }
  y.s = tree(0, 1, x.e_max);
  y.sticky = x.sticky;
  y.mode = y.s.exp == kNone ? AccMode::Zero : AccMode::Fixed;
}

// ------------------------------------------------------------------------------ odd-even
void OddEven::compute(const Ctl&, const AccBus& x, AccBus& y) {
  y = x;
  y.s = combine_odd_even(x.odd, x.even, dp_.partial_frac);
  y.mode = y.s.exp == kNone ? AccMode::Zero : AccMode::Fixed;
}

// ---------------------------------------------------------------------------- c-aligner
void CAligner::compute(const Ctl&, const AccBus& x, AccBus& y) {
  y = x;
  const Product& c = x.c;
  int e_c = kNone;
  if (c.cls == Class::Normal) e_c = c.exp;
  else if (dp_.c_zero_exp != kNone) e_c = dp_.c_zero_exp;
  y.e_c = e_c;
  if (e_c == kNone) {  // c = 0 discarded: the product sum is the result
    y.mode = x.s.exp == kNone ? AccMode::Zero : AccMode::Fixed;
    return;
  }
  CAlignCfg cc;
  cc.c_frac = dp_.c_frac;
  cc.sum_frac = dp_.sum_frac;
  cc.acc_frac = dp_.acc_frac;
  cc.c_drop_gap = dp_.c_drop_gap;
  cc.norm_rd = false;  // the normaliser stage does it
  cc.emin = dp_.out_fmt.emin();
  const CAlignOut ca = c_align(x.s, c, e_c, cc);
  y.s = ca.acc;
  y.cadd = true;
  y.c_shifted = ca.c_shifted;
  y.c_dropped = ca.c_dropped;
  y.sticky = ca.sticky;
  y.mode = AccMode::Fixed;
}

// ---------------------------------------------------------------------------- normaliser
void Normaliser::compute(const Ctl&, const AccBus& x, AccBus& y) {
  y = x;
  if (x.cadd && !x.c_shifted && dp_.late_norm_rd) {
    bool st = x.sticky;
    y.s = normalise_rd(x.s, dp_.out_fmt.emin(), dp_.acc_frac, &st);
    y.sticky = st;
    y.normalised = true;
  }
}

// --------------------------------------------------------------------------- exact adder
void ExactAdder::compute(const Ctl&, const ProductBus& x, AccBus& y) {
  Product all[kLanes + 1];
  std::copy(x.p.begin(), x.p.begin() + x.m, all);
  all[x.m] = x.c;
  Exact ex;
  exact_sum_round(all, x.m + 1, dp_.out_fmt, out_opts(dp_), zero_sum_sign(dp_, all, x.m + 1), &ex);
  y.ex = ex;
  y.mode = AccMode::Exact;
  y.c = x.c;
}

// ------------------------------------------------------------------------ pairwise tree
void PairLevel::compute(const Ctl&, const ProductBus& x, ProductBus& y) {
  y = x;
  y.pairs = 0;
  if (x.m <= 1) return;  // a short group needs fewer levels: pass through
  int k = 0;
  for (int i = 0; i + 1 < x.m; i += 2) {
    const PairSum ps = pair_sum(dp_, x.p[i], x.p[i + 1]);
    y.pair_bits[k] = ps.bits;
    y.p[k++] = ps.sum;
  }
  y.pairs = k;
  if (x.m & 1) y.p[k++] = x.p[x.m - 1];
  y.m = k;
}

void PairCAdd::compute(const Ctl&, const ProductBus& x, AccBus& y) {
  Product two[2] = {x.c, x.p[0]};
  y.c = x.c;
  const SpecialKind sk = resolve_specials(two, 2);
  if (sk != SpecialKind::None) {
    y.mode = AccMode::Bits;
    y.bits = special_bits(dp_, sk);
    return;
  }
  Exact ex;
  exact_sum_round(two, 2, dp_.out_fmt, out_opts(dp_), zero_sum_sign(dp_, two, 2), &ex);
  y.ex = ex;
  y.mode = AccMode::Exact;
}

// ------------------------------------------------------------------------------- rounder
void Rounder::compute(const Ctl& c, const AccBus& x, ResultBus& y) {
  uint64_t d;
  if (c.special != SpecialKind::None) {
    d = c.sbits;
  } else {
    switch (x.mode) {
      case AccMode::Fixed: d = round_fixed(x.s, dp_.out_fmt, out_opts(dp_), c.zsign); break;
      case AccMode::Exact:
        d = x.ex.mag == 0 ? zero_bits(dp_.out_fmt, x.ex.sign)
                          : round_to_format(dp_.out_fmt, x.ex, out_opts(dp_));
        break;
      case AccMode::Bits: d = x.bits; break;
      case AccMode::Zero:
      default: d = zero_bits(dp_.out_fmt, c.zsign); break;
    }
  }
  y.d = y.d32 = d;
}

// ------------------------------------------------------------------------- final c add
void CFinal::compute(const Ctl& c, const ResultBus& x, ResultBus& y) {
  y = x;
  if (!c.last) return;  // intermediate group: its result is the next group's c
  y.d = y.d32 = add_c_final(dp_, x.d, c.c0);
}

// ---------------------------------------------------------------------- output converter
void OutConv::compute(const Ctl&, const ResultBus& x, ResultBus& y) {
  y = x;
  y.d32 = widen_result(dp_, x.d);
}

// --------------------------------------------------------------------------------- issue
Issue::Issue(sc_core::sc_module_name nm, const Datapath& dp, int window)
    : sc_core::sc_module(nm), dp_(dp), window_(window) {
  SC_METHOD(tick);
  sensitive << clk.pos();
  dont_initialize();
}

void Issue::push(Job j) {
  const int K = static_cast<int>(j.a.size());
  if (dp_.pair_interleave && K > 2) {
    // operand routing: k mod 4 in {0,1} first, then {2,3} (as mc::dot)
    Job r = j;
    r.a.clear();
    r.b.clear();
    for (int pass = 0; pass < 2; ++pass)
      for (int k = 0; k < K; ++k)
        if (((k >> 1) & 1) == pass) { r.a.push_back(j.a[k]); r.b.push_back(j.b[k]); }
    j = std::move(r);
  }
  queue_.push_back(std::move(j));
}

void Issue::launch(Entry& e) {
  const int g = dp_.n_fma;
  const int K = static_cast<int>(e.job.a.size());
  const int k0 = e.next * g;
  const int n = std::max(0, std::min(g, K - k0));
  Ctl c;
  c.valid = true;
  c.seq = ++seq_;
  c.tag = e.job.tag;
  c.grp = e.next;
  c.n = n;
  c.last = e.next == e.groups - 1;
  c.c0 = e.job.c;
  OperandBus o;
  o.seq = c.seq;
  o.n = n;
  std::copy(e.job.a.begin() + k0, e.job.a.begin() + k0 + n, o.a.begin());
  std::copy(e.job.b.begin() + k0, e.job.b.begin() + k0 + n, o.b.begin());
  o.c = e.acc;
  if (dp_.scaled()) {  // the scales of the blocks this group covers (unit scales if none given)
    const int blk = dp_.scale_block, j0 = k0 / blk, j1 = n ? (k0 + n - 1) / blk : j0;
    const uint64_t one = unit_scale_bits(dp_.scale_fmt);
    o.k0 = k0;
    o.ns = j1 - j0 + 1;
    for (int j = j0; j <= j1; ++j) {
      o.sa[j - j0] = static_cast<size_t>(j) < e.job.sa.size() ? e.job.sa[j] : one;
      o.sb[j - j0] = static_cast<size_t>(j) < e.job.sb.size() ? e.job.sb[j] : one;
    }
  }
  ctl_out.write(c);
  out.write(o);
  bubble_ = c;
  bubble_.valid = false;
  ++e.next;
  e.waiting = true;
}

void Issue::tick() {
  // 1. group results coming back from the rounder: the next group's c
  const Ctl& f = fb_ctl.read();
  if (f.valid && !f.last)
    for (Entry& e : inflight_)
      if (e.job.tag == f.tag) { e.acc = fb_res.read().d; e.waiting = false; break; }
  // 2. finished samples
  const Ctl& z = fin_ctl.read();
  if (z.valid && z.last)
    for (size_t i = 0; i < inflight_.size(); ++i)
      if (inflight_[i].job.tag == z.tag) {
        if (on_done) on_done(z.tag, fin_res.read().d, fin_res.read().d32);
        inflight_.erase(inflight_.begin() + static_cast<long>(i));
        break;
      }
  // 3. issue: the oldest ready sample, else a new one
  for (Entry& e : inflight_)
    if (!e.waiting) { launch(e); return; }
  if (!queue_.empty() && static_cast<int>(inflight_.size()) < window_) {
    Entry e;
    e.job = std::move(queue_.front());
    queue_.pop_front();
    const int K = static_cast<int>(e.job.a.size());
    e.groups = K == 0 ? 1 : (K + dp_.n_fma - 1) / dp_.n_fma;
    e.acc = dp_.c_final_add ? zero_bits(dp_.out_fmt, false) : e.job.c;
    inflight_.push_back(std::move(e));
    launch(inflight_.back());
    return;
  }
  ctl_out.write(bubble_);
}

}  // namespace mcsc
