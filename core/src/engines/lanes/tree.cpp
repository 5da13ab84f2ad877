// The pairwise trees' lane kernels (CDNA2, fast_lanes.hpp): products (rounded to out_fmt where
// the datapath says so), the levels fl(x + y) and the final fl(c + tree), on terms
// (pairwise_run) or directly on the encodings (tree_bits, LaneParams::fast_levels).
#include "kernels.hpp"
#include "terms.hpp"

namespace mc::lanes::MC_LANES_NS {

namespace {

inline void round_tree_products(const LaneParams& P, Term2* lv, int n, VI& bad) {
  const int cmb = static_cast<int>(P.c.mbits);
  for (int k = 0; k < n; ++k) {
    VI ovf{};
    const Term2 t = as_term(P.Rprod, P.acc, cmb, lv[k].sign,
                            round_core(P.Rprod, lv[k].sign, lv[k].sig, lv[k].lsb, VU{}), ovf);
    const VI nz = lv[k].sig != 0;
    bad |= nz & ovf;
    lv[k].lsb = nz ? t.lsb : lv[k].lsb;
    lv[k].sig = nz ? t.sig : lv[k].sig;
  }
}

/// The pairwise tree's products (CDNA2: each rounded to out_fmt where the datapath says so) of
/// lanes [h, h + VL): lv[0..n); a NaN/Inf operand or an overflowing product marked in bad.
/// (round: false leaves the products unrounded: tree_bits packs those in range itself)
inline void tree_products(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* cols,
                          int n, int h, Term2* lv, VI& bad, bool round = true) {
  VI emx = bc(kNoExp);
  for (int k = 0; k < n; ++k) {
    const size_t col = static_cast<size_t>(cols[k]) * L + h;
    const Dec x = dec(P.a, ld(At + col)), y = dec(P.b, ld(Bt + col));
    const VU s = mul32(x.sig, y.sig);
    const VI xe = x.exp + y.exp;
    bad |= x.special | y.special;
    emx = (s != 0) ? vmax(emx, xe) : emx;
    lv[k] = Term2{s, xe - P.raw_frac, x.sign ^ y.sign};
  }
  if (P.ovf_on) {  // as in run(): the exact test only near the limit
    const VI near = emx >= P.ovf - 1;
    if (any(near))
      for (int l = 0; l < VL; ++l) {
        if (!near[l]) continue;
        for (int k = 0; k < n; ++k) {
          const uint64_t s = lv[k].sig[l];
          if (s && 63 - __builtin_clzll(s) + lv[k].lsb[l] >= P.ovf) bad[l] = -1;
        }
      }
  }
  bool round_products = P.prod_round && round;
  if (round_products && P.prod_fits) {
    // products with no more bits than out_fmt keeps are only changed by the rounding outside
    // out_fmt's normal range: skip it when every product is inside
    VI out{};
    for (int k = 0; k < n; ++k) {
      const VI top = lv[k].lsb + (63 - clz(lv[k].sig));
      out |= (lv[k].sig != 0) & ((top < P.Rprod.emin) | (top > P.Rprod.emax));
    }
    round_products = any(out);
  }
  if (round_products) round_tree_products(P, lv, n, bad);
}

/// The pairwise tree (CDNA2, fast.cpp pairwise_group): fl(p1 + p2), fl(p3 + p4), ..., their
/// sums level by level, then fl(c + tree); every level rounded to out_fmt by R.
VU pairwise_run(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* cols,
                VU cbits, int n, int h, VI& bad_out) {
  Term2 lv[64];
  VI bad{};
  tree_products(P, At, Bt, cols, n, h, lv, bad);
  const int cmb = static_cast<int>(P.c.mbits);
  const Dec c = dec(P.c, cbits);
  bad |= c.special;
  int m = n;
  while (m > 1) {
    int k = 0;
    for (int i = 0; i + 1 < m; i += 2) {
      // a level that overflows: the scalar kernel
      lv[k++] = add2_term(P.R, P.acc, cmb, lv[i], lv[i + 1], bad);
    }
    if (m & 1) lv[k++] = lv[m - 1];
    m = k;
  }
  VI fb;
  const VU d = add2(P.R, term(c, cmb), lv[0], fb);
  bad_out |= bad | fb;
  return d;
}

/// add_rne_ftz's lanes that leave the normal range (slow), through add2_term; r holds the other
/// lanes' sums. Out of line: rare, and kept out of the levels' registers.
__attribute__((noinline)) VU level_add_slow(const LaneParams& P, VU x, VU y, VU r, VI slow, VI& bad) {
  const int cmb = static_cast<int>(P.c.mbits);
  VI bad2{};
  const Term2 t = add2_term(P.R, P.acc, cmb, term(dec(P.acc, x), cmb), term(dec(P.acc, y), cmb), bad2);
  bad |= slow & bad2;
  return slow ? pack_term(P.R, t) : r;
}

/// One sum of a level: fl(x + y) on the encodings.
inline VU level_add(const LaneParams& P, VU x, VU y, VI& bad) {
  VI slow{};
  const VU r = add_rne_ftz<false>(P.R, x, y, slow);
  return any(slow) ? level_add_slow(P, x, y, r, slow, bad) : r;
}

/// The levels of tree_bits on the products' encodings bv[0..n) (overwritten): add_rne_ftz, a
/// level's lanes that leave the normal range through add2_term. Groups of 2 and 4 (the
/// presets') unrolled, so that the sums stay in registers.
inline VU tree_levels(const LaneParams& P, VU* bv, int n, VI& bad) {
  if (n == 4) {
    const VU s01 = level_add(P, bv[0], bv[1], bad);
    const VU s23 = level_add(P, bv[2], bv[3], bad);
    return level_add(P, s01, s23, bad);
  }
  if (n == 2) return level_add(P, bv[0], bv[1], bad);
  int m = n;
  while (m > 1) {
    int k = 0;
    for (int i = 0; i + 1 < m; i += 2) bv[k++] = level_add(P, bv[i], bv[i + 1], bad);
    if (m & 1) bv[k++] = bv[m - 1];
    m = k;
  }
  return bv[0];
}

/// A product (-1)^sign s 2^lsb of at most p + 1 bits (prod_fits) encoded in out_fmt by its biased
/// exponent E = lsb + top + bias (top: s's top bit; sign 0/1): as it is in the normal range; a
/// zero of its sign at E <= 0; beyond the largest finite bad (it rounds to Inf). Products in
/// [2^(emin-1), 2^emin) (E = 0) are the caller's, unless prod_below_zero.
inline VU pack_product(const LaneRound& R, VU s, VI top, VI E, VU sign, VI& bad) {
  const VI nz = s != 0;
  bad |= nz & (E > R.emax + R.bias);
  const VU sb = sign << (63 - __builtin_clzll(R.sbit));
  const VU frac = sll(s, bc(R.mbits) - top) & ((uint64_t{1} << R.mbits) - 1);
  return (nz & (E > 0)) ? sb | (U(E) << R.mbits) | frac : sb;
}

/// tree_bits' products under P.tree_direct, encoded in out_fmt as they are computed (no Term2
/// in between): a product has at most Rprod.p bits (prod_below_zero), so that it is exact in
/// out_fmt's normal range and a zero of its sign below it (the rounding to out_fmt's
/// subnormals, then flushed, never reaches the smallest normal); beyond the largest finite it
/// is bad (it rounds to Inf). No prod_overflow_exp (tree_direct). A NaN/Inf operand: the
/// largest of the operands' special bits (x & sp_mask) over the group is sp_val (tree_direct:
/// sp_mask == sp_val, so that no other pattern lies above it).
inline void tree_product_bits(const LaneParams& P, const uint64_t* At, const uint64_t* Bt,
                              const int* cols, int n, int h, VU* bv, VI& bad) {
  const VI ebase = bc(P.R.bias - P.raw_frac);
  VI spa{}, spb{};
  for (int k = 0; k < n; ++k) {
    const size_t col = static_cast<size_t>(cols[k]) * L + h;
    const VU xa = ld(At + col), xb = ld(Bt + col);
    spa = vmax(spa, S(xa & P.a.sp_mask));
    spb = vmax(spb, S(xb & P.b.sp_mask));
    const Dec x = dec(P.a, xa), y = dec(P.b, xb);
    const VU s = mul32(x.sig, y.sig);
    const VI top = 63 - clz(s);
    bv[k] = pack_product(P.R, s, top, x.exp + y.exp + ebase + top, x.sign ^ y.sign, bad);
  }
  bad |= (spa == S(VU{} + P.a.sp_val)) | (spb == S(VU{} + P.b.sp_val));
}

/// pairwise_run's tree without c under P.fast_levels (every term a normal number or a zero of
/// out_fmt): the levels on the encodings (add_rne_ftz), a level's lanes that leave the normal
/// range through add2_term.
inline VU tree_bits(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* cols,
                    int n, int h, VI& bad) {
  VU bv[64];
  if (P.tree_direct) {
    tree_product_bits(P, At, Bt, cols, n, h, bv, bad);
    return tree_levels(P, bv, n, bad);
  }
  Term2 lv[64];
  tree_products(P, At, Bt, cols, n, h, lv, bad, false);
  // the products encoded (pack_product: below half the smallest normal a zero of their sign, as
  // round_core's rounding to out_fmt's subnormals and flush gives); those in [2^(emin-1), 2^emin),
  // which may round up to the smallest normal, rounded (round_tree_products), unless they have
  // too few bits to (prod_below_zero)
  VI edge{};
  for (int k = 0; k < n; ++k) {
    const VI top = 63 - clz(lv[k].sig);
    const VI E = lv[k].lsb + top + P.R.bias;
    edge |= (lv[k].sig != 0) & (E == 0);
    bv[k] = pack_product(P.R, lv[k].sig, top, E, lv[k].sign, bad);
  }
  if (!P.prod_below_zero && any(edge)) {
    round_tree_products(P, lv, n, bad);
    for (int k = 0; k < n; ++k) bv[k] = pack_term(P.R, lv[k]);
  }
  return tree_levels(P, bv, n, bad);
}

/// tree_c's lanes that leave the normal range (slow) through add2 (out of line, as level_add_slow).
__attribute__((noinline)) VU tree_c_slow(const LaneParams& P, VU cbits, VU tree, VU d, VI slow, VI& bad) {
  const int cmb = static_cast<int>(P.c.mbits);
  VI fb;
  const VU r = add2(P.R, term(dec(P.c, cbits), cmb), term(dec(P.acc, tree), cmb), fb);
  bad |= slow & fb;
  return slow ? r : d;
}

/// fl(c + tree) under P.fast_levels (pairwise_run's last sum).
inline VU tree_c(const LaneParams& P, VU cbits, VU tree, VI& bad) {
  bad |= dec(P.c, cbits).special;
  VI slow{};
  const VU d = add_rne_ftz<false>(P.R, cbits, tree, slow);
  return any(slow) ? tree_c_slow(P, cbits, tree, d, slow, bad) : d;
}

/// The pairwise trees under P.fast_levels: the trees of every group first (they do not depend
/// on c, so the core has them side by side), then the chain through c of the sums fl(c + tree).
void tree_chain(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
                const uint64_t* C, LaneOut& o) {
  constexpr int NB = L / VL, kChunk = 16;
  const int g = P.n_fma;
  for (int j = 0; j < NB; ++j) {
    VU acc = ld(C + j * VL);
    VI bad{};
    for (int k0 = 0; k0 < K; k0 += g * kChunk) {
      VU t[kChunk];
      int nt = 0;
      for (int k1 = k0; k1 < K && nt < kChunk; k1 += g)
        t[nt++] = tree_bits(P, At, Bt, order + k1, K - k1 < g ? K - k1 : g, j * VL, bad);
      for (int i = 0; i < nt; ++i) acc = tree_c(P, acc, t[i], bad);
    }
    put(o, j, acc, bad);
  }
}



}  // namespace

void pairwise_bits(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { tree_chain(P, At, Bt, order, K, C, o); }
void pairwise_terms(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { chain(P, At, Bt, order, K, C, o, pairwise_run); }

}  // namespace mc::lanes::MC_LANES_NS
