// matcore: the RTL generator. rtl_top(dp) writes the Verilog top of a datapath from its plan
// (matcore/plan.hpp) and its field table (signal_table): one registered stage per planned
// stage, each an instance of the stage module of its kind in rtl_model/ (mc_multiplier,
// mc_aligner, ...) with the datapath's parameters, and, in a named block per stage, the
// documented signals ("multiplier.p0", "aligner.e_max", ...) as views of its registers.
//
//   ports:  clk; in_valid, in_tag[31:0], in_grp[7:0], in_lanes[N-1:0], in_a[N*AW-1:0],
//           in_b[N*BW-1:0], in_c[OW-1:0] (the group's addend, output format), in_cf[OW-1:0]
//           (c of the final addition, c_final datapaths), in_last (the sample's last group)
//           -> out_valid, out_tag, out_grp, out_last, out_d[OW-1:0] (output format, the value
//           a next group takes as c), out_d32[DW-1:0] (the stored width: binary16 widened)
//   latency: one register per planned stage: the issue register, then latency = stages - 1
//   cycles to out_* (DatapathTop::latency() of the SystemC top counts the same way).
//
// The driver (the Verilator harness, rtl_model/harness/) is the issue logic: it cuts k into
// groups of n_fma (pair interleave order where the datapath asks), feeds each group with the
// previous group's out_d as c and raises in_last on the last one.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "matcore/datapath.hpp"

namespace mc {

/// A stage module instance of a generated top (for the cost report).
struct RtlInstance {
  std::string stage;   ///< plan stage name ("specials" for the detector)
  std::string module;  ///< rtl_model/ module: "mc_aligner", "mc_pair_sum", ...
  int count = 1;
};

struct RtlTop {
  std::string module;               ///< top module name, e.g. "mc_mi300x_fp16"
  std::string text;                 ///< the generated SystemVerilog
  int latency = 0;                  ///< cycles from the issue register to out_* (plan size - 1)
  std::vector<std::string> sources; ///< the stage modules it instantiates (rtl_model/*.sv)
  std::vector<RtlInstance> instances;                 ///< module instances per stage
  std::vector<std::pair<std::string, int>> adders;    ///< (stage, width) of each stage's adder
};

/// The top of dp, named `module` (default: rtl_module_name(dp)). Throws std::invalid_argument
/// (naming the field) for a datapath the RTL does not cover (an output format that is not
/// IEEE-encoded).
RtlTop rtl_top(const Datapath& dp, const std::string& module = "");

/// The size limits checked before any RTL work (docs/cli.md, "Limits"): the lanes times the
/// widest adder of the top (n_fma lanes; after a grouper, n_fma / G). Every preset's top is within kRtlSizeLimit (the binary64 exact adders are
/// 4199 bits wide); `cost` takes designs within kCostSizeLimit (yosys needs over 10 minutes for
/// the binary64 adders).
constexpr long kRtlSizeLimit = 6144;
constexpr long kCostSizeLimit = 2048;
long rtl_size(const RtlTop& t, const Datapath& dp);

/// "mc_<arch>_<type>[_out16][_<variant>]" with every other character made '_'.
std::string rtl_module_name(const Datapath& dp);

/// Every stage module file of rtl_model/ (a generated top uses a subset).
std::vector<std::string> rtl_stage_sources();

}  // namespace mc
