// matcore: the pipeline of a datapath as data. plan(dp) lists its stages in order, each with
// the name that its signals carry at every level (the core trace "aligner.e_max", the SystemC
// module "aligner" and its VCD signals "aligner.e_max", docs/systemc.md) and its kind. The
// SystemC top instantiates one module per planned stage (sc/src/top.cpp), `matcore dot --trace`
// and `matcore-sc pipeline` print it.
//
//   fused (CDNA3, NVIDIA):  issue -> multiplier -> aligner -> adder [-> oddeven] [-> cadd -> normaliser]
//                           -> rounder [-> cfinal] [-> outconv]
//   pairwise (CDNA2):       issue -> multiplier -> adder_l0 -> ... -> adder_l<log2 n_fma - 1> -> cadd
//                           -> rounder [-> outconv]
//   exact (CDNA1, SFMA):    issue -> multiplier -> adder -> rounder [-> outconv]
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "matcore/datapath.hpp"

namespace mc {

enum class StageKind : uint8_t {
  Issue,       ///< operand registers, group sequencing (k > n_fma chains through c)
  Multiplier,  ///< exact products, c decoded (multiplier.p<i>, multiplier.c)
  Aligner,     ///< products aligned to e_max with truncation / round-down and sticky
  Adder,       ///< the fused multi-term fixed-point sum (adder.s_sum, adder.s_acc)
  OddEven,     ///< odd and even partial sums combined (interleave 2)
  CAdd,        ///< late c: c aligned with its round-down, added (Algorithms 1 and 2)
  Normaliser,  ///< normalisation point of the late-c sum
  Exact,       ///< exact (Kulisch) sum of products and c
  PairLevel,   ///< one level of the pairwise tree: fl(p_i + p_i+1) in out_fmt
  PairCAdd,    ///< the pairwise tree's final fl(c + tree)
  Rounder,     ///< rounding to out_fmt (rounder.d)
  CFinal,      ///< d = fl(acc + c) after the groups (c_final_add)
  OutConv      ///< binary16 results widened to the stored binary32 (outconv.d32)
};

const char* to_string(StageKind k);

struct PlannedStage {
  std::string name;  ///< the stage name of its signals: "aligner", "adder_l1", ...
  StageKind kind;
  int level = 0;     ///< PairLevel: the tree level
};

/// The ordered stages of a datapath.
std::vector<PlannedStage> plan(const Datapath& dp);

/// "issue -> multiplier -> aligner -> ..." (the names of plan(dp)).
std::string plan_diagram(const Datapath& dp);

}  // namespace mc
