// One group of the fused datapath on kLanes samples at once (fast_lanes.hpp): multiplier,
// aligner, adder, the late-c tail and the rounder. Compiled once per instruction set: MC_LANES_NS
// names the namespace (generic, avx2, avx512, avx512x2) and the build adds that set's -march
// flags (CMakeLists.txt). Every step runs over the lanes with the same operations for each
// (selects instead of branches), which is what lets the compiler vectorise it; it computes
// exactly what fused_group, late_tail and RoundK::round in fast.cpp compute per sample (the
// reference for all three is stages.hpp; tb/test_fast.cpp and make bench-check compare them).
#include <climits>
#include <cstring>

#if defined(__AVX2__) || defined(__AVX512F__)
// GCC 12 warns about the deliberately undefined register inside the AVX-512 intrinsics
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#endif

#include "fast_align.hpp"
#include "fast_lanes.hpp"

#ifndef MC_LANES_NS
#define MC_LANES_NS generic
#endif

// Two-vector shuffle with constant lane indices (GCC and Clang spell it differently).
#if defined(__clang__)
#define MC_SHUF(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define MC_SHUF(a, b, ...) __builtin_shuffle(a, b, VIN{__VA_ARGS__})
#endif

namespace mc::lanes::MC_LANES_NS {

namespace {

constexpr int L = kLanes;

// GCC/Clang vector extensions: one value per lane, 64 bits each; the compiler maps the
// operations to the instruction set of this build. VN lanes per register: the widest vector of
// 64-bit integers the build's instruction set has. VL = NV x VN lanes per lane vector: NV = 1
// for the GCC builds (GCC 12 lowers a wider vector type to scalar code); the avx512x2 build
// (Clang, CMakeLists.txt) has NV = 2: each operation on a lane vector is two instructions on
// independent registers, which the core overlaps, where one register's chain of dependent
// instructions (the rounder's) leaves it waiting. The kLanes samples of a call are run as
// kLanes / VL sub-blocks.
#if defined(__AVX512F__)
constexpr int VN = 8;
#elif defined(__AVX2__)
constexpr int VN = 4;
#else
constexpr int VN = 2;
#endif
#ifndef MC_LANES_PACK
#define MC_LANES_PACK 1
#endif
constexpr int NV = MC_LANES_PACK;
constexpr int VL = VN * NV;
static_assert(L % VL == 0, "whole sub-blocks");
typedef uint64_t VU __attribute__((vector_size(8 * VL)));
typedef int64_t VI __attribute__((vector_size(8 * VL)));  // also the masks: -1 true, 0 false
typedef uint64_t VUN __attribute__((vector_size(8 * VN)));  // one native register
typedef int64_t VIN __attribute__((vector_size(8 * VN)));

#if defined(__AVX512F__)
typedef __m512i Nat;
#elif defined(__AVX2__)
typedef __m256i Nat;
#endif
#if defined(__AVX2__) || defined(__AVX512F__)
/// The native registers of m or-ed together.
inline Nat or_parts(VI m) {
  Nat r;
  std::memcpy(&r, &m, sizeof r);
  for (int i = 1; i < NV; ++i) {
    Nat x;
    std::memcpy(&x, reinterpret_cast<const char*>(&m) + i * sizeof(Nat), sizeof x);
#if defined(__AVX512F__)
    r = _mm512_or_si512(r, x);
#else
    r = _mm256_or_si256(r, x);
#endif
  }
  return r;
}
/// f (an intrinsic) applied to each register of the lane vectors a.
template <class R, class F, class... A>
inline R per_native(F f, A... a) {
  R r;
  for (int i = 0; i < NV; ++i) {
    Nat x = f(([&] {
      Nat n;
      std::memcpy(&n, reinterpret_cast<const char*>(&a) + i * sizeof(Nat), sizeof(Nat));
      return n;
    }())...);
    std::memcpy(reinterpret_cast<char*>(&r) + i * sizeof(Nat), &x, sizeof(Nat));
  }
  return r;
}
#endif

constexpr int64_t kNoExp = INT32_MIN;  // kNone

inline VU ld(const uint64_t* p) {
  VU v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline VUN ldn(const uint64_t* p) {
  VUN v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
/// VN 32-bit words widened to 64 bits (vpmovzxdq).
inline VUN ldn(const uint32_t* p) {
#if defined(__AVX512F__)
  return reinterpret_cast<VUN>(_mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
#elif defined(__AVX2__)
  return reinterpret_cast<VUN>(_mm256_cvtepu32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#else
  VUN v;
  for (int i = 0; i < VN; ++i) v[i] = p[i];
  return v;
#endif
}
#if defined(__AVX512F__)
/// Four words of a row as 256 bits (the 8 x 4 tiles of transpose8).
inline __m256i ld4(const uint64_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m256i ld4(const uint32_t* p) {
  return _mm256_cvtepu32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
#endif
inline VU U(VI x) { return reinterpret_cast<VU>(x); }
inline VI S(VU x) { return reinterpret_cast<VI>(x); }
inline VI vmax(VI a, VI b) { return a > b ? a : b; }
inline VI vmin(VI a, VI b) { return a < b ? a : b; }
/// x clamped to [0, 63]: a shift count every lane may use (the lanes that do not need the
/// shift discard its result).
[[maybe_unused]] inline VU cnt(VI x) { return U(vmin(vmax(x, VI{}), VI{} + 63)); }
inline VI bc(int64_t x) { return VI{} + x; }
/// x >> n with 0 for counts over 63 (negative ones too): what vpsrlvq does.
inline VU srl(VU x, VI n) {
#if defined(__AVX512F__)
  return per_native<VU>([](Nat a, Nat b) { return _mm512_srlv_epi64(a, b); }, x, n);
#elif defined(__AVX2__)
  return per_native<VU>([](Nat a, Nat b) { return _mm256_srlv_epi64(a, b); }, x, n);
#else
  return U(U(n) > 63 ? VI{} : S(x >> cnt(n)));
#endif
}

/// x << n with 0 for counts over 63 (negative ones too): what vpsllvq does.
inline VU sll(VU x, VI n) {
#if defined(__AVX512F__)
  return per_native<VU>([](Nat a, Nat b) { return _mm512_sllv_epi64(a, b); }, x, n);
#elif defined(__AVX2__)
  return per_native<VU>([](Nat a, Nat b) { return _mm256_sllv_epi64(a, b); }, x, n);
#else
  return U(U(n) > 63 ? VI{} : S(x << cnt(n)));
#endif
}
/// x >> n arithmetic, n >= 0, counts over 63 filling with the sign: what vpsravq does.
inline VI sra(VI x, VI n) {
#if defined(__AVX512F__)
  return per_native<VI>([](Nat a, Nat b) { return _mm512_srav_epi64(a, b); }, x, n);
#else
  return x >> cnt(n);
#endif
}

/// Leading zeros of each lane (64 for 0).
inline VI clz(VU x) {
#if defined(__AVX512CD__)
  return per_native<VI>([](Nat a) { return _mm512_lzcnt_epi64(a); }, x);
#else
  VI r;
  for (int l = 0; l < VL; ++l) r[l] = x[l] ? __builtin_clzll(x[l]) : 64;
  return r;
#endif
}

/// Whether any lane of the mask m is set (one test instruction where the set has it).
inline bool any(VI m) {
#if defined(__AVX512F__)
  const Nat x = or_parts(m);
  return _mm512_test_epi64_mask(x, x) != 0;
#elif defined(__AVX2__)
  const Nat x = or_parts(m);
  return !_mm256_testz_si256(x, x);
#else
  return (m[0] | m[1]) != 0;
#endif
}

/// decode_operand on every lane: sig (0 for zeros and DAZ), exponent, sign (0/1), special (mask).
struct Dec {
  VU sig;
  VI exp;
  VU sign;
  VI special;
};
inline Dec dec(const LaneFmt& f, VU x) {
  const VU E = (x >> f.mbits) & f.top, M = x & f.mmask;
  const VU sign = (x >> f.sign_shift) & 1;
  const VI sp = (x & f.sp_mask) == f.sp_val;  // the encoding's NaN/Inf patterns (LaneFmt)
  const VI normal = E != 0;
  const VU sig = normal ? (M | (uint64_t{1} << f.mbits)) : (M & f.sub_mask);
  const VI exp = S(E > 1 ? E : VU{} + 1) - static_cast<int64_t>(f.bias);
  return Dec{sig, exp, sign, sp};
}

/// The exact product of significands of at most 32 bits (vpmuludq).
inline VU mul32(VU a, VU b) {
#if defined(__AVX512F__)
  return per_native<VU>([](Nat x, Nat y) { return _mm512_mul_epu32(x, y); }, a, b);
#elif defined(__AVX2__)
  return per_native<VU>([](Nat x, Nat y) { return _mm256_mul_epu32(x, y); }, a, b);
#else
  return (a & 0xffffffffu) * (b & 0xffffffffu);
#endif
}

/// RoundK::round on every lane before the encoding: kept (the significand, p + 1 bits with the
/// hidden one, fewer for a subnormal), e its exponent, sub (the result is subnormal), zero (it
/// rounds to zero), ovf (beyond the largest finite).
struct Rounded {
  VU kept;
  VI e, sub, zero, ovf;
};
/// The last steps of round_core (and round_top): kept, truncated, rounded up by R's mode from
/// its round bit rb and sticky st (0/1); a carry past p + 1 bits (returned) halves kept and
/// raises e; ovf: beyond the largest finite.
inline VI round_up(const LaneRound& R, VU sign, VU& kept, VU rb, VU st, VI& e, VI& ovf) {
  VU up;
  switch (R.mode) {
    case Rounding::RNE: up = rb & (st | (kept & 1)); break;  // RNE
    case Rounding::RNA: up = rb; break;                       // RNA
    case Rounding::RD: up = sign & (rb | st); break;         // RD
    case Rounding::RU: up = (sign ^ 1) & (rb | st); break;   // RU
    default: up = VU{}; break;                    // RTZ
  }
  kept += up;
  const VI carry = (kept >> (R.p + 1)) != 0;
  kept = carry ? kept >> 1 : kept;
  e = carry ? e + 1 : e;
  ovf = e > R.emax;
  if (R.enc == Encoding::FN) {  // FN: the top exponent with the mantissa all ones is NaN
    const uint64_t mmask = (uint64_t{1} << R.mbits) - 1;
    ovf |= (e == R.emax) & (((kept << (R.mbits - R.p)) & mmask) == mmask);
  }
  return carry;
}
/// (-1)^sign mag 2^lsb rounded by R (mag != 0 in the lanes used); sticky_in (0/1): a nonzero
/// remainder below mag's last bit (only where mag has bits to drop).
inline Rounded round_core(const LaneRound& R, VU sign, VU mag, VI lsb, VU sticky_in) {
  const VI msb = 63 - clz(mag);
  VI e = lsb + msb;
  VI sub = e < R.emin;
  e = sub ? bc(R.emin) : e;
  const VI sh = e - R.p - lsb;
  // sh <= 0: exact left shift; else keep (mag >> (sh - 1)) with the round bit and the sticky
  // below (a count clamped to 63 gives 0 and sticky = mag != 0: mag < 2^63)
  const VI r = sh - 1;
  const VU m = srl(mag, r);
  const VI isl = sh <= 0;
  const VU rb = isl ? VU{} : (m & 1);
  const VU st = isl ? VU{} : (U((mag & (sll(VU{} + 1, r) - 1)) != 0) & 1) | sticky_in;
  VU kept = isl ? sll(mag, -sh) : (m >> 1);
  VI ovf;
  const VI carry = round_up(R, sign, kept, rb, st, e, ovf);
  sub = sub & ~carry;
  sub = sub & ((kept >> R.p) == 0);
  const VI zero = (kept == 0) | (R.subn ? VI{} : sub);
  return Rounded{kept, e, sub, zero, ovf};
}

/// The encoding of a Rounded (RoundK::round's last steps).
inline VU encode(const LaneRound& R, VU sign, const Rounded& q) {
  const VU sig = q.kept << (R.mbits - R.p);
  const uint64_t mmask = (uint64_t{1} << R.mbits) - 1;
  const VI neg = sign != 0;
  VI to_inf;
  if (R.ovf_inf || R.mode == Rounding::RNE || R.mode == Rounding::RNA) to_inf = bc(-1);
  else if (R.mode == Rounding::RU) to_inf = ~neg;
  else if (R.mode == Rounding::RD) to_inf = neg;
  else to_inf = VI{};
  const VU inf = R.has_inf ? (neg ? VU{} + R.inf_n : VU{} + R.inf_p) : (neg ? VU{} + R.nan_n : VU{} + R.nan_p);
  const VU sb = neg ? VU{} + R.sbit : VU{};
  const VU ovb = to_inf ? inf : (sb | R.maxf);
  const VU E = (q.sub | ((sig >> R.mbits) == 0)) ? VU{} : U(q.e + R.bias);
  VU bits = sb | (E << R.mbits) | (sig & mmask);
  if (R.enc == Encoding::FNUZ) bits = bits == R.sbit ? VU{} : bits;
  const VU z = neg ? VU{} + R.z_n : VU{} + R.z_p;
  return q.zero ? z : (q.ovf ? ovb : bits);
}

/// RoundK::round on every lane: (-1)^sign mag 2^lsb rounded, encoded.
inline VU round_mag(const LaneRound& R, VU sign, VU mag, VI lsb, VU sticky_in = VU{}) {
  return encode(R, sign, round_core(R, sign, mag, lsb, sticky_in));
}

/// RoundK::round_fixed_t: v 2^lsb rounded; an exact zero gets the sign zs (0/1).
inline VU round_fixed(const LaneRound& R, VI v, VI lsb, VU zs) {
  const VI neg = v < 0;
  const VU r = round_mag(R, U(neg) & 1, neg ? VU{} - U(v) : U(v), lsb);
  return v == 0 ? (zs != 0 ? VU{} + R.z_n : VU{} + R.z_p) : r;
}

/// Sub-block j's results into o: d, and bad as 0/1.
inline void put(LaneOut& o, int j, VU d, VI bad) {
  for (int l = 0; l < VL; ++l) {
    o.d[j * VL + l] = d[l];
    o.bad[j * VL + l] = static_cast<uint8_t>(bad[l] != 0);
  }
}

/// A group's sum before its rounding: val 2^lsb; zs the sign (0/1) of an exact zero.
struct Fix {
  VI val, lsb;
  VU zs;
};

/// Lanes [h, h + VL) of the call: one group's sum, c decoded (its special lanes already in
/// bad_out). Trunc: the products are aligned by truncation (every preset); otherwise each term
/// is rounded per lane by fastk::align_v.
template <bool Trunc, bool Late, bool Inter2>
Fix run(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* cols, const Dec& c,
        int n, int h, VI& bad_out) {
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
    const VI xe = nz ? x.exp + y.exp : bc(kNoExp);
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
  // product overflow (|p| >= 2^ovf; msb(p) <= raw_frac + 1, so only with an exponent >= ovf - 1):
  // the exact test only for the lanes that come near it
  if (P.ovf_on) {
    const VI near = (e0 >= P.ovf - 1) | (e1 >= P.ovf - 1);
    if (any(near))
      for (int l = 0; l < VL; ++l) {
        if (!near[l]) continue;
        for (int k = 0; k < n; ++k) {
          const uint64_t s = sig[k][l] >> ps;
          if (s && 63 - __builtin_clzll(s) + ex[k][l] - P.raw_frac >= P.ovf) bad[l] = -1;
        }
      }
  }
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
                 const uint64_t* C, LaneOut& o) {
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
      const Fix s = run<Trunc, Late, Inter2>(P, At, Bt, order + k0, c[j], n, j * VL, bad[j]);
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

namespace {
/// Rows r0 .. r0 + 7 of the block: out already points at column r0. T: the rows' words
/// (uint32_t: widened to 64 bits on the way).
template <class T>
void transpose8(const T* rows, size_t stride, int K, uint64_t* out) {
  int k0 = 0;
#if defined(__AVX512F__)
  // 8 x 8 tiles: three rounds of two-register shuffles (vpermt2q)
  for (; k0 + 8 <= K; k0 += 8) {
    VUN r[8], t[8], u[8];
    for (int i = 0; i < 8; ++i) r[i] = ldn(rows + i * stride + k0);
    for (int i = 0; i < 8; i += 2) {
      t[i] = MC_SHUF(r[i], r[i + 1], 0, 8, 2, 10, 4, 12, 6, 14);
      t[i + 1] = MC_SHUF(r[i], r[i + 1], 1, 9, 3, 11, 5, 13, 7, 15);
    }
    for (int i : {0, 1, 4, 5}) {
      u[i] = MC_SHUF(t[i], t[i + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2] = MC_SHUF(t[i], t[i + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
    for (int i = 0; i < 4; ++i) {
      const VUN lo = MC_SHUF(u[i], u[i + 4], 0, 1, 2, 3, 8, 9, 10, 11);
      const VUN hi = MC_SHUF(u[i], u[i + 4], 4, 5, 6, 7, 12, 13, 14, 15);
      std::memcpy(out + (k0 + i) * L, &lo, sizeof lo);
      std::memcpy(out + (k0 + i + 4) * L, &hi, sizeof hi);
    }
  }
  // 8 x 4: two rows a register
  if (k0 + 4 <= K) {
    VUN w[4];
    for (int j = 0; j < 4; ++j) {  // (two 32-byte stores read back as one 64-byte load stall)
      const __m256i lo = ld4(rows + 2 * j * stride + k0);
      const __m256i hi = ld4(rows + (2 * j + 1) * stride + k0);
      w[j] = reinterpret_cast<VUN>(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
    }
    const VUN p0 = MC_SHUF(w[0], w[1], 0, 4, 8, 12, 1, 5, 9, 13);
    const VUN p1 = MC_SHUF(w[0], w[1], 2, 6, 10, 14, 3, 7, 11, 15);
    const VUN q0 = MC_SHUF(w[2], w[3], 0, 4, 8, 12, 1, 5, 9, 13);
    const VUN q1 = MC_SHUF(w[2], w[3], 2, 6, 10, 14, 3, 7, 11, 15);
    const VUN col[4] = {MC_SHUF(p0, q0, 0, 1, 2, 3, 8, 9, 10, 11),
                       MC_SHUF(p0, q0, 4, 5, 6, 7, 12, 13, 14, 15),
                       MC_SHUF(p1, q1, 0, 1, 2, 3, 8, 9, 10, 11),
                       MC_SHUF(p1, q1, 4, 5, 6, 7, 12, 13, 14, 15)};
    for (int i = 0; i < 4; ++i) std::memcpy(out + (k0 + i) * L, &col[i], sizeof col[i]);
    k0 += 4;
  }
#elif defined(__AVX2__)
  // 4 x 4 tiles, two per 8 rows
  for (; k0 + 4 <= K; k0 += 4) {
    for (int hh = 0; hh < 8; hh += 4) {
      VUN r[4];
      for (int i = 0; i < 4; ++i) r[i] = ldn(rows + (hh + i) * stride + k0);
      const VUN t0 = MC_SHUF(r[0], r[1], 0, 4, 2, 6), t1 = MC_SHUF(r[0], r[1], 1, 5, 3, 7);
      const VUN t2 = MC_SHUF(r[2], r[3], 0, 4, 2, 6), t3 = MC_SHUF(r[2], r[3], 1, 5, 3, 7);
      const VUN col[4] = {MC_SHUF(t0, t2, 0, 1, 4, 5), MC_SHUF(t1, t3, 0, 1, 4, 5),
                         MC_SHUF(t0, t2, 2, 3, 6, 7), MC_SHUF(t1, t3, 2, 3, 6, 7)};
      for (int i = 0; i < 4; ++i) std::memcpy(out + (k0 + i) * L + hh, &col[i], sizeof col[i]);
    }
  }
#endif
  for (; k0 < K; ++k0)
    for (int l = 0; l < 8; ++l) out[k0 * L + l] = rows[l * stride + k0];
}

template <class T>
void transpose_rows(const T* rows, size_t stride, int K, uint64_t* out) {
  static_assert(L % 8 == 0, "rows in eights");
  for (int r0 = 0; r0 < L; r0 += 8) transpose8(rows + r0 * stride, stride, K, out + r0);
}
}  // namespace

void transpose(const uint64_t* rows, size_t stride, int K, uint64_t* out) { transpose_rows(rows, stride, K, out); }
void transpose32(const uint32_t* rows, size_t stride, int K, uint64_t* out) {
  transpose_rows(rows, stride, K, out);
}

namespace {

/// A term of an exact sum on every lane: (-1)^sign sig 2^lsb (sig 0: a zero of that sign).
struct Term2 {
  VU sig;
  VI lsb;
  VU sign;
};

/// fast.cpp sum_round of two terms: fl(x + y) rounded by R, as a floating-point adder does it
/// (sum2: the sum before the rounding; add2: rounded and encoded; add2_term: rounded, as a term).
/// X, the term with the higher top bit, goes to bits 60..; y is shifted to X's last bit. Bits of
/// y shifted out only say on which side of a value the exact sum lies: X + y' (or X - y' - 1,
/// signs differing) with a sticky rounds as the exact sum does, because y' < 2^(my) lies far
/// below X >= 2^60 whenever bits are shifted out, so the sum keeps at least 59 bits (p + 2 and
/// more). Without bits shifted out the sum is exact. fb: terms too wide for this (over 2^58;
/// none of the kernels' terms), left to the caller.
struct Sum2 {
  VU sign, mag;
  VI base;
  VU st;
  VI exact_zero;  ///< the sum is exactly zero: the zero of sign zs
  VU zs;
  VI fb;  ///< a term too wide for this (left to the caller)
};
inline Sum2 sum2(const LaneRound& R, const Term2& x, const Term2& y) {
  const VI xnz = x.sig != 0, ynz = y.sig != 0;
  const VI mx = 63 - clz(x.sig), my = 63 - clz(y.sig);  // -1 for a zero
  const VI tx = xnz ? x.lsb + mx : bc(kNoExp), ty = ynz ? y.lsb + my : bc(kNoExp);
  const VI xa = tx >= ty;
  const VU Xs = xa ? x.sig : y.sig, Ys = xa ? y.sig : x.sig;
  const VU Xn = xa ? x.sign : y.sign, Yn = xa ? y.sign : x.sign;
  const VI mX = xa ? mx : my, mY = xa ? my : mx, lX = xa ? x.lsb : y.lsb, lY = xa ? y.lsb : x.lsb;
  const VI sx = 60 - mX;
  const VU Xp = sll(Xs, sx);
  const VI base = lX - sx;  // the sum's last bit
  const VI k = lY - base;   // y's last bit above it (a zero y: any; it adds 0 and no sticky)
  const VU Yp = k >= 0 ? sll(Ys, k) : srl(Ys, -k);
  const VU st = U((k < 0) & ((Ys & (sll(VU{} + 1, -k) - 1)) != 0)) & 1;
  const VI xv = S(Xp), yv = S(Yp);
  const VI v = S((Xn != 0 ? VU{} - U(xv) : U(xv)) + (Yn != 0 ? VU{} - U(yv) : U(yv)));
  const VI vneg = v < 0;
  const VI has_st = st != 0;
  const VU sign = has_st ? Xn : U(vneg) & 1;
  const VU mag = has_st ? ((Xn ^ Yn) != 0 ? Xp - Yp - 1 : Xp + Yp) : (vneg ? VU{} - U(v) : U(v));
  // zero sign: both terms zero: their common sign; a sum that cancels: RD gives -0
  const VU zs = (xnz | ynz) != 0 ? VU{} + (R.mode == Rounding::RD ? 1 : 0) : x.sign & y.sign;
  return Sum2{sign, mag, base, st, ~has_st & (v == 0), zs, (mX > 58) | (mY > 58)};
}
inline VU add2(const LaneRound& R, const Term2& x, const Term2& y, VI& fb) {
  const Sum2 q = sum2(R, x, y);
  fb = q.fb;
  const VU r = round_mag(R, q.sign, q.mag, q.base, q.st);
  return q.exact_zero ? (q.zs != 0 ? VU{} + R.z_n : VU{} + R.z_p) : r;
}

/// term(dec(f, encode(R, sign, q)), cmb) without the encoding and the decoding (R rounds to
/// the format f): the rounded value as the next level's term. A lane that overflows (Inf, NaN
/// or the largest finite) is marked in bad (the scalar kernel takes the sample).
inline Term2 as_term(const LaneRound& R, const LaneFmt& f, int cmb, VU sign, const Rounded& q, VI& bad) {
  const VU sig = q.kept << (R.mbits - R.p);
  const VI esub = q.sub | ((sig >> R.mbits) == 0);  // the encoding's exponent field is 0
  const VI exp = esub ? bc(1 - f.bias) : q.e + (R.bias - f.bias);
  const VU zsign = sign != 0 ? VU{} + ((R.z_n >> f.sign_shift) & 1) : VU{} + ((R.z_p >> f.sign_shift) & 1);
  bad |= q.ovf & ~q.zero;
  return Term2{q.zero ? VU{} : (esub ? sig & f.sub_mask : sig), exp - cmb, q.zero ? zsign : sign};
}

/// The sum of two terms rounded by R, as a term in f (term(dec(f, add2(R, x, y)), cmb)).
inline Term2 add2_term(const LaneRound& R, const LaneFmt& f, int cmb, const Term2& x, const Term2& y, VI& bad) {
  const Sum2 s = sum2(R, x, y);
  Rounded q = round_core(R, s.sign, s.mag, s.base, s.st);
  q.zero |= s.exact_zero;
  bad |= s.fb;
  return as_term(R, f, cmb, s.exact_zero ? s.zs : s.sign, q, bad);
}

inline Term2 term(const Dec& d, int mbits) { return Term2{d.sig, d.exp - mbits, d.sign}; }

/// The encoding in R's format of a term that it holds exactly (a normal number or a zero: the
/// tree's products and sums under pairwise_run's fast levels).
inline VU pack_term(const LaneRound& R, const Term2& t) {
  const VI top = 63 - clz(t.sig);
  const VU E = U(t.lsb + top + R.bias);
  const VU frac = sll(t.sig, bc(R.mbits) - top) & ((uint64_t{1} << R.mbits) - 1);
  const VU sb = t.sign != 0 ? VU{} + R.sbit : VU{};
  return t.sig != 0 ? sb | (E << R.mbits) | frac : sb;
}

/// fl(a + b) for a and b encoded in R's format (IEEE encoding, normal numbers or zeros; an
/// exponent field of 0 reads as zero), rounded to nearest even with no subnormal results: a
/// floating-point adder on the encodings. X, the operand of the larger magnitude (one compare of
/// the encodings), goes with its hidden bit to bit 61; Y is shifted right by the exponents'
/// difference, the bits shifted out (only when Y lies more than 61 - mbits bits below) kept
/// as a sticky, so X + Y' or X - Y' - 1 with the sticky rounds as the exact sum does (sum2;
/// binary32 sums keep 37 bits below the round bit, too many for the sticky ever to decide a
/// rounding there: tb/test_fast.cpp does not catch it dropped. It keeps wider formats exact).
/// The rounding adds 2^(round bit) - 1 + the last kept bit to the sum with the sticky or-ed
/// into its bit 0 (at least 9 bits below the round bit), and the exponent field to the kept
/// bits, the hidden one included, so that a carry out of the rounding moves into the exponent.
/// Lanes whose sum may leave the normal range (an exponent field outside [1, emax field - 1]
/// before the rounding), and with Subnormals those with a subnormal operand, are marked in
/// slow: the caller takes them through add2_term (add2).
template <bool Subnormals>
inline VU add_rne_ftz(const LaneRound& R, VU a, VU b, VI& slow) {
  const int mb = R.mbits, G = 61 - R.mbits;
  const uint64_t hid = uint64_t{1} << mb, mm = hid - 1, absm = R.sbit - 1;
  const VU ma = a & absm, mbv = b & absm;
  const VI sw = mbv > ma;
  const VU X = sw ? b : a, mX = sw ? mbv : ma, mY = sw ? ma : mbv;
  const VU eX = mX >> mb, eY = mY >> mb;
  const VU fX = (mX & mm) | hid, fY = eY != 0 ? (mY & mm) | hid : VU{};
  const VI d = S(eX - eY);  // >= 0
  const VU Y0 = fY << G, Ys = srl(Y0, d);
  const VU st = U(sll(Ys, d) != Y0) & 1;  // bits of Y shifted out
  const VI differ = ((a ^ b) & R.sbit) != 0;
  const VU Xs = fX << G;
  const VU v = differ ? Xs - Ys - st : Xs + Ys;  // >= 0 (|X| >= |Y|), < 2^63
  const VI lz = clz(v);                           // >= 1
  const VU r = (sll(v, lz) >> 1) | st;            // the leading one at bit 62
  const VU kept = (r + ((uint64_t{1} << (61 - mb)) - 1) + ((r >> (62 - mb)) & 1)) >> (62 - mb);
  const VI e = S(eX) + 2 - lz;  // the biased exponent before the rounding
  const VI nz = (v != 0) & (eX != 0);
  slow |= nz & (U(e - 1) >= static_cast<uint64_t>(R.emax + R.bias - 1));
  // a subnormal operand, which this adder reads as zero (DAZ): slow too where that is not meant
  if (Subnormals) slow |= ((eX == 0) & (mX != 0)) | ((eY == 0) & (mY != 0));
  const VU bits = (X & R.sbit) | ((U(e - 1) << mb) + kept);
  // a zero: both terms zero: their common sign; a sum that cancels: +0
  const VU z = ((eX == 0) & (((a & b) & R.sbit) != 0)) ? VU{} + R.z_n : VU{} + R.z_p;
  return nz ? bits : z;
}

/// Each product of lv[0..n) rounded to out_fmt (RNE); one that rounds to Inf: bad (the
/// reference takes the sample).
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


/// A signed 128-bit value per lane in two limbs (two's complement).
struct W2 {
  VU lo, hi;
};
inline W2 w_sel(VI m, W2 a, W2 b) { return W2{m ? a.lo : b.lo, m ? a.hi : b.hi}; }
inline W2 w_add(W2 a, W2 b) {
  const VU lo = a.lo + b.lo;
  return W2{lo, a.hi + b.hi + (U(lo < a.lo) & 1)};  // lo < a.lo: a carry
}
inline W2 w_sub(W2 a, W2 b) {
  const VU lo = a.lo - b.lo;
  return W2{lo, a.hi - b.hi - (U(a.lo < b.lo) & 1)};
}
/// sig << off, 0 <= off <= 127 (sig < 2^64; the bits above 128 are lost: callers keep them 0).
inline W2 w_shl(VU sig, VI off) {
  const VI hi_sh = off - 64;
  return W2{sll(sig, off), hi_sh >= 0 ? sll(sig, hi_sh) : srl(sig, 64 - off)};
}
/// floor(x / 2^s), s >= 0 (any size), and whether the bits shifted out were nonzero.
inline W2 w_sra(W2 x, VI s, VI& st) {
  const VI big = s >= 64;
  const VI s1 = big ? s - 64 : s;  // 0 .. : the shift within the limb pair
  const VU lo_m = big ? x.hi : x.lo, hi_m = big ? U(sra(S(x.hi), bc(63))) : x.hi;
  // dropped: big: x.lo whole and the low s1 bits of x.hi; else the low s bits of x.lo
  const VU low_mask = sll(VU{} + 1, s1) - 1;  // s1 > 63: every bit
  st = big ? ((x.lo != 0) | ((x.hi & low_mask) != 0)) : ((x.lo & low_mask) != 0);
  const VU lo = (srl(lo_m, s1)) | (s1 > 0 ? sll(hi_m, 64 - s1) : VU{});
  // s1 > 63 (only when big): lo = hi >> s1 arithmetically, i.e. the sign
  const VU lo2 = s1 > 63 ? U(sra(S(hi_m), bc(63))) : lo;
  return W2{lo2, U(sra(S(hi_m), s1))};
}
/// Leading bit of a nonzero 128-bit magnitude (-1 for zero).
inline VI w_msb(W2 x) { return x.hi != 0 ? 127 - clz(x.hi) : 63 - clz(x.lo); }

/// x << off, 0 <= off <= 127, for x < 2^128 whose bits stay below 2^128; 0 for a negative off.
inline W2 w_shl2(W2 x, VI off) {
  W2 r = w_shl(x.lo, off);
  r.hi |= sll(x.hi, off);  // 0 for off > 63: those bits would lie above 2^128
  return r;
}
/// The exact product of two significands below 2^54 (binary64: 53 bits): 128 bits from four
/// 32 x 32-bit products.
inline W2 mul53(VU a, VU b) {
  const VU a1 = a >> 32, b1 = b >> 32;
  const VU ll = mul32(a, b), hh = mul32(a1, b1), mid = mul32(a, b1) + mul32(a1, b);  // mid < 2^55
  const VU lo = ll + (mid << 32);
  return W2{lo, hh + (mid >> 32) + (U(lo < ll) & 1)};
}

/// Term k of exact_run's terms (k = n: c) shifted left by off (the products of Wide have two
/// limbs; off < 0 or a shift past 127 bits gives 0).
template <bool Wide>
inline W2 term_at(const W2* sig, int k, int n, VI off) {
  return k < n && Wide ? w_shl2(sig[k], off) : w_shl(sig[k].lo, off);
}

/// One level of exact_run's terms below its first grid: the terms of lows[] whose last bit lies
/// at or above the grid Gn, summed exactly on it; they leave lows[]. rest_top: the highest top
/// of the terms still below.
struct Level {
  W2 sum;
  VI rest_top;
};
template <bool Wide>
inline Level level_sum(const W2* sig, const VI* lsb, const VI* top, const VU* ng, VI* lows, int n, VI Gn) {
  W2 low{VU{}, VU{}};
  VI rest_top = bc(kNoExp);
  for (int k = 0; k <= n; ++k) {
    const VI off = lsb[k] - Gn;
    const W2 t = term_at<Wide>(sig, k, n, off);
    low = w_sel(lows[k] & (off >= 0), w_sel(ng[k] != 0, w_sub(low, t), w_add(low, t)), low);
    lows[k] &= off < 0;
    rest_top = lows[k] ? vmax(rest_top, top[k]) : rest_top;
  }
  return Level{low, rest_top};
}

/// exact_run's terms below its second grid G (lows[k]: term k lies below; low_top: their
/// highest top): further grids, each 118 bits below the top of the terms still left, summed
/// exactly (level_sum); then folded bottom up, each level's sum shifted down to the grid above
/// it with a sticky, the last one to G. Terms beyond kLevels more levels: bad (the scalar
/// kernel). Out of line, so that the common case does not pay for it.
struct LowSum {
  W2 sum;      ///< the levels' sum on G (floored)
  VI st, bad;  ///< bits dropped below G; lanes left to the scalar kernel
};
template <bool Wide>
__attribute__((noinline)) LowSum low_levels(const W2* sig, const VI* lsb, const VI* top, const VU* ng, VI* lows,
                                            int n, VI G, VI low_top) {
  VI st{}, bad{};
  constexpr int kLevels = 6;
  W2 lv_sum[kLevels];
  VI lv_G[kLevels];
  int nl = 0;
  VI has_low = low_top != kNoExp, above = G;
  while (any(has_low)) {
    if (nl == kLevels) {
      bad |= has_low;
      break;
    }
    const VI Gn = has_low ? low_top - 118 : above;
    const Level lv = level_sum<Wide>(sig, lsb, top, ng, lows, n, Gn);
    lv_sum[nl] = lv.sum;
    low_top = lv.rest_top;
    lv_G[nl++] = Gn;
    above = Gn;
    has_low = low_top != kNoExp;
  }
  W2 acc = lv_sum[nl - 1];
  for (int i = nl - 1; i >= 0; --i) {
    VI s1;
    const W2 f = w_sra(acc, (i ? lv_G[i - 1] : G) - lv_G[i], s1);
    st |= s1;
    acc = i ? w_add(lv_sum[i - 1], f) : f;
  }
  return LowSum{acc, st, bad};
}

/// x >> s for x >= 0, s >= 0 (any size), and whether bits were shifted out (0/-1). The counts
/// out of range give 0 (srl, sll), so no selects: 64 <= s < 128 takes lo from hi >> (s - 64)
/// (for s = 64 the two terms are both hi).
inline W2 w_srl_st(W2 x, VI s, VI& st) {
  const VI sc = vmin(s, bc(128));
  st = (sll(x.lo, vmax(64 - sc, VI{})) | sll(x.hi, vmax(128 - sc, VI{}))) != 0;
  return W2{srl(x.lo, sc) | sll(x.hi, 64 - sc) | srl(x.hi, sc - 64), srl(x.hi, sc)};
}
/// w_srl_st of W2{0, h}.
inline W2 w_srl_st_hi(VU h, VI s, VI& st) {
  const VI sc = vmin(s, bc(128));
  st = sll(h, vmax(128 - sc, VI{})) != 0;
  return W2{sll(h, 64 - sc) | srl(h, sc - 64), srl(h, sc)};
}

/// A significand of up to NP + 1 bits normalised: its leading one moved to bit NP, the exponent
/// lowered by as much (a zero stays zero).
template <int NP>
inline void norm_sig(VU& sig, VI& exp) {
  const VI sh = clz(sig) - (63 - NP);
  sig = sll(sig, sh);
  exp -= sh;
}

/// A product of binary64 significands as a term: (-1)^sign sig 2^lsb, sig 0 (nz false) or in
/// [2^104, 2^106) (normalised factors, norm_sig<52>).
struct TermW {
  W2 sig;
  VI lsb;
  VU sign;
  VI nz;
};

/// The exact sum of c and a product, for the rounder: (-1)^sign top 2^lsb, top's leading one at
/// bit 63 with every bit of the sum below top's last bit jammed into that bit (exact_zero: the
/// sum is exactly zero).
struct SumW {
  VU sign, top;
  VI lsb, exact_zero;
  VU zs;
};
/// c (its significand normalised: bit 52 leading, or 0) plus a product p, exactly, on a frame
/// of 128 bits whose bit 124 is the higher of the two terms' tops T:
///
///   bit   127  124                     72                 19            0
///          |00 | C = c.sig << 72, 53 bits |                 |            |   c at T
///          |00 |   P << 19, 106 bits (its top bit 124 or 123)            |   p at T
///
/// the other term shifted right by its distance below T, the bits shifted out jammed into its
/// last bit (w_srl_st). A term loses bits only when it lies far below (C more than 72 bits,
/// P more than 19), so the other, at T, has at least 123 bits and so has the sum: the jammed
/// bit lies at least 2 bits below the rounding position, where a value strictly between two
/// integers and the odd one of them round alike. The sum (or difference, made nonnegative)
/// normalised to its leading one: its top 64 bits, the rest jammed into the last.
inline SumW sum2w(const LaneRound& R, const Term2& c, const TermW& p) {
  const VI cnz = c.sig != 0;
  const VI tc = cnz ? c.lsb + 52 : bc(kNoExp), tp = p.nz ? p.lsb + 105 : bc(kNoExp);
  const VI T = vmax(tc, tp);
  VI stp, stc;
  W2 Pf = w_srl_st(W2{p.sig.lo << 19, (p.sig.hi << 19) | (p.sig.lo >> 45)}, T - tp, stp);
  W2 Cf = w_srl_st_hi(c.sig << 8, T - tc, stc);
  Pf.lo |= U(stp) & 1;
  Cf.lo |= U(stc) & 1;
  const VI differ = (c.sign ^ p.sign) != 0;
  const W2 s = w_sel(differ, w_sub(Pf, Cf), w_add(Pf, Cf));
  const VI neg = S(s.hi) < 0;  // only when the signs differ: C - P > 0
  const W2 mag = w_sel(neg, w_sub(W2{VU{}, VU{}}, s), s);
  // the leading one to bit 127: its top 64 bits, the rest jammed (sll/srl: counts out of range
  // give 0; lz = 64 makes the two lo terms equal)
  const VI lz = mag.hi == 0 ? 64 + clz(mag.lo) : clz(mag.hi);
  const VU top = sll(mag.hi, lz) | srl(mag.lo, 64 - lz) | sll(mag.lo, lz - 64) | (U(sll(mag.lo, lz) != 0) & 1);
  const VI zero = (mag.lo | mag.hi) == 0;
  const VU zs = (cnz | p.nz) != 0 ? VU{} + (R.mode == Rounding::RD ? 1 : 0) : c.sign & p.sign;
  return SumW{neg ? c.sign : p.sign, top, T - 124 + 64 - lz, zero, zs};
}

/// sum2w for the binary32 FMA chains, in 64 bits: c's significand normalised to bit 23 (or 0),
/// the product's factors to bit 23, so that a nonzero product lies in [2^46, 2^48):
///
///   bit   63 60            37                13           0
///         |00| C = c.sig << 37 |               |           |   c at T
///         |00|   P << 13, 48 bits (its top bit 60 or 59)   |   p at T
///
/// the lower term shifted right with its bits jammed (C loses bits more than 37 bits below T,
/// P more than 13, and the other keeps at least 59 bits). The sum normalised in one shift.
inline SumW sum2n(const LaneRound& R, const Term2& c, const Term2& p, VI pnz) {
  const VI cnz = c.sig != 0;
  const VI tc = cnz ? c.lsb + 23 : bc(kNoExp), tp = pnz ? p.lsb + 47 : bc(kNoExp);
  const VI T = vmax(tc, tp);
  // counts over 63 shift every bit out, as 63 does (the values lie below 2^61)
  const VI dp = vmin(T - tp, bc(63)), dc = vmin(T - tc, bc(63));
  const VU P0 = p.sig << 13, C0 = c.sig << 37;
  const VU Pf = srl(P0, dp) | (U(sll(P0, 64 - dp) != 0) & 1);
  const VU Cf = srl(C0, dc) | (U(sll(C0, 64 - dc) != 0) & 1);
  const VI differ = (c.sign ^ p.sign) != 0;
  const VI sum = differ ? S(Pf - Cf) : S(Pf + Cf);
  const VI neg = sum < 0;  // only when the signs differ: C - P > 0
  const VU mag = U(neg ? -sum : sum);
  const VI lz = clz(mag);
  const VU zs = (cnz | pnz) != 0 ? VU{} + (R.mode == Rounding::RD ? 1 : 0) : c.sign & p.sign;
  return SumW{neg ? c.sign : p.sign, sll(mag, lz), T - 60 - lz, mag == 0, zs};
}

/// round_core for sum2w's and sum2n's sums whose result is normal (the rounding position at bit 63 - R.p
/// of top, fixed): q.sub and q.zero 0; lanes with a subnormal result (nsub) are left to
/// round_core (zeros excepted: their q is not used).
inline Rounded round_top(const LaneRound& R, VU sign, VU top, VI lsb, VI& nsub) {
  VI e = lsb + 63;
  nsub = e < R.emin;
  VU kept = top >> (63 - R.p);
  const VU rb = (top >> (62 - R.p)) & 1;
  const VU st = U((top << (R.p + 2)) != 0) & 1;
  VI ovf;
  round_up(R, sign, kept, rb, st, e, ovf);
  return Rounded{kept, e, VI{}, VI{}, ovf};
}

/// The exact adder (CDNA1 fp16/bf16 and the binary64 FMA chains, fast.cpp exact_group): the
/// products and c summed exactly, one rounding by R. Wide: significands of up to 53 bits,
/// 106-bit products; else products of up to 24 x 24 bits.
///
/// Every term (the products, c) is an integer times 2^lsb, below 2^(top + 1). The terms whose
/// last bit lies at or above G = (the highest top) - 118 are summed exactly in 128 bits (two
/// 64-bit limbs a lane, with carries) on that grid. The others, far below the top term, are
/// summed exactly on a grid of their own (G2 = their highest top - 118; terms below G2 on
/// further grids, low_levels), and that sum joins the first shifted right to G, its bits below
/// G kept as a sticky: the exact sum then lies strictly between two neighbours on the grid,
/// which rounds as the exact sum does whenever the rounding position lies at least two bits
/// above the grid. A lane with a sum too small for that, or with terms beyond the last grid,
/// is bad (the scalar kernel of fast.cpp takes it).
template <bool Wide>
VU exact_run(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* cols, VU cbits,
             int n, int h, VI& bad_out) {
  W2 sig[65];
  VU ng[65];
  VI lsb[65], top[65];
  VI bad{}, all_top = bc(kNoExp);
  VU anz{}, aneg = VU{} + 1;
  for (int k = 0; k < n; ++k) {
    const size_t col = static_cast<size_t>(cols[k]) * L + h;
    const Dec x = dec(P.a, ld(At + col)), y = dec(P.b, ld(Bt + col));
    const W2 s = Wide ? mul53(x.sig, y.sig) : W2{mul32(x.sig, y.sig), VU{}};
    const VI xe = x.exp + y.exp, nz = (s.lo | s.hi) != 0;
    bad |= x.special | y.special;
    top[k] = nz ? xe + 1 : bc(kNoExp);  // a product < 2^(xe + 2)
    all_top = vmax(all_top, top[k]);
    anz |= U(nz);
    sig[k] = s;
    lsb[k] = xe - P.raw_frac;
    ng[k] = x.sign ^ y.sign;
    aneg &= ng[k];
  }
  if (P.ovf_on) {  // as in run(): the exact test only near the limit
    const VI near = all_top >= P.ovf;
    if (any(near))
      for (int l = 0; l < VL; ++l) {
        if (!near[l]) continue;
        for (int k = 0; k < n; ++k) {
          const uint64_t hi = sig[k].hi[l], lo = sig[k].lo[l];
          const int msb = hi ? 127 - __builtin_clzll(hi) : lo ? 63 - __builtin_clzll(lo) : -1;
          if (msb >= 0 && msb + lsb[k][l] >= P.ovf) bad[l] = -1;
        }
      }
  }
  const int cmb = static_cast<int>(P.c.mbits);
  const Dec c = dec(P.c, cbits);
  bad |= c.special;
  const VI cnz = c.sig != 0;
  anz |= U(cnz);
  aneg &= c.sign;
  sig[n] = W2{c.sig, VU{}};
  lsb[n] = c.exp - cmb;
  top[n] = cnz ? c.exp : bc(kNoExp);
  ng[n] = c.sign;
  all_top = vmax(all_top, top[n]);
  const VI G = all_top - 118;
  // the terms on G (a term below it shifts to 0 there); the terms below G
  W2 sum{VU{}, VU{}};
  VI low_top = bc(kNoExp);
  VI lows[65];
  for (int k = 0; k <= n; ++k) {
    const VI off = lsb[k] - G;
    const W2 t = term_at<Wide>(sig, k, n, off);
    sum = w_sel(ng[k] != 0, w_sub(sum, t), w_add(sum, t));
    lows[k] = (top[k] != kNoExp) & (off < 0);
    low_top = lows[k] ? vmax(low_top, top[k]) : low_top;
  }
  const VI has_low = low_top != kNoExp;
  VI st{};
  if (any(has_low)) {  // (rare for the presets but CDNA1 bf16: products far apart, c far below)
    const VI G2 = has_low ? low_top - 118 : G;
    const Level lv = level_sum<Wide>(sig, lsb, top, ng, lows, n, G2);
    W2 low = lv.sum;
    const VI rest_top = lv.rest_top;
    VI st_below{};  // bits dropped below G2
    if (any(rest_top != kNoExp)) {
      const LowSum lo = low_levels<Wide>(sig, lsb, top, ng, lows, n, G2, rest_top);
      low = w_add(low, lo.sum);
      st_below = lo.st;
      bad |= lo.bad;
    }
    const W2 f = w_sra(low, G - G2, st);
    st |= st_below;
    sum = w_add(sum, f);
  }
  // the magnitude: sum >= 0: sum (+ sticky); sum < 0: -sum - 1 + sticky, or -sum without
  const VI neg = S(sum.hi) < 0;
  const W2 nm = w_sub(w_sub(W2{VU{}, VU{}}, sum), W2{U(st) & 1, VU{}});
  const W2 mag = w_sel(neg, nm, sum);
  const VI m = w_msb(mag);
  bad |= st & (m < P.R.p + 2);  // the rounding position must lie above the grid's last bit
  // the top 62 bits of the magnitude and a sticky for the rest
  const VI sh = vmax(m - 61, VI{});
  VI st2;
  const W2 top62 = w_sra(mag, sh, st2);  // mag >= 0: a logical shift
  const VI zero = ~st & (sum.lo == 0) & (sum.hi == 0);
  const VU zs = anz != 0 ? VU{} + (P.zs_rd ? 1 : 0) : aneg;
  const VU r = round_mag(P.R, U(neg) & 1, top62.lo, G + sh, U(st | st2) & 1);
  bad_out |= bad;
  return zero ? (zs != 0 ? VU{} + P.R.z_n : VU{} + P.R.z_p) : r;
}

/// exact_run for products of at most 24 x 24 bits and c of at most 53 bits, N terms in all
/// (N - 1 = n_fma products; a short last group's missing ones are zeros), N <= 8, by sorted
/// accumulation in 64 bits. Each term is normalised, its leading one at bit 58 of a signed
/// 64-bit value v: (-1)^sign v 2^(t - 58), t its top. The terms are sorted by t, lowest first
/// (a network of compare-exchanges), and summed in that order: the sum so far is shifted right
/// to the next term's frame, its bits shifted out jammed into its last bit, and the term added:
///
///   bit   63 62  58                      0
///         |s |   |v: the term, <= 58 bits |    frame of the term's top t: last bit 2^(t - 58)
///         |  S >> (t - t_prev), jammed    |    (< 7 x 2^59: fits)
///
/// The term is exact on the frame with its last bit even (its width is at most 53 bits), so the
/// jammed sum stays the odd one of the two integers around the exact sum; it rounds as the
/// exact sum does where the rounding position lies at least two bits above the frame's last
/// bit. A lane with a jam and a sum too small for that is bad (the scalar kernel), as in
/// exact_run.
template <int N>
VU exact_sorted(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* cols, VU cbits,
                int n, int h, VI& bad_out) {
  static_assert(N >= 2 && N <= 8, "sums of at most 8 terms fit");
  VI t[N], v[N];
  VI bad{};
  VU anz{}, aneg = VU{} + 1;
  auto put = [&](int k, VU sig, VI lsb, VU sign) {
    const VI lz = clz(sig), nz = sig != 0;
    t[k] = nz ? lsb + 63 - lz : bc(kNoExp);
    const VI m = S(sll(sig, lz - 5));
    v[k] = sign != 0 ? -m : m;
    anz |= U(nz);
    aneg &= sign;
  };
  for (int k = 0; k + 1 < N; ++k) {
    if (k >= n) {  // a short last group
      t[k] = bc(kNoExp);
      v[k] = VI{};
      continue;
    }
    const size_t col = static_cast<size_t>(cols[k]) * L + h;
    const Dec x = dec(P.a, ld(At + col)), y = dec(P.b, ld(Bt + col));
    bad |= x.special | y.special;
    put(k, mul32(x.sig, y.sig), x.exp + y.exp - P.raw_frac, x.sign ^ y.sign);
    if (P.ovf_on) bad |= t[k] >= P.ovf;  // as exact_run: the product's top bit at ovf or above
  }
  const Dec c = dec(P.c, cbits);
  bad |= c.special;
  put(N - 1, c.sig, c.exp - static_cast<int>(P.c.mbits), c.sign);
  for (int i = 0; i + 1 < N; ++i)
    for (int k = 0; k + 1 < N - i; ++k) {
      const VI sw = t[k] > t[k + 1];
      const VI tk = t[k], vk = v[k];
      t[k] = sw ? t[k + 1] : tk;
      v[k] = sw ? v[k + 1] : vk;
      t[k + 1] = sw ? tk : t[k + 1];
      v[k + 1] = sw ? vk : v[k + 1];
    }
  VI s = v[0], top = t[0], jam{};
  for (int k = 1; k < N; ++k) {
    const VI d = vmin(t[k] - top, bc(63));  // >= 0; 63: floor and sticky as any larger count
    const VI lost = sll(U(s), 64 - d) != 0;
    s = S(U(sra(s, d)) | (U(lost) & 1)) + v[k];
    jam |= lost;
    top = t[k];
  }
  const VI neg = s < 0;
  const VU mag = U(neg ? -s : s);
  bad |= jam & (63 - clz(mag) < P.R.p + 2);
  const VU zs = anz != 0 ? VU{} + (P.zs_rd ? 1 : 0) : aneg;
  const VU r = round_mag(P.R, U(neg) & 1, mag, top - 58);
  bad_out |= bad;
  return s == 0 ? (zs != 0 ? VU{} + P.R.z_n : VU{} + P.R.z_p) : r;
}

/// Every group of the block, each one's d the next one's c.
template <class G>
void chain(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
           const uint64_t* C, LaneOut& o, G run_group) {
  // the sub-blocks of VL lanes side by side, group by group: their chains through c are
  // independent, so the core overlaps one's rounder with the other's
  const int g = P.n_fma;
  constexpr int NB = L / VL;
  VU acc[NB];
  VI bad[NB];
  for (int j = 0; j < NB; ++j) {
    acc[j] = ld(C + j * VL);
    bad[j] = VI{};
  }
  for (int k0 = 0; k0 < K; k0 += g)
    for (int j = 0; j < NB; ++j)
      acc[j] = run_group(P, At, Bt, order + k0, acc[j], K - k0 < g ? K - k0 : g, j * VL, bad[j]);
  for (int j = 0; j < NB; ++j) put(o, j, acc[j], bad[j]);
}

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

void c_final(const LaneParams& P, const uint64_t* acc, const uint64_t* C, LaneOut& o) {
  const int mb = static_cast<int>(P.c.mbits);
  for (int h = 0; h < L; h += VL) {
    const Dec a = dec(P.acc, ld(acc + h)), c = dec(P.c, ld(C + h));
    VI fb{};
    VU r{};
    VI slow = bc(-1);
    if (P.fast_cfinal) r = add_rne_ftz<true>(P.Rc, ld(acc + h), ld(C + h), slow = VI{});
    if (any(slow)) r = slow ? add2(P.Rc, term(a, mb), term(c, mb), fb) : r;
    const VI bad = a.special | c.special | (slow & fb);
    for (int l = 0; l < VL; ++l) {
      o.d[h + l] = r[l];
      o.bad[h + l] = static_cast<uint8_t>(bad[l] != 0);
    }
  }
}

void block(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
           const uint64_t* C, LaneOut& o) {
  const bool trunc = P.mode == AlignRound::Truncate;
  if (is_fma_chain(P) && P.ieee_rne) fma_chain_fixed<false, true>(P, At, Bt, order, K, C, o);
  else if (is_fma_chain(P) && fits_fixed_narrow(P)) fma_chain_fixed<false, false>(P, At, Bt, order, K, C, o);
  else if (is_fma_chain(P)) fma_chain(P, At, Bt, order, K, C, o);
  else if (is_wide_fma_chain(P) && P.ieee_rne) fma_chain_fixed<true, true>(P, At, Bt, order, K, C, o);
  else if (is_wide_fma_chain(P)) fma_chain_fixed<true, false>(P, At, Bt, order, K, C, o);
  else if (P.pairwise && P.fast_levels) tree_chain(P, At, Bt, order, K, C, o);
  else if (P.pairwise) chain(P, At, Bt, order, K, C, o, pairwise_run);
  else if (P.exact && P.wide) chain(P, At, Bt, order, K, C, o, exact_run<true>);
  else if (P.exact && P.n_fma >= 1 && P.n_fma <= 7) {
    // exact_sorted of n_fma + 1 terms
    static constexpr decltype(&exact_sorted<2>) kSorted[] = {exact_sorted<2>, exact_sorted<3>, exact_sorted<4>,
                                                           exact_sorted<5>, exact_sorted<6>, exact_sorted<7>,
                                                           exact_sorted<8>};
    chain(P, At, Bt, order, K, C, o, kSorted[P.n_fma - 1]);
  } else if (P.exact) chain(P, At, Bt, order, K, C, o, exact_run<false>);
  else if (trunc && !P.late_c) fused_chain<true, false, false>(P, At, Bt, order, K, C, o);
  else if (trunc && P.inter2) fused_chain<true, true, true>(P, At, Bt, order, K, C, o);
  else if (trunc) fused_chain<true, true, false>(P, At, Bt, order, K, C, o);
  else if (!P.late_c) fused_chain<false, false, false>(P, At, Bt, order, K, C, o);
  else if (P.inter2) fused_chain<false, true, true>(P, At, Bt, order, K, C, o);
  else fused_chain<false, true, false>(P, At, Bt, order, K, C, o);
}

}  // namespace mc::lanes::MC_LANES_NS
