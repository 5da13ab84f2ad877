// The fused adder's lane kernels (fast_lanes.hpp): one group of the fused datapath on kLanes
// samples at once: multiplier, aligner, adder, the late-c tail and the rounder. It computes
// exactly what fused_group, late_tail and RoundK::round in fast.cpp compute per sample (the
// reference for all three is stages.hpp; tb/test_fast.cpp and make bench-check compare them).
#include "kernels.hpp"

namespace mc::lanes::MC_LANES_NS {

namespace {


/// Product overflow (|p| >= 2^ovf; msb(p) <= raw_frac + 1, so only with an exponent >= ovf - 1):
/// the exact test only for the lanes that come near it; those lanes marked in bad.
MC_LANES_HOT inline void product_overflow(const LaneParams& P, const VU* sig, const VI* ex, int n, int ps, VI e0, VI e1,
                                          VI& bad) {
  const VI near = (e0 >= P.ovf - 1) | (e1 >= P.ovf - 1);
  if (!any(near)) return;
  for (int l = 0; l < VL; ++l) {
    if (!near[l]) continue;
    for (int k = 0; k < n; ++k) {
      const uint64_t s = sig[k][l] >> ps;
      if (s && 63 - __builtin_clzll(s) + ex[k][l] - P.raw_frac >= P.ovf) bad[l] = -1;
    }
  }
}

/// The late-c tail of a group (late_tail in fast.cpp) on the lanes: the sums v0 (and v1, odd
/// products) at e0 (e1) with F fraction bits and c: the value and the weight of its lsb.
template <bool Inter2>
MC_LANES_HOT inline void late_tail(const LaneParams& P, const Dec& c, VI v0, VI v1, VI e0, VI e1, VI cexp0,
                                   VI& val, VI& lsb) {
  const int cmb = static_cast<int>(P.c.mbits);
  // late_tail: the odd-even recombination, the c-aligner with its round-downs, the normaliser.
  // Every round-down is an arithmetic right shift (floor), its operand pre-shifted left by a
  // constant where the count could otherwise be negative in the lanes that use it; in the
  // others the count may be anything (vpsravq: over 63 fills with the sign) and the result is
  // not used. A zero operand (no products: v0 = 0; c = 0: cv = 0) gives 0 whatever its
  // exponent. The widths stay below 2^62 (fast.cpp's fused/i64: the fields plus
  // log2(n_fma + 2) + 4 bits fit 62).
  VI sv, se;
  int sf;
  if (Inter2) {
    const int pf = P.partial_frac, pi = pf > P.F ? pf - P.F : 0;
    se = vmax(e0, e1);
    sf = pf;
    // each partial sum at its own e_max (<= se), RD to pf fraction bits at se
    sv = sra(S(U(v0) << pi), (se - e0) + (P.F + pi - pf)) + sra(S(U(v1) << pi), (se - e1) + (P.F + pi - pf));
  } else {
    sv = v0;
    se = e0;
    sf = P.F;
  }
  const VI cv = c.sign != 0 ? -S(c.sig) : S(c.sig);
  // e_max >= e_c (case A): c shifted to e_max, RD to c_frac bits (dropped beyond c_drop_gap)
  const int pa = P.c_frac > cmb ? P.c_frac - cmb : 0;
  VI cs = sra(S(U(cv) << pa), (se - c.exp) + (cmb + pa - P.c_frac));
  if (P.gap_on) cs = (se - cexp0) > P.c_drop_gap ? VI{} : cs;
  const int fa = sf > P.c_frac ? sf : P.c_frac;
  // (sums in unsigned arithmetic: exact in the lanes that use them, wrapping in the others)
  const VI valA = S((U(sv) << (fa - sf)) + (U(cs) << (fa - P.c_frac))), lsbA = se - fa;
  // e_c > e_max (case B: cexp0 - se >= 1): the product sum shifted to e_c, RD to sum_frac
  // bits; c exact beside it (the grid f = max(cmb, sum_frac) below e_c: c = 0 adds nothing,
  // whatever grid). Then normalise + RD to acc_frac bits below the leading one (or emin):
  // only a right shift changes the value, so a count <= 0 leaves the sum where it is.
  const int pb = P.sum_frac > sf + 1 ? P.sum_frac - sf - 1 : 0;
  const VI ss = sra(S(U(sv) << pb), (cexp0 - se) + (sf + pb - P.sum_frac));
  const int f = cmb > P.sum_frac ? cmb : P.sum_frac;
  VI valB = S((U(ss) << (f - P.sum_frac)) + (U(cv) << (f - cmb)));
  VI lsbB = cexp0 - f;
  if (P.late_norm_rd) {
    const VI msb = 63 - clz(valB < 0 ? VU{} - U(valB) : U(valB));
    const VI cntB = vmax(vmax(msb, bc(P.R.emin) - lsbB) - P.acc_frac, VI{});
    valB = sra(valB, cntB);
    lsbB += cntB;
  }
  // no c exponent (c = 0 without c_zero_exp, cexp0 = kNoExp): case A with cs = 0, the
  // product sum alone (0 if there are no products either)
  const VI caseA = se >= cexp0;
  val = caseA ? valA : valB;
  lsb = caseA ? lsbA : lsbB;
}

/// Lanes [h, h + VL) of the call: one group's sum, c decoded (its special lanes already in
/// bad_out). Trunc: the products are aligned by truncation (every preset); otherwise each term
/// is rounded per lane by fastk::align_v. Et (ST-FDPA): each product's exponent plus its block's
/// scale exponent (fast.cpp fused_terms' eoff); nullptr: unscaled.
template <bool Trunc, bool Late, bool Inter2>
Fix run(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int64_t* Et, const int* cols,
        const Dec& c, int n, int h, VI& bad_out) {
  VU sig[64], ng[64];
  VI ex[64];
  VI e0 = bc(kNoExp), e1 = e0;
  VI bad{};
  VU anz{}, aneg = VU{} + 1;
  // truncation: the products pre-shifted left by ps so that every alignment is a right shift
  // (F > raw_frac: a term at e_max has more fraction bits than its product); sig << ps < 2^(F+2)
  const int ps = Trunc && P.F > P.raw_frac ? P.F - P.raw_frac : 0;
  // multiplier: exact products, their exponents (kNoExp for a zero product), e_max of each set
  for (int k = 0; k < n; ++k) {
    const size_t col = static_cast<size_t>(cols[k]) * L + h;
    const Dec x = dec(P.a, ld(At + col)), y = dec(P.b, ld(Bt + col));
    const VU s = mul32(x.sig, y.sig);  // <= 24 x 24 bits
    const VI nz = s != 0;
    VI xe = x.exp + y.exp;
    if (Et) {
      // product overflow comes before the scaler (fast.cpp product): tested here on the
      // product's own exponent, for every lane (product_overflow below sees scaled exponents)
      if (P.ovf_on) bad |= nz & ((63 - clz(s)) + xe - P.raw_frac >= P.ovf);
      xe += S(ld(reinterpret_cast<const uint64_t*>(Et) + static_cast<size_t>(cols[k] / P.scale_block) * L + h));
    }
    xe = nz ? xe : bc(kNoExp);
    const VU neg = x.sign ^ y.sign;
    bad |= x.special | y.special;
    anz |= U(nz);
    aneg &= neg;
    if (Inter2 && (k & 1)) e1 = vmax(e1, xe);
    else e0 = vmax(e0, xe);
    sig[k] = s << ps;
    ex[k] = xe;
    ng[k] = neg;
  }
  if (P.ovf_on && !Et) product_overflow(P, sig, ex, n, ps, e0, e1, bad);
  const VI cnz = c.sig != 0;
  anz |= U(cnz);
  aneg &= c.sign;
  const VI cexp0 = cnz ? c.exp : bc(P.czero_on ? P.c_zero_exp : kNoExp);  // c's exponent, or none
  if (!Late) e0 = vmax(e0, cexp0);  // early c: one more term of the sum
  if (P.lim_on) {
    const VI lim = bc(P.emin_lim);
    e0 = ((e0 != kNoExp) & (e0 < lim)) ? lim : e0;
    e1 = ((e1 != kNoExp) & (e1 < lim)) ? lim : e1;
  }
  // aligner + adder: each term shifted to its set's e_max with F fraction bits, summed; a zero
  // product (sig 0, exponent kNoExp) adds 0
  VI v0{}, v1{};
  const AlignRound amode = P.mode;
  const int64_t sh0 = P.raw_frac - P.F + ps;
  for (int k = 0; k < n; ++k) {
    const bool odd = Inter2 && (k & 1);
    const VI s = (odd ? e1 : e0) + sh0 - ex[k];
    VI t;
    if constexpr (Trunc) {
      // s >= 0 for every nonzero term (e_max >= its exponent); a zero term adds 0
      const VI m = S(srl(sig[k], s));
      if (odd) v1 = ng[k] != 0 ? v1 - m : v1 + m;
      else v0 = ng[k] != 0 ? v0 - m : v0 + m;
      continue;
    } else {
      for (int l = 0; l < VL; ++l)
        t[l] = sig[k][l] ? fastk::align_v<uint64_t, int64_t>(sig[k][l], static_cast<int>(s[l]), ng[k][l] != 0, amode) : 0;
    }
    if (odd) v1 += t;
    else v0 += t;
  }
  const int cmb = static_cast<int>(P.c.mbits);
  if (!Late) {
    const VI s = (e0 - P.F) - (c.exp - cmb);
    const VI use = cnz & (e0 != kNoExp);
    VI t;
    if constexpr (Trunc) {
      const int pc = P.F > cmb ? P.F - cmb : 0;  // the same pre-shift for c (c at e_max: s = cmb - F)
      const VI m = S(srl(c.sig << pc, s + pc));
      t = c.sign != 0 ? -m : m;
    } else {
      for (int l = 0; l < VL; ++l)
        t[l] = use[l] ? fastk::align_v<uint64_t, int64_t>(c.sig[l], static_cast<int>(s[l]), c.sign[l] != 0, amode) : 0;
    }
    v0 += use ? t : VI{};
  }
  // the sign of an exact zero: RD gives -0 when any term is nonzero, else the terms' common sign
  const VU zs = anz != 0 ? VU{} + (P.zs_rd ? 1 : 0) : aneg;
  VI val, lsb;
  if (!Late) {
    val = e0 == kNoExp ? VI{} : v0;
    lsb = e0 - P.F;
  } else {
    late_tail<Inter2>(P, c, v0, v1, e0, e1, cexp0, val, lsb);
  }
  bad_out |= bad;
  return Fix{val, lsb, zs};
}

/// The next group's c from a group's sum: what dec(P.c, round_fixed(P.R, ...)) gives, without
/// the encoding and the decoding (LaneParams::c_direct: c in the output format, IEEE). A result
/// beyond the largest finite is marked in bad (the reference takes the sample).
inline Dec next_c(const LaneParams& P, const Fix& s, VI& bad) {
  const VI neg = s.val < 0;
  const Rounded q = round_core(P.R, U(neg) & 1, neg ? VU{} - U(s.val) : U(s.val), s.lsb, VU{});
  const VI ez = s.val == 0;
  const VU sig = q.kept << (P.R.mbits - P.R.p);
  bad |= q.ovf & ~(ez | q.zero);
  const VU cs = (ez | q.zero) ? VU{} : (q.sub ? sig & P.c.sub_mask : sig);
  return Dec{cs, q.e, ez ? s.zs : U(neg) & 1, VI{}};
}

/// v 2^lsb (v != 0) rounded by R at a fixed position, for lanes whose result is a normal
/// number (LaneParams::top_round): |v| < 2^62 normalised by one left shift so that its leading
/// one is bit 62, R's increment added below the last kept bit (bit g = 62 - p: half an ulp minus
/// one plus the last kept bit for RNE, half for RNA, an ulp minus one away from zero for the
/// directed roundings away from it) and the bits below g dropped. kept: p + 1 bits, or 2^(p + 1)
/// where the rounding carried out of them; e: the exponent of v's leading one (before that
/// carry). What round_core computes where the result is normal.
struct TopRound {
  VU kept;
  VI e;
  VU sign;
};
inline TopRound round_norm(const LaneRound& R, VI v, VI lsb) {
  const VI neg = v < 0;
  const VU mag = neg ? VU{} - U(v) : U(v);
  const VI lz = clz(mag);
  const VU n = sll(mag, lz - 1);
  const int g = 62 - R.p;
  const uint64_t half = uint64_t{1} << (g - 1), ones = (uint64_t{1} << g) - 1;
  VU inc;
  switch (R.mode) {
    case Rounding::RNE: inc = (half - 1) + ((n >> g) & 1); break;  // RNE
    case Rounding::RNA: inc = VU{} + half; break;                    // RNA
    case Rounding::RD: inc = neg ? VU{} + ones : VU{}; break;       // RD
    case Rounding::RU: inc = neg ? VU{} : VU{} + ones; break;       // RU
    default: inc = VU{}; break;                          // RTZ
  }
  return TopRound{(n + inc) >> g, lsb + (63 - lz), U(neg) & 1};
}

/// round_fixed where round_norm applies: the biased exponent minus one added to the kept bits
/// (hidden one included), so that a carry out of the significand moves into the exponent.
/// slow: the lanes whose result is subnormal or beyond the largest finite (round_fixed's).
inline VU round_fixed_top(const LaneRound& R, VI v, VI lsb, VU zs, VI& slow) {
  const TopRound t = round_norm(R, v, lsb);
  const VU bits = t.kept + (U(t.e + (R.bias - 1)) << R.mbits);
  const VI z = v == 0;
  slow |= ~z & ((t.e < R.emin) | (bits >= R.inf_p));
  const VU zero = zs != 0 ? VU{} + R.z_n : VU{} + R.z_p;
  return z ? zero : (t.sign != 0 ? bits | R.sbit : bits);
}

/// next_c where round_norm applies; slow as in round_fixed_top.
inline Dec next_c_top(const LaneParams& P, const Fix& s, VI& slow) {
  const TopRound t = round_norm(P.R, s.val, s.lsb);
  const VU carry = t.kept >> (P.R.p + 1);
  const VI e = t.e + S(carry);
  const VI z = s.val == 0;
  slow |= ~z & ((t.e < P.R.emin) | (e > P.R.emax));
  return Dec{z ? VU{} : t.kept >> carry, e, z ? s.zs : t.sign, VI{}};
}

/// The fused datapath's groups, chained through c: every sub-block of VL lanes side by side,
/// group by group (their chains are independent, so the core overlaps one's rounder with the
/// other's); c between groups as run() takes it (next_c), only the last group's d encoded.
template <bool Trunc, bool Late, bool Inter2>
void fused_chain(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
                 const uint64_t* C, LaneOut& o, const int64_t* Et = nullptr) {
  const int g = P.n_fma;
  constexpr int NB = L / VL;
  VU d[NB];
  Dec c[NB];
  VI bad[NB];
  for (int j = 0; j < NB; ++j) {
    d[j] = ld(C + j * VL);
    c[j] = dec(P.c, d[j]);
    bad[j] = c[j].special;
  }
  for (int k0 = 0; k0 < K; k0 += g) {
    const int n = K - k0 < g ? K - k0 : g;
    const bool last = k0 + g >= K;
    for (int j = 0; j < NB; ++j) {
      const Fix s = run<Trunc, Late, Inter2>(P, At, Bt, Et, order + k0, c[j], n, j * VL, bad[j]);
      if (last && P.top_round) {
        VI slow{};
        d[j] = round_fixed_top(P.R, s.val, s.lsb, s.zs, slow);
        if (any(slow)) d[j] = slow ? round_fixed(P.R, s.val, s.lsb, s.zs) : d[j];
      } else if (last) {
        d[j] = round_fixed(P.R, s.val, s.lsb, s.zs);
      } else if (P.top_round) {
        VI slow{};
        const Dec t = next_c_top(P, s, slow);
        if (any(slow)) {
          VI b2{};
          const Dec g = next_c(P, s, b2);
          c[j] = Dec{slow ? g.sig : t.sig, slow ? g.exp : t.exp, slow ? g.sign : t.sign, VI{}};
          bad[j] |= b2 & slow;
        } else {
          c[j] = t;
        }
      } else if (P.c_direct) {
        c[j] = next_c(P, s, bad[j]);
      } else {
        c[j] = dec(P.c, round_fixed(P.R, s.val, s.lsb, s.zs));
        bad[j] |= c[j].special;
      }
    }
  }
  for (int j = 0; j < NB; ++j) put(o, j, d[j], bad[j]);
}


}  // namespace

void fused_trunc_early(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { fused_chain<true, false, false>(P, At, Bt, order, K, C, o); }
void fused_trunc_late(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { fused_chain<true, true, false>(P, At, Bt, order, K, C, o); }
void fused_trunc_late_inter2(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { fused_chain<true, true, true>(P, At, Bt, order, K, C, o); }
void fused_rd_early(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { fused_chain<false, false, false>(P, At, Bt, order, K, C, o); }
void fused_rd_late(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { fused_chain<false, true, false>(P, At, Bt, order, K, C, o); }
void fused_rd_late_inter2(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { fused_chain<false, true, true>(P, At, Bt, order, K, C, o); }

void fused_scaled(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int64_t* Et, const int* order,
                  int K, const uint64_t* C, LaneOut& o) {
  switch (P.kernel) {
    case LaneKernel::FusedTruncEarly: return fused_chain<true, false, false>(P, At, Bt, order, K, C, o, Et);
    case LaneKernel::FusedTruncLate: return fused_chain<true, true, false>(P, At, Bt, order, K, C, o, Et);
    case LaneKernel::FusedTruncLateInter2: return fused_chain<true, true, true>(P, At, Bt, order, K, C, o, Et);
    case LaneKernel::FusedRdEarly: return fused_chain<false, false, false>(P, At, Bt, order, K, C, o, Et);
    case LaneKernel::FusedRdLate: return fused_chain<false, true, false>(P, At, Bt, order, K, C, o, Et);
    case LaneKernel::FusedRdLateInter2: return fused_chain<false, true, true>(P, At, Bt, order, K, C, o, Et);
    default:  // not a fused kernel: fast.cpp lowers only the fused ones for scales; every lane to the scalar kernel
      for (int l = 0; l < L; ++l) o.bad[l] = 1, o.d[l] = 0;
  }
}

}  // namespace mc::lanes::MC_LANES_NS
