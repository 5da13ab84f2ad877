// matcore: feature detection from fixed probe vectors (section 4 of the paper, generalised):
// the canonical form and the decisions (sections 5a and 4).
//
// Layout of this file (docs/features.md describes every probe and decision):
//   1. exact values and their encodings (products split into a_i * b_i exactly)
//   2. the geometry of a format combination (which exponents the probes use)
//   3. the probe families: one emit_* function each, documented with its vectors
//   5a. the canonical (detectable) form of a datapath, used by the decisions and the comparison
//   4. the decisions: the Decider (features_decider.hpp; its fits and table in features_fit.cpp)
//   5b. the comparison, the files (features_files.cpp)
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
#include "features_decider.hpp"

namespace mc {

using namespace feat;

// =============================================================================================
// 5a. Canonical form (used by the decisions to group equivalent candidates, and by the
//     comparison).
// =============================================================================================

namespace {

int max_none(int a, int b) {
  if (a == kNone) return b;
  if (b == kNone) return a;
  return std::max(a, b);
}

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

/// Early c: sets the canonical alignment floors d.emin_lim (c != 0) and d.c_zero_exp (c = 0),
/// given the least exponent pmin and the lowest bit psub of the products.
void canonical_floors_early(Datapath& d, const Datapath& in, int pmin, int psub) {
  const Format& O = in.out_fmt;
  const int F = in.frac_bits;
  const int L = in.emin_lim, z = in.c_zero_exp;
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
}

/// Late c: sets the canonical round-downs d.sum_frac, d.late_norm_rd and d.acc_frac, and the
/// largest exponent of c = 0 equivalent to d.c_zero_exp (d.out_prec, d.emin_lim and
/// d.c_zero_exp already canonical).
void canonical_late_cuts(Datapath& d, const Datapath& in, const Geo& g, int pmin, int psub, int n) {
  const Format& O = in.out_fmt;
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
  const int Fx = in.interleave == 2 ? in.partial_frac : in.frac_bits;
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
}

/// Late c: sets the canonical floors, c-aligner cuts, drop gap and odd-even interleave of d.
void canonical_late_c(Datapath& d, const Datapath& in, const Geo& g, int pmin, int psub, int n) {
  const Format& O = in.out_fmt;
  const int F = in.frac_bits;
  const int L = in.emin_lim, z = in.c_zero_exp;
  d.emin_lim = (L != kNone && L > pmin && L - F > psub) ? L : kNone;
  d.c_zero_exp = (z != kNone && z > std::max(pmin, d.emin_lim)) ? z : kNone;
  // c's bits end mO below its exponent; c is dropped beyond c_drop_gap: a c_frac beyond
  // gap + mO cuts nothing
  d.c_frac = in.c_frac;
  canonical_late_cuts(d, in, g, pmin, psub, n);
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

/// Fused adder: sets the canonical late_c, window (frac_bits, prod_align) and the fields of the
/// early-c or late-c c-aligner of d.
void canonical_fused(Datapath& d, const Datapath& in, const Geo& g, bool late, int n) {
  const Format& O = in.out_fmt;
  const int F = in.frac_bits;
  d.late_c = late;
  const int cap = late ? g.pmax - g.psub
                       : std::max(g.pmax, O.emax()) - std::min(g.psub, O.emin() - O.mbits);
  d.frac_bits = std::min(F, cap);
  d.prod_align = F >= cap ? AlignRound::Truncate : in.prod_align;
  // Products rounded to the output become its numbers: exponents >= emin, bits >= its grid.
  const int pmin = in.prod_round_out ? std::max(g.pmin, O.emin()) : g.pmin;
  const int psub = in.prod_round_out ? std::max(g.psub, O.emin() - O.mbits) : g.psub;
  if (!late) canonical_floors_early(d, in, pmin, psub);
  else canonical_late_c(d, in, g, pmin, psub, n);
}

/// The canonical NaN of an invalid sum: in's, where an infinity can reach the adder; else 0
/// (d.adder, d.prod_round_out and d.prod_overflow_exp already canonical).
uint64_t canonical_nan_invalid(const Datapath& d, const Datapath& in, const Geo& g) {
  const Format& O = in.out_fmt;
  const AdderKind ad = d.adder;
  const int X = d.prod_overflow_exp;
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
  return inv ? in.nan_invalid : 0;
}

}  // namespace

Datapath canonical_features(const Datapath& in, int K) {
  if (K < 1) K = std::min(in.k_default, 64);
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
  if (ad == AdderKind::Fused) canonical_fused(d, in, g, late, n);

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
  d.nan_invalid = canonical_nan_invalid(d, in, g);
  return d;
}

// =============================================================================================
// 4. Decisions.
// =============================================================================================

DetectedFeatures decide_features(const FeatureVectors& v, const std::vector<uint64_t>& d) {
  if (d.size() != v.size())
    throw std::invalid_argument("decide_features: " + std::to_string(d.size()) +
                                " d values for " + std::to_string(v.size()) + " probe samples");
  Decider dec(v, d);
  DetectedFeatures r = dec.run();
  return r;
}

DetectedFeatures detect_features(const Datapath& preset, int K) {
  if (K <= 0) K = std::min(preset.k_default, 64);  // the probes cover k = 2..64 (CDNA4 f8f6f4: K = 128)
  const FeatureVectors v = feature_vectors(preset.a_fmt, preset.b_fmt, preset.out_fmt, K, preset.type);
  std::vector<uint64_t> d(v.size());
  for (size_t i = 0; i < v.size(); ++i) d[i] = dot(preset, &v.a[i * K], &v.b[i * K], K, v.c[i]);
  return decide_features(v, d);
}

}  // namespace mc
