// matcore: feature detection from fixed probe vectors (section 4 of the paper, generalised):
// the canonical form and the decisions (sections 5a and 4).
//
// Layout of this file (docs/features.md describes every probe and decision):
//   1. exact values and their encodings (products split into a_i * b_i exactly)
//   2. the geometry of a format combination (which exponents the probes use)
//   3. the probe families: one emit_* function each, documented with its vectors
//   5a. the canonical (detectable) form of a datapath, used by the decisions and the comparison
//   4. the decisions: one decide_* function per feature, in the order they depend on each other
//   5b. the table, the comparison, the files
//
// Conventions of the probes. E is the base exponent of the probes near the top of the output
// precision (0 where the formats allow it), P the output precision (fraction bits) being probed,
// T = 2^(E-P-1) the "tie" (half an ulp of 2^E), Bc = 1.5*1.5*2^(E-1) = 2^E + 2^(E-3) a product
// whose significand 2.25 lies in [2,4): kept unnormalised its exponent is E-1 although its
// leading bit is E (the "carry" product that lets a unit keeping only P bits below its maximum
// exponent still show a round bit). Ef is the top exponent of the alignment sweeps (as high as
// products and the output allow, for the widest spread), Ec the exponent of a large c.
#include "matcore/features.hpp"
#include "matcore/fields.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "matcore/bits.hpp"
#include "matcore/model.hpp"
#include "matcore/vectors.hpp"
#include "features_common.hpp"

namespace mc {

using namespace feat;

// =============================================================================================
// 5a. Canonical form (used by the decisions to group equivalent candidates, and by the
//     comparison).
// =============================================================================================

namespace {

bool directed(Rounding r) { return r == Rounding::RTZ || r == Rounding::RD || r == Rounding::RU; }
int max_none(int a, int b) {
  if (a == kNone) return b;
  if (b == kNone) return a;
  return std::max(a, b);
}

/// Can a result overflow the output format (sum of products, or c plus a product)?
bool overflow_reachable(const Geo& g) { return g.pmax + 2 > g.O.emax() - g.mO; }
/// Can a result fall into the output's subnormal range from normal operands?
bool tiny_results_reachable(const Geo& g) { return g.psub < g.O.emin(); }
/// Are there products that the output format cannot hold exactly?
bool products_inexact(const Geo& g, const Datapath& d) {
  if (g.mA + g.mB + 1 > g.mO) return true;
  if (g.psub < g.O.emin() - g.mO) return true;
  if (!d.sub_out && (d.sub_in ? g.psub : g.pmin) < g.O.emin()) return true;
  return g.pmax + 2 > g.O.emax() + 1;
}

int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

/// Late c with c = 0: the exponent z given to c = 0 sends product sums with e_max < z through
/// the round-downs of the c-aligner (RD at sum_frac below z, then at acc_frac below the
/// normalised leading bit, never below emin). Neighbouring values of z can be equivalent: z and
/// z+1 differ only through the cut z+1-sum_frac (masked by the normalisation cut emin - acc_frac
/// when that is coarser) and through sums with e_max = z (which lose nothing when all their bits
/// lie above both cuts). Returns the largest value equivalent to z.
int late_zero_class_top(const Geo& g, const Datapath& d, int z, int n) {
  // the grid of the product sum below its e_max: F, or after the odd-even partial sums' round-down
  const int Fx = d.interleave == 2 ? d.partial_frac : d.frac_bits;
  const int sf = d.sum_frac, af = d.acc_frac, emin = g.O.emin();
  const int lo_bit = std::max(g.psub, std::max(g.pmin, d.emin_lim) - Fx);  // lowest product bit
  // (a final RD does not absorb these round-downs: a positive sum cut to exactly 0 becomes -0)
  auto eff = [](int cut) { return cut; };
  auto equiv_next = [&](int z1) {
    const int z2 = z1 + 1;
    // sums with e_max < z1: both values shift them; do the cuts differ?
    const int cut1 = eff(z1 - sf), cut2 = eff(z2 - sf);
    const int ncut = d.late_norm_rd ? eff(emin - af) : INT_MIN;
    if (std::max(cut2, ncut) != std::max(cut1, ncut) && lo_bit < std::max(cut2, ncut)) return false;
    // sums with e_max = z1: only z2 sends them through the round-downs
    const int ep = z1;
    if (ep >= std::max(g.pmin, d.emin_lim) && ep <= g.pmax) {
      const int low = std::max(g.psub, ep - Fx);
      int cut = cut2;
      if (d.late_norm_rd) cut = std::max(cut, eff(std::max(ep + 1 + ceil_log2(n), emin) - af));
      if (low < cut) return false;
    }
    return true;
  };
  // equivalent to discarding c = 0 when no sum below z loses a bit on its way through
  bool lossless = true;
  const int lo_ep = std::max(g.pmin, d.emin_lim);
  for (int ep = lo_ep; ep < z && lossless; ++ep) {
    const int low = std::max(g.psub, ep - Fx);
    int cut = eff(z - sf);
    if (d.late_norm_rd) cut = std::max(cut, eff(std::max(ep + 1 + ceil_log2(n), emin) - af));
    if (low < cut) lossless = false;
  }
  if (lossless) return kNone;
  int top = z;
  while (top < g.O.emax() && equiv_next(top)) ++top;
  return top;
}

}  // namespace

Datapath canonical_features(const Datapath& in, int K) {
  if (K < 1) K = in.k_default;
  const Geo g = geometry(in.a_fmt, in.b_fmt, in.out_fmt, std::max(K, 2));
  const Format& O = in.out_fmt;
  Datapath d;  // every field not set below keeps its default
  d.arch = in.arch;
  d.type = in.type;
  d.family = in.family;
  d.a_fmt = in.a_fmt;
  d.b_fmt = in.b_fmt;
  d.out_fmt = in.out_fmt;
  d.k_default = K;
  d.ingest = in.ingest;
  d.variant = in.variant;

  // Output rounding.
  d.out_round = in.out_round;
  d.out_prec = (in.out_prec < 0 || in.out_prec >= O.mbits) ? -1 : in.out_prec;
  d.sub_in = in.sub_in;
  d.sub_out = (in.sub_in || tiny_results_reachable(g)) ? in.sub_out : true;
  d.overflow_to_inf =
      directed(in.out_round) && overflow_reachable(g) ? in.overflow_to_inf : false;

  // Structure: groups of n_fma >= K are one group; a pairwise "tree" of one product is an SFMA.
  const int n = std::min(in.n_fma, K);
  AdderKind ad = in.adder;
  if (ad == AdderKind::Pairwise && n == 1) ad = AdderKind::Exact;
  d.adder = ad;
  d.n_fma = n;
  d.c_final_add = in.c_final_add;
  d.c_final_round = in.c_final_add ? in.c_final_round : Rounding::RNE;
  const bool late = ad == AdderKind::Fused && in.late_c;
  // Within one group only the pairwise tree sees the order: sums are order-free and the
  // pair-interleaved order keeps every slot's odd/even set (slots 4m, 4m+1 move together).
  d.pair_interleave = (K > 4 && !(n >= K && ad != AdderKind::Pairwise)) ? in.pair_interleave : false;

  // Fused adder.
  if (ad == AdderKind::Fused) {
    const int F = in.frac_bits;
    d.late_c = late;
    const int cap = late ? g.pmax - g.psub
                         : std::max(g.pmax, O.emax()) - std::min(g.psub, O.emin() - O.mbits);
    d.frac_bits = std::min(F, cap);
    d.prod_align = F >= cap ? AlignRound::Truncate : in.prod_align;
    const int L = in.emin_lim, z = in.c_zero_exp;
    // Products rounded to the output become its numbers: exponents >= emin, bits >= its grid.
    const int pmin = in.prod_round_out ? std::max(g.pmin, O.emin()) : g.pmin;
    const int psub = in.prod_round_out ? std::max(g.psub, O.emin() - O.mbits) : g.psub;
    if (!late) {
      int lc0 = max_none(L, z);  // the alignment floor when c = 0
      int lcn = (L != kNone && L > O.emin()) ? L : kNone;  // ... when c != 0
      if (lc0 != kNone && (lc0 <= pmin || lc0 - F <= psub)) lc0 = kNone;
      if (lcn != kNone && lcn - F <= std::min(psub, O.emin() - O.mbits)) lcn = kNone;
      if (lcn != kNone) {
        d.emin_lim = lcn;
        d.c_zero_exp = (lc0 != kNone && lc0 > lcn) ? lc0 : kNone;
      } else if (lc0 != kNone && lc0 > O.emin()) {
        d.emin_lim = kNone;
        d.c_zero_exp = lc0;
      } else {
        d.emin_lim = lc0;
        d.c_zero_exp = kNone;
      }
    } else {
      d.emin_lim = (L != kNone && L > pmin && L - F > psub) ? L : kNone;
      d.c_zero_exp = (z != kNone && z > std::max(pmin, d.emin_lim)) ? z : kNone;
      // c's bits end mO below its exponent; c is dropped beyond c_drop_gap: a c_frac beyond
      // gap + mO cuts nothing
      d.c_frac = in.c_frac;
      // The round-down after normalisation (acc_frac) cuts nothing the sum's round-down
      // (sum_frac) and c's own bits left, when it keeps more. The sum's round-down cuts nothing
      // that the later one (acc_frac) does not cut, unless the sum falls by two binades or
      // more -- which takes products within 2 + log2(n) binades of e_c, whose bits end Fx
      // below them.
      // A final RD absorbs both round-downs too (P bits below the leading bit), except for the
      // sign of a zero: a positive sum cut to exactly 0 gives -0 under RD where rounding it
      // would give +0. That takes a positive sum below one unit of the cut: below 2^(emin -
      // acc_frac) after the normalisation (a subnormal c alone, product sums on the c = 0 path,
      // or a deep cancellation when sum_frac > acc_frac), or, for sum_frac, product sums on the
      // c = 0 path with bits below z - sum_frac.
      const int P = d.out_prec < 0 ? O.mbits : d.out_prec;
      const int Fx = in.interleave == 2 ? in.partial_frac : F;
      const int L2 = ceil_log2(n);
      const bool rd = in.out_round == Rounding::RD;
      const int zc = d.c_zero_exp;  // the c = 0 path (canonical: kNone when it is inactive)
      bool norm = in.late_norm_rd;
      int sf = in.sum_frac;
      const int af = in.acc_frac;
      if (norm && af >= std::max(sf, O.mbits) + 1) norm = false;
      const bool deep = sf > af && sf < Fx + 2 + L2 &&
                        std::max(pmin + 1, O.emin()) - std::max(sf, O.mbits) < O.emin() - af;
      if (norm && rd && af >= P && af >= O.mbits && (zc == kNone || psub >= O.emin() - af) && !deep)
        norm = false;
      int A = INT_MAX;
      if (norm) A = af;
      if (rd && (zc == kNone || psub >= zc - sf)) A = std::min(A, P);
      if (A != INT_MAX && sf >= O.mbits) {
        const int cap = std::max({A + 1, Fx + 2 + L2, O.mbits});
        if (sf >= cap) sf = cap;
      }
      d.sum_frac = sf;
      d.late_norm_rd = norm;
      d.acc_frac = norm ? in.acc_frac : Datapath().acc_frac;
      if (d.c_zero_exp != kNone) {
        Datapath t = in;
        t.sum_frac = d.sum_frac;
        t.late_norm_rd = d.late_norm_rd;
        t.acc_frac = d.acc_frac;
        t.emin_lim = d.emin_lim;
        Geo ge = g;
        ge.pmin = pmin;
        ge.psub = psub;
        d.c_zero_exp = late_zero_class_top(ge, t, d.c_zero_exp, n);
      }
      int e_top = g.pmax;  // the largest exponent a product sum can have
      if (in.prod_overflow_exp != kNone) e_top = std::min(e_top, in.prod_overflow_exp - 1);
      if (in.prod_round_out) e_top = std::min(e_top, O.emax());
      const int gap_max = std::max(e_top, d.emin_lim) - O.emin();
      d.c_drop_gap = (in.c_drop_gap != kNone && in.c_drop_gap < gap_max) ? in.c_drop_gap : kNone;
      const int cf_cap = (d.c_drop_gap != kNone ? d.c_drop_gap : gap_max) + O.mbits;
      if (d.c_frac > cf_cap) d.c_frac = cf_cap;
      d.interleave = in.interleave;
      d.partial_frac = in.interleave == 2 ? in.partial_frac : Datapath().partial_frac;
    }
  }

  // Products.
  d.prod_round_out =
      (ad == AdderKind::Fused || products_inexact(g, in)) ? in.prod_round_out : false;
  int X = in.prod_overflow_exp;
  if (X != kNone && X >= g.pmax + 2) X = kNone;
  if (X != kNone && d.prod_round_out && X >= O.emax() + 1) X = kNone;
  d.prod_overflow_exp = X;

  // Special values.
  const uint64_t sb = sign_bit(O);
  d.nan_keep_sign = in.nan_keep_sign && !in.c_final_add;
  d.nan_propagate = d.nan_keep_sign ? (in.nan_propagate & ~sb) : in.nan_propagate;
  // Inf - Inf needs an infinity among the terms: an Inf input, an overflowing product, or a sum
  // rounded to Inf on overflow that meets another term (c added after all groups; the pairs of a
  // pairwise tree, which meet each other and c = Inf: one overflowing sign is enough there).
  const bool group_inf = in.out_round != Rounding::RTZ || in.overflow_to_inf;
  const bool sums_overflow = g.pmax + 2 + 6 > O.emax() + 1;
  const bool both_inf = in.out_round == Rounding::RNE || in.out_round == Rounding::RNA ||
                        in.overflow_to_inf;  // overflows of either sign give Inf
  const bool inv = g.A.has_inf() || g.B.has_inf() || X != kNone ||
                   (d.prod_round_out && g.pmax + 2 > O.emax() + 1) ||
                   (in.c_final_add && group_inf && sums_overflow) ||
                   (ad == AdderKind::Pairwise && sums_overflow &&
                    (both_inf || (group_inf && O.has_inf())));
  d.nan_invalid = inv ? in.nan_invalid : 0;
  return d;
}

// =============================================================================================
// 4. Decisions.
// =============================================================================================

namespace {

const Rounding kModes[5] = {Rounding::RNE, Rounding::RTZ, Rounding::RD, Rounding::RU,
                            Rounding::RNA};

std::string hexs(const Format& f, uint64_t v) { return "0x" + to_hex_bits(f, v); }

class Decider {
 public:
  Decider(const FeatureVectors& v, const std::vector<uint64_t>& d)
      : v_(v), d_(d), g_(geometry(v.a_fmt, v.b_fmt, v.out_fmt, v.K)), K_(v.K) {
    for (size_t i = 0; i < v.probe.size(); ++i) at_[v.probe[i]] = i;
    w_.arch = "detected";
    w_.type = v.type;
    w_.family = "";
    w_.a_fmt = v.a_fmt;
    w_.b_fmt = v.b_fmt;
    w_.out_fmt = v.out_fmt;
    w_.k_default = K_;
    w_.adder = AdderKind::Exact;
    w_.n_fma = std::min(K_, 64);
    w_.interleave = 1;
    w_.late_c = false;
    w_.emin_lim = kNone;
    w_.c_zero_exp = kNone;
    w_.c_drop_gap = kNone;
    w_.prod_overflow_exp = kNone;
    w_.prod_round_out = false;
    w_.frac_bits = 40;
    w_.c_frac = w_.sum_frac = w_.acc_frac = w_.partial_frac = 80;
    w_.late_norm_rd = true;
    w_.out_round = Rounding::RNE;
    w_.nan_invalid = v.out_fmt.qnan_bits(false);
    w_.nan_propagate = v.out_fmt.qnan_bits(false);
  }

  DetectedFeatures run() {
    decide_specials();
    decide_sub_in();
    decide_precision();
    decide_rounding();
    // The structure probes can leave several structures (their samples cannot tell them apart);
    // every later decision is made for each, and the one whose datapath reproduces the most
    // probe results wins (ties: the first, in the order exact, pairwise, fused).
    const std::vector<Datapath> structures = structure_candidates();
    if (structures.empty()) {
      finish();
    } else {
      size_t best_rep = 0;
      int best = -1;
      std::vector<Decider> tried;
      for (const Datapath& st : structures) {
        tried.push_back(*this);
        Decider& t = tried.back();
        t.apply_structure(st);
        t.finish();
        size_t rep = 0;
        for (size_t i = 0; i < v_.size(); ++i) rep += pred(t.w_, i) == d_[i];
        if (best < 0 || rep > best_rep) {
          best = static_cast<int>(tried.size()) - 1;
          best_rep = rep;
        }
        if (rep == v_.size()) break;
      }
      adopt(tried[best]);
      if (structures.size() > 1) {
        std::string alts;
        for (const Datapath& x : structures)
          alts += " " + structure_key(x) + (K_ > 4 && x.pair_interleave ? "(pi)" : "");
        note("structure: the ms/cs/cp/cz/mo/mp/pw/pc probes left" + alts +
             " (adder/N_FMA/pair-interleave/c_final_add/F); decided by the later probes: " +
             structure_key(tried[best].w_));
      }
    }
    DetectedFeatures r;
    r.dp = w_;
    r.samples = v_.size();
    for (size_t i = 0; i < v_.size(); ++i) r.reproduced += pred(w_, i) == d_[i];
    if (r.reproduced != r.samples) {
      std::string first;
      for (size_t i = 0; i < v_.size() && first.empty(); ++i)
        if (pred(w_, i) != d_[i])
          first = v_.probe[i] + " (observed " + hexs(v_.out_fmt, d_[i]) + ", model " +
                  hexs(v_.out_fmt, pred(w_, i)) + ")";
      notes_.push_back("the detected datapath does not reproduce " +
                       std::to_string(r.samples - r.reproduced) + " probe results, first " +
                       first);
    }
    r.notes = notes_;
    r.table = table(r);
    return r;
  }

  void finish() {
    decide_sub_out();
    decide_final_round();
    decide_products_early();
    decide_alignment();
    decide_products();
    decide_drop_gap();
    decide_floors();
    decide_overflow();
    decide_invalid();
  }

  /// Takes over the decisions of another decider on the same vectors.
  void adopt(const Decider& o) {
    w_ = o.w_;
    notes_ = o.notes_;
    P_ = o.P_;
    pset_ok_ = o.pset_ok_;
    fusedP_ = o.fusedP_;
    structure_ok_ = o.structure_ok_;
    sub_out_testable_ = o.sub_out_testable_;
    invalid_testable_ = o.invalid_testable_;
  }

  std::vector<std::pair<std::string, std::string>> table(const DetectedFeatures& r) const;

 private:
  // --- access ---------------------------------------------------------------------------------
  bool has(const std::string& n) const { return at_.count(n) != 0; }
  uint64_t obs(const std::string& n) const { return d_[at_.at(n)]; }
  std::vector<size_t> fam(const std::string& prefix) const {
    std::vector<size_t> r;
    for (size_t i = 0; i < v_.probe.size(); ++i)
      if (v_.probe[i].compare(0, prefix.size(), prefix) == 0) r.push_back(i);
    return r;
  }
  static void add(std::vector<size_t>& to, const std::vector<size_t>& more) {
    to.insert(to.end(), more.begin(), more.end());
  }
  uint64_t pred(const Datapath& h, size_t i) const {
    return dot(h, &v_.a[i * K_], &v_.b[i * K_], K_, v_.c[i]);
  }
  /// A prediction matches an observation bit for bit, or both are NaNs: the arithmetic probes
  /// only ask whether the result is a NaN; its bits are decided by the special-value probes.
  bool same(uint64_t p, uint64_t o) const {
    if (p == o) return true;
    return decode(v_.out_fmt, p).cls == Class::NaN && decode(v_.out_fmt, o).cls == Class::NaN;
  }
  bool fits(const Datapath& h, const std::vector<size_t>& ids) const {
    for (size_t i : ids)
      if (!same(pred(h, i), d_[i])) return false;
    return true;
  }
  /// The candidates whose predictions match every sample.
  std::vector<Datapath> survivors(const std::vector<Datapath>& cands,
                                  const std::vector<size_t>& ids) const {
    std::vector<Datapath> r;
    for (const Datapath& h : cands)
      if (fits(h, ids)) r.push_back(h);
    return r;
  }
  /// Do all candidates predict the same d for every sample (the samples cannot tell them apart)?
  bool indistinct(const std::vector<Datapath>& c, const std::vector<size_t>& ids) const {
    for (size_t i : ids)
      for (size_t k = 1; k < c.size(); ++k)
        if (pred(c[k], i) != pred(c[0], i)) return false;
    return true;
  }
  void note(const std::string& s) { notes_.push_back(s); }
  /// What a sample gives with no loss anywhere (an exact adder, the decided output rounding).
  uint64_t pred_exact_small(size_t i) const {
    Datapath h = w_;
    h.adder = AdderKind::Exact;
    h.n_fma = K_;
    h.c_final_add = false;
    return pred(h, i);
  }

  // --- geometry of the decided structure ----------------------------------------------------
  std::vector<int> positions() const {
    std::vector<int> pos(K_, 0);
    const std::vector<int> o = slot_order(K_, w_.pair_interleave);
    for (int p = 0; p < K_; ++p) pos[o[p]] = p;
    return pos;
  }
  bool in_group0(int slot) const {
    if (slot < 0) return !w_.c_final_add;  // c joins the first group unless added at the end
    if (slot >= K_) return false;
    return positions()[slot] < w_.n_fma;
  }
  int parity(int slot) const { return positions()[slot] % 2; }

  // ===========================================================================================
  // D1. Special values: nan/*, inf/*. The NaN bits are read off directly; whether the sign of
  // the first NaN is kept shows as a difference between +NaN and -NaN inputs. (Inf - Inf is
  // decided last, by decide_invalid, once it is known which probe reaches an invalid sum.)
  void decide_specials() {
    const Format& O = v_.out_fmt;
    const uint64_t sb = sign_bit(O);
    if (!has("nan/c+") || !has("nan/c-")) return;
    const uint64_t cp = obs("nan/c+"), cn = obs("nan/c-");
    bool keep = cp != cn;
    if (has("nan/p+") && has("nan/p-")) keep = keep || obs("nan/p+") != obs("nan/p-");
    w_.nan_keep_sign = keep;
    w_.nan_propagate = keep ? (cp & ~sb) : cp;
    // Inf - Inf in the last group, or at the final addition: the invalid NaN is the result.
    if (has("inv/p+c-")) w_.nan_invalid = obs("inv/p+c-");
    if (decode(O, cp).cls != Class::NaN)
      note("c = NaN gave " + hexs(O, cp) + ", not a NaN (outside the model's feature space)");
  }

  // D2. Subnormal inputs (subin/*): a subnormal times a power of two is a normal output; DAZ
  // makes it 0.
  void decide_sub_in() {
    const auto ids = fam("subin/");
    std::vector<Datapath> c(2, w_);
    c[0].sub_in = true;
    c[1].sub_in = false;
    const auto s = survivors(c, ids);
    if (s.size() == 1) w_.sub_in = s[0].sub_in;
    else note("subnormal inputs: the subin probes fit " + std::to_string(s.size()) + " candidates");
  }

  // D3. Output precision (prec/j): the last j for which 2^E + 2^(E-j) comes back exactly.
  void decide_precision() {
    const Format& O = v_.out_fmt;
    int P = O.mbits;
    for (int j = 1; j <= O.mbits; ++j) {
      const std::string n = "prec/" + std::to_string(j);
      if (!has(n)) { note("precision probe " + n + " missing"); break; }
      uint64_t want = 0;
      encode(O, Val{false, (u128{1} << j) + 1, g_.E - j}, want);
      if (obs(n) != want) { P = j - 1; break; }
    }
    P_ = P;
    w_.out_prec = P == O.mbits ? -1 : P;
    pset_ok_ = std::find(g_.pset.begin(), g_.pset.end(), P) != g_.pset.end();
    if (!pset_ok_)
      note("output precision " + std::to_string(P) +
           " bits: the vector set carries no precision-dependent probes for it (only " +
           std::to_string(g_.pset.front()) + (g_.pset.size() > 1 ? ", 13" : "") +
           "); rounding, structure and c-aligner features are not testable");
  }

  // D4. Rounding mode (tie/P/*, prec/*): the pattern of ties of both parities and signs.
  void decide_rounding() {
    // (prec/j beyond P is a fallback only: a unit keeping just P bits below its maximum
    // exponent cuts 2^(E-P-1) before any rounding)
    const std::vector<size_t> prec = pset_ok_ ? std::vector<size_t>{} : fam("prec/");
    for (const char* var : {"c", "p"}) {
      std::vector<size_t> ids = prec;
      if (pset_ok_)
        for (const char* t : {"e+", "o+", "e-", "o-"}) {
          const std::string n = "tie/" + pname(P_) + "/" + t + "/" + var;
          if (has(n)) ids.push_back(at_.at(n));
        }
      std::vector<Datapath> c;
      for (Rounding m : kModes) {
        Datapath h = w_;
        h.out_round = m;
        c.push_back(h);
      }
      const auto s = survivors(c, ids);
      if (s.size() == 1) {
        w_.out_round = s[0].out_round;
        return;
      }
    }
    note("rounding mode: no single mode explains the tie probes (kept RNE)");
  }

  // D6. Subnormal outputs (subout/*): a subnormal result from normal inputs, or a subnormal c
  // (decided after the structure: a subnormal group result meets DAZ as the next group's c).
  void decide_sub_out() {
    const auto ids = fam("subout/");
    std::vector<Datapath> c(2, w_);
    c[0].sub_out = true;
    c[1].sub_out = false;
    const auto s = survivors(c, ids);
    if (s.size() == 1) w_.sub_out = s[0].sub_out;
    else if (s.size() == 2) sub_out_testable_ = false;
    else note("subnormal outputs: no candidate fits the subout probes");
  }

  // D5. Structure (ms/cs/cp/cz/mo/mp/pw/pc): which terms are summed before one rounding. Candidates:
  // every group size, pair-interleaved k order or not, c added in the first group or after all
  // groups, for an adder without loss inside the probes' window (Exact stands for every fused
  // adder keeping at least P+1 bits), the pairwise tree, and the fused adder keeping exactly P
  // bits (V100, NVIDIA fp8 e8m13).
  std::vector<Datapath> structure_candidates() {
    if (!pset_ok_) return {};
    std::vector<size_t> ids;
    // (only the families for the decided precision: their bits stay within its window)
    for (const char* f : {"ms/", "cs/", "cp/", "cz/", "mo/", "mp/", "pw/", "pc/"})
      add(ids, fam(std::string(f) + pname(P_) + "/"));
    std::vector<int> ns;
    for (int n = 1; n < K_; n *= 2) ns.push_back(n);
    ns.push_back(K_);
    std::vector<Datapath> cands;
    for (int kind = 0; kind < 3; ++kind)
      for (int n : ns)
        for (int pi = 0; pi < (K_ > 4 ? 2 : 1); ++pi)
          for (int cfa = 0; cfa < (kind == 1 ? 1 : 2); ++cfa)
            for (int pa = 0; pa < (kind == 2 ? 2 : 1); ++pa) {
              if (kind == 1 && (n & (n - 1))) continue;
              if (kind == 2 && n < 2) continue;
              Datapath h = w_;
              h.adder = kind == 0 ? AdderKind::Exact : kind == 1 ? AdderKind::Pairwise
                                                                   : AdderKind::Fused;
              h.n_fma = n;
              h.pair_interleave = pi;
              h.c_final_add = cfa;
              h.c_final_round = w_.out_round;
              if (kind == 2) {
                h.late_c = false;
                h.frac_bits = P_;
                h.prod_align = pa ? AlignRound::RD : AlignRound::Truncate;
              }
              cands.push_back(h);
            }
    const auto s = survivors(cands, ids);
    if (s.empty()) {
      note("structure: no candidate explains the structure probes");
      return {};
    }
    // one representative per canonical structure; the k order is kept apart even where these
    // probes cannot see it (within one group it matters to odd-even and pairwise adders)
    std::vector<Datapath> r;
    auto rkey = [&](const Datapath& h) {
      return structure_key(h) + (K_ > 4 && h.pair_interleave ? "/pi" : "");
    };
    for (const Datapath& h : s) {
      bool seen = false;
      for (const Datapath& x : r) seen |= rkey(x) == rkey(h);
      if (!seen) r.push_back(h);
    }
    return r;
  }

  std::string structure_key(const Datapath& h) const {
    const Datapath c = canonical_features(h, K_);
    const char* a = c.adder == AdderKind::Exact ? "exact" : c.adder == AdderKind::Pairwise ? "pairwise" : "fused";
    return std::string(a) + "/" + std::to_string(c.n_fma) + "/" + (c.pair_interleave ? "pi" : "-") +
           "/" + (c.c_final_add ? "cfa" : "-") +
           (c.adder == AdderKind::Fused ? "/F" + std::to_string(c.frac_bits) : "");
  }

  void apply_structure(const Datapath& h) {
    w_.adder = h.adder;
    w_.n_fma = h.n_fma;
    w_.pair_interleave = h.pair_interleave;
    w_.c_final_add = h.c_final_add;
    fusedP_ = h.adder == AdderKind::Fused;
    if (fusedP_) {
      w_.late_c = false;
      w_.frac_bits = h.frac_bits;
      w_.prod_align = h.prod_align;
    }
    structure_ok_ = true;
  }

  // D7. c_final_round (cfr/*): the products give +-2^E exactly, c is a tie at full precision.
  void decide_final_round() {
    if (!w_.c_final_add) return;
    const auto ids = fam("cfr/");
    std::vector<Datapath> c;
    for (Rounding m : kModes) {
      Datapath h = w_;
      h.c_final_round = m;
      c.push_back(h);
    }
    const auto s = survivors(c, ids);
    if (!s.empty()) w_.c_final_round = s[0].c_final_round;
    if (s.size() != 1) note("final c addition: " + std::to_string(s.size()) + " rounding modes fit");
  }

  // D9. Alignment: fa (product window), cl (c below), ch/ch2 (c above), fx (odd-even sets),
  // acf/acn (normalisation round-down). See decide_* helpers below.
  void decide_alignment();
  bool fit_late(Datapath& h);
  void refit_window(Datapath& h);

  // D10. Products rounded to the output before the adder (pn, pnc for the fused adder; pr for
  // exact and pairwise adders), decided with the product overflow threshold (po): a product
  // rounded to the output overflows to Inf as one beyond 2^X does.
  void decide_products() {
    if (!structure_ok_) return;
    std::vector<size_t> ids;
    if (w_.adder == AdderKind::Fused) {
      for (const Layout& L : {Layout{"021", 0, 2, 1}, Layout{"041", 0, 4, 1}})
        if (in_group0(L.big) && in_group0(L.small) && in_group0(L.cancel))
          add(ids, fam(std::string("pn/") + L.name + "/"));
      if (pset_ok_) add(ids, fam("pnc/" + pname(P_) + (w_.c_final_add ? "/g" : "/")));
      if (!w_.c_final_add && !w_.late_c) add(ids, fam("pnt/"));
    } else {
      ids = fam("pr/");
    }
    add(ids, fam("po/"));
    std::vector<Datapath> c;  // the simplest explanations first: no threshold, then any
    for (int X = kNone, first = 1; first || X <= g_.pmax + 2; first = 0, X = X == kNone ? g_.pmin : X + 1)
      for (int pro = 0; pro < 2; ++pro) {
        Datapath h = w_;
        h.prod_round_out = pro;
        h.prod_overflow_exp = X;
        c.push_back(h);
      }
    const auto s = survivors(c, ids);
    if (s.empty()) {
      note("products: no (rounded to the output, overflow threshold) pair fits the pn/pr/po probes");
      return;
    }
    // several fit: a rounded product's overflow looks like a threshold at 2^(emax+1); the
    // candidate that explains the most of all probe results wins
    const Datapath& b = best_overall(s);
    w_.prod_round_out = b.prod_round_out;
    w_.prod_overflow_exp = b.prod_overflow_exp;
  }

  /// Of several candidates, the one that reproduces the most probe results bit for bit (ties:
  /// the first).
  const Datapath& best_overall(const std::vector<Datapath>& c) const {
    size_t best = 0, best_rep = 0;
    for (size_t k = 0; k < c.size() && k < 8; ++k) {
      size_t rep = 0;
      for (size_t i = 0; i < v_.size(); ++i) rep += pred(c[k], i) == d_[i];
      if (k == 0 || rep > best_rep) {
        best = k;
        best_rep = rep;
      }
    }
    return c[best];
  }

  void decide_floors();

  // D11. Late c: the drop gap again with the far gaps (clx: the largest products, known now
  // not to overflow or how they do).
  void decide_drop_gap() {
    if (!structure_ok_ || w_.adder != AdderKind::Fused || !w_.late_c) return;
    std::vector<size_t> ids = fam("cl/");
    add(ids, fam("clx/"));
    if (fits(w_, ids)) return;
    std::vector<Datapath> c;
    Datapath h = w_;
    h.c_drop_gap = kNone;
    c.push_back(h);
    for (int gdrop = 1; gdrop <= 400; ++gdrop) {
      h.c_drop_gap = gdrop;
      c.push_back(h);
    }
    const auto s = survivors(c, ids);
    if (!s.empty()) w_ = s[0];
  }

  // D8. Products rounded to the output, from the pr probes alone (their bits stay within any
  // window of at least ma+mb bits): needed before the alignment probes, whose small products a
  // rounding to a narrow output would change.
  void decide_products_early() {
    if (!structure_ok_) return;
    std::vector<size_t> ids;
    for (size_t i : fam("pr/"))
      if (v_.probe[i].rfind("pr/top", 0) != 0) ids.push_back(i);
    std::vector<Datapath> c(2, w_);
    c[0].prod_round_out = false;
    c[1].prod_round_out = true;
    const auto s = survivors(c, ids);
    if (s.size() == 1) w_.prod_round_out = s[0].prod_round_out;
  }

  // D13. Overflow of the result under a directed rounding (ov/*).
  void decide_overflow() {
    const auto ids = fam("ov/");
    std::vector<Datapath> c(2, w_);
    c[0].overflow_to_inf = false;
    c[1].overflow_to_inf = true;
    const auto s = survivors(c, ids);
    if (s.size() == 1) w_.overflow_to_inf = s[0].overflow_to_inf;
  }

  // D14. The NaN of an invalid sum: the first inv/* probe that the decided datapath turns into
  // an invalid operation (predicted with a marker value) gives the bits.
  void decide_invalid() {
    const Format& O = v_.out_fmt;
    const uint64_t marker = O.inf_bits(false) | 0x5;  // a NaN pattern used nowhere else
    Datapath h = w_;
    h.nan_invalid = marker;
    for (const char* n :
         {"inv/p+c-", "inv/0inf", "inv/p+p-", "inv/pov", "inv/ovf", "inv/ovf+", "inv/pw4", "inv/pw6"}) {
      if (!has(n)) continue;
      if (pred(h, at_.at(n)) == marker) {
        w_.nan_invalid = obs(n);
        invalid_testable_ = true;
        return;
      }
    }
    invalid_testable_ = false;
  }

 public:
  // state read by the table
  const FeatureVectors& v_;
  const std::vector<uint64_t>& d_;
  Geo g_;
  int K_;
  Datapath w_;
  std::unordered_map<std::string, size_t> at_;
  std::vector<std::string> notes_;
  int P_ = -1;
  bool pset_ok_ = false;
  bool fusedP_ = false;
  bool structure_ok_ = false;
  bool sub_out_testable_ = true;
  bool invalid_testable_ = false;
};

// D9 in detail.
//  (a) fa: the product window. Candidates: no loss (Exact) or a fused early-c adder with F
//      fractional bits and truncation or round-down; late-c and odd-even adders give the same
//      d on these layouts (big, small and cancel in one set at one exponent).
//  (b) the adder class from cl (c below the products), ch/ch2 (c above) and the fa layouts:
//      exact; early c (c cut like a product, at F below the largest exponent); late c (c cut at
//      c_frac, dropped beyond c_drop_gap; the product sum cut at sum_frac below e_c).
//  (c) late c (fit_late): c_frac and c_drop_gap (cl), odd-even sets (fa/01c, fx), the window
//      again with them (refit_window: fa, fm), then sum_frac, acc_frac and the normalisation
//      round-down (ch, ch2, ac, ca, czs).
//  An odd-even unit whose partial sums keep fewer bits than its terms shows no single window on
//  fa; the late-c fit then starts from the first lost term and settles the window itself.
void Decider::decide_alignment() {
  if (!structure_ok_ || w_.adder == AdderKind::Pairwise) return;
  // (a) layouts in group 0
  std::vector<size_t> same_ids, cross;
  for (const Layout& L : kAlignLayouts) {
    if (!in_group0(L.big) || !in_group0(L.small) || !in_group0(L.cancel)) continue;
    add(parity(L.big) == parity(L.small) ? same_ids : cross, fam(std::string("fa/") + L.name + "/"));
  }
  if (same_ids.empty()) same_ids = cross;
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
  if (!window_known) {
    // An odd-even adder rounds its partial sums down (partial_frac) after cutting the terms (F):
    // no single window explains fa. Start from the first lost small term; the late-c fit below
    // decides partial_frac and then the window.
    for (size_t i : same_ids) {
      const std::string& n = v_.probe[i];
      if (n.find("/+/") == std::string::npos) continue;
      const int j = std::atoi(n.substr(n.rfind('/') + 1).c_str());
      if (!same(pred_exact_small(i), d_[i]) && j - 1 < F) F = j - 1;
    }
  }

  // (b) the adder class
  std::vector<size_t> cls = fam("cl/");
  for (const char* L : {"0123", "0145"}) {
    const int z = L[2] - '0', w = L[3] - '0';
    if (in_group0(-1) && in_group0(0) && in_group0(1) && in_group0(z)) add(cls, fam(std::string("ch/") + L + "/"));
    if (in_group0(-1) && in_group0(0) && in_group0(1) && in_group0(z) && in_group0(w))
      add(cls, fam(std::string("ch2/") + L + "/"));
  }
  add(cls, same_ids);
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
/// -2^(Ef-c_frac) from the round-down, then 0 once dropped); the odd-even sets; the window;
/// then sum_frac, acc_frac and the normalisation round-down from the cuts the ac families see
/// (min(sum_frac, acc_frac + s) for a normalisation shift s). Returns whether the result fits.
bool Decider::fit_late(Datapath& h) {
  std::vector<size_t> cl = fam("cl/");
  // c_frac and c_drop_gap
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
  std::vector<size_t> ix;
  if (in_group0(0) && in_group0(1)) add(ix, fam("fa/01c/"));
  if (in_group0(0) && in_group0(1) && in_group0(3) && parity(1) == parity(3)) add(ix, fam("fx/13/"));
  if (in_group0(0) && in_group0(1) && in_group0(5) && parity(1) == parity(5)) add(ix, fam("fx/15/"));
  {
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
  }
  // the product window, now that the odd-even round-down is known
  refit_window(h);
  // sum_frac, acc_frac, late_norm_rd: the cut each ac family sees is min(sum_frac, acc_frac + s)
  // for a normalisation shift s = 0 (f, c), 1 (n), -1 (x); measured as the sum_frac of a
  // datapath without the normalisation round-down, then combined.
  std::vector<size_t> ch;
  for (const char* L : {"0123", "0145"}) {
    const int z = L[2] - '0', w = L[3] - '0';
    if (in_group0(0) && in_group0(1) && in_group0(z)) add(ch, fam(std::string("ch/") + L + "/"));
    if (in_group0(0) && in_group0(1) && in_group0(z) && in_group0(w))
      add(ch, fam(std::string("ch2/") + L + "/"));
  }
  std::vector<size_t> acs[3];  // s = 0, 1, -1
  for (int P : g_.pset) {
    const std::string pre = "ac/" + pname(P) + "/";
    add(acs[0], fam(pre + "f"));
    for (int x : {2, 4})
      if (in_group0(0) && in_group0(1) && in_group0(x))
        for (const char* k : {"nt/", "ng/", "xt/", "xg/"})
          add(acs[k[0] == 'n' ? 1 : 2], fam(pre + k + std::to_string(x) + "/"));
  }
  // The cut a family sees: the smallest t for which a datapath cutting at sum_frac = t alone
  // fits it; -1 when every t fits (the family cannot see the cut in this rounding mode).
  auto threshold = [&](const std::vector<size_t>& ids) {
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
  };
  const int t0 = threshold(acs[0]), t1 = threshold(acs[1]), tx = threshold(acs[2]);
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
  std::vector<size_t> all = ch;
  for (const auto& a : acs) add(all, a);
  add(all, fam("ca/"));
  for (int x : {2, 4})
    if (in_group0(0) && in_group0(1) && in_group0(x)) add(all, fam("czs/" + std::to_string(x) + "/"));
  {
    const auto s = survivors(cc, all);
    if (s.empty()) { note("late c: no sum_frac / acc_frac fits the ch and ac probes"); return false; }
    // several may fit these families: the distinct ones (canonical forms) are weighed on all
    // the probe results
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
    h = best_overall(distinct);
  }
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

}  // namespace

DetectedFeatures decide_features(const FeatureVectors& v, const std::vector<uint64_t>& d) {
  if (d.size() != v.size())
    throw std::invalid_argument("decide_features: " + std::to_string(d.size()) +
                                " d values for " + std::to_string(v.size()) + " probe samples");
  Decider dec(v, d);
  DetectedFeatures r = dec.run();
  return r;
}

DetectedFeatures detect_features(const Datapath& preset, int K) {
  if (K <= 0) K = preset.k_default;
  const FeatureVectors v = feature_vectors(preset.a_fmt, preset.b_fmt, preset.out_fmt, K, preset.type);
  std::vector<uint64_t> d(v.size());
  for (size_t i = 0; i < v.size(); ++i) d[i] = dot(preset, &v.a[i * K], &v.b[i * K], K, v.c[i]);
  return decide_features(v, d);
}

// --- the table of the decided features (Table 3 of the paper, generalised) ------------------

namespace {

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


}  // namespace

std::vector<std::pair<std::string, std::string>> Decider::table(const DetectedFeatures& r) const {
  std::vector<std::pair<std::string, std::string>> t;
  const Datapath& d = w_;
  const Datapath c = canonical_features(d, K_);
  const Format& O = v_.out_fmt;
  auto row = [&](const std::string& k, const std::string& v) { t.emplace_back(k, v); };
  const std::string na = "n/a";
  row("inputs", v_.a_fmt.name + " x " + v_.b_fmt.name + " -> " + O.name + ", K = " +
                    std::to_string(K_) + " (" + std::to_string(v_.size()) + " probe samples)");
  row("output rounding", rname(d.out_round));
  row("output precision", std::to_string(P_) + " fraction bits" +
                              (d.out_prec >= 0 ? " (e8m" + std::to_string(d.out_prec) + ")" : " (all of " + O.name + ")"));
  const bool fused = d.adder == AdderKind::Fused, exact = d.adder == AdderKind::Exact,
             pw = d.adder == AdderKind::Pairwise;
  std::string adder;
  if (!structure_ok_) adder = "not decided";
  else if (exact && c.n_fma == 1) adder = "SFMA: exact, one product at a time (Exact, N_FMA = 1)";
  else if (exact) adder = "multi-term exact (Kulisch): one rounding per group";
  else if (pw) adder = "pairwise tree: every addition rounded";
  else adder = std::string("fused fixed-point multi-term adder, ") + (d.late_c ? "late c" : "early c");
  row("adder", adder);
  row("N_FMA", !structure_ok_ ? "not decided"
                              : std::to_string(c.n_fma) +
                                    (c.n_fma == K_ ? " (all K products in one group)" : ""));
  row("k order", !structure_ok_ ? "not decided"
                 : c.pair_interleave ? "pair-interleaved: k mod 4 in {0,1} first, then {2,3}"
                 : (K_ <= 4 || (c.n_fma >= K_ && !pw && !(d.late_c && d.interleave == 2)))
                     ? "in order (the order cannot matter here)"
                     : "in order");
  std::string cadd;
  if (d.c_final_add) cadd = std::string("after all groups, a separate addition rounded ") + rname(d.c_final_round);
  else if (exact) cadd = "a term of the exact sum";
  else if (pw) cadd = "after the pairwise tree of each group";
  else cadd = d.late_c ? "late: after the product sum (c-aligner)" : "early: aligned with the products";
  row("c added", structure_ok_ ? cadd : "not decided");
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
                              : (g_.pmax + 2 <= O.emax() + 1 ? "no (products cannot reach the output's range)" : "no"));
  if (fused && d.late_c) {
    row("odd-even interleave", c.interleave == 2 ? "yes: partial sums RD to " + std::to_string(c.partial_frac) + " bits" : "no");
    row("align(c, S_sum)", "(" + std::to_string(c.c_frac) + ", " + std::to_string(c.sum_frac) + ", RD)");
    row("c dropped beyond gap", c.c_drop_gap == kNone ? "never" : std::to_string(c.c_drop_gap));
    row("RD after normalisation", c.late_norm_rd ? std::to_string(c.acc_frac) + " fraction bits" : "none");
  } else {
    row("odd-even interleave", fused ? "no" : na);
    row("align(c, S_sum)", na);
  }
  if (fused) {
    // Could a floor at the output's smallest normal exponent change anything here at all?
    Datapath t = d;
    t.emin_lim = O.emin();
    t.c_zero_exp = kNone;
    const bool floor_testable = canonical_features(t, K_).emin_lim != kNone;
    t.emin_lim = kNone;
    t.c_zero_exp = O.emin();
    const bool zero_testable = canonical_features(t, K_).c_zero_exp != kNone ||
                               canonical_features(t, K_).emin_lim != kNone;
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
  } else {
    row("e_c=0", na);
    row("e_min^lim", na);
  }
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

}  // namespace mc
