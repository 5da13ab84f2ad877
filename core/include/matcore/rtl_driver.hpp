// matcore: the drivers of the external hardware tools, apart from the core library (they
// start programs): Verilator builds and runs the RTL of a generated top (the `rtl` engine of
// validate, run and trace; its VCD rewritten to the SystemC form), yosys synthesises it for
// `cost`. Library matcore_drivers (core/src/drivers/); the generator itself is matcore/rtl.hpp.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "matcore/rtl.hpp"

namespace mc {

/// Directory of rtl_model/ (the source tree's, or $MATCORE_RTL_DIR).
std::string rtl_model_dir();


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
