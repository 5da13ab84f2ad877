// matcore: the fast kernels. A datapath compiled once into a specialised evaluator of
// d = sum_i a_i*b_i + c that gives the same bits as the reference stage path (model.hpp dot()),
// several times faster.
//
//   FastDot fd(dp);                       // compile: pick the strategy, build the decode tables
//   uint64_t d = fd(a, b, K, c);          // = dot(dp, a, b, K, c), bit for bit
//   fd.batch(a, b, c, d, n, K);           // n samples, a and b row-major n x K
//
// How it differs from the reference (and why it gives the same bits):
//  * operands of 8-bit formats are decoded by one table lookup (the table is filled by
//    the reference decode_operand, so DAZ and the NaN encodings are the reference's);
//  * products, alignment and the multi-term sum use fixed-width integers (64-bit when every
//    intermediate of the datapath fits 62 bits, 128-bit otherwise), chosen once per datapath
//    from its widths (frac_bits, partial_frac, c_frac, sum_frac, acc_frac, n_fma);
//  * the late-c aligner, the odd-even recombination, the normaliser and the rounder are
//    re-implemented on those integers with the constants of the output format precomputed;
//  * the pairwise tree (CDNA2) and the exact adder (CDNA1, SFMA) sum in 128-bit integers when
//    the exponent spread of the terms allows; two terms too far apart for that are rounded from
//    the larger one with guard bits and a sticky, any other wider spread is summed in an
//    accumulator of 64-bit limbs (mc::Wide, the reference's: every format up to binary64);
//  * batch() runs 16 samples at once in SIMD lanes (core/src/engines/lanes/): the whole fused group
//    (multiplier, aligner, adder, late-c tail, normaliser, rounder, c_final_add), the pairwise
//    tree and the one-product exact adder (FMA chains) as two-term sums done the way a
//    floating-point adder does them (the larger term at bits 60.., the other shifted in with a
//    sticky), and the exact adder of several products and of binary64 significands (the fp64
//    FMA chains) in two-limb (128-bit) sums; a lane these kernels cannot hold goes to the
//    scalar kernel;
//  * anything rare -- a NaN or an infinity among the inputs, a product that overflows, a pair of
//    the tree that rounds to infinity, a spread beyond Wide's 72 limbs -- sends that sample to the
//    reference dot(), which is therefore the one definition of every special case.
// `make bench-check` compares the two on 10^7 random samples per preset (bench/bench_check.cpp,
// docs/performance.md); tb/test_fast.cpp does the same on a smaller count in `make test`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "matcore/datapath.hpp"
#include "matcore/model.hpp"

namespace mc {

class FastDot {
 public:
  /// Compiles dp (validate_datapath first: throws std::invalid_argument for a bad datapath).
  explicit FastDot(const Datapath& dp);
  /// d for one sample: the same contract and the same bits as dot(dp, a, b, K, c).
  uint64_t operator()(const uint64_t* a, const uint64_t* b, int K, uint64_t c) const;
  /// d for one block-scaled sample: the same bits as dot(dp, a, b, K, c, scales). ST-FDPA with
  /// power-of-two scales on the fused adder runs on the fused kernel (the scale exponents added
  /// to the products'), GST-FDPA on the grouper's kernel (fast_grouped.cpp); the other
  /// datapaths and any sample with a NaN scale or a NaN/Inf input, the reference stages. An
  /// unscaled datapath ignores the scales.
  uint64_t operator()(const uint64_t* a, const uint64_t* b, int K, uint64_t c, const ScaleRefs& scales) const;
  /// d[i] = (*this)(a + i*K, b + i*K, K, c[i]) for i < n. The fused datapaths on 64-bit
  /// integers and the pairwise trees with products of at most 24 x 24 bits, and the exact
  /// adders with significands of up to 53 bits, run 16 samples at once through SIMD lane
  /// kernels (the instruction set chosen at run time: lanes()); the others sample by sample.
  void batch(const uint64_t* a, const uint64_t* b, const uint64_t* c, uint64_t* d, size_t n,
             int K) const;
  /// batch() of block-scaled samples: d[i] = (*this)(a + i*K, b + i*K, K, c[i], {sa + i*S,
  /// sb + i*S}) with S = scales_per_sample(datapath(), K) scale patterns a sample (row-major
  /// n x S; a null pointer: unit scales). ST-FDPA on the fused kernel runs 16 samples at once in
  /// the lanes (the scale exponents added to the products'); a sample with a NaN or zero scale,
  /// and the other datapaths (GST-FDPA), sample by sample. An unscaled datapath ignores them.
  void batch(const uint64_t* a, const uint64_t* b, const uint64_t* c, uint64_t* d, size_t n, int K,
             const uint64_t* sa, const uint64_t* sb) const;
  /// batch() on 32-bit words, for datapaths whose a, b and out formats have at most 32 bits
  /// (else std::invalid_argument): the same bits, half the memory to read (the words widened
  /// as each block of 16 samples is turned into columns).
  void batch(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d, size_t n,
             int K) const;
  /// The kernel chosen: "fused/i64", "fused/i128", "pairwise/i128", "exact/i128" or "reference".
  const char* strategy() const;
  /// The lane kernels batch() uses: "avx512", "avx2" or "none" (no AVX2, or a datapath the
  /// lanes do not take); MATCORE_LANES=generic|avx2|avx512|off in the environment overrides the
  /// choice ("generic": the portable lanes, for tests).
  const char* lanes() const;
  /// The lane kernel batch() runs ("fused/trunc", "fma/b32", ...: fast_lower.cpp's strategy
  /// table), "none" where the datapath runs sample by sample.
  const char* lane_kernel() const;
  const Datapath& datapath() const;
  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace mc

namespace mc {

/// The comparison of FastDot with the reference dot() (make bench-check, tb/test_fast.cpp).
struct FastCheck {
  uint64_t samples = 0, mismatches = 0, specials = 0;  ///< specials: samples with a NaN/Inf operand
  std::string first;  ///< the first mismatch: inputs, fast and reference d in hex, the stages
};

/// n random samples of dp with k = K (0: dp.k_default), cycling through four draws: exponent-
/// mantissa sampling over the normal ranges and over the subnormal ranges of sample.hpp
/// (default_ranges; in one such sample in two only a is drawn there, b and c from the normal
/// ranges), independent bits (every pattern, NaN and Inf included) and cancelling
/// pairs (b_{j+1} = -b_j, a_{j+1} = a_j or one ulp apart); in one sample in 8, one operand in
/// 16 is then replaced by a special value (zeros, max finite, NaN, Inf, smallest subnormal).
/// A block-scaled datapath gets each sample's scales too: normal patterns within 2^-20 .. 2^20,
/// one in 16 any pattern (NaN, zero, the extreme exponents); the batch and the single-sample
/// kernel take them (FastDot::batch with scales). Deterministic in `seed`. `specials` counts
/// the samples with a NaN or Inf operand.
FastCheck check_fast(const Datapath& dp, uint64_t n, uint32_t seed, int K = 0);

}  // namespace mc
