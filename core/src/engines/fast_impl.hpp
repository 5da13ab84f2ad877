// Internal to the fast kernels: what FastDot's lowering produces (FastDot::Impl: the scalar
// kernel, its precomputed operand decoders and rounders, the lane kernels' typed parameters)
// and the lowering steps of fast_lower.cpp. The kernels themselves: fast.cpp (scalar),
// lanes/ (the lane kernels).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "matcore/fast.hpp"
#include "matcore/model.hpp"
#include "matcore/stages.hpp"
#include "fast_lanes.hpp"

namespace mc {
namespace fastk {

// ---------------------------------------------------------------------------------------------
// Operand decode: one table lookup for 8-bit formats, branch-free arithmetic for wider ones.
//   table entry:  bit 31 special (NaN/Inf) | bit 30 sign | bits 16..27 exp + 2048 | bits 0..15 sig
struct Op {
  uint64_t sig;
  int exp;
  bool sign;
  bool special;
};

struct InFmt {
  Format f;
  bool sub_in = true;
  uint64_t wmask = 0;
  std::vector<uint32_t> table;  // empty: arithmetic decode (formats over 8 bits)

  void build(const Format& fmt, bool sub) {
    f = fmt;
    sub_in = sub;
    wmask = f.width() >= 64 ? ~uint64_t{0} : (uint64_t{1} << f.width()) - 1;
    mbits = f.mbits;
    width = f.width();
    bias = f.bias;
    top = (uint64_t{1} << f.ebits) - 1;
    mmask = (uint64_t{1} << f.mbits) - 1;
    enc = f.enc;
    if (f.width() > 8) return;  // a 2^16-entry table of fp16 misses the cache: arithmetic decode
    table.resize(size_t{1} << f.width());
    for (uint64_t x = 0; x < table.size(); ++x) {
      const Unpacked u = decode_operand(f, x, sub_in);
      uint32_t e = static_cast<uint32_t>(u.sig) | (static_cast<uint32_t>(u.exp + 2048) << 16);
      if (u.sign) e |= uint32_t{1} << 30;
      if (!u.is_finite()) e |= uint32_t{1} << 31;
      table[x] = e;
    }
  }
  Op get(uint64_t bits) const {
    if (!table.empty()) {
      const uint32_t e = table[bits & wmask];
      return Op{e & 0xffffu, static_cast<int>((e >> 16) & 0xfffu) - 2048, ((e >> 30) & 1) != 0,
                (e >> 31) != 0};
    }
    // decode_operand without branches on the class (formats over 8 bits)
    const uint64_t E = (bits >> mbits) & top, M = bits & mmask;
    const bool sign = (bits >> (width - 1)) & 1;
    bool special;
    switch (enc) {
      case Encoding::IEEE: special = E == top; break;
      case Encoding::FN: special = E == top && M == mmask; break;
      case Encoding::FNUZ: special = sign && E == 0 && M == 0; break;
      default: special = false; break;  // Finite: no NaN/Inf patterns
    }
    const bool normal = E != 0;
    const uint64_t sig = normal ? (M | (uint64_t{1} << mbits)) : (sub_in ? M : 0);
    const int exp = normal ? static_cast<int>(E) - bias : 1 - bias;
    return Op{sig, exp, sign, special};
  }
  int mbits = 0, width = 0, bias = 0;
  uint64_t top = 0, mmask = 0;
  Encoding enc = Encoding::IEEE;
};

// ---------------------------------------------------------------------------------------------
// Rounder on a 64-bit magnitude with the constants of the format precomputed (round_to_format).
/// The rounder's constants: the lane kernels' LaneRound (the same fields, fast_lanes.hpp) with the
/// format and options they came from.
struct RoundK : lanes::LaneRound {
  Format f;
  RoundOpts o;

  void build(const Format& fmt, const RoundOpts& opts) {
    f = fmt;
    o = opts;
    p = o.prec_mbits >= 0 ? o.prec_mbits : f.mbits;
    mbits = f.mbits;
    emin = f.emin();
    emax = f.emax();
    bias = f.bias;
    enc = f.enc;
    mode = o.mode;
    subn = o.subnormals;
    ovf_inf = o.overflow_to_inf;
    has_inf = f.has_inf();
    sbit = uint64_t{1} << (f.width() - 1);
    maxf = f.max_finite_bits();
    if (has_inf) { inf_p = f.inf_bits(false); inf_n = f.inf_bits(true); }
    // a format with no NaN (the OCP MX fp6/fp4 elements): an overflow saturates at the largest
    // finite (round_to_format), which the NaN slot of the overflow encoding then holds
    nan_p = f.has_nan() ? f.qnan_bits(false) : f.max_finite_bits();
    nan_n = f.has_nan() ? f.qnan_bits(true) : sbit | f.max_finite_bits();
    z_p = zero_bits(f, false);
    z_n = zero_bits(f, true);
  }
  uint64_t zero(bool neg) const { return neg ? z_n : z_p; }

  /// (-1)^sign * mag * 2^lsb rounded; mag != 0.
  uint64_t round(bool sign, uint64_t mag, int lsb) const {
    const int msb = 63 - __builtin_clzll(mag);
    int e = lsb + msb;
    bool sub = false;
    if (e < emin) { e = emin; sub = true; }
    const int sh = e - p - lsb;
    uint64_t kept;
    bool rb = false, st = false;
    if (sh <= 0) {
      kept = mag << -sh;  // kept < 2^(p+1): exact
    } else {
      const int r = sh - 1;
      uint64_t m;
      if (r >= 64) { st = true; m = 0; }
      else { st = (mag & ((uint64_t{1} << r) - 1)) != 0; m = mag >> r; }
      rb = m & 1;
      kept = m >> 1;
    }
    bool up = false;
    switch (mode) {
      case Rounding::RNE: up = rb && (st || (kept & 1)); break;
      case Rounding::RNA: up = rb; break;
      case Rounding::RTZ: break;
      case Rounding::RD: up = sign && (rb || st); break;
      case Rounding::RU: up = !sign && (rb || st); break;
    }
    kept += up;
    if (kept >> (p + 1)) { kept >>= 1; ++e; sub = false; }
    if (sub && (kept >> p)) sub = false;
    if (kept == 0 || (sub && !subn)) return zero(sign);
    const uint64_t sig = kept << (mbits - p);
    const uint64_t mmask = (uint64_t{1} << mbits) - 1;
    if (e > emax || (e == emax && enc == Encoding::FN && (sig & mmask) == mmask)) {
      const bool to_inf = ovf_inf || mode == Rounding::RNE || mode == Rounding::RNA ||
                          (mode == Rounding::RU && !sign) || (mode == Rounding::RD && sign);
      if (to_inf) return has_inf ? (sign ? inf_n : inf_p) : (sign ? nan_n : nan_p);
      return (sign ? sbit : 0) | maxf;
    }
    const uint64_t E = (sub || (sig >> mbits) == 0) ? 0 : static_cast<uint64_t>(e + bias);
    const uint64_t bits = (sign ? sbit : 0) | (E << mbits) | (sig & mmask);
    if (enc == Encoding::FNUZ && bits == sbit) return 0;
    return bits;
  }
  /// Signed fixed-point value v * 2^lsb rounded; zero gets `zero_sign`.
  template <class T>
  uint64_t round_fixed_t(T v, int lsb, bool zero_sign) const {
    if (v == 0) return zero(zero_sign);
    const bool neg = v < 0;
    const u128 mag = neg ? static_cast<u128>(-static_cast<i128>(v)) : static_cast<u128>(v);
    if ((mag >> 64) == 0) return round(neg, static_cast<uint64_t>(mag), lsb);
    return round_to_format(f, Exact{neg, mag, lsb, false}, o);
  }
};

/// The kernel of one block-scaled sample (FastDot::operator() with scales).
using ScaledFn = uint64_t (*)(const FastDot::Impl&, const uint64_t*, const uint64_t*, int, uint64_t, const ScaleRefs&);
/// The scalar kernels (FastDot::strategy() gives their names).
enum class Kernel : uint8_t { Reference, FusedI64, FusedI128, PairwiseI128, ExactI128 };
inline const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::FusedI64: return "fused/i64";
    case Kernel::FusedI128: return "fused/i128";
    case Kernel::PairwiseI128: return "pairwise/i128";
    case Kernel::ExactI128: return "exact/i128";
    default: return "reference";
  }
}

}  // namespace fastk

struct FastDot::Impl {
  Datapath dp;
  fastk::InFmt A, B;
  fastk::RoundK R;      // d
  fastk::RoundK Rprod;  // prod_round_out: RNE to out_fmt
  fastk::RoundK Rc;     // c_final_add
  int pfrac = 0;       // fraction bits of a product term
  int raw_frac = 0;    // a.mbits + b.mbits
  int cmb = 0;         // out_fmt.mbits (fraction bits of c)
  uint64_t (*fn)(const Impl&, const uint64_t*, const uint64_t*, int, uint64_t) = nullptr;
  fastk::Kernel kernel = fastk::Kernel::Reference;
  fastk::ScaledFn scaled_fn = nullptr;  ///< block-scaled samples: nullptr, the reference stages
  /// ST-FDPA whose scaled kernel is the fused one in 64-bit integers (no product rounding): the
  /// fused lane kernels take it, the scales through lane_block_scaled
  bool scaled_lanes = false;
  /// GST-FDPA with elements of at most 12 bits together (fast_grouped.cpp): entry (a << b_width
  /// | b) = the exact product in units of the group sum's lsb; its flags (1: the product's sign,
  /// also of a zero; 2: a NaN/Inf element); group_specials: some pair has a NaN/Inf element
  std::vector<int64_t> group_products;
  std::vector<uint8_t> group_flags;
  bool group_specials = false;
  fastk::InFmt Sc;  ///< GST-FDPA: the scale format's decoder,
  fastk::InFmt Cg;  ///< c's (out_fmt with sub_in),
  int group_lsb = 0;  ///< and the unit of the group sums (stages.hpp group_lsb)
  const char* name = "reference";
  // batch(): the lane kernels on lanes::kLanes samples at once (fast_lanes.hpp): the fused
  // group, the pairwise tree, the exact adder, the final c addition
  lanes::LaneParams LP;
  void (*lane_block)(const lanes::LaneParams&, const uint64_t*, const uint64_t*, const int*, int,
                     const uint64_t*, lanes::LaneOut&) = nullptr;
  void (*lane_block_scaled)(const lanes::LaneParams&, const uint64_t*, const uint64_t*, const int64_t*, const int*,
                            int, const uint64_t*, lanes::LaneOut&) = nullptr;
  void (*lane_transpose)(const uint64_t*, size_t, int, uint64_t*) = nullptr;
  void (*lane_transpose32)(const uint32_t*, size_t, int, uint64_t*) = nullptr;
  void (*lane_c_final)(const lanes::LaneParams&, const uint64_t*, const uint64_t*, lanes::LaneOut&) = nullptr;
  const char* lane_isa = "none";
};

namespace fastk {

/// GST-FDPA's scalar kernel (fast_grouped.cpp: the grouper, aligner, adder and rounder of one
/// sample with its scales), or nullptr where the reference stages take the datapath.
constexpr int kMaxGroupsPerChunk = 64;
ScaledFn choose_grouped(FastDot::Impl& I);

/// batch()'s lane kernels for FastDot's datapath, after its scalar kernel (I.kernel) is chosen:
/// the lane family from fast_lower.cpp's kLaneFamilies, the typed parameters (I.LP), the kernel
/// from kLaneStrategies (I.LP.kernel) and the instruction set this CPU has (or MATCORE_LANES's).
/// A datapath no family takes runs sample by sample (I.lane_block stays null).
void lower_for_lanes(FastDot::Impl& I);
/// The operand format f as the lanes decode it (sub: subnormal inputs kept, else DAZ).
lanes::LaneFmt lane_fmt(const Format& f, bool sub);

}  // namespace fastk
}  // namespace mc
