// Internal to the fast kernels (fast.cpp): the lane kernels' interface. A lane kernel runs the
// groups of a datapath (the fused adder with its late-c tail, the pairwise trees, the exact adder,
// the FMA chains) on kLanes samples at once, in structure-of-arrays form so that the compiler turns
// every step into SIMD instructions across the samples. Their code is core/src/engines/lanes/ (one file
// per family, the SIMD primitives in lanes/simd.hpp), compiled once per instruction set
// (generic, AVX2, AVX-512, and AVX-512 with two registers a lane vector by Clang: CMakeLists.txt)
// into namespaces of those names; fast_lower.cpp lowers a datapath to LaneParams, chooses the
// kernel from its strategy table and the best instruction set the CPU has at run time.
#pragma once
#include <cstddef>
#include <cstdint>

#include "matcore/datapath.hpp"

namespace mc::lanes {

constexpr int kLanes = 16;

/// One operand format, as the branch-free decode needs it.
struct LaneFmt {
  uint32_t mbits = 0, sign_shift = 0;
  uint64_t top = 0, mmask = 0;
  int32_t bias = 0;
  /// x is NaN/Inf when (x & sp_mask) == sp_val: IEEE exponent all ones; FN exponent and
  /// mantissa all ones; FNUZ the sign bit alone
  uint64_t sp_mask = 0, sp_val = 0;
  uint64_t sub_mask = 0;  ///< mmask when subnormal inputs are kept, 0 (DAZ) otherwise
};

/// The rounder's constants (fast.cpp RoundK, round_to_format): d = (-1)^s mag 2^lsb rounded.
struct LaneRound {
  int p = 0, mbits = 0, emin = 0, emax = 0, bias = 0;
  Encoding enc = Encoding::IEEE;
  Rounding mode = Rounding::RNE;
  bool subn = true, ovf_inf = false, has_inf = true;
  uint64_t sbit = 0, maxf = 0, inf_p = 0, inf_n = 0, nan_p = 0, nan_n = 0, z_p = 0, z_n = 0;
};

/// The lane kernels, one per family and variant: lanes/block.cpp runs P.kernel through its table of
/// entry points (lanes/kernels.hpp), fast_lower.cpp chooses it from kLaneStrategies (the first
/// strategy whose predicate holds). Their order is the order of that table.
enum class LaneKernel : uint8_t {
  FmaB32,              ///< FMA chains, binary32 operands, c and d, RNE (lanes/fma.cpp, fixed frame)
  FmaNarrow,           ///< FMA chains with c and d of at most 24 bits (fixed frame)
  FmaSum2,             ///< the other narrow FMA chains (sum2's two-term sums)
  FmaB64,              ///< binary64 FMA chains, RNE (fixed frame, 53-bit significands)
  FmaWide,             ///< the other FMA chains of up to 53-bit significands
  PairwiseBits,        ///< pairwise trees on the encodings (lanes/tree.cpp tree_chain)
  PairwiseTerms,       ///< pairwise trees on terms (pairwise_run)
  ExactWide,           ///< exact adder, significands of up to 53 bits (lanes/exact.cpp)
  ExactSorted,         ///< exact adder of n_fma + 1 <= 8 sorted terms
  ExactAny,            ///< exact adder, any n_fma
  FusedTruncEarly,     ///< fused adder, truncating aligner, c with the products (lanes/fused.cpp)
  FusedTruncLate,      ///< fused adder, truncating aligner, late c
  FusedTruncLateInter2,///< ... interleave 2
  FusedRdEarly,        ///< fused adder, rounding aligner (round-down, per lane), early c
  FusedRdLate,         ///< ... late c
  FusedRdLateInter2    ///< ... late c, interleave 2
};
constexpr int kLaneKernels = 16;
/// "fma/b32", "fused/trunc-late", ...: the name bench and `FastDot::kernel()` show.
const char* lane_kernel_name(LaneKernel k);

struct LaneParams {
  LaneFmt a, b, c;          ///< c: out_fmt
  LaneRound R;              ///< d: out_fmt with out_round
  LaneRound Rc;             ///< c_final_add: out_fmt with c_final_round
  LaneRound Rprod;          ///< prod_round_out (pairwise only): out_fmt, RNE
  bool prod_round = false;  ///< prod_round_out: every product rounded to out_fmt first
  bool prod_fits = false;   ///< a product has at most Rprod.p + 1 bits (exact inside the range)
  /// a product has at most Rprod.p bits: one below out_fmt's smallest normal lies on its
  /// subnormal grid, so that it never rounds up to the smallest normal (Rprod without
  /// subnormals flushes it to a zero of its sign)
  bool prod_below_zero = false;
  /// fast_levels with prod_below_zero, no prod_overflow_exp and operand formats whose NaN/Inf
  /// patterns are the largest of x & sp_mask (sp_mask == sp_val: IEEE and FN): tree_bits
  /// encodes each product as it computes it (lanes/tree.cpp tree_product_bits)
  bool tree_direct = false;
  /// pairwise: the levels on the encodings (lanes/terms.hpp add_rne_ftz): every product rounded
  /// to out_fmt and exact inside its range (prod_round, prod_fits), the levels rounded to nearest
  /// even with no subnormals in an IEEE encoding, c with no subnormals either
  bool fast_levels = false;
  /// c_final_add on the encodings (add_rne_ftz): c_final_round RNE in an IEEE encoding
  bool fast_cfinal = false;
  LaneFmt acc;              ///< c_final_add: out_fmt, subnormals kept (the accumulated d)
  int n_fma = 1;            ///< products a group
  int raw_frac = 0;         ///< fraction bits of a product (a.mbits + b.mbits)
  bool ovf_on = false;      ///< prod_overflow_exp set
  int ovf = 0;
  int F = 24;               ///< frac_bits
  bool lim_on = false;      ///< emin_lim set
  int emin_lim = 0;
  bool czero_on = false;    ///< c_zero_exp set (c = 0 takes part with this exponent)
  int c_zero_exp = 0;
  bool pairwise = false;    ///< the pairwise tree (CDNA2; with n_fma = 1 the FMA chains) instead of the fused adder
  bool exact = false;       ///< the exact adder (CDNA1 fp16/bf16; wide: the binary64 FMA chains)
  bool wide = false;        ///< significands of up to 53 bits (106-bit products; exact only)
  bool late_c = false;
  bool inter2 = false;      ///< interleave 2 (late c only)
  bool ieee_rne = false;    ///< is_ieee_rne(*this, wide)
  /// the fused groups' results go to the next group's c without their encoding (lanes/fused.cpp
  /// next_c): c in R's format, an IEEE encoding, subnormals at R's emin
  bool c_direct = false;
  /// the fused groups' rounding at a fixed position where the result is normal (lanes/fused.cpp
  /// round_norm): c_direct, with every fraction bit of R's format kept (R.p == R.mbits)
  bool top_round = false;
  AlignRound mode = AlignRound::Truncate;  ///< the products' (and c's with early c)
  bool zs_rd = false;       ///< out_round == RD: an exact zero sum of nonzero terms is -0
  // late c (the c-aligner, the normaliser): Datapath fields of the same names
  int partial_frac = 24, c_frac = 24, sum_frac = 32, acc_frac = 31;
  bool gap_on = false;
  int c_drop_gap = 0;
  bool late_norm_rd = true;
  /// ST-FDPA (block_scaled): operands a block of the scale exponents (row j of Et: the scale
  /// exponents e_alpha + e_beta of operands j * scale_block .. of each lane); 0: unscaled
  int scale_block = 0;
  LaneKernel kernel = LaneKernel::FusedTruncEarly;  ///< chosen by fast_lower.cpp choose_lane_kernel
};

/// The FMA chains (d = fl(c + a_k b_k), k = 0, 1, ...: the pairwise kernel with one product a
/// group, no product overflow, no product rounding): block() runs them in fma_chain.
inline bool is_fma_chain(const LaneParams& P) {
  return P.pairwise && P.n_fma == 1 && !P.ovf_on && !P.prod_round;
}
/// The FMA chains whose c and d have at most 24 bits (binary32 and narrower: every fp32 chain):
/// block() runs them on a fixed 64-bit frame (lanes/fma.cpp fma_chain_fixed), the others in
/// sum2's two-term sums (fma_chain).
inline bool fits_fixed_narrow(const LaneParams& P) { return P.c.mbits <= 23 && P.R.p <= 23; }
/// The IEEE binary64 and binary32 formats with subnormals, as fast.cpp fills a LaneFmt for them.
constexpr LaneFmt kB64{52, 63, 0x7ff, (uint64_t{1} << 52) - 1, 1023, uint64_t{0x7ff} << 52,
                       uint64_t{0x7ff} << 52, (uint64_t{1} << 52) - 1};
constexpr LaneFmt kB32{23, 31, 0xff, (uint64_t{1} << 23) - 1, 127, uint64_t{0xff} << 23, uint64_t{0xff} << 23,
                       (uint64_t{1} << 23) - 1};
inline bool same_fmt(const LaneFmt& x, const LaneFmt& y) {
  return x.mbits == y.mbits && x.sign_shift == y.sign_shift && x.top == y.top && x.mmask == y.mmask &&
         x.bias == y.bias && x.sp_mask == y.sp_mask && x.sp_val == y.sp_val && x.sub_mask == y.sub_mask;
}
/// Operands, c and d all binary64 (wide) or all binary32 (kB64, kB32), d rounded to nearest
/// even: the FMA chains of every preset (LaneParams::ieee_rne, set once by fast.cpp).
/// lanes/fma.cpp fma_chain_fixed<Wide, true> then has the formats' constants in its
/// instructions.
inline bool is_ieee_rne(const LaneParams& P, bool wide) {
  const LaneFmt& f = wide ? kB64 : kB32;
  const LaneRound& R = P.R;
  const int m = static_cast<int>(f.mbits);
  return same_fmt(P.a, f) && same_fmt(P.b, f) && same_fmt(P.c, f) && R.p == m && R.mbits == m &&
         R.emin == 1 - f.bias && R.emax == f.bias && R.bias == f.bias && R.enc == Encoding::IEEE && R.mode == Rounding::RNE &&
         P.raw_frac == 2 * m;
}
/// The binary64 FMA chains (the exact adder of one product of 53-bit significands, no product
/// overflow): block() runs them in fma_chain too.
inline bool is_wide_fma_chain(const LaneParams& P) {
  return P.exact && P.wide && P.n_fma == 1 && !P.ovf_on && !P.prod_round;
}

/// Per lane results of a block: d (the last group's rounded result) and bad: a NaN/Inf operand
/// or c, a product overflow, a level that rounds to Inf (the sample goes to the reference).
struct LaneOut {
  uint64_t d[kLanes];
  uint8_t bad[kLanes];
};

/// Declared once per instruction set.
#define MC_LANES_DECLARE(ns)                                                                      \
  namespace ns {                                                                                  \
  /* out[k * kLanes + l] = rows[l * stride + k], k < K, l < kLanes: a block of samples' rows */   \
  /* turned into columns */                                                                       \
  void transpose(const uint64_t* rows, size_t stride, int K, uint64_t* out);                      \
  /* the same from 32-bit words, widened */                                                       \
  void transpose32(const uint32_t* rows, size_t stride, int K, uint64_t* out);                    \
  /* the groups of a block: operand k of lane l is At[order[k] * kLanes + l] (B likewise), */   \
  /* k < K, in groups of n_fma chained through c; C: c bits */                                   \
  void block(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order,      \
             int K, const uint64_t* C, LaneOut& o);                                               \
  /* block() of a fused kernel for ST-FDPA: product k of lane l also moves by the scale */        \
  /* exponent Et[(order[k] / P.scale_block) * kLanes + l] (the scaler stage, power-of-two scales) */ \
  void block_scaled(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int64_t* Et, \
                    const int* order, int K, const uint64_t* C, LaneOut& o);                      \
  /* c_final_add: d = fl(acc + c); bad: a NaN/Inf, or terms this kernel leaves to fast.cpp */     \
  void c_final(const LaneParams& P, const uint64_t* acc, const uint64_t* C, LaneOut& o);         \
  /* the three, and the set's name, for fast.cpp's choice */                                      \
  struct Set {                                                                                    \
    static constexpr auto transpose = &ns::transpose;                                             \
    static constexpr auto transpose32 = &ns::transpose32;                                         \
    static constexpr auto block = &ns::block;                                                     \
    static constexpr auto block_scaled = &ns::block_scaled;                                       \
    static constexpr auto c_final = &ns::c_final;                                                 \
    static constexpr const char* name = #ns;                                                      \
  };                                                                                              \
  }
MC_LANES_DECLARE(generic)
MC_LANES_DECLARE(avx2)
MC_LANES_DECLARE(avx512)
MC_LANES_DECLARE(avx512x2)
#undef MC_LANES_DECLARE

}  // namespace mc::lanes
