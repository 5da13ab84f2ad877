// matcore: feature detection, the probe families from the late c-aligner's round-downs on (c
// alone, a sum cancelled to a tiny remainder, unnormalised and rounded products, the alignment
// floor and the exponent of c = 0, overflow). Conventions: features_probes.cpp.
#include <algorithm>
#include <cstdio>
#include <string>

#include "matcore/bits.hpp"
#include "matcore/model.hpp"
#include "matcore/vectors.hpp"
#include "features_emitter.hpp"

namespace mc::feat {

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

}  // namespace mc::feat
