// The lane kernels of one instruction set (MC_LANES_NS), one entry point per LaneKernel
// (fast_lanes.hpp): what block() (block.cpp) dispatches to through its table. The families live
// in fused.cpp, tree.cpp, exact.cpp and fma.cpp; `chain` runs a group function over a block's
// groups, the sub-blocks side by side.
#pragma once
#include "simd.hpp"

namespace mc::lanes::MC_LANES_NS {

/// One lane kernel: the groups of a block (fast_lanes.hpp MC_LANES_DECLARE block).
using KernelFn = void(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o);

// fused.cpp: the fused adder, products aligned by truncation (Trunc) or round-down, c early or
// late, interleave 2
KernelFn fused_trunc_early, fused_trunc_late, fused_trunc_late_inter2;
KernelFn fused_rd_early, fused_rd_late, fused_rd_late_inter2;
// fused.cpp: the same six with the scale exponents of ST-FDPA (block_scaled), P.kernel's variant
void fused_scaled(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int64_t* Et, const int* order,
                  int K, const uint64_t* C, LaneOut& o);
// tree.cpp: the pairwise trees, on the encodings (fast_levels) or on terms
KernelFn pairwise_bits, pairwise_terms;
// exact.cpp: the exact adder (wide significands; n_fma + 1 sorted terms; any n_fma)
KernelFn exact_wide, exact_sorted_terms, exact_any;
// fma.cpp: the FMA chains
KernelFn fma_b32, fma_narrow, fma_sum2, fma_b64, fma_wide;

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


}  // namespace mc::lanes::MC_LANES_NS
