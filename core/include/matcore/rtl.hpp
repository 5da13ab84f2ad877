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

/// The size limits checked before any RTL work (docs/cli.md, "Limits"): n_fma times the widest
/// adder of the top. Every preset's top is within kRtlSizeLimit (the binary64 exact adders are
/// 4199 bits wide); `cost` takes designs within kCostSizeLimit (yosys needs over 10 minutes for
/// the binary64 adders).
constexpr long kRtlSizeLimit = 6144;
constexpr long kCostSizeLimit = 2048;
long rtl_size(const RtlTop& t, const Datapath& dp);

/// "mc_<arch>_<type>[_out16][_<variant>]" with every other character made '_'.
std::string rtl_module_name(const Datapath& dp);

/// Every stage module file of rtl_model/ (a generated top uses a subset).
std::vector<std::string> rtl_stage_sources();

/// Directory of rtl_model/ (the source tree's, or $MATCORE_RTL_DIR).
std::string rtl_model_dir();

}  // namespace mc

namespace mc {

/// One sample for the RTL engine: a and b bit patterns (a_fmt, b_fmt), c in the output format.
struct RtlSample {
  std::vector<uint64_t> a, b;
  uint64_t c = 0;
  std::vector<uint64_t> sa, sb;  ///< block scales (ceil(K / scale_block) each); empty: unit scales
};

/// The Verilated simulator of dp's top (rtl_model/harness/harness.cpp around the generated
/// top): built with verilator on first use, then taken from the cache ($MATCORE_RTL_CACHE,
/// else $XDG_CACHE_HOME/matcore/rtl, else ~/.cache/matcore/rtl), keyed by a hash of the top,
/// the stage modules and the harness. trace: built with --trace (VCD). Returns the executable.
/// InputError (exit 2) when verilator is missing or the build fails (the log path is named).
std::string rtl_simulator(const Datapath& dp, bool trace = false);

/// Runs the samples through the RTL; returns d as stored (binary16 results widened to binary32).
/// vcd: a VCD of the whole run (needs the trace build), written as the SystemC top's: scope
/// SystemC.<stage>.<signal>, time unit 1 ns, a 10 ns clock, so the layouts of waves/ open it
/// (vcd_as_systemc). tags: each sample's number in the VCD's issue.tag (the user's file
/// numbering; unique); empty: 0, 1, ... With $MATCORE_RTL_STATS set the simulator prints its
/// speed (samples, cycles, dot/s) on stderr.
std::vector<uint64_t> rtl_run(const Datapath& dp, const std::vector<RtlSample>& samples,
                              const std::string& vcd = "", const std::vector<uint32_t>& tags = {});

/// Rewrites the Verilated simulator's VCD `in` into `out` with the SystemC VCD's hierarchy and
/// time unit: the scope of the top module `module` becomes the top scope SystemC (its named
/// blocks, one per stage, under it: SystemC.aligner.sticky), the harness's own signals go to a
/// scope "harness", and the time unit is 1 ns. The value changes are copied as they are.
/// InputError when `in` is not a VCD with that scope or a write fails.
void vcd_as_systemc(const std::string& in, const std::string& out, const std::string& module);

/// The hardware's d of one traced sample, and whether the engine's d differs from it.
struct VcdCheck {
  uint64_t d_hw = 0;
  bool mismatch = false;
};
/// Rewrites the VCD at `path` (SystemC's form: top scope SystemC; a temporary of the caller's)
/// with a scope "check" of two signals, check.d_hw (`width` bits: the observed d as stored) and
/// check.mismatch, that show the entry of `obs` for the sample (its tag) that the stage `stage`
/// (the last of the plan) holds, and 0 while it holds none or one without an entry. InputError
/// when the VCD has no signals stage.valid and stage.tag or a write fails (`path` unchanged).
void vcd_add_check(const std::string& path, const std::string& stage, int width,
                   const std::map<uint32_t, VcdCheck>& obs);

/// Hardware cost of a datapath's top: yosys synthesises it to generic gates (synth, hierarchy
/// kept) and estimates CMOS transistors (stat -tech cmos); NAND2-equivalents = transistors / 4
/// (a two-input NAND is 4 transistors). docs/rtl.md describes the method and its limits.
struct StageCost {
  std::string stage, modules;  ///< plan stage, "mc_pair_sum x4"
  long cells = 0;              ///< generic gates
  double nand2 = 0;            ///< NAND2-equivalents
  int adder_bits = 0;          ///< width of the stage's adder (0: none)
  int depth = 0;               ///< gate levels of its longest path (yosys ltp, generic cells)
};
struct RtlCost {
  std::string module;
  std::vector<StageCost> stages;  ///< combinational logic of each stage
  long flops = 0;                 ///< pipeline register bits kept by synthesis
  long reg_cells = 0;             ///< the top's own cells: registers and glue
  double reg_nand2 = 0;
  long cells = 0;                 ///< total
  double nand2 = 0;
  int latency = 0;
  std::string widest_stage;
  int widest_adder = 0;
  int depth = 0;                  ///< the deepest stage's gate levels: the pipeline's critical path
  double seconds = 0;             ///< yosys run time (of the run that filled the cache)
  bool cached = false;            ///< the synthesis came from the RTL cache
};
/// InputError (exit 2) when yosys is missing or fails (its log is named).
RtlCost rtl_cost(const Datapath& dp);

}  // namespace mc
