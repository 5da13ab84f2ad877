// matcore: feature detection from fixed probe vectors (section 4 of the paper, generalised).
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

namespace mc {

namespace {

// =============================================================================================
// 1. Exact values.
// =============================================================================================

/// (-1)^neg * m * 2^e.
struct Val {
  bool neg = false;
  u128 m = 0;
  int e = 0;
};
Val p2(int e, bool neg = false) { return Val{neg, 1, e}; }
Val vm(u128 m, int e, bool neg = false) { return Val{neg, m, e}; }

void norm(u128& m, int& e) {
  if (m == 0) return;
  while ((m & 1) == 0) {
    m >>= 1;
    ++e;
  }
}

bool same_value(u128 m1, int e1, u128 m2, int e2) {
  if (m1 == 0 || m2 == 0) return m1 == m2;
  norm(m1, e1);
  norm(m2, e2);
  return m1 == m2 && e1 == e2;
}

/// The exact encoding of x in f, if there is one (subnormals only with allow_sub).
bool encode(const Format& f, const Val& x, uint64_t& out, bool allow_sub = true) {
  if (x.m == 0) {
    out = zero_bits(f, x.neg);
    return true;
  }
  const Exact ex{x.neg, x.m, x.e, false};
  const uint64_t r = round_to_format(f, ex, RoundOpts{Rounding::RNE, true, -1, false});
  const Unpacked u = decode(f, r);
  if (u.cls != Class::Normal && u.cls != Class::Subnormal) return false;
  if (u.cls == Class::Subnormal && !allow_sub) return false;
  if (u.sign != x.neg) return false;
  if (!same_value(u.sig, u.exp - u.mbits, x.m, x.e)) return false;
  out = r;
  return true;
}

int bitlen(u128 x) { return msb_index(x) + 1; }

/// a = fa * 2^ea in A, b = fb * 2^eb in B with ea + eb = e (the product fa*fb*2^e, sign on a),
/// the exponents balanced so that both operands are as close to 1 as possible.
bool pair_product(const Format& A, const Format& B, u128 fa, u128 fb, int e, bool neg,
                  bool allow_sub, uint64_t& a, uint64_t& b) {
  const int la_lo = A.emin() - (allow_sub ? A.mbits : 0), la_hi = A.emax();
  const int lb_lo = B.emin() - (allow_sub ? B.mbits : 0), lb_hi = B.emax();
  const int sum = e + bitlen(fa) + bitlen(fb) - 2;  // la + lb (leading-bit exponents)
  // the leading exponents closest to sum/2 first (operands as close to 1 as possible)
  const int lo = std::max(la_lo, sum - lb_hi), hi = std::min(la_hi, sum - lb_lo);
  if (lo > hi) return false;
  const int mid = std::min(hi, std::max(lo, sum >= 0 ? sum / 2 : -((-sum + 1) / 2)));
  for (int dist = 0; mid - dist >= lo || mid + dist <= hi; ++dist)
    for (int la : {mid - dist, mid + dist}) {
      if (la < lo || la > hi || (dist == 0 && la != mid)) continue;
      uint64_t ta, tb;
      if (!encode(A, Val{neg, fa, la - bitlen(fa) + 1}, ta, allow_sub)) continue;
      if (!encode(B, Val{false, fb, sum - la - bitlen(fb) + 1}, tb, allow_sub)) continue;
      a = ta;
      b = tb;
      return true;
    }
  return false;
}

/// Splits a product value into a_i * b_i exactly: one operand carries the significand (or a
/// factor pair of it), normal operands preferred.
bool split_product(const Format& A, const Format& B, Val p, bool allow_sub, uint64_t& a,
                   uint64_t& b) {
  if (p.m == 0) {
    a = zero_bits(A, false);
    b = zero_bits(B, false);
    return true;
  }
  norm(p.m, p.e);
  std::vector<std::pair<u128, u128>> pairs{{p.m, 1}, {1, p.m}};
  for (u128 f = 3; f < 4096 && f * f <= p.m; f += 2)
    if (p.m % f == 0) {
      pairs.emplace_back(f, p.m / f);
      pairs.emplace_back(p.m / f, f);
    }
  for (int pass = 0; pass < (allow_sub ? 2 : 1); ++pass)
    for (const auto& fb : pairs)
      if (pair_product(A, B, fb.first, fb.second, p.e, p.neg, pass == 1, a, b)) return true;
  return false;
}

// =============================================================================================
// 2. Geometry.
// =============================================================================================

/// The output precisions whose P-dependent probes are emitted: all bits, and for binary32 also
/// e8m13 (13 bits, NVIDIA fp8).
std::vector<int> precisions(const Format& O) {
  if (O == kBinary32) return {23, 13};
  return {O.mbits};
}

struct Geo {
  Format A, B, O;
  int K = 0;
  int mA = 0, mB = 0, mO = 0;
  int pmin = 0;  ///< exponent of the smallest product of normal operands (and the least
                 ///< exponent any product is aligned with: subnormals decode with emin)
  int psub = 0;  ///< lsb exponent of the smallest product (subnormal operands)
  int pmax = 0;  ///< exponent of the largest power-of-two product
  int E = 0, Ef = 0, Ec = 0;
  std::vector<int> pset;
};

Geo geometry(const Format& A, const Format& B, const Format& O, int K) {
  Geo g;
  g.A = A;
  g.B = B;
  g.O = O;
  g.K = K;
  g.mA = A.mbits;
  g.mB = B.mbits;
  g.mO = O.mbits;
  g.pmin = A.emin() + B.emin();
  g.psub = (A.emin() - A.mbits) + (B.emin() - B.mbits);
  g.pmax = A.emax() + B.emax();
  // E: products needed from E - mO - 3 to E + 1, outputs normal from E - mO - 3 to E + 2.
  const int lo = std::max(g.pmin + g.mO + 3, O.emin() + g.mO + 3);
  const int hi = std::min(g.pmax - 1, O.emax() - 2);
  if (lo <= 0 && 0 <= hi) g.E = 0;
  else if (lo > 0 && lo <= hi) g.E = lo;
  else if (hi < 0 && lo <= hi) g.E = hi;
  else g.E = hi;  // best effort: some probes will not be constructible
  g.Ef = std::min(g.pmax, O.emax());
  g.Ec = std::min(g.pmax + 1, O.emax() - 2);
  g.pset = precisions(O);
  return g;
}

/// Slots in the order the model consumes them (pair_interleave: k mod 4 in {0,1} first).
std::vector<int> slot_order(int K, bool pi) {
  std::vector<int> o;
  if (!pi || K <= 2) {
    for (int k = 0; k < K; ++k) o.push_back(k);
    return o;
  }
  for (int pass = 0; pass < 2; ++pass)
    for (int k = 0; k < K; ++k)
      if (((k >> 1) & 1) == pass) o.push_back(k);
  return o;
}

std::string pname(int P) { return "P" + std::to_string(P); }

// =============================================================================================
// 3. Probe families.
// =============================================================================================

class Emitter {
 public:
  struct Smp {
    std::vector<uint64_t> a, b;
    uint64_t c = 0;
    bool ok = true;
  };
  Emitter(FeatureVectors& v, const Geo& g) : v_(v), g(g) {}

  Smp blank() const {
    Smp s;
    s.a.assign(g.K, zero_bits(g.A, false));
    s.b.assign(g.K, zero_bits(g.B, false));
    s.c = zero_bits(g.O, false);
    return s;
  }
  /// a_slot * b_slot = p exactly.
  void prod(Smp& s, int slot, const Val& p, bool allow_sub = false) const {
    if (slot < 0 || slot >= g.K) { s.ok = false; return; }
    if (!split_product(g.A, g.B, p, allow_sub, s.a[slot], s.b[slot])) s.ok = false;
  }
  /// a = fa * 2^?, b = fb * 2^? with product fa*fb*2^e (fa, fb odd significands).
  void prod2(Smp& s, int slot, u128 fa, u128 fb, int e, bool neg) const {
    if (slot < 0 || slot >= g.K) { s.ok = false; return; }
    if (!pair_product(g.A, g.B, fa, fb, e, neg, false, s.a[slot], s.b[slot])) s.ok = false;
  }
  void raw(Smp& s, int slot, uint64_t a, uint64_t b) const {
    if (slot < 0 || slot >= g.K) { s.ok = false; return; }
    s.a[slot] = a;
    s.b[slot] = b;
  }
  void c(Smp& s, const Val& x, bool allow_sub = false) const {
    if (!encode(g.O, x, s.c, allow_sub)) s.ok = false;
  }
  void cbits(Smp& s, uint64_t bits) const { s.c = bits; }
  /// Adds the sample if every value of it was constructible.
  void emit(const std::string& name, const Smp& s) {
    if (!s.ok) return;
    v_.a.insert(v_.a.end(), s.a.begin(), s.a.end());
    v_.b.insert(v_.b.end(), s.b.begin(), s.b.end());
    v_.c.push_back(s.c);
    v_.probe.push_back(name);
  }

 private:
  FeatureVectors& v_;

 public:
  const Geo& g;
};

uint64_t one_bits(const Format& f, bool neg) {
  uint64_t r = 0;
  encode(f, p2(0, neg), r);
  return r;
}

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
  // A product NaN of a chosen sign: the sign of a NaN product is sign(a) xor sign(b).
  auto nan_prod = [&](Emitter::Smp& x, int slot, bool neg) {
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

// Layouts of (big, small, cancel) terms: the digits are slots, 'c' is the addend c.
struct Layout {
  const char* name;
  int big, small, cancel;  // cancel < 0: c
};
const Layout kAlignLayouts[] = {
    {"021", 0, 2, 1}, {"041", 0, 4, 1}, {"02c", 0, 2, -1}, {"04c", 0, 4, -1}, {"01c", 0, 1, -1}};

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

// --- the round-downs of the late c-aligner when c is above the products (4.3.1: c = 1 and
// p sum = -(2^-24 + S(26,30+j)): RD at the 32nd bit; c = 2-2^-22, p1 = 2^-22, p2 = 2^-23+2^-j:
// RD of the normalised sum at the 31st). A tip t*2^(Ec-j) far below the output precision: d
// shows whether it survived the round-downs (sum_frac below e_c = Ec, acc_frac below the
// normalised leading bit L of S_acc). The tip is made visible by a tie against the final
// rounding (kind t, for round-to-nearest) or by a sum exactly on the output grid (kind g, for
// the directed roundings: a dropped positive tip leaves a negative sum on the grid, a kept one
// moves it toward zero). Three positions of L, for c = s*... and products (slot x = 2 or 4, the
// tip's slot without / with pair-interleaved k order):
//   ac/P/ft|fg|fc/..  L = Ec:   c = s*2^Ec, tie s*2^(Ec-P-1)      | c = s*1.5*2^Ec
//                              | the tie inside c: c = s*(2^Ec + 2^(Ec-P-1)) (P < mO)
//   ac/P/nt|ng/x/..   L = Ec-1: c = s*2^Ec, -s*2^(Ec-P), (tie s*2^(Ec-P-2))
//   ac/P/xt|xg/x/..   L = Ec+1: c = s*(2^(Ec+1) - 2^(Ec-mO)), s*2^(Ec-mO), s*2^(Ec-P) (tie)
//                              | s*2^(Ec+1-P) (one ulp: on the grid)
void emit_acc(Emitter& em) {
  const Geo& g = em.g;
  const int Ec = g.Ec;
  for (int P : g.pset) {
    const int J = std::max(0, std::min(72, Ec - g.psub));
    const std::string pp = "ac/" + pname(P) + "/";
    for (int sg = 0; sg < 2; ++sg)
      for (int tg = 0; tg < 2; ++tg) {
        const std::string st = std::string(sg ? "-" : "+") + (tg ? "-" : "+");
        for (int j = P + 2; j <= J; ++j) {
          const std::string tail = "/" + st + "/" + std::to_string(j);
          const Val tip = p2(Ec - j, tg);
          auto s = em.blank();
          em.c(s, p2(Ec, sg));
          em.prod(s, 0, p2(Ec - P - 1, sg), true);
          em.prod(s, 1, tip, true);
          em.emit(pp + "ft/-" + tail, s);
          s = em.blank();
          em.c(s, vm(3, Ec - 1, sg));
          em.prod(s, 0, tip, true);
          em.emit(pp + "fg/-" + tail, s);
          if (P + 1 <= g.mO) {
            s = em.blank();
            em.c(s, vm((u128{1} << (P + 1)) + 1, Ec - P - 1, sg));
            em.prod(s, 0, tip, true);
            em.emit(pp + "fc/-" + tail, s);
          }
          for (int x : {2, 4}) {
            const std::string xs = "/" + std::to_string(x);
            s = em.blank();
            em.c(s, p2(Ec, sg));
            em.prod(s, 0, p2(Ec - P, !sg), true);
            em.prod(s, 1, p2(Ec - P - 2, sg), true);
            em.prod(s, x, tip, true);
            em.emit(pp + "nt" + xs + tail, s);
            s = em.blank();
            em.c(s, p2(Ec, sg));
            em.prod(s, 0, p2(Ec - P, !sg), true);
            em.prod(s, x, tip, true);
            em.emit(pp + "ng" + xs + tail, s);
            for (int gk = 0; gk < 2; ++gk) {
              s = em.blank();
              em.c(s, vm((u128{1} << (g.mO + 1)) - 1, Ec - g.mO, sg));
              em.prod(s, 0, p2(Ec - g.mO, sg), true);
              em.prod(s, 1, p2(gk ? Ec + 1 - P : Ec - P, sg), true);
              em.prod(s, x, tip, true);
              em.emit(pp + (gk ? "xg" : "xt") + xs + tail, s);
            }
          }
        }
      }
  }
}

// --- c alone (every product 0): ca/s<form>/k, c = s*(2^Ec + 2^(Ec-k)) (form +) or
// s*(2^Ec - 2^(Ec-k)) (form -, one binade lower): a late-c unit rounds it down to acc_frac bits
// after the normalisation; an early-c unit cuts it at F below its own exponent.
void emit_c_alone(Emitter& em) {
  const Geo& g = em.g;
  for (int sg = 0; sg < 2; ++sg)
    for (int form = 0; form < 2; ++form)
      for (int k = 1; k <= g.mO; ++k) {
        auto s = em.blank();
        const Val c = form ? Val{sg == 1, (u128{1} << k) - 1, g.Ec - k}
                           : Val{sg == 1, (u128{1} << k) + 1, g.Ec - k};
        em.c(s, c);
        em.emit(std::string("ca/") + (sg ? "-" : "+") + (form ? "-" : "+") + "/" + std::to_string(k), s);
      }
}

// --- a sum cancelled to a tiny remainder below the smallest normal: czs/x/st/k, c = s*2^emin,
// p1 = p2 = -s*2^(emin-1), px = t*2^(emin-k) (x = 2 or 4): the remainder passes the
// subnormal-aware normalisation's round-down at emin - acc_frac (a positive remainder cut to
// exactly 0 is -0 under RD; otherwise it rounds to +0 or the output's smallest subnormal)
void emit_cancel_tiny(Emitter& em) {
  const Geo& g = em.g;
  const int emin = g.O.emin();
  for (int x : {2, 4})
    for (int sg = 0; sg < 2; ++sg)
      for (int tg = 0; tg < 2; ++tg)
        for (int k = 1; k <= 40; ++k) {
          auto s = em.blank();
          em.c(s, p2(emin, sg));
          em.prod(s, 0, p2(emin - 1, !sg), true);
          em.prod(s, 1, p2(emin - 1, !sg), true);
          em.prod(s, x, p2(emin - k, tg), true);
          em.emit("czs/" + std::to_string(x) + "/" + (sg ? "-" : "+") + (tg ? "-" : "+") + "/" +
                      std::to_string(k),
                  s);
        }
}

// --- unnormalised products in the aligner (4.3.1: p1 = 2.25 from 1.5*1.5 keeps 2^-24 terms that
// a normalised 2.25 would cut): big = +-1.5*1.5*2^(Ef-1) (exponent Ef-1 unnormalised, Ef
// normalised), small = 2^(Ef-1-j):
//   pn/L/+-/j    cancel = -big in another slot: d = small while kept
//   pnc/P/st/j   p1 = s*big, p2 = t*2^(Ef-1-j), c = s*2^(Ef-P-1) (a tie against the result)
void emit_prodnorm(Emitter& em) {
  const Geo& g = em.g;
  const int J = std::max(0, std::min({64, g.Ef - 1 - g.psub, g.Ef - 1 - (g.O.emin() - g.mO)}));
  const Layout lay[2] = {{"021", 0, 2, 1}, {"041", 0, 4, 1}};
  for (const Layout& L : lay)
    for (int neg = 0; neg < 2; ++neg)
      for (int j = 1; j <= J; ++j) {
        auto s = em.blank();
        em.prod2(s, L.big, 3, 3, g.Ef - 3, false);
        em.prod2(s, L.cancel, 3, 3, g.Ef - 3, true);
        em.prod(s, L.small, p2(g.Ef - 1 - j, neg), true);
        em.emit(std::string("pn/") + L.name + (neg ? "/-/" : "/+/") + std::to_string(j), s);
      }
  // pnt/s/j: c = -s*2^(Ef-1-j), p1 = big, p2 = s*2^(Ef-1-j): c and p2 cancel exactly unless one
  // of them is cut (a negative one rounded down by one unit): the round-down alignment shows
  // under every output rounding
  for (int sg = 0; sg < 2; ++sg)
    for (int j = 1; j <= std::min(J, 48); ++j) {
      auto s = em.blank();
      em.prod2(s, 0, 3, 3, g.Ef - 3, false);
      em.prod(s, 1, p2(g.Ef - 1 - j, sg), true);
      em.c(s, p2(g.Ef - 1 - j, !sg), true);
      em.emit(std::string("pnt/") + (sg ? "-" : "+") + "/" + std::to_string(j), s);
    }
  for (int P : g.pset)
    for (int sg = 0; sg < 2; ++sg)
      for (int tg = 0; tg < 2; ++tg)
        for (int j = std::max(1, P - 2); j <= std::min(J, 48); ++j) {
          auto s = em.blank();
          em.prod2(s, 0, 3, 3, g.Ef - 3, sg);
          em.prod(s, 1, p2(g.Ef - 1 - j, tg), true);
          em.c(s, p2(g.Ef - P - 1, sg), true);
          em.emit("pnc/" + pname(P) + "/" + (sg ? "-" : "+") + (tg ? "-" : "+") + "/" +
                      std::to_string(j),
                  s);
          // without the tie: big is on the output grid (directed roundings see the tip)
          s = em.blank();
          em.prod2(s, 0, 3, 3, g.Ef - 3, sg);
          em.prod(s, 1, p2(g.Ef - 1 - j, tg), true);
          em.emit("pnc/" + pname(P) + "/g" + (sg ? "-" : "+") + (tg ? "-" : "+") + "/" +
                      std::to_string(j),
                  s);
        }
}

// --- products rounded to the output format before the adder (4.1.3 / 4.2.2):
//   pr/bits/x   p1 = (1+2^-mA)(1+2^-mB)*2^E (more bits than the output may hold) cancelled by
//               -2^E in slot 2 ("p") or in c ("c")
//   pr/tiny/..  the paper's 2^-148+2^-150 and 2^-149 at the output's subnormal grid
void emit_prodround(Emitter& em) {
  const Geo& g = em.g;
  for (int cv = 0; cv < 2; ++cv) {
    auto s = em.blank();
    if (!pair_product(g.A, g.B, (u128{1} << g.mA) + 1, (u128{1} << g.mB) + 1,
                      g.E - g.mA - g.mB, false, false, s.a[0], s.b[0]))
      s.ok = false;
    if (cv) em.c(s, p2(g.E, true));
    else em.prod(s, 1, p2(g.E, true));
    em.emit(std::string("pr/bits/") + (cv ? "c" : "p"), s);
  }
  // p1 = (1+2^-mA)(1+2^-k)*2^E with k such that p1 needs mO+2 bits, cancelled down to its two
  // low bits by -2^E - 2^(E-k) (slots 2, 3, or c): the rounded product has lost the lowest one
  {
    const int k = std::max(1, g.mO + 2 - g.mA);
    if (k <= g.mB && k <= g.mO) {
      for (int cv = 0; cv < 2; ++cv) {
        auto s = em.blank();
        if (!pair_product(g.A, g.B, (u128{1} << g.mA) + 1, (u128{1} << k) + 1, g.E - g.mA - k,
                          false, false, s.a[0], s.b[0]))
          s.ok = false;
        if (cv) {
          em.c(s, Val{true, (u128{1} << k) + 1, g.E - k});
        } else {
          em.prod(s, 1, p2(g.E, true));
          em.prod(s, 2, p2(g.E - k, true));
        }
        em.emit(std::string("pr/bits2/") + (cv ? "c" : "p"), s);
      }
    }
  }
  const int sg = g.O.emin() - g.mO;  // the output's subnormal grid (all bits)
  const struct { const char* n; u128 m1; int e1; } tiny[4] = {
      {"a", 3, sg - 1}, {"b", 5, sg - 1}, {"c", 3, sg - 2}, {"d", 7, sg - 2}};
  for (const auto& t : tiny)
    for (int cv = 0; cv < 2; ++cv) {
      auto s = em.blank();
      em.prod(s, cv ? 0 : g.K - 2, vm(t.m1, t.e1), true);
      if (cv) em.c(s, p2(sg), true);
      else em.prod(s, g.K - 1, p2(sg), true);
      em.emit(std::string("pr/tiny/") + t.n + (cv ? "c" : "p"), s);
    }
  // A product with a bit half a step below the output's subnormal grid: p1 = -(2^e + 2^(sg-1)),
  // e = sg - 1 + mA, cancelled to -2^(sg-1) by +2^e: rounded first it loses that bit (every
  // rounding mode then sees -tiny against 0, by its value or by the sign of the zero)
  {
    const int e = sg - 1 + g.mA;
    for (int cv = 0; cv < 2; ++cv) {
      auto s = em.blank();
      em.prod(s, cv ? 0 : g.K - 2, Val{true, (u128{1} << g.mA) + 1, sg - 1}, true);
      if (cv) em.c(s, p2(e), true);
      else em.prod(s, g.K - 1, p2(e), true);
      em.emit(std::string("pr/tn/") + (cv ? "c" : "p"), s);
    }
  }
  // The smallest products of normal operands with all their bits: (1+2^-mA)(1+2^-mB)*2^pmin in
  // the last slot, alone ("1") or less (1+2^-mA)*2^pmin ("p"): when the output's subnormal grid
  // cannot hold its lowest bit, rounding it first changes the result (DAZ cannot hide it)
  for (int two = 0; two < 2; ++two) {
    auto s = em.blank();
    if (!pair_product(g.A, g.B, (u128{1} << g.mA) + 1, (u128{1} << g.mB) + 1,
                      g.pmin - g.mA - g.mB, false, false, s.a[g.K - 1], s.b[g.K - 1]))
      s.ok = false;
    if (two && !pair_product(g.A, g.B, (u128{1} << g.mA) + 1, 1, g.pmin - g.mA, true, false,
                             s.a[g.K - 2], s.b[g.K - 2]))
      s.ok = false;
    em.emit(std::string("pr/tinyn/") + (two ? "p" : "1"), s);
  }
  // Flush to zero of a rounded product: p1 = p2 = 2^(emin_out - 1) (subnormal products whose sum
  // is normal), and c = 2^emin_out with p1 = 2^(emin_out - 1).
  {
    auto s = em.blank();
    em.prod(s, g.K - 2, p2(g.O.emin() - 1), true);
    em.prod(s, g.K - 1, p2(g.O.emin() - 1), true);
    em.emit("pr/ftz/p", s);
    s = em.blank();
    em.c(s, p2(g.O.emin()));
    em.prod(s, 0, p2(g.O.emin() - 1), true);
    em.emit("pr/ftz/c", s);
  }
  // Near the top of the output range: p1 = (1+2^-mA)*2^x with x the output's largest exponent.
  auto s = em.blank();
  em.prod(s, 0, vm((u128{1} << g.mA) + 1, g.O.emax() - g.mA));
  em.prod(s, 1, p2(g.O.emax(), true));
  em.emit("pr/top/p", s);
}

// --- the alignment floor and the exponent of c = 0 (4.3.2: c = 0, p1 = +-2^-150,
// p2 = +-2^(-152-i): d = 2^-149 for i < 6 -> the products are aligned at no less than -132 /
// -126). Tiny sums whose largest exponent lies below the floor lose their low bits at the floor
// minus F. With the output's grid g = 2^(max(x, emin) - P) at the sum's magnitude 2^x:
//   tz/P/c0/x<X>/<k><st>/i   c = 0; base s*2^X on the grid, for k = t also a tie s*g/2, and a
//                            tip t*2^(t0 - i) below them (t0: the tie's or the grid's exponent);
//                            the products in the last slots (a tiny result of an earlier group
//                            would be c = 0 ... a subnormal c of the next group: kept, but the
//                            last group shows it directly)
//   tz/P/cn/<k><st>/i        c = s*2^emin (normal, exponent emin), [tie], tip: the floor acts
//                            with c != 0 only above emin
//   tz1/c0|cn/+-/x           one product +-2^x (c = 0, or c = +-2^emin): directed roundings
//                            see any surviving bit
void emit_floors(Emitter& em) {
  const Geo& g = em.g;
  const int emin = g.O.emin();
  const int K = g.K;
  for (int P : g.pset) {
    const std::string pp = "tz/" + pname(P);
    for (int sg = 0; sg < 2; ++sg)
      for (int tg = 0; tg < 2; ++tg) {
        const std::string st = std::string(sg ? "-" : "+") + (tg ? "-" : "+");
        for (int i = 1; i <= 36; ++i) {
          const std::string tail = st + "/" + std::to_string(i);
          for (int X : {emin - P - 1, emin - P, emin - P + 6, emin - P + 12, emin - P + 18, emin - 2}) {
            const int ge = std::max(X, emin) - P;  // exponent of the grid at the sum
            const std::string xs = "/c0/x" + std::to_string(X - emin) + "/";
            auto s = em.blank();
            em.prod(s, K - 2, p2(X, sg), true);
            em.prod(s, K - 1, p2(ge - i, tg), true);
            em.emit(pp + xs + "g" + tail, s);
            for (int v = 0; v < 2 && !sg; ++v) {  // ties: round-to-nearest is symmetric
              s = em.blank();
              em.prod(s, v ? K - 5 : K - 3, p2(X, sg), true);
              em.prod(s, K - 2, p2(ge - 1, sg), true);
              em.prod(s, K - 1, p2(ge - 1 - i, tg), true);
              em.emit(pp + xs + (v ? "tb" : "ta") + tail, s);
            }
          }
          auto s = em.blank();
          em.c(s, p2(emin, sg));
          em.prod(s, 0, p2(emin - P - i, tg), true);
          em.emit(pp + "/cn/g" + tail, s);
          s = em.blank();
          em.c(s, p2(emin, sg));
          em.prod(s, 0, p2(emin - P - 1, sg), true);
          em.prod(s, 1, p2(emin - P - 1 - i, tg), true);
          em.emit(pp + "/cn/t" + tail, s);
        }
      }
  }
  // Late c with c = 0: a sum whose largest exponent X lies below e_c=0 goes through the c-aligner's
  // round-downs, one at or above it does not. The difference shows only for X close to where
  // the F window reaches below those round-downs, so X is swept densely:
  //   tzd/P/X/+-/i   c = 0, p = 2^X, a tie 2^(emin-P-1) against the subnormal grid, a tip
  //                  +-2^(X-i) (i = 10 .. 34: about F below X)
  for (int P : g.pset)
    for (int X = emin - 30; X <= emin - 1; ++X)
      for (int tg = 0; tg < 2; ++tg)
        for (int i = 10; i <= 34; ++i) {
          auto s = em.blank();
          em.prod(s, K - 3, p2(X), true);
          em.prod(s, K - 2, p2(emin - P - 1), true);
          em.prod(s, K - 1, p2(X - i, tg), true);
          em.emit("tzd/" + pname(P) + "/" + std::to_string(X - emin) + (tg ? "/-/" : "/+/") +
                      std::to_string(i),
                  s);
        }
  //   tzd2/P/X/v/+-/i  the same for sums that reach the normal range: two products 2^X (X just
  //                    below emin), a tie against 2^(X+1), the tip 2^(X-i); the last four slots
  //                    (v = a: K-4..K-1, b: K-6, K-5, K-2, K-1 for pair-interleaved order)
  for (int P : g.pset)
    for (int X = emin - 4; X <= emin - 1; ++X)
      for (int v = 0; v < 2; ++v)
        for (int tg = 0; tg < 2; ++tg)
          for (int i = 10; i <= 34; ++i) {
            auto s = em.blank();
            em.prod(s, v ? K - 6 : K - 4, p2(X), true);
            em.prod(s, v ? K - 5 : K - 3, p2(X), true);
            em.prod(s, K - 2, p2(X - P), true);
            em.prod(s, K - 1, p2(X - i, tg), true);
            em.emit("tzd2/" + pname(P) + "/" + std::to_string(X - emin) + (v ? "/b" : "/a") +
                        (tg ? "/-/" : "/+/") + std::to_string(i),
                    s);
          }
  for (int cn = 0; cn < 2; ++cn)
    for (int neg = 0; neg < 2; ++neg)
      for (int x = emin + 2; x >= std::max(g.psub, emin - 90); --x) {
        auto s = em.blank();
        if (cn) em.c(s, p2(emin, neg));
        em.prod(s, cn ? 0 : K - 1, p2(x, neg), true);
        em.emit(std::string("tz1/") + (cn ? "cn" : "c0") + (neg ? "/-/" : "/+/") +
                    std::to_string(x),
                s);
      }
}

// --- product overflow (4.3.2: |p| >= 2^128 -> Inf; 1.5*2^64 * 1.5*2^63 = 2.25*2^127 too):
//   po/e      p1 = 2^e, p2 = -2^e: 0, or NaN (Inf - Inf) when the products overflow
//   po/m/e    the same with 2.25*2^e = 1.5*2^ea * 1.5*2^eb: exponent e, magnitude above 2^(e+1)
//   po/max    the largest products
void emit_prodoverflow(Emitter& em) {
  const Geo& g = em.g;
  const int hi = g.pmax;
  const int lo = std::max(g.pmin, std::min(hi, g.O.emax() + 1) - 10);
  for (int e = lo; e <= hi; ++e) {
    if (e > lo + 40 && e < hi - 2) continue;  // the output's range and the products' top
    auto s = em.blank();
    em.prod(s, 0, p2(e));
    em.prod(s, 1, p2(e, true));
    em.emit("po/" + std::to_string(e), s);
    s = em.blank();
    em.prod2(s, 0, 3, 3, e - 2, false);
    em.prod2(s, 1, 3, 3, e - 2, true);
    em.emit("po/m/" + std::to_string(e), s);
  }
  // the largest products: (2 - 2^-mA)(2 - 2^-mB) * 2^pmax, just below 2^(pmax+2)
  auto s = em.blank();
  const uint64_t mbn = g.B.max_finite_bits() | (uint64_t{1} << (g.B.width() - 1));
  em.raw(s, 0, g.A.max_finite_bits(), g.B.max_finite_bits());
  em.raw(s, 1, g.A.max_finite_bits(), mbn);
  em.emit("po/max", s);
}

// --- overflow of the sum (4.1.1: a1 = a2 = max, b = 1 -> +-Inf; NVIDIA: Inf even in RTZ):
//   ov/pp+-   p1 = p2 = +-2^emax_out (the sum is 2^(emax+1))
//   ov/cp+-   c = +-max_out, p1 = +-2^(emax_out - 8)
void emit_overflow(Emitter& em) {
  const Geo& g = em.g;
  const int em_ = g.O.emax();
  for (int neg = 0; neg < 2; ++neg) {
    auto s = em.blank();
    em.prod(s, 0, p2(em_, neg));
    em.prod(s, 1, p2(em_, neg));
    em.emit(std::string("ov/pp") + (neg ? "-" : "+"), s);
    s = em.blank();
    em.cbits(s, g.O.max_finite_bits() | (neg ? uint64_t{1} << (g.O.width() - 1) : 0));
    em.prod(s, 0, p2(em_ - 8, neg));
    em.emit(std::string("ov/cp") + (neg ? "-" : "+"), s);
    // the two largest products in the last slots, c = 0 (groups that overflow without c)
    s = em.blank();
    const uint64_t sb = uint64_t{1} << (g.B.width() - 1);
    for (int k : {g.K - 2, g.K - 1}) em.raw(s, k, g.A.max_finite_bits(), g.B.max_finite_bits() | (neg ? sb : 0));
    em.emit(std::string("ov/mm") + (neg ? "-" : "+"), s);
  }
}

}  // namespace

FeatureVectors feature_vectors(const Format& a, const Format& b, const Format& out, int K,
                               const std::string& type) {
  if (K < 2 || K > 64) throw std::invalid_argument("feature_vectors: K must be in 2..64");
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

// =============================================================================================
// 5a. Canonical form (used by the decisions to group equivalent candidates, and by the
//     comparison).
// =============================================================================================

namespace {

uint64_t sign_bit(const Format& f) { return uint64_t{1} << (f.width() - 1); }
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
      uint64_t want;
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

}  // namespace mc

// =============================================================================================
// 5b. The table, the comparison, the files.
// =============================================================================================

namespace mc {

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

std::string compare_features(const Datapath& expected, const Datapath& detected) {
  const int K = detected.k_default;
  const Datapath e = canonical_features(expected, K), d = canonical_features(detected, K);
  std::ostringstream os;
  for (const Field& f : datapath_fields()) {  // every numerical field of the field table
    if (!f.numeric) continue;
    const std::string x = f.get(e), y = f.get(d);
    if (x != y) os << f.name << ": expected " << x << ", detected " << y << "\n";
  }
  return os.str();
}

std::string format_feature_table(const DetectedFeatures& f) {
  size_t w = 0;
  for (const auto& r : f.table) w = std::max(w, r.first.size());
  std::ostringstream os;
  for (const auto& r : f.table) os << r.first << std::string(w - r.first.size() + 2, ' ') << r.second << "\n";
  for (const std::string& n : f.notes) os << "note: " << n << "\n";
  return os.str();
}

// --- files ------------------------------------------------------------------------------------

namespace {
uint64_t widen_input(const Format& f, uint64_t bits) {
  if (f == kBinary64 || f == kBinary32) return bits;
  return convert(f, bits, kBinary32, Rounding::RNE);
}
}  // namespace

void emit_feature_vectors(const FeatureVectors& v, const std::string& dir) {
  AbFile a, b;
  a.K = b.K = v.K;
  a.width = b.width = stored_width(v.a_fmt);
  for (uint64_t x : v.a) a.v.push_back(widen_input(v.a_fmt, x));
  for (uint64_t x : v.b) b.v.push_back(widen_input(v.b_fmt, x));
  std::vector<uint64_t> c;
  for (uint64_t x : v.c) c.push_back(feature_result_to_file(v.out_fmt, x));
  const std::string hdr = "# matcore features: type " + v.type + " (" + v.a_fmt.name + " x " +
                          v.b_fmt.name + " -> " + v.out_fmt.name + "), K = " +
                          std::to_string(v.K) + ", " + std::to_string(v.size()) +
                          " samples; line i belongs to probe i of manifest.txt\n";
  write_ab_file(dir + "/a.txt", a, hdr);
  write_ab_file(dir + "/b.txt", b, hdr);
  write_cd_file(dir + "/c.txt", c, stored_width(v.out_fmt), hdr);
  std::FILE* fp = std::fopen((dir + "/manifest.txt").c_str(), "w");
  if (!fp) throw InputError(dir + "/manifest.txt: cannot open file for writing");
  std::fputs(hdr.c_str(), fp);
  for (const std::string& p : v.probe) std::fprintf(fp, "%s\n", p.c_str());
  if (std::fclose(fp) != 0) throw InputError(dir + "/manifest.txt: write failed");
}

uint64_t feature_result_to_file(const Format& out, uint64_t d) {
  if (out == kBinary32 || out == kBinary64) return d;
  return widen_exact(out, d, kBinary32);  // as validate/run write d files (NaN payload kept)
}

uint64_t feature_result_from_file(const Format& out, uint64_t s) {
  if (out == kBinary32 || out == kBinary64) return s;
  const Unpacked u = decode(kBinary32, s);
  if (u.cls == Class::NaN && out.enc == Encoding::IEEE) {
    uint64_t frac = (s & 0x7FFFFF) >> (23 - out.mbits);
    if (frac == 0) frac = uint64_t{1} << (out.mbits - 1);
    return (u.sign ? sign_bit(out) : 0) | (((uint64_t{1} << out.ebits) - 1) << out.mbits) | frac;
  }
  return convert(kBinary32, s, out, Rounding::RNE);
}

std::vector<uint64_t> read_feature_results(const FeatureVectors& v, const std::string& path) {
  const std::vector<uint64_t> raw = read_cd_file(path, stored_width(v.out_fmt));
  if (raw.size() != v.size())
    throw InputError(path + ": " + std::to_string(raw.size()) + " results for " +
                     std::to_string(v.size()) + " probe samples (see manifest.txt)");
  std::vector<uint64_t> d;
  d.reserve(raw.size());
  for (uint64_t x : raw) d.push_back(feature_result_from_file(v.out_fmt, x));
  return d;
}

}  // namespace mc
