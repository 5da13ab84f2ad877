// The lane kernels' SIMD primitives (docs/performance.md): the lane vector types of this build's
// instruction set, loads, shifts, counts, the operand decoder (dec), the rounder (round_core,
// encode, round_mag, round_fixed) and put. Every lane kernel family (fused.cpp, tree.cpp,
// exact.cpp, fma.cpp) is built on them. Included once per instruction set: MC_LANES_NS names the
// namespace (generic, avx2, avx512, avx512x2) and the build adds that set's -march flags
// (CMakeLists.txt). Every step runs over the lanes with the same operations for each (selects
// instead of branches), which is what lets the compiler vectorise it. tb/test_lanes.cpp checks
// the primitives against the stage functions (stages.hpp).
#pragma once
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

#include "../fast_align.hpp"
#include "../fast_lanes.hpp"

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
// internal to the lane files (the linkage the compiler inlines and specialises freely)
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

// The general rounder is the slow path of every kernel: kept out of line, and round_fixed, its
// caller, inline. Left to themselves, Clang inlines it into round_fixed and calls that instead,
// GCC inlines it into the fused kernels: either way the hot loop of the fused kernels spills
// more (measured against the single-file build: docs/performance.md).
#define MC_LANES_COLD __attribute__((noinline))
#define MC_LANES_HOT __attribute__((always_inline))

/// RoundK::round on every lane: (-1)^sign mag 2^lsb rounded, encoded.
MC_LANES_COLD inline VU round_mag(const LaneRound& R, VU sign, VU mag, VI lsb, VU sticky_in = VU{}) {
  return encode(R, sign, round_core(R, sign, mag, lsb, sticky_in));
}

/// RoundK::round_fixed_t: v 2^lsb rounded; an exact zero gets the sign zs (0/1).
MC_LANES_HOT inline VU round_fixed(const LaneRound& R, VI v, VI lsb, VU zs) {
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
}  // namespace
}  // namespace mc::lanes::MC_LANES_NS
