// Internal to the fast kernels (fast.cpp): the fused datapath's multiplier, aligner and adder on
// kLanes samples at once, in structure-of-arrays form so that the compiler turns every step into
// SIMD instructions across the samples. fast_lanes.cpp is compiled once per instruction set
// (generic, AVX2, AVX-512: CMakeLists.txt) into namespaces of those names; fast.cpp picks the
// best one the CPU has at run time. The rounding of the sums, the late-c aligner and the
// odd-even recombination stay per sample in fast.cpp.
#pragma once
#include <cstddef>
#include <cstdint>

namespace mc::lanes {

constexpr int kLanes = 8;

/// One operand format, as the branch-free decode needs it.
struct LaneFmt {
  uint32_t mbits = 0, sign_shift = 0;
  uint64_t top = 0, mmask = 0;
  int32_t bias = 0;
  uint32_t enc = 0;  ///< Encoding: 0 IEEE, 1 FN, 2 FNUZ
  bool sub_in = true;
};

struct LaneParams {
  LaneFmt a, b, c;          ///< c: out_fmt (binary16/32/64, IEEE)
  int raw_frac = 0;         ///< fraction bits of a product (a.mbits + b.mbits)
  bool ovf_on = false;      ///< prod_overflow_exp set
  int ovf = 0;
  int F = 24;               ///< frac_bits
  bool lim_on = false;      ///< emin_lim set
  int emin_lim = 0;
  bool czero_on = false;    ///< c_zero_exp set (early c: c = 0 takes part)
  int c_zero_exp = 0;
  bool late_c = false;
  bool inter2 = false;      ///< interleave 2 (late c only)
  int mode = 0;             ///< AlignRound
};

/// Per lane results of one group: the sums of set 0 (all products, or the odd-indexed ones with
/// interleave 2; with early c, c included) and set 1 (the even-indexed ones), each at its e_max
/// (INT32_MIN: no nonzero term) with F fraction bits; bad: a NaN/Inf operand or c, or a product
/// overflow (the sample goes to the reference); c decoded.
struct LaneOut {
  int32_t e[2][kLanes];
  int64_t v[2][kLanes];
  uint8_t bad[kLanes], any_nz[kLanes], all_neg[kLanes];
  uint64_t c_sig[kLanes];
  int32_t c_exp[kLanes];
  uint8_t c_neg[kLanes];
};

/// Operand k of lane l: A[l * stride + cols[k]] (B likewise), k < n: the samples' rows as they
/// are stored, cols the group's columns in k order; C[lane]: c bits.
namespace generic {
void group(const LaneParams& P, const uint64_t* A, const uint64_t* B, size_t stride, const int* cols,
           const uint64_t* C, int n, LaneOut& o);
}
namespace avx2 {
void group(const LaneParams& P, const uint64_t* A, const uint64_t* B, size_t stride, const int* cols,
           const uint64_t* C, int n, LaneOut& o);
}
namespace avx512 {
void group(const LaneParams& P, const uint64_t* A, const uint64_t* B, size_t stride, const int* cols,
           const uint64_t* C, int n, LaneOut& o);
}

}  // namespace mc::lanes
