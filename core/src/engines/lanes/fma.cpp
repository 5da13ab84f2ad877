// The FMA chains' lane kernels (fast_lanes.hpp is_fma_chain, is_wide_fma_chain): d = fl(c + a_k
// b_k) for k = 0, 1, ..., on sum2's two-term sums (fma_chain) or on a fixed frame
// (fma_chain_fixed: binary32 and narrower, binary64).
#include "kernels.hpp"
#include "wide.hpp"

namespace mc::lanes::MC_LANES_NS {

namespace {

/// The FMA chains (fast_lanes.hpp is_fma_chain: one product a group, no product overflow, no
/// product rounding): d = fl(c + a_k b_k) for k = 0, 1, ..., every sub-block's chain through c
/// stage by stage beside the others', so that the core runs one chain's rounder while another's
/// waits. Products of at most 24 x 24 bits (sum2): the chains fma_chain_fixed does not take
/// (c or d wider than 24 bits).
void fma_chain(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
               const uint64_t* C, LaneOut& o) {
  constexpr int NB = L / VL;
  const int cmb = static_cast<int>(P.c.mbits);
  VU acc[NB];
  VI bad[NB];
  for (int j = 0; j < NB; ++j) {
    acc[j] = ld(C + j * VL);
    bad[j] = VI{};
  }
  // c as a term (significand, last bit, sign) from one step to the next: the rounded sum's
  // encoding and decoding only for the first c and the last d
  Term2 c[NB];
  for (int j = 0; j < NB; ++j) {
    const Dec cd = dec(P.c, acc[j]);
    bad[j] |= cd.special;
    c[j] = term(cd, cmb);
  }
  for (int k = 0; k < K; ++k) {
    const size_t col = static_cast<size_t>(order[k]) * L;
    Sum2 s[NB];
    Term2 p[NB];
    for (int j = 0; j < NB; ++j) {
      const Dec x = dec(P.a, ld(At + col + j * VL)), y = dec(P.b, ld(Bt + col + j * VL));
      bad[j] |= x.special | y.special;
      p[j] = Term2{mul32(x.sig, y.sig), x.exp + y.exp - P.raw_frac, x.sign ^ y.sign};
    }
    for (int j = 0; j < NB; ++j) s[j] = sum2(P.R, c[j], p[j]);
    Rounded q[NB];
    for (int j = 0; j < NB; ++j) {
      q[j] = round_core(P.R, s[j].sign, s[j].mag, s[j].base, s[j].st);
      bad[j] |= s[j].fb;
    }
    if (k + 1 < K) {
      for (int j = 0; j < NB; ++j) {
        q[j].zero |= s[j].exact_zero;
        c[j] = as_term(P.R, P.c, cmb, s[j].exact_zero ? s[j].zs : s[j].sign, q[j], bad[j]);
      }
    } else {
      for (int j = 0; j < NB; ++j) {
        const VU r = encode(P.R, s[j].sign, q[j]);
        acc[j] = s[j].exact_zero ? (s[j].zs != 0 ? VU{} + P.R.z_n : VU{} + P.R.z_p) : r;
      }
    }
  }
  for (int j = 0; j < NB; ++j) put(o, j, acc[j], bad[j]);
}

/// The FMA chains as fma_chain runs them, with the sums on a fixed frame (sum2w, binary64
/// significands: Wide; sum2n, at most 24 bits: else): the factors' and c's significands
/// normalised (norm_sig), so that every nonzero product lies in a binade pair known in
/// advance and the sum places both terms without measuring them; a sum with a normal result
/// rounded by round_top, c handed on normalised (its significand kept << (NP - R.p)). A step
/// with a lane whose result is subnormal takes round_core and as_term for all lanes.
/// Known (LaneParams::ieee_rne): the formats and the rounding as constants.
template <bool Wide, bool Known>
void fma_chain_fixed(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
                     const uint64_t* C, LaneOut& o) {
  constexpr int NB = L / VL;
  constexpr int NP = Wide ? 52 : 23;  // the significands' leading bit
  LaneFmt fa = P.a, fb = P.b, fc = P.c;
  LaneRound R = P.R;
  if constexpr (Known) {
    fa = fb = fc = Wide ? kB64 : kB32;
    R.p = R.mbits = NP;
    R.emin = Wide ? -1022 : -126;
    R.emax = R.bias = Wide ? 1023 : 127;
    R.enc = Encoding::IEEE;
    R.mode = Rounding::RNE;
  }
  const int cmb = static_cast<int>(fc.mbits), raw_frac = Known ? 2 * NP : P.raw_frac;
  // as_term's last bit of a normal result, for its significand kept << (NP - R.p)
  const int64_t lsb_of_e = (R.bias - fc.bias) + R.mbits - cmb - NP;
  VU acc[NB];
  VI bad[NB];
  Term2 c[NB];
  for (int j = 0; j < NB; ++j) {
    acc[j] = ld(C + j * VL);
    const Dec cd = dec(fc, acc[j]);
    bad[j] = cd.special;
    c[j] = term(cd, cmb);
    norm_sig<NP>(c[j].sig, c[j].lsb);
  }
  for (int k = 0; k < K; ++k) {
    const size_t col = static_cast<size_t>(order[k]) * L;
    SumW s[NB];
    for (int j = 0; j < NB; ++j) {
      Dec x = dec(fa, ld(At + col + j * VL)), y = dec(fb, ld(Bt + col + j * VL));
      bad[j] |= x.special | y.special;
      if (any(((x.sig & y.sig) >> NP) == 0)) {  // a factor below 2^NP (a zero, a subnormal)
        norm_sig<NP>(x.sig, x.exp);
        norm_sig<NP>(y.sig, y.exp);
      }
      const VI lsb = x.exp + y.exp - raw_frac, pnz = (x.sig != 0) & (y.sig != 0);
      const VU sign = x.sign ^ y.sign;
      if constexpr (Wide) s[j] = sum2w(R, c[j], TermW{mul53(x.sig, y.sig), lsb, sign, pnz});
      else s[j] = sum2n(R, c[j], Term2{mul32(x.sig, y.sig), lsb, sign}, pnz);
    }
    Rounded q[NB];
    VI nsub{};
    for (int j = 0; j < NB; ++j) {
      VI ns;
      q[j] = round_top(R, s[j].sign, s[j].top, s[j].lsb, ns);
      nsub |= ns & ~s[j].exact_zero;
    }
    const bool slow = any(nsub);
    if (slow)
      for (int j = 0; j < NB; ++j)
        q[j] = round_core(R, s[j].sign, s[j].top >> 1, s[j].lsb + 1, s[j].top & 1);
    for (int j = 0; j < NB; ++j) q[j].zero |= s[j].exact_zero;
    if (k + 1 < K) {
      for (int j = 0; j < NB; ++j) {
        const VU sign = s[j].exact_zero ? s[j].zs : s[j].sign;
        if (slow) {
          c[j] = as_term(R, fc, cmb, sign, q[j], bad[j]);
          norm_sig<NP>(c[j].sig, c[j].lsb);
        } else {  // as_term of a normal result
          bad[j] |= q[j].ovf & ~q[j].zero;
          // (a zero sum: top 0, so kept 0)
          c[j] = Term2{q[j].kept << (NP - R.p), q[j].e + lsb_of_e, sign};
        }
      }
    } else {
      for (int j = 0; j < NB; ++j) {
        const VU r = encode(R, s[j].sign, q[j]);
        acc[j] = s[j].exact_zero ? (s[j].zs != 0 ? VU{} + R.z_n : VU{} + R.z_p) : r;
      }
    }
  }
  for (int j = 0; j < NB; ++j) put(o, j, acc[j], bad[j]);
}


}  // namespace

void fma_b32(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { fma_chain_fixed<false, true>(P, At, Bt, order, K, C, o); }
void fma_narrow(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { fma_chain_fixed<false, false>(P, At, Bt, order, K, C, o); }
void fma_sum2(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { fma_chain(P, At, Bt, order, K, C, o); }
void fma_b64(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { fma_chain_fixed<true, true>(P, At, Bt, order, K, C, o); }
void fma_wide(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { fma_chain_fixed<true, false>(P, At, Bt, order, K, C, o); }

}  // namespace mc::lanes::MC_LANES_NS
