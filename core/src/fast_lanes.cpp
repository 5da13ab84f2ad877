// The fused datapath's multiplier, aligner and adder on kLanes samples at once (fast_lanes.hpp).
// Compiled once per instruction set: MC_LANES_NS names the namespace (generic, avx2, avx512) and
// the build adds that set's -march flags (CMakeLists.txt). Every loop below runs over the lanes
// with the same operations for each (selects instead of branches), which is what lets the
// compiler vectorise it; it computes exactly what fused_group in fast.cpp computes per sample.
#include <climits>
#include <cstring>

#include "fast_align.hpp"
#include "fast_lanes.hpp"

#ifndef MC_LANES_NS
#define MC_LANES_NS generic
#endif

namespace mc::lanes::MC_LANES_NS {

namespace {

constexpr int L = kLanes;

// GCC/Clang vector extensions: one value per lane, 64 bits each; the compiler maps the
// operations to the instruction set of this build (one 512-bit register per operation with
// AVX-512, two 256-bit ones with AVX2, scalar code where the set has no such instruction).
// VL lanes per vector: the widest vector of 64-bit integers the build's instruction set has
// (a wider vector type would be lowered to scalar code); the kLanes samples of a call are run
// as kLanes / VL sub-blocks.
#if defined(__AVX512F__)
constexpr int VL = 8;
#elif defined(__AVX2__)
constexpr int VL = 4;
#else
constexpr int VL = 2;
#endif
static_assert(L % VL == 0, "whole sub-blocks");
typedef uint64_t VU __attribute__((vector_size(8 * VL)));
typedef int64_t VI __attribute__((vector_size(8 * VL)));

inline VU ld(const uint64_t* p) {
  VU v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
/// Lane l gets p[l * stride]: one operand of kLanes samples stored row by row (element by
/// element: faster here than a gather instruction, measured on AVX-512).
inline VU ld_strided(const uint64_t* p, size_t stride) {
  VU r;
  for (int l = 0; l < VL; ++l) r[l] = p[l * stride];
  return r;
}
inline VU bit(VI mask) { return reinterpret_cast<VU&>(mask) & 1; }  // -1/0 -> 1/0

/// decode_operand on every lane: sig (0 for zeros and DAZ), exponent, sign and special (0/1).
struct Dec {
  VU sig;
  VI exp;
  VU sign, special;
};
inline Dec dec(const LaneFmt& f, VU x) {
  const VU E = (x >> f.mbits) & f.top, M = x & f.mmask;
  const VU sign = (x >> f.sign_shift) & 1;
  const VU top = bit(E == f.top);
  VU sp;
  if (f.enc == 0) sp = top;
  else if (f.enc == 1) sp = top & bit(M == f.mmask);
  else sp = sign & bit(E == 0) & bit(M == 0);
  const VI normal = E != 0;  // -1 / 0
  const VU nm = reinterpret_cast<const VU&>(normal);
  const VU sig = ((M | (uint64_t{1} << f.mbits)) & nm) | (f.sub_in ? (M & ~nm) : VU{} );
  const VI Ei = reinterpret_cast<const VI&>(E);
  const VI exp = normal ? Ei - static_cast<int64_t>(f.bias) : VI{} + (1 - static_cast<int64_t>(f.bias));
  return Dec{sig, exp, sign, sp};
}

constexpr int64_t kNoExp = INT32_MIN;  // kNone

/// The truncating aligner on every lane: sig * 2^-s toward zero, signed by neg.
inline VI align_trunc(VU sig, VI s, VU neg) {
  const VI zero{};
  const VU r = reinterpret_cast<VU>(s < 0 ? zero : (s > 63 ? zero + 63 : s));
  // lanes without a term (sig 0, or no e_max) compute garbage shifts: clamped, their 0 stays 0
  const VU lft = reinterpret_cast<VU>(s < 0 ? (s < -63 ? zero + 63 : -s) : zero);
  const VU m = reinterpret_cast<VU>(s >= 64) ? VU{} : ((sig >> r) << lft);
  const VI mi = reinterpret_cast<const VI&>(m);
  return neg != 0 ? -mi : mi;
}

/// Lanes [h, h + VL) of the call.
template <bool Trunc, bool Ovf>
void run(const LaneParams& P, const uint64_t* A, const uint64_t* B, size_t stride, const int* cols,
         const uint64_t* C, int n, LaneOut& o, int h) {
  A += static_cast<size_t>(h) * stride;
  B += static_cast<size_t>(h) * stride;
  C += h;
  VU sig[64], ng[64];
  VI ex[64];
  VI e0 = VI{} + kNoExp, e1 = e0;
  VU bad{}, anz{}, aneg = VU{} + 1;
  // |p| >= 2^ovf  <=>  s >= 2^(ovf - xe + raw_frac); no overflow limit: a threshold never met
  const int64_t ovf_t = P.ovf_on ? static_cast<int64_t>(P.ovf) + P.raw_frac : int64_t{1} << 40;
  // multiplier: exact products, their exponents, the e_max of each set
  for (int k = 0; k < n; ++k) {
    const Dec x = dec(P.a, ld_strided(A + cols[k], stride)), y = dec(P.b, ld_strided(B + cols[k], stride));
    // significands of at most 24 bits: a 32 x 32 -> 64-bit multiply (vpmuludq)
    const VU s = (x.sig & 0xffffffffu) * (y.sig & 0xffffffffu);
    const VI xe = x.exp + y.exp;
    const VU neg = x.sign ^ y.sign;
    const VU nz = bit(s != 0);
    bad |= x.special | y.special;
    if constexpr (Ovf) {
      const VI t = ovf_t - xe;
      const VU tt = reinterpret_cast<VU>(t < 0 ? VI{} : (t > 63 ? VI{} + 63 : t));
      bad |= nz & (bit(t <= 0) | (bit(t < 64) & bit((s >> tt) != 0)));
    }
    anz |= nz;
    aneg &= neg;
    VI& e = (P.inter2 && (k & 1)) ? e1 : e0;
    e = ((s != 0) & (xe > e)) ? xe : e;
    sig[k] = s;
    ex[k] = xe;
    ng[k] = neg;
  }
  // c: decoded; with early c one more term of set 0 (c = 0 with c_zero_exp: its exponent only)
  const Dec c = dec(P.c, ld(C));
  bad |= c.special;
  anz |= bit(c.sig != 0);
  aneg &= c.sign;
  if (!P.late_c) {
    const VI ce = c.sig != 0 ? c.exp : VI{} + (P.czero_on ? P.c_zero_exp : kNoExp);
    e0 = ce > e0 ? ce : e0;
  }
  if (P.lim_on) {
    const VI lim = VI{} + P.emin_lim;
    e0 = ((e0 != kNoExp) & (e0 < lim)) ? lim : e0;
    e1 = ((e1 != kNoExp) & (e1 < lim)) ? lim : e1;
  }
  // aligner + adder: each term shifted to its set's e_max with F fraction bits, summed
  VI v0{}, v1{};
  const AlignRound mode = static_cast<AlignRound>(P.mode);
  const int64_t sh0 = P.raw_frac - P.F;
  for (int k = 0; k < n; ++k) {
    const bool odd = P.inter2 && (k & 1);
    const VI s = (odd ? e1 : e0) + sh0 - ex[k];
    VI t;
    if constexpr (Trunc) {
      t = align_trunc(sig[k], s, ng[k]);
    } else {
      for (int l = 0; l < VL; ++l)  // a zero product adds 0 (and its shift is not defined)
        t[l] = sig[k][l] ? fastk::align_v<uint64_t, int64_t>(sig[k][l], static_cast<int>(s[l]), ng[k][l] != 0, mode) : 0;
    }
    (odd ? v1 : v0) += t;  // a zero product (sig 0) adds 0
  }
  if (!P.late_c) {
    const VI s = (e0 - P.F) - (c.exp - static_cast<int64_t>(P.c.mbits));
    const VI use = (c.sig != 0) & (e0 != kNoExp);
    VI t;
    if constexpr (Trunc) {
      t = align_trunc(c.sig, use ? s : VI{}, c.sign);
    } else {
      for (int l = 0; l < VL; ++l)
        t[l] = fastk::align_v<uint64_t, int64_t>(c.sig[l], use[l] ? static_cast<int>(s[l]) : 0, c.sign[l] != 0, mode);
    }
    v0 += use ? t : VI{};
  }
  for (int l = 0; l < VL; ++l) {
    const int j = h + l;
    o.e[0][j] = static_cast<int32_t>(e0[l]);
    o.e[1][j] = static_cast<int32_t>(e1[l]);
    o.v[0][j] = v0[l];
    o.v[1][j] = v1[l];
    o.bad[j] = static_cast<uint8_t>(bad[l]);
    o.any_nz[j] = static_cast<uint8_t>(anz[l]);
    o.all_neg[j] = static_cast<uint8_t>(aneg[l]);
    o.c_sig[j] = c.sig[l];
    o.c_exp[j] = static_cast<int32_t>(c.exp[l]);
    o.c_neg[j] = static_cast<uint8_t>(c.sign[l]);
  }
}

}  // namespace

void group(const LaneParams& P, const uint64_t* A, const uint64_t* B, size_t stride, const int* cols,
           const uint64_t* C, int n, LaneOut& o) {
  const bool trunc = static_cast<AlignRound>(P.mode) == AlignRound::Truncate;
  for (int h = 0; h < L; h += VL) {
    if (trunc && P.ovf_on) run<true, true>(P, A, B, stride, cols, C, n, o, h);
    else if (trunc) run<true, false>(P, A, B, stride, cols, C, n, o, h);
    else if (P.ovf_on) run<false, true>(P, A, B, stride, cols, C, n, o, h);
    else run<false, false>(P, A, B, stride, cols, C, n, o, h);
  }
}

}  // namespace mc::lanes::MC_LANES_NS
