// matcore: feature detection, the Decider's fits (the alignment window, late c, the floors) and
// the table of the decided features (Table 3 of the paper, generalised). The class and its
// simpler decisions: features_decider.hpp.
#include "features_decider.hpp"

namespace mc::feat {

/// The fa layouts in group 0 whose big and small terms share an odd-even set (all of them when
/// none does): the probes of the product window.
std::vector<size_t> Decider::window_ids() const {
  std::vector<size_t> same_ids, cross;
  for (const Layout& L : kAlignLayouts) {
    if (!in_group0(L.big) || !in_group0(L.small) || !in_group0(L.cancel)) continue;
    add(parity(L.big) == parity(L.small) ? same_ids : cross, fam(std::string("fa/") + L.name + "/"));
  }
  if (same_ids.empty()) same_ids = cross;
  return same_ids;
}

/// The window F lowered to just above the first small term (fa/.../+/j) that the probes in ids
/// show lost.
int Decider::first_lost_small(const std::vector<size_t>& ids, int F) const {
  for (size_t i : ids) {
    const std::string& n = v_.probe[i];
    if (n.find("/+/") == std::string::npos) continue;
    const int j = std::atoi(n.substr(n.rfind('/') + 1).c_str());
    if (!same(pred_exact_small(i), d_[i]) && j - 1 < F) F = j - 1;
  }
  return F;
}

/// The probes of the adder class: cl, ch and ch2 (where their terms are in group 0), then the
/// window probes.
std::vector<size_t> Decider::class_ids(const std::vector<size_t>& window) const {
  std::vector<size_t> cls = fam("cl/");
  for (const char* L : {"0123", "0145"}) {
    const int z = L[2] - '0', w = L[3] - '0';
    if (in_group0(-1) && in_group0(0) && in_group0(1) && in_group0(z)) add(cls, fam(std::string("ch/") + L + "/"));
    if (in_group0(-1) && in_group0(0) && in_group0(1) && in_group0(z) && in_group0(w))
      add(cls, fam(std::string("ch2/") + L + "/"));
  }
  add(cls, window);
  return cls;
}

void Decider::decide_alignment() {
  if (!structure_ok_ || w_.adder == AdderKind::Pairwise) return;
  // (a) layouts in group 0
  const std::vector<size_t> same_ids = window_ids();
  Datapath early = w_;
  early.adder = AdderKind::Fused;
  early.late_c = false;
  std::vector<Datapath> c;
  {
    Datapath ex = w_;
    ex.adder = AdderKind::Exact;
    c.push_back(ex);
  }
  const int Fmin = std::max(0, P_ - 1);
  for (int F = Fmin; F <= 64; ++F)
    for (int pa = 0; pa < 2; ++pa) {
      Datapath h = early;
      h.frac_bits = F;
      h.prod_align = pa ? AlignRound::RD : AlignRound::Truncate;
      c.push_back(h);
    }
  const auto sw = survivors(c, same_ids);
  const bool no_loss = !sw.empty() && sw[0].adder == AdderKind::Exact;
  int F = 64;
  AlignRound pa = AlignRound::Truncate;
  if (!no_loss && !sw.empty()) {
    F = sw[0].frac_bits;
    pa = sw[0].prod_align;
  }
  const bool window_known = !sw.empty();
  // An odd-even adder rounds its partial sums down (partial_frac) after cutting the terms (F):
  // no single window explains fa. Start from the first lost small term; the late-c fit below
  // decides partial_frac and then the window.
  if (!window_known) F = first_lost_small(same_ids, F);

  // (b) the adder class
  const std::vector<size_t> cls = class_ids(same_ids);
  std::vector<Datapath> found;
  if (fusedP_) {
    // the structure already showed a fused early-c adder keeping P bits
    Datapath h = w_;
    for (int pa2 = 0; pa2 < 2; ++pa2) {
      h.prod_align = pa2 ? AlignRound::RD : AlignRound::Truncate;
      if (fits(h, cls)) { found.push_back(h); break; }
    }
  }
  if (found.empty() && no_loss) {
    Datapath h = w_;
    h.adder = AdderKind::Exact;
    if (fits(h, cls)) found.push_back(h);
  }
  if (found.empty() && window_known) {
    // early c: F from fa, or (no loss among the products) from cl
    std::vector<Datapath> ce;
    for (int Fe = no_loss ? Fmin : F; Fe <= (no_loss ? 100 : F); ++Fe)
      for (int pa2 = 0; pa2 < 2; ++pa2) {
        Datapath h = early;
        h.frac_bits = Fe;
        h.prod_align = pa2 ? AlignRound::RD : AlignRound::Truncate;
        if (!no_loss && h.prod_align != pa) continue;
        ce.push_back(h);
      }
    const auto se = survivors(ce, cls);
    if (!se.empty()) found.push_back(se[0]);
  }
  if (found.empty() && !w_.c_final_add) {
    Datapath h = early;
    h.late_c = true;
    h.frac_bits = F;
    h.prod_align = pa;
    if (fit_late(h)) found.push_back(h);
  }
  if (found.empty()) {
    note("alignment: neither an exact, an early-c nor a late-c adder explains the cl/ch probes");
    if (!no_loss) {
      w_.adder = AdderKind::Fused;
      w_.frac_bits = F;
      w_.prod_align = pa;
    }
    return;
  }
  w_ = found[0];
}

/// Late c: c_frac and c_drop_gap read off cl/-/1 (c = -2^(Ef-j): exact while kept, then
/// -2^(Ef-c_frac) from the round-down, then 0 once dropped); sets them in h.
void Decider::fit_c_frac(Datapath& h) const {
  int j1 = 0, jn = 0, J = 0;
  int cf = kNone;
  for (int j = 1;; ++j) {
    const std::string n = "cl/-/1/" + std::to_string(j);
    if (!has(n)) break;
    J = j;
    const size_t i = at_.at(n);
    const uint64_t r = d_[i];
    if (r == v_.c[i] && j1 == j - 1) j1 = j;
    if (decode(v_.out_fmt, r).cls != Class::Zero) jn = j;
    if (cf == kNone && r != v_.c[i]) {
      const Unpacked u = decode(v_.out_fmt, r);
      if (u.cls == Class::Normal || u.cls == Class::Subnormal) cf = g_.Ef - (u.exp - u.mbits + msb_index(u.sig));
    }
  }
  if (j1 == J) {  // never lost within the sweep
    h.c_frac = 100;
    h.c_drop_gap = kNone;
  } else if (cf != kNone) {
    h.c_frac = cf;
    h.c_drop_gap = jn == J ? kNone : jn;
  } else {
    h.c_drop_gap = j1;
    // c_frac >= the gap: fit it on the wide c (cl/*/m)
    std::vector<Datapath> cc;
    for (int x = j1; x <= 100; ++x) {
      Datapath t = h;
      t.c_frac = x;
      cc.push_back(t);
    }
    const auto s = survivors(cc, fam("cl/"));
    h.c_frac = s.empty() ? j1 : s[0].c_frac;
  }
}

/// Late c, odd-even sets: fa/01c and fx put small terms in the other set. Sets interleave and
/// partial_frac in h; returns whether any candidate fits.
bool Decider::fit_odd_even(Datapath& h) {
  std::vector<size_t> ix;
  if (in_group0(0) && in_group0(1)) add(ix, fam("fa/01c/"));
  if (in_group0(0) && in_group0(1) && in_group0(3) && parity(1) == parity(3)) add(ix, fam("fx/13/"));
  if (in_group0(0) && in_group0(1) && in_group0(5) && parity(1) == parity(5)) add(ix, fam("fx/15/"));
  std::vector<Datapath> cc{h};
  for (int x = std::max(0, P_ - 1); x <= 100; ++x) {
    Datapath t = h;
    t.interleave = 2;
    t.partial_frac = x;
    cc.push_back(t);
  }
  const auto s = survivors(cc, ix);
  if (s.empty()) { note("late c: no odd-even candidate fits the fa/01c, fx probes"); return false; }
  h = s[0];
  return true;
}

/// Late c: the probes of the c-aligner's cuts (ch, ch2, ac, ca, czs); fills acs with the ac
/// families by normalisation shift s = 0 (f, c), 1 (n), -1 (x).
std::vector<size_t> Decider::late_cut_ids(std::vector<size_t> (&acs)[3]) const {
  std::vector<size_t> ch;
  for (const char* L : {"0123", "0145"}) {
    const int z = L[2] - '0', w = L[3] - '0';
    if (in_group0(0) && in_group0(1) && in_group0(z)) add(ch, fam(std::string("ch/") + L + "/"));
    if (in_group0(0) && in_group0(1) && in_group0(z) && in_group0(w))
      add(ch, fam(std::string("ch2/") + L + "/"));
  }
  for (int P : g_.pset) {
    const std::string pre = "ac/" + pname(P) + "/";
    add(acs[0], fam(pre + "f"));
    for (int x : {2, 4})
      if (in_group0(0) && in_group0(1) && in_group0(x))
        for (const char* k : {"nt/", "ng/", "xt/", "xg/"})
          add(acs[k[0] == 'n' ? 1 : 2], fam(pre + k + std::to_string(x) + "/"));
  }
  std::vector<size_t> all = ch;
  for (const auto& a : acs) add(all, a);
  add(all, fam("ca/"));
  for (int x : {2, 4})
    if (in_group0(0) && in_group0(1) && in_group0(x)) add(all, fam("czs/" + std::to_string(x) + "/"));
  return all;
}

/// The cut a family sees: the smallest t for which a datapath cutting at sum_frac = t alone
/// fits it; -1 when every t fits (the family cannot see the cut in this rounding mode).
int Decider::cut_threshold(const Datapath& h, const std::vector<size_t>& ids) const {
  if (ids.empty()) return -1;
  int first = -1, count = 0, total = 0;
  for (int t = std::max(0, P_ - 1); t <= 100; ++t) {
    Datapath x = h;
    x.late_norm_rd = false;
    x.sum_frac = t;
    ++total;
    if (fits(x, ids)) {
      if (first < 0) first = t;
      ++count;
    }
  }
  return count == total ? -1 : first;
}

/// The (sum_frac, acc_frac, late_norm_rd) candidates from the cuts t0, t1, tx the ac families
/// see (shifts 0, 1, -1), the most likely first.
std::vector<Datapath> Decider::late_cut_candidates(const Datapath& h, int t0, int t1, int tx) const {
  std::vector<Datapath> cc;
  auto cand = [&](int sf, int af) {
    if (sf < 0) return;
    Datapath x = h;
    x.sum_frac = sf;
    x.late_norm_rd = af >= 0;
    if (af >= 0) x.acc_frac = af;
    cc.push_back(x);
  };
  if (t0 >= 0 && t1 >= 0) {
    if (t0 < t1) cand(t1, t0);                        // acc_frac = t0 cuts first
    else if (tx >= 0 && tx < t0) cand(t0, tx + 1);    // acc_frac = sum_frac
    cand(t0, -1);                                     // no normalisation round-down
  }
  // the normalisation round-down may also cut c's own low bits (acc_frac < mO)
  if (t0 >= 0)
    for (int af = std::max(0, P_ - 1); af <= v_.out_fmt.mbits + 1; ++af) cand(t0, af);
  // otherwise: the largest sum_frac that fits (the cut is not visible: canonical_features maps
  // every invisible value to one)
  for (int sf = 100; sf >= std::max(0, P_ - 1); --sf) cand(sf, -1);
  return cc;
}

/// Of the candidates s that fit the cut probes, the one that explains the most probe results
/// among the first 8 distinct ones (canonical sum_frac, acc_frac, late_norm_rd).
Datapath Decider::best_distinct_cuts(const std::vector<Datapath>& s) const {
  std::vector<Datapath> distinct;
  for (const Datapath& x : s) {
    const Datapath cx = canonical_features(x, K_);
    bool seen = false;
    for (const Datapath& y : distinct) {
      const Datapath cy = canonical_features(y, K_);
      seen |= cx.sum_frac == cy.sum_frac && cx.acc_frac == cy.acc_frac &&
              cx.late_norm_rd == cy.late_norm_rd;
    }
    if (!seen) distinct.push_back(x);
    if (distinct.size() >= 8) break;
  }
  return best_overall(distinct);
}

/// Late c: c_frac and c_drop_gap (fit_c_frac); the odd-even sets; the window; then sum_frac,
/// acc_frac and the normalisation round-down from the cuts the ac families see (min(sum_frac,
/// acc_frac + s) for a normalisation shift s). Returns whether the result fits.
bool Decider::fit_late(Datapath& h) {
  std::vector<size_t> cl = fam("cl/");
  // c_frac and c_drop_gap
  fit_c_frac(h);
  if (!fits(h, cl)) {
    // the product window F may also have cut c's cancellation partners: refit c_frac broadly
    std::vector<Datapath> cc;
    for (int x = std::max(0, P_ - 1); x <= 100; ++x)
      for (int gdrop = -1; gdrop <= 0; ++gdrop) {
        Datapath t = h;
        t.c_frac = x;
        if (gdrop < 0) t.c_drop_gap = kNone;
        cc.push_back(t);
      }
    const auto s = survivors(cc, cl);
    if (s.empty()) { note("late c: no c_frac fits the cl probes"); return false; }
    h = s[0];
  }
  // odd-even sets: fa/01c and fx put small terms in the other set
  if (!fit_odd_even(h)) return false;
  // the product window, now that the odd-even round-down is known
  refit_window(h);
  // sum_frac, acc_frac, late_norm_rd: the cut each ac family sees is min(sum_frac, acc_frac + s)
  // for a normalisation shift s = 0 (f, c), 1 (n), -1 (x); measured as the sum_frac of a
  // datapath without the normalisation round-down, then combined.
  std::vector<size_t> acs[3];  // s = 0, 1, -1
  const std::vector<size_t> all = late_cut_ids(acs);
  const int t0 = cut_threshold(h, acs[0]), t1 = cut_threshold(h, acs[1]), tx = cut_threshold(h, acs[2]);
  const std::vector<Datapath> cc = late_cut_candidates(h, t0, t1, tx);
  const auto s = survivors(cc, all);
  if (s.empty()) { note("late c: no sum_frac / acc_frac fits the ch and ac probes"); return false; }
  // several may fit these families: the distinct ones (canonical forms) are weighed on all
  // the probe results
  h = best_distinct_cuts(s);
  return true;
}

/// The product window again, now that the rest of the adder is known (odd-even partial sums
/// rounded down at partial_frac can hide F on one small term; fm shows it on two).
void Decider::refit_window(Datapath& h) {
  std::vector<size_t> ids;
  for (const Layout& L : kAlignLayouts)
    if (in_group0(L.big) && in_group0(L.small) && in_group0(L.cancel))
      add(ids, fam(std::string("fa/") + L.name + "/"));
  if (in_group0(0) && in_group0(1) && in_group0(2) && in_group0(4)) add(ids, fam("fm/24/"));
  if (in_group0(0) && in_group0(1) && in_group0(4) && in_group0(8)) add(ids, fam("fm/48/"));
  if (fits(h, ids)) return;
  std::vector<Datapath> cc;
  for (int F = std::max(0, P_ - 1); F <= 100; ++F)
    for (int pa = 0; pa < 2; ++pa) {
      Datapath t = h;
      t.frac_bits = F;
      t.prod_align = pa ? AlignRound::RD : AlignRound::Truncate;
      cc.push_back(t);
    }
  const auto s = survivors(cc, ids);
  if (!s.empty()) h = s[0];
}

/// D12. The alignment floor e_min^lim and the exponent of c = 0 (tz, tz1): fitted on the
/// probes with c = 0 and with a normal c, whose tiny products fall below the floor.
void Decider::decide_floors() {
  if (!structure_ok_ || w_.adder != AdderKind::Fused) return;
  const int emin = v_.out_fmt.emin();
  std::vector<size_t> c0 = fam("tz1/c0/"), cn = fam("tz1/cn/");
  for (int P : g_.pset) {  // (every precision's probes: a tie for one is a plain bit for another)
    add(c0, fam("tz/" + pname(P) + "/c0/"));
    add(c0, fam("tzd/" + pname(P) + "/"));
    add(c0, fam("tzd2/" + pname(P) + "/"));
    add(cn, fam("tz/" + pname(P) + "/cn/"));
  }
  if (w_.c_final_add) {  // c never meets the products: only c = 0 matters, as +0 groups
    add(c0, cn);
    cn.clear();
  }
  std::vector<int> range{kNone};
  for (int x = emin - 60; x <= emin + 8; ++x) range.push_back(x);
  auto fit_floor = [&](const std::vector<size_t>& ids, int z) {
    std::vector<int> r;
    for (int L : range) {
      Datapath h = w_;
      h.emin_lim = L;
      h.c_zero_exp = z;
      if (fits(h, ids)) r.push_back(L);
    }
    return r;
  };
  std::vector<size_t> all = c0;
  add(all, cn);
  if (!w_.late_c) {
    const auto f0 = fit_floor(c0, kNone);   // floor when c = 0: max(L, z)
    const auto fn = fit_floor(cn, kNone);   // floor when c != 0: L
    for (int L : fn)
      for (int z : f0) {
        Datapath h = w_;
        h.emin_lim = L;
        h.c_zero_exp = (z != kNone && (L == kNone || z > L)) ? z : kNone;
        if (fits(h, all)) {
          w_ = h;
          return;
        }
      }
    note("alignment floor: no (e_min^lim, e_c=0) pair fits the tz probes");
    return;
  }
  // Late c: e_min^lim is not part of the late-c units' feature space (CDNA3 has none; see
  // docs/features.md); the exponent of c = 0 is fitted with the dense tzd sweep.
  for (int z : range) {
    Datapath h = w_;
    h.emin_lim = kNone;
    h.c_zero_exp = z;
    if (fits(h, c0) && fits(h, all)) {
      w_ = h;
      return;
    }
  }
  note("alignment floor: no exponent of c = 0 fits the tz probes");
}

// --- the table of the decided features (Table 3 of the paper, generalised) ------------------

namespace {

using Rows = std::vector<std::pair<std::string, std::string>>;

const char* rname(Rounding r) {
  switch (r) {
    case Rounding::RNE: return "RNE";
    case Rounding::RTZ: return "RTZ";
    case Rounding::RD: return "RD";
    case Rounding::RU: return "RU";
    case Rounding::RNA: return "RNA";
  }
  return "?";
}

/// Appends the rows of the structure (adder, N_FMA, k order, c added) to t: d decided, c its
/// canonical form, ok whether the structure was decided.
void structure_rows(Rows& t, const Datapath& d, const Datapath& c, int K, bool ok) {
  auto row = [&](const std::string& k, const std::string& v) { t.emplace_back(k, v); };
  const bool exact = d.adder == AdderKind::Exact, pw = d.adder == AdderKind::Pairwise;
  std::string adder;
  if (!ok) adder = "not decided";
  else if (exact && c.n_fma == 1) adder = "SFMA: exact, one product at a time (Exact, N_FMA = 1)";
  else if (exact) adder = "multi-term exact (Kulisch): one rounding per group";
  else if (pw) adder = "pairwise tree: every addition rounded";
  else adder = std::string("fused fixed-point multi-term adder, ") + (d.late_c ? "late c" : "early c");
  row("adder", adder);
  row("N_FMA", !ok ? "not decided"
                   : std::to_string(c.n_fma) +
                         (c.n_fma == K ? " (all K products in one group)" : ""));
  row("k order", !ok ? "not decided"
                 : c.pair_interleave ? "pair-interleaved: k mod 4 in {0,1} first, then {2,3}"
                 : (K <= 4 || (c.n_fma >= K && !pw && !(d.late_c && d.interleave == 2)))
                     ? "in order (the order cannot matter here)"
                     : "in order");
  std::string cadd;
  if (d.c_final_add) cadd = std::string("after all groups, a separate addition rounded ") + rname(d.c_final_round);
  else if (exact) cadd = "a term of the exact sum";
  else if (pw) cadd = "after the pairwise tree of each group";
  else cadd = d.late_c ? "late: after the product sum (c-aligner)" : "early: aligned with the products";
  row("c added", ok ? cadd : "not decided");
}

/// Appends the rows of the adder's alignment and products (F, product alignment, products,
/// product overflow, odd-even interleave, the c-aligner) to t: d decided, c its canonical form.
void alignment_rows(Rows& t, const Datapath& d, const Datapath& c, const Format& O, const Geo& g) {
  auto row = [&](const std::string& k, const std::string& v) { t.emplace_back(k, v); };
  const std::string na = "n/a";
  const bool fused = d.adder == AdderKind::Fused, exact = d.adder == AdderKind::Exact;
  if (fused) {
    std::string f = std::to_string(c.frac_bits) + " fractional bits";
    if (O == kBinary32 && d.out_prec < 0) f += " (n_eab = " + std::to_string(c.frac_bits - 23) + ")";
    if (c.frac_bits != d.frac_bits) f += " (any F >= this is equivalent here)";
    row("alignment bits F", f);
    row("product alignment", c.prod_align == AlignRound::RD ? "round down (RD)" : "truncate (toward 0)");
  } else {
    row("alignment bits F", exact ? "infinite (exact sum)" : na + " (each addition rounded)");
    row("product alignment", na);
  }
  row("products",
      c.prod_round_out ? "rounded to " + O.name + " (RNE) before the adder" +
                             (fused ? ", normalised" : "")
      : (!fused && !d.prod_round_out) ? "exact"
      : (!fused) ? "exact (rounding them to the output could not change them in this format)"
                 : "exact, unnormalised (significand product in [1,4))");
  row("product overflow", c.prod_overflow_exp != kNone
                              ? "|p| >= 2^" + std::to_string(c.prod_overflow_exp) + " -> Inf"
                              : (g.pmax + 2 <= O.emax() + 1 ? "no (products cannot reach the output's range)" : "no"));
  if (fused && d.late_c) {
    row("odd-even interleave", c.interleave == 2 ? "yes: partial sums RD to " + std::to_string(c.partial_frac) + " bits" : "no");
    row("align(c, S_sum)", "(" + std::to_string(c.c_frac) + ", " + std::to_string(c.sum_frac) + ", RD)");
    row("c dropped beyond gap", c.c_drop_gap == kNone ? "never" : std::to_string(c.c_drop_gap));
    row("RD after normalisation", c.late_norm_rd ? std::to_string(c.acc_frac) + " fraction bits" : "none");
  } else {
    row("odd-even interleave", fused ? "no" : na);
    row("align(c, S_sum)", na);
  }
}

/// Appends the rows of the alignment floors (e_c=0, e_min^lim) to t: d decided, c its
/// canonical form for K products.
void floor_rows(Rows& t, const Datapath& d, const Datapath& c, const Format& O, int K) {
  auto row = [&](const std::string& k, const std::string& v) { t.emplace_back(k, v); };
  const std::string na = "n/a";
  if (d.adder != AdderKind::Fused) {
    row("e_c=0", na);
    row("e_min^lim", na);
    return;
  }
  // Could a floor at the output's smallest normal exponent change anything here at all?
  Datapath u = d;
  u.emin_lim = O.emin();
  u.c_zero_exp = kNone;
  const bool floor_testable = canonical_features(u, K).emin_lim != kNone;
  u.emin_lim = kNone;
  u.c_zero_exp = O.emin();
  const bool zero_testable = canonical_features(u, K).c_zero_exp != kNone ||
                             canonical_features(u, K).emin_lim != kNone;
  const std::string nt = "not testable (no sum reaches below 2^" + std::to_string(O.emin()) +
                         " with bits a floor there could cut)";
  row("e_c=0", c.c_zero_exp != kNone
                   ? std::to_string(d.c_zero_exp) +
                         (d.c_zero_exp != c.c_zero_exp
                              ? " (every value up to " + std::to_string(c.c_zero_exp) +
                                    " gives the same results here)"
                              : "")
               : !zero_testable     ? nt
                                    : "-inf (c = 0 discarded)");
  row("e_min^lim", c.emin_lim != kNone ? std::to_string(c.emin_lim)
                   : d.late_c         ? "- (not probed with late c)"
                   : !floor_testable  ? nt
                                      : "- (none)");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> Decider::table(const DetectedFeatures& r) const {
  std::vector<std::pair<std::string, std::string>> t;
  const Datapath& d = w_;
  const Datapath c = canonical_features(d, K_);
  const Format& O = v_.out_fmt;
  auto row = [&](const std::string& k, const std::string& v) { t.emplace_back(k, v); };
  row("inputs", v_.a_fmt.name + " x " + v_.b_fmt.name + " -> " + O.name + ", K = " +
                    std::to_string(K_) + " (" + std::to_string(v_.size()) + " probe samples)");
  row("output rounding", rname(d.out_round));
  row("output precision", std::to_string(P_) + " fraction bits" +
                              (d.out_prec >= 0 ? " (e8m" + std::to_string(d.out_prec) + ")" : " (all of " + O.name + ")"));
  structure_rows(t, d, c, K_, structure_ok_);
  alignment_rows(t, d, c, O, g_);
  floor_rows(t, d, c, O, K_);
  row("subnormal inputs", d.sub_in ? "kept" : "flushed to zero (DAZ)");
  row("subnormal outputs", !sub_out_testable_ ? "not testable (no subnormal result reachable)"
                           : d.sub_out ? "kept" : "flushed to zero (FTZ)");
  row("overflow", directed(d.out_round)
                      ? (!overflow_reachable(g_) ? "not testable (the sum cannot overflow here)"
                         : d.overflow_to_inf ? "Inf even when rounding " + std::string(rname(d.out_round))
                                             : "largest finite toward the rounding direction")
                      : "Inf");
  if (has("inf/p+"))
    row("Inf input", "p = +Inf -> " + hexs(O, obs("inf/p+")) + ", c = -Inf -> " + hexs(O, obs("inf/c-")));
  else if (has("inf/c+"))
    row("Inf input", "no Inf encoding in the inputs; c = +Inf -> " + hexs(O, obs("inf/c+")));
  row("NaN input", hexs(O, d.nan_propagate) +
                       (c.nan_keep_sign ? ", with the sign of the first NaN (c first)" : ""));
  row("Inf - Inf / Inf * 0", invalid_testable_ ? hexs(O, d.nan_invalid)
                                               : "not testable (no infinity reaches the adder)");
  row("model check", "reproduces " + std::to_string(r.reproduced) + " of " +
                         std::to_string(r.samples) + " probe results");
  return t;
}

}  // namespace mc::feat
