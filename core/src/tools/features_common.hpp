// matcore: the shared part of feature detection (core/src/features_*.cpp): exact values and
// their encodings, the geometry of a format combination, the alignment-probe layouts. Internal
// to core (not installed); see features.hpp for the interface and docs/features.md.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "matcore/bits.hpp"
#include "matcore/datapath.hpp"
#include "matcore/format.hpp"

namespace mc {
namespace feat {
// =============================================================================================
// 1. Exact values.
// =============================================================================================

/// (-1)^neg * m * 2^e.
struct Val {
  bool neg = false;
  u128 m = 0;
  int e = 0;
};
inline Val p2(int e, bool neg = false) { return Val{neg, 1, e}; }
inline Val vm(u128 m, int e, bool neg = false) { return Val{neg, m, e}; }

inline void norm(u128& m, int& e) {
  if (m == 0) return;
  while ((m & 1) == 0) {
    m >>= 1;
    ++e;
  }
}

inline bool same_value(u128 m1, int e1, u128 m2, int e2) {
  if (m1 == 0 || m2 == 0) return m1 == m2;
  norm(m1, e1);
  norm(m2, e2);
  return m1 == m2 && e1 == e2;
}

/// The exact encoding of x in f, if there is one (subnormals only with allow_sub).
inline bool encode(const Format& f, const Val& x, uint64_t& out, bool allow_sub = true) {
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

inline int bitlen(u128 x) { return msb_index(x) + 1; }

/// a = fa * 2^ea in A, b = fb * 2^eb in B with ea + eb = e (the product fa*fb*2^e, sign on a),
/// the exponents balanced so that both operands are as close to 1 as possible.
inline bool pair_product(const Format& A, const Format& B, u128 fa, u128 fb, int e, bool neg,
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
inline bool split_product(const Format& A, const Format& B, Val p, bool allow_sub, uint64_t& a,
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
inline std::vector<int> precisions(const Format& O) {
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

inline Geo geometry(const Format& A, const Format& B, const Format& O, int K) {
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
inline std::vector<int> slot_order(int K, bool pi) {
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

inline std::string pname(int P) { return "P" + std::to_string(P); }

// =============================================================================================
// The alignment-probe layouts (emitted in features_probes.cpp, decided in features_decide.cpp).
// =============================================================================================

// Layouts of (big, small, cancel) terms: the digits are slots, 'c' is the addend c.
struct Layout {
  const char* name;
  int big, small, cancel;  // cancel < 0: c
};
inline const Layout kAlignLayouts[] = {
    {"021", 0, 2, 1}, {"041", 0, 4, 1}, {"02c", 0, 2, -1}, {"04c", 0, 4, -1}, {"01c", 0, 1, -1}};

inline uint64_t sign_bit(const Format& f) { return uint64_t{1} << (f.width() - 1); }

}  // namespace feat
}  // namespace mc
