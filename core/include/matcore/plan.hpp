// matcore: the pipeline of a datapath as data. stage_list(dp) is the one description of its
// composition: the stages in order, each with its kind. The reference model interprets it
// (mc::dot folds each group through it, one registry entry per kind in core/src/engines/model.cpp);
// plan(dp) names it with the name its signals carry at every level (the core trace
// "aligner.e_max", the SystemC module "aligner" and its VCD signals "aligner.e_max",
// docs/systemc.md). The SystemC top instantiates one module per planned stage
// (sc/src/top.cpp), `matcore dot --trace` and `matcore-sc pipeline` print it.
//
//   fused (CDNA3, NVIDIA):  issue -> multiplier -> aligner -> adder [-> oddeven] [-> cadd -> normaliser]
//                           -> rounder [-> cfinal] [-> outconv]
//   pairwise (CDNA2):       issue -> multiplier -> adder_l0 -> ... -> adder_l<log2 n_fma - 1> -> cadd
//                           -> rounder [-> outconv]
//   exact (CDNA1, SFMA):    issue -> multiplier -> adder -> rounder [-> outconv]
//   block-scaled (MX, NVFP4): issue -> multiplier -> scaler | grouper -> aligner -> adder -> rounder
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
  OutConv,     ///< binary16 results widened to the stored binary32 (outconv.d32)
  Scaler,      ///< ST-FDPA: each product times its block's scales (scaler.e_s<j>)
  GroupSum     ///< GST-FDPA: groups of G products summed exactly and scaled (grouper.s<g>)
};
constexpr int kStageKinds = static_cast<int>(StageKind::GroupSum) + 1;

const char* to_string(StageKind k);

/// One step of a datapath's pipeline without its name (what the interpreters walk per sample:
/// no allocation). plan() names the same list.
struct StageStep {
  StageKind kind;
  int level = 0;  ///< PairLevel: the tree level
};
struct StageList {
  StageStep step[16];  ///< at most 2 + 6 tree levels + 4 (n_fma <= 64), or 3 + 6 (scaled)
  int n = 0;
  void push(StageKind k, int level = 0) { step[n++] = StageStep{k, level}; }
};

/// The ordered stages of a datapath: the one description of its composition (plan() names it,
/// mc::dot interprets it, the SystemC top, the RTL generator and the layouts are built from it).
StageList stage_list(const Datapath& dp);

/// The index in l of the stage whose control register is the specials detector: the first stage
/// after the multiplier and the scale stages (NaN scales are specials too).
int specials_index(const StageList& l);

/// The name a stage's signals carry at every level: "aligner", "adder_l1", ...
std::string stage_name(const StageStep& s);

struct PlannedStage {
  std::string name;  ///< the stage name of its signals: "aligner", "adder_l1", ...
  StageKind kind;
  int level = 0;     ///< PairLevel: the tree level
};

/// The ordered stages of a datapath.
std::vector<PlannedStage> plan(const Datapath& dp);

/// "issue -> multiplier -> aligner -> ..." (the names of plan(dp)).
std::string plan_diagram(const Datapath& dp);

/// One named signal of a stage: the field table of the pipeline. The name is the same at every
/// level: the core trace row, the SystemC VCD signal (scope "SystemC."), the RTL register (the
/// stage's named block in the generated top: "<top>.multiplier.p0") and docs/systemc.md.
///   group: the stage that owns it (its plan name; "specials" for the detector's outputs)
///   radix: GTKWave radix: 'b' binary, 'h' hex, 'd' decimal, 's' signed decimal
/// Fixed-point values come as three signals: NAME (two's complement bits), NAME_e (the exponent
/// of the binary point's unit position, 2^e) and NAME_f (fraction bits): value = NAME * 2^(e-f).
struct SignalField {
  std::string group, name;
  int width = 1;
  char radix = 'h';
};

/// Every signal of dp's pipeline in stage order (plan order), with its width: what the SystemC
/// probes trace, what the GTKWave layouts show and what the RTL generator declares.
std::vector<SignalField> signal_table(const Datapath& dp);
/// The entry named `name` of the table (nullptr if none).
const SignalField* find_signal(const std::vector<SignalField>& table, const std::string& name);
/// Width of the product significand probes (multiplier.p<i>): the exact product or c.
int product_probe_width(const Datapath& dp);
/// Width of the group-sum probes (grouper.s<g>): the exact sum of G products times the scales'
/// significands.
int group_probe_width(const Datapath& dp);
/// Width of the fixed-point probes whose fraction bits are at most frac_max.
int fixed_probe_width(const Datapath& dp, int frac_max);
/// The terms the aligner and the adder receive besides c: n_fma products, or with group sums
/// (group_size G) the n_fma / G group terms.
int term_count(const Datapath& dp);
/// Integer bits of a term at its alignment exponent: a product (or c) is below 4 * 2^e (2 bits);
/// a group term S * alpha.sig * beta.sig at e_alpha + e_beta is below
/// G * 2^(emax_a + emax_b + 2) * scale_sig: emax_a + emax_b + 2 + clog2(G) (+ 2 for ue4m3 scales).
int term_int_bits(const Datapath& dp);
/// Width of an aligned term (aligner.v<i>, aligner.vc): sign, the integer bits, F fraction bits.
int aligned_probe_width(const Datapath& dp);

}  // namespace mc
