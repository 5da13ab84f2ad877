// matcore: feature detection from fixed probe vectors (section 4 of the paper, generalised):
// the probe families and feature_vectors (sections 3; 1-2 in features_common.hpp).
//
// Layout of this file (docs/features.md describes every probe and decision):
//   1. exact values and their encodings (products split into a_i * b_i exactly)
//   2. the geometry of a format combination (which exponents the probes use)
//   3. the probe families: one emit_* function each, documented with its vectors
//      (the Emitter: features_emitter.hpp; the families from the late c-aligner's round-downs
//      on: features_probes_late.cpp)
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
#include "features_emitter.hpp"

namespace mc {

using namespace feat;

namespace {

// =============================================================================================
// 3. Probe families.
// =============================================================================================

// --- specials (sections 4.1-4.3: Inf - Inf gives -NaN on AMD; NVIDIA: canonical NaN) ---------
//   nan/c+, nan/c-      c = +NaN / -NaN, products 0          -> nan_propagate, keep_sign
//   nan/p+, nan/p-      p1 = NaN * (+-1) of either sign       -> the same for product NaNs
//   nan/c+p-, nan/p+p-  two NaNs of opposite signs            -> which NaN's sign wins
//   inf/*               +-Inf in a product or in c            -> Inf propagates
//   inv/*               Inf - Inf, Inf * 0, an overflowing product or group against c = +Inf
void emit_specials(Emitter& em) {
  const Geo& g = em.g;
  auto s = em.blank();
  em.cbits(s, g.O.qnan_bits(false));
  em.emit("nan/c+", s);
  s = em.blank();
  em.cbits(s, g.O.qnan_bits(true));
  em.emit("nan/c-", s);
  // A product NaN of a chosen sign: the sign of a NaN product is sign(a) xor sign(b). The NaN
  // comes from a, else from b; operand formats with no NaN (OCP MX fp6/fp4) have no such probes.
  auto nan_prod = [&](Emitter::Smp& x, int slot, bool neg) {
    if (!g.A.has_nan() && !g.B.has_nan()) {
      x.ok = false;
      return;
    }
    if (!g.A.has_nan()) {
      const uint64_t b = g.B.qnan_bits(false);
      const bool sb = decode(g.B, b).sign;
      em.raw(x, slot, one_bits(g.A, sb != neg), b);
      return;
    }
    const uint64_t a = g.A.qnan_bits(false);
    const bool sa = decode(g.A, a).sign;
    em.raw(x, slot, a, one_bits(g.B, sa != neg));
  };
  s = em.blank();
  nan_prod(s, 0, false);
  em.emit("nan/p+", s);
  s = em.blank();
  nan_prod(s, 0, true);
  em.emit("nan/p-", s);
  s = em.blank();
  em.cbits(s, g.O.qnan_bits(false));
  nan_prod(s, 0, true);
  em.emit("nan/c+p-", s);
  s = em.blank();
  nan_prod(s, 0, false);
  nan_prod(s, 1, true);
  em.emit("nan/p+p-", s);

  const bool ia = g.A.has_inf(), ib = g.B.has_inf();
  auto inf_prod = [&](Emitter::Smp& x, int slot, bool neg) {
    if (ia) em.raw(x, slot, g.A.inf_bits(neg), one_bits(g.B, false));
    else if (ib) em.raw(x, slot, one_bits(g.A, false), g.B.inf_bits(neg));
    else x.ok = false;
  };
  for (bool neg : {false, true}) {
    s = em.blank();
    inf_prod(s, 0, neg);
    em.emit(neg ? "inf/p-" : "inf/p+", s);
    s = em.blank();
    em.cbits(s, g.O.inf_bits(neg));
    em.emit(neg ? "inf/c-" : "inf/c+", s);
  }
  // Invalid sums in the LAST group (slots K-2, K-1 are the last two in either k order), so that
  // the invalid NaN is the result itself and not a NaN input of a later group.
  const int l1 = g.K - 1, l2 = g.K - 2;
  s = em.blank();
  inf_prod(s, l2, false);
  inf_prod(s, l1, true);
  em.emit("inv/p+p-", s);
  s = em.blank();
  inf_prod(s, l1, false);
  em.cbits(s, g.O.inf_bits(true));
  em.emit("inv/p+c-", s);
  s = em.blank();
  if (ia) em.raw(s, l1, g.A.inf_bits(false), zero_bits(g.B, false));
  else if (ib) em.raw(s, l1, zero_bits(g.A, false), g.B.inf_bits(false));
  else s.ok = false;
  em.emit("inv/0inf", s);
  // The largest product, negative, against c = +Inf: invalid when the product overflows.
  const uint64_t ma = g.A.max_finite_bits(), mb = g.B.max_finite_bits();
  const uint64_t mbn = mb | (uint64_t{1} << (g.B.width() - 1));
  s = em.blank();
  em.raw(s, l1, ma, mbn);
  em.cbits(s, g.O.inf_bits(false));
  em.emit("inv/pov", s);
  // Up to 8 of them: a group sum that overflows to -Inf meets c = +Inf at a final addition
  // (and the mirror image: rounding upward overflows only the positive sums to Inf).
  s = em.blank();
  for (int k = 0; k < std::min(g.K, 8); ++k) em.raw(s, k, ma, mbn);
  em.cbits(s, g.O.inf_bits(false));
  em.emit("inv/ovf", s);
  s = em.blank();
  for (int k = 0; k < std::min(g.K, 8); ++k) em.raw(s, k, ma, mb);
  em.cbits(s, g.O.inf_bits(true));
  em.emit("inv/ovf+", s);
  // Two pairs of a pairwise tree in the last group, one overflowing to +Inf, the other to -Inf
  // (slots K-4,K-3 and K-2,K-1; K-6,K-5 and K-2,K-1 under pair-interleaved k order)
  for (int first : {g.K - 4, g.K - 6}) {
    s = em.blank();
    em.raw(s, first, ma, mb);
    em.raw(s, first + 1, ma, mb);
    em.raw(s, g.K - 2, ma, mbn);
    em.raw(s, g.K - 1, ma, mbn);
    em.emit("inv/pw" + std::to_string(g.K - first), s);
  }
}

// --- subnormal inputs (4.1.2: a1 = 2^-24, b1 = +-2^-24 -> d = +-2^-48) ----------------------
//   subin/a   a1 = smallest subnormal of A, b1 = 2^k so that the product is a normal output
//   subin/b   the same with b1 subnormal
void emit_subin(Emitter& em) {
  const Geo& g = em.g;
  for (int which = 0; which < 2; ++which) {
    const Format& S = which == 0 ? g.A : g.B;   // the subnormal operand
    const Format& N = which == 0 ? g.B : g.A;   // the power of two
    const int es = S.emin() - S.mbits;
    int k = std::max(N.emin(), std::min(N.emax(), g.E - es));
    const int pe = es + k;
    if (pe < g.O.emin() || pe > g.O.emax() - 1) continue;
    uint64_t nb;
    if (!encode(N, p2(k), nb, false)) continue;
    auto s = em.blank();
    if (which == 0) em.raw(s, 0, 1, nb);
    else em.raw(s, 0, nb, 1);
    em.emit(which == 0 ? "subin/a" : "subin/b", s);
  }
}

// --- output precision: c = 0, p1 = 2^E, p2 = 2^(E-j), j = 1 .. mO+1 --------------------------
//   d = 2^E + 2^(E-j) exactly while j <= P (the fraction bits of the output); at j = P+1 the
//   sum is no longer representable. Both terms lie within P bits of e_max, so no alignment
//   width >= P can cut them.
void emit_precision(Emitter& em) {
  const Geo& g = em.g;
  for (int j = 1; j <= g.mO + 1; ++j) {
    auto s = em.blank();
    em.prod(s, 0, p2(g.E));
    em.prod(s, 1, p2(g.E - j), true);
    em.emit("prec/" + std::to_string(j), s);
  }
}

// --- rounding mode (4.1.1: p1 = +-1, c = +-(2^-23+2^-24) and +-2^-24) ----------------------
// Generalised to ties of both lsb parities and both signs, which separate all five modes:
//                even+  odd+  even-  odd-      (up = away from zero)
//        RNE     down   up    down   up
//        RNA     up     up    up     up
//        RTZ     down   down  down   down
//        RD      down   down  up     up
//        RU      up     up    down   down
//   tie/P/e+/c   p1 = Bc (2.25*2^(E-1), leading bit E), p2 = 2^(E-P-1): kept part even + half
//   tie/P/o+/c   p2 = 1.5*2^(E-P): kept part odd + half
//   ../p         the same with p1 = 2^E (no carry product)
// c = 0 so that the way c is added plays no part; only slots 1 and 2 are used.
void emit_ties(Emitter& em) {
  const Geo& g = em.g;
  for (int P : g.pset)
    for (int carry = 1; carry >= 0; --carry)
      for (int odd = 0; odd < 2; ++odd)
        for (int neg = 0; neg < 2; ++neg) {
          auto s = em.blank();
          if (carry) em.prod2(s, 0, 3, 3, g.E - 3, neg);
          else em.prod(s, 0, p2(g.E, neg));
          em.prod(s, 1, odd ? vm(3, g.E - P - 1, neg) : p2(g.E - P - 1, neg), true);
          em.emit("tie/" + pname(P) + "/" + (odd ? "o" : "e") + (neg ? "-" : "+") + "/" +
                      (carry ? "c" : "p"),
                  s);
        }
}

// --- subnormal outputs (4.1.1: a1 = b1 = 2^-65 -> d = 2^-130, not 0) -------------------------
//   subout/p    p1 = 2^(emin_out - 1), a subnormal output from normal inputs
//   subout/pc   p1 = (1+2^-mA)*2^pmin, p2 = -2^pmin: a subnormal difference (fp8 -> fp16)
//   subout/c    c = 2^(emin_out - 1) alone (with subnormal inputs: DAZ would also zero it)
void emit_subout(Emitter& em) {
  const Geo& g = em.g;
  // The products sit in the last slots (the last group in either k order): a subnormal result of
  // an earlier group would meet DAZ as the next group's c.
  const int l1 = g.K - 1, l2 = g.K - 2;
  const int t = g.O.emin() - 1;
  auto s = em.blank();
  em.prod(s, l1, p2(t));
  em.emit("subout/p", s);
  s = em.blank();
  const int x = g.pmin;
  em.prod(s, l2, vm((u128{1} << g.mA) + 1, x - g.mA));
  em.prod(s, l1, p2(x, true));
  if (x - g.mA < g.O.emin() && x - g.mA >= g.O.emin() - g.mO) em.emit("subout/pc", s);
  s = em.blank();
  em.c(s, p2(t), true);
  em.emit("subout/c", s);
}

// --- structure: which terms meet in one rounding (4.1.1 SFMA test, 4.1.2 / 4.2.1 / 4.3.1 N_FMA
// tests). With T = 2^(E-P-1) (a tie against 2^E) every vector is exact when its terms are summed
// before one rounding, and loses T when a rounding falls between them:
//   ms/P/k   p1 = Bc, p2 = T, pk = -2^(E-1): exact iff slot k is in the group of slots 1, 2
//            (the cancellation after a rounding of Bc + T exposes the lost tie)
//   cs/P/j   c = 2^E, p1 = pj = T: exact iff slot j meets slot 1 before c is rounded with them
//            (the paper's N_FMA sweep; also the pairwise group size)
//   cp/P/k   c = T, p1 = 2^E, pk = -2^(E-1): slot 1 and slot k with c in one rounding
//   cz/P     c = -2^(E-1), p1 = Bc, p2 = T: c joins the products before they are rounded
//            (no: pairwise tree or c added after all groups)
// All bits lie within P+1 of the largest exponent of each addition, so alignment widths of at
// least P+1 (or exactly P with unnormalised products, through Bc) do not change the results.
void emit_structure(Emitter& em) {
  const Geo& g = em.g;
  const int E = g.E;
  for (int P : g.pset) {
    const std::string pre = "/" + pname(P) + "/";
    const Val T = p2(E - P - 1);
    for (int k = 2; k < g.K; ++k) {
      auto s = em.blank();
      em.prod2(s, 0, 3, 3, E - 3, false);
      em.prod(s, 1, T, true);
      em.prod(s, k, p2(E - 1, true));
      em.emit("ms" + pre + std::to_string(k), s);
    }
    for (int j = 1; j < g.K; ++j) {
      auto s = em.blank();
      em.c(s, p2(E));
      em.prod(s, 0, T, true);
      em.prod(s, j, T, true);
      em.emit("cs" + pre + std::to_string(j), s);
    }
    for (int k = 1; k < g.K; ++k) {
      auto s = em.blank();
      em.c(s, T);
      em.prod(s, 0, p2(E));
      em.prod(s, k, p2(E - 1, true));
      em.emit("cp" + pre + std::to_string(k), s);
    }
    auto s = em.blank();
    em.c(s, p2(E - 1, true));
    em.prod2(s, 0, 3, 3, E - 3, false);
    em.prod(s, 1, T, true);
    em.emit("cz" + pre + "0", s);
    // group boundaries after the first group (c = 0, so that c added after all groups changes
    // nothing): p1 = Bc, pa = T, pb = -2^(E-1): exact iff a and b are in one group
    for (const auto& ab : {std::pair<int, int>{2, 3}, {3, 4}, {4, 5}, {2, 4}}) {
      s = em.blank();
      em.prod2(s, 0, 3, 3, E - 3, false);
      em.prod(s, ab.first, T, true);
      em.prod(s, ab.second, p2(E - 1, true));
      em.emit("mp" + pre + std::to_string(ab.first) + "-" + std::to_string(ab.second), s);
    }
    // a pairwise tree adds neighbours first: p1 = 2^E, pa = pa+1 = T: exact when T + T is summed
    // before meeting 2^E (tree, or one group), lost twice in a sequence of roundings
    for (int a : {1, 2, 4}) {
      s = em.blank();
      em.prod(s, 0, p2(E));
      em.prod(s, a, T, true);
      em.prod(s, a + 1, T, true);
      em.emit("pw" + pre + std::to_string(a), s);
    }
    // a cancellation inside a pair of the tree: p1 = Bc, pa = -Bc, pa+1 = T (a tie against
    // -Bc): the pair's rounding loses it (pairwise), one group or a sequence keeps it
    for (int a : {2, 4}) {
      s = em.blank();
      em.prod2(s, 0, 3, 3, E - 3, false);
      em.prod2(s, a, 3, 3, E - 3, true);
      em.prod(s, a + 1, T, true);
      em.emit("pc" + pre + std::to_string(a), s);
    }
    // the order of later groups: c = 2^E, pa = T, pb = -2^(E-1): exact iff b's group comes
    // no later than a's rounding (pair-interleaved k order swaps slots 2 and 4)
    for (const auto& ab : {std::pair<int, int>{2, 4}, {4, 2}, {3, 6}, {6, 3}}) {
      s = em.blank();
      em.c(s, p2(E));
      em.prod(s, ab.first, T, true);
      em.prod(s, ab.second, p2(E - 1, true));
      em.emit("mo" + pre + std::to_string(ab.first) + "-" + std::to_string(ab.second), s);
    }
  }
}

// --- the rounding of a separate final c addition (c_final_add): the products give exactly
// +-2^E, c a tie at full output precision: c = +-2^(E-mO-1) (even) or +-1.5*2^(E-mO) (odd).
void emit_final_round(Emitter& em) {
  const Geo& g = em.g;
  for (int odd = 0; odd < 2; ++odd)
    for (int neg = 0; neg < 2; ++neg) {
      auto s = em.blank();
      em.prod(s, 0, p2(g.E, neg));
      em.c(s, odd ? vm(3, g.E - g.mO - 1, neg) : p2(g.E - g.mO - 1, neg));
      em.emit(std::string("cfr/") + (odd ? "o" : "e") + (neg ? "-" : "+"), s);
    }
}


// --- product alignment (4.1.2 / 4.3.1 extra alignment bits; 4.3.1 cancellation test):
//   fa/L/+-/j   big = 2^Ef, small = +-2^(Ef-j), cancel = -2^Ef (a product or c), all at the
//               same exponent: d = the small term as the aligner kept it -- itself while
//               j <= F, then 0 (truncation) or -2^(Ef-F) (round-down of a negative term).
//   Layouts 021/041 keep big and small in one odd/even set (pair-interleave or not); 01c puts
//   the small term in the other set (odd-even partial sums, partial_frac).
int align_sweep_max(const Geo& g, int top) {
  return std::max(0, std::min({64, top - g.psub, top - (g.O.emin() - g.mO)}));
}

void emit_align(Emitter& em) {
  const Geo& g = em.g;
  const int J = align_sweep_max(g, g.Ef);
  for (const Layout& L : kAlignLayouts)
    for (int neg = 0; neg < 2; ++neg)
      for (int j = 1; j <= J; ++j) {
        auto s = em.blank();
        em.prod(s, L.big, p2(g.Ef));
        em.prod(s, L.small, p2(g.Ef - j, neg), true);
        if (L.cancel >= 0) em.prod(s, L.cancel, p2(g.Ef, true));
        else em.c(s, p2(g.Ef, true));
        em.emit(std::string("fa/") + L.name + (neg ? "/-/" : "/+/") + std::to_string(j), s);
      }
  //   fx/13|15/+-/j   big = 2^Ef in slot 0 (the odd set: positions 0, 2, ...), two small terms
  //                   +-1.5*2^(Ef-j-1) in slots 1 and 3 (positions 1 and 3 without
  //                   pair-interleave) or 1 and 5 (with it): the even set. c cancels big. One
  //                   adder cuts each small term on its own; odd-even sums them exactly and
  //                   rounds their partial sum down once (partial_frac).
  const char* names[2] = {"13", "15"};
  const int second[2] = {3, 5};
  for (int v = 0; v < 2; ++v)
    for (int neg = 0; neg < 2; ++neg)
      for (int j = 2; j <= J; ++j) {
        auto s = em.blank();
        em.prod(s, 0, p2(g.Ef));
        em.prod(s, 1, vm(3, g.Ef - j - 1, neg), true);
        em.prod(s, second[v], vm(3, g.Ef - j - 1, neg), true);
        em.c(s, p2(g.Ef, true));
        em.emit(std::string("fx/") + names[v] + (neg ? "/-/" : "/+/") + std::to_string(j), s);
      }
}

// --- several small terms in the set of the big one (odd-even adders round the partial sums down
// at partial_frac after each term was cut at F; with one small term the coarser cut hides F):
//   fm/L/+-/j    big = 2^Ef in slot 0, cancel -2^Ef in slot 1, small terms +-2^(Ef-j) in the
//                two slots of L ("24": slots 2 and 4; "48": slots 4 and 8, the same set under
//                pair-interleaved k order)
void emit_align_multi(Emitter& em) {
  const Geo& g = em.g;
  const int J = align_sweep_max(g, g.Ef);
  const struct { const char* n; int a, b; } lay[2] = {{"24", 2, 4}, {"48", 4, 8}};
  for (const auto& L : lay)
    for (int neg = 0; neg < 2; ++neg)
      for (int j = 1; j <= J; ++j) {
        auto s = em.blank();
        em.prod(s, 0, p2(g.Ef));
        em.prod(s, 1, p2(g.Ef, true));
        em.prod(s, L.a, p2(g.Ef - j, neg), true);
        em.prod(s, L.b, p2(g.Ef - j, neg), true);
        em.emit(std::string("fm/") + L.n + (neg ? "/-/" : "/+/") + std::to_string(j), s);
        // 3*2^(Ef-j-2) and 2^(Ef-j-2): their sum 2^(Ef-j) lies on a coarser grid than either
        s = em.blank();
        em.prod(s, 0, p2(g.Ef));
        em.prod(s, 1, p2(g.Ef, true));
        em.prod(s, L.a, vm(3, g.Ef - j - 2, neg), true);
        em.prod(s, L.b, p2(g.Ef - j - 2, neg), true);
        em.emit(std::string("fm/") + L.n + (neg ? "/3-/" : "/3+/") + std::to_string(j), s);
      }
}

// --- c below the products (4.3.1: p1 = +-1, c = +-(2^-24 + 2^-24-j); 4.3.4: c dropped beyond
// 25 bits): p1 = 2^Ef, p2 = -2^Ef (the sum is 0 but e_max = Ef), c = +-2^(Ef-j) ("1") or
// +-(1+2^-mO)*2^(Ef-j) ("m"): d = c as the c-aligner kept it (truncated or rounded down at
// c_frac / F, or dropped beyond c_drop_gap).
void emit_c_below(Emitter& em) {
  const Geo& g = em.g;
  const int J = std::max(0, std::min(200, g.Ef - g.O.emin()));
  for (int neg = 0; neg < 2; ++neg)
    for (int j = 1; j <= J; ++j) {
      auto s = em.blank();
      em.prod(s, 0, p2(g.Ef));
      em.prod(s, 1, p2(g.Ef, true));
      em.c(s, p2(g.Ef - j, neg));
      em.emit(std::string("cl/") + (neg ? "-" : "+") + "/1/" + std::to_string(j), s);
      if (j > 64) continue;
      s = em.blank();
      em.prod(s, 0, p2(g.Ef));
      em.prod(s, 1, p2(g.Ef, true));
      em.c(s, vm((u128{1} << g.mO) + 1, g.Ef - j - g.mO, neg));
      em.emit(std::string("cl/") + (neg ? "-" : "+") + "/m/" + std::to_string(j), s);
    }
}

// --- the same beyond the gaps cl reaches: p1 = 2^pmax, p2 = -2^pmax (the largest products),
// c = +-2^(pmax-j) for the gaps up to pmax - emin_out (c_drop_gap):
//   clx/+-/j
void emit_c_below_far(Emitter& em) {
  const Geo& g = em.g;
  const int top = g.pmax;
  const int j0 = std::max(1, std::min(200, g.Ef - g.O.emin()) + 1);  // beyond cl's gaps
  for (int neg = 0; neg < 2; ++neg)
    for (int j = std::max(1, j0 - 4); j <= top - g.O.emin() && j <= 400; ++j) {
      auto s = em.blank();
      em.prod(s, 0, p2(top));
      em.prod(s, 1, p2(top, true));
      em.c(s, p2(top - j, neg));
      em.emit(std::string("clx/") + (neg ? "-" : "+") + "/" + std::to_string(j), s);
    }
}

// --- c above the products (4.3.1: c = 1, p sum = -(2^-24 + S(26,30+j)), RD at the 32nd bit):
//   ch/L/+-/j    c = 2^Ec, two products -2^(Ec-1) (they cancel c exactly but e_max = Ec-1 <
//                e_c), small = +-2^(Ec-j): d = the small term as kept (early c: cut at F below
//                Ec; late c: cut at F below Ec-1, then rounded down at sum_frac below Ec)
//   ch2/L/+-/j   two small terms +-1.5*2^(Ec-j-1): cut one by one (early) or their sum once
void emit_c_above(Emitter& em) {
  const Geo& g = em.g;
  const int J = std::max(0, std::min({64, g.Ec - 2 - g.psub, g.Ec - (g.O.emin() - g.mO)}));
  struct L3 { const char* name; int x, y, z, w; };
  const L3 lay[2] = {{"0123", 0, 1, 2, 3}, {"0145", 0, 1, 4, 5}};
  for (const L3& L : lay)
    for (int neg = 0; neg < 2; ++neg)
      for (int j = 1; j <= J; ++j) {
        auto s = em.blank();
        em.c(s, p2(g.Ec));
        em.prod(s, L.x, p2(g.Ec - 1, true));
        em.prod(s, L.y, p2(g.Ec - 1, true));
        em.prod(s, L.z, p2(g.Ec - j, neg), true);
        em.emit(std::string("ch/") + L.name + (neg ? "/-/" : "/+/") + std::to_string(j), s);
        if (j < 2) continue;
        s = em.blank();
        em.c(s, p2(g.Ec));
        em.prod(s, L.x, p2(g.Ec - 1, true));
        em.prod(s, L.y, p2(g.Ec - 1, true));
        em.prod(s, L.z, vm(3, g.Ec - j - 1, neg), true);
        em.prod(s, L.w, vm(3, g.Ec - j - 1, neg), true);
        em.emit(std::string("ch2/") + L.name + (neg ? "/-/" : "/+/") + std::to_string(j), s);
      }
}

}  // namespace

FeatureVectors feature_vectors(const Format& a, const Format& b, const Format& out, int K,
                               const std::string& type) {
  if (K < 2 || K > 64) throw std::invalid_argument("feature_vectors: K must be in 2..64");
  // The probes build their terms from operands of at least 8 bits (the output rounding's sticky
  // patterns, the alignment windows): with an fp6/fp4 operand they would not decide the fields
  // and the answer could mislead.
  for (const Format* f : {&a, &b})
    if (f->width() < 8)
      throw std::invalid_argument("features: the probes need operand formats of 8 bits or more; " + f->name +
                                  " (OCP MX fp6/fp4) is not probed yet (issue 27, item 5)");
  FeatureVectors v;
  v.type = type.empty() ? (a == b ? a.name : a.name + "," + b.name) : type;
  v.K = K;
  v.a_fmt = a;
  v.b_fmt = b;
  v.out_fmt = out;
  const Geo g = geometry(a, b, out, K);
  Emitter em(v, g);
  emit_specials(em);
  emit_subin(em);
  emit_precision(em);
  emit_ties(em);
  emit_subout(em);
  emit_structure(em);
  emit_final_round(em);
  emit_align(em);
  emit_align_multi(em);
  emit_c_below(em);
  emit_c_below_far(em);
  emit_c_above(em);
  emit_acc(em);
  emit_c_alone(em);
  emit_cancel_tiny(em);
  emit_prodnorm(em);
  emit_prodround(em);
  emit_floors(em);
  emit_prodoverflow(em);
  emit_overflow(em);
  return v;
}

}  // namespace mc