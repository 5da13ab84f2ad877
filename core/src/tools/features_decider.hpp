// Internal to feature detection (features_decide.cpp, features_fit.cpp): the Decider, which
// turns the d of the probe vectors into a datapath (section 4 of the paper, generalised). Its
// decisions in the order they depend on each other are listed in run(); docs/features.md
// describes every probe and decision.
#pragma once
#include <algorithm>
#include <climits>
#include <cstdio>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "matcore/bits.hpp"
#include "matcore/features.hpp"
#include "matcore/fields.hpp"
#include "matcore/model.hpp"
#include "matcore/vectors.hpp"
#include "features_common.hpp"

namespace mc::feat {

inline bool directed(Rounding r) { return r == Rounding::RTZ || r == Rounding::RD || r == Rounding::RU; }

/// Can a result overflow the output format (sum of products, or c plus a product)?
inline bool overflow_reachable(const Geo& g) { return g.pmax + 2 > g.O.emax() - g.mO; }

inline constexpr Rounding kModes[5] = {Rounding::RNE, Rounding::RTZ, Rounding::RD, Rounding::RU,
                            Rounding::RNA};

inline std::string hexs(const Format& f, uint64_t v) { return "0x" + to_hex_bits(f, v); }

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
  std::vector<size_t> window_ids() const;
  int first_lost_small(const std::vector<size_t>& ids, int F) const;
  std::vector<size_t> class_ids(const std::vector<size_t>& window) const;
  bool fit_late(Datapath& h);
  void fit_c_frac(Datapath& h) const;
  bool fit_odd_even(Datapath& h);
  std::vector<size_t> late_cut_ids(std::vector<size_t> (&acs)[3]) const;
  int cut_threshold(const Datapath& h, const std::vector<size_t>& ids) const;
  std::vector<Datapath> late_cut_candidates(const Datapath& h, int t0, int t1, int tx) const;
  Datapath best_distinct_cuts(const std::vector<Datapath>& s) const;
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

}  // namespace mc::feat
