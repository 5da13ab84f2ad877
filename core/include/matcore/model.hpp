// matcore: the fast model, one dot product d = sum_i a_i*b_i + c through a Datapath.
#pragma once
#include <cstdint>
#include <vector>

#include "matcore/datapath.hpp"
#include "matcore/stages.hpp"

namespace mc {

/// d for one sample. a, b: K bit patterns in the datapath's a_fmt / b_fmt; c: bit pattern in
/// out_fmt (see c_from_binary32). Returns d's bit pattern in out_fmt.
/// K is cut into groups of n_fma (the last group may be shorter); each group's rounded result
/// is the next group's c. With `trace`, every stage's signals are recorded.
uint64_t dot(const Datapath& dp, const uint64_t* a, const uint64_t* b, int K, uint64_t c,
             Trace* trace = nullptr);

/// The block scales of one sample (Datapath::scale_block > 0): ceil(K / scale_block) bit
/// patterns of scale_fmt for a and for b; scale j covers k in [j*scale_block, (j+1)*scale_block).
/// nullptr: unit scales (1.0: e8m0 0x7f, ue4m3 0x38).
struct ScaleRefs {
  const uint64_t* a = nullptr;
  const uint64_t* b = nullptr;
};
/// dot() with block scales (an unscaled datapath ignores them).
uint64_t dot(const Datapath& dp, const uint64_t* a, const uint64_t* b, int K, uint64_t c,
             const ScaleRefs& scales, Trace* trace = nullptr);
/// The scales held in two vectors, as the commands and tests keep them (empty: unit scales).
inline ScaleRefs scale_refs(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  return ScaleRefs{a.empty() ? nullptr : a.data(), b.empty() ? nullptr : b.data()};
}
/// The bits of 1.0 in a scale format.
inline uint64_t unit_scale_bits(const Format& f) { return static_cast<uint64_t>(f.bias) << f.mbits; }

/// One group (at most n_fma products) with c already in out_fmt.
uint64_t dot_group(const Datapath& dp, const uint64_t* a, const uint64_t* b, int n, uint64_t c,
                   Trace* trace = nullptr);

/// The c read from a binary32 pattern (hwdata, vector files) in the datapath's out_fmt:
/// identity for binary32 output, RNE to binary16 for fp16 output (NVIDIA), widening for fp64.
uint64_t c_from_binary32(const Datapath& dp, uint64_t c32);

}  // namespace mc
