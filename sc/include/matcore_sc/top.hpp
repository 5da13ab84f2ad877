// matcore-sc: one generic pipelined top, built from a preset's Datapath.
//
// The stages are mc::plan(dp)'s, each built, probed and printed by its kind's entry of the
// registry (sc/src/stages.hpp, registry.cpp). The stages instantiated depend only on the Datapath fields (adder kind, late_c, interleave,
// n_fma, c_final_add, out_fmt); there is no top per GPU. Between every two stages there is a
// register (data + control), so a new group of products enters every clock cycle.
//
//   Fused, early c (NVIDIA):   issue | multiplier | aligner | adder | rounder
//   Fused, late c (CDNA3):     issue | multiplier | aligner | adder | [oddeven] | cadd | normaliser | rounder
//   Exact (CDNA1, SFMA):       issue | multiplier | adder(exact) | rounder
//   Pairwise (CDNA2):          issue | multiplier | adder_l0 .. adder_l{log2 n_fma - 1} | cadd | rounder
//   + cfinal (c_final_add) and + outconv (binary16 output)
//
// The specials detector is the control register of stage 2. A group's result leaves the
// rounder and is the c of the sample's next group: the issue stage launches that group on the
// next clock edge, so the groups of one sample are `recurrence()` cycles apart while the
// groups of other samples fill the slots in between.
#pragma once
#include <systemc>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "matcore/datapath.hpp"
#include "matcore/plan.hpp"
#include "matcore_sc/buses.hpp"
#include "matcore_sc/modules.hpp"

namespace mcsc {

using mc::StageKind;  // the stage kinds of the core plan (matcore/plan.hpp)

struct TopOptions {
  sc_core::sc_trace_file* vcd = nullptr;  ///< trace every stage signal (probes) into this file
  bool text = false;                      ///< collect the per-stage text trace
  bool catalog = false;                   ///< list the waveform signals (signals()) without a VCD
};

/// One waveform signal: VCD name (without the "SystemC." scope), width, GTKWave radix
/// ('b' binary, 'h' hex, 'd' decimal, 's' signed decimal) and the stage it belongs to.
struct SignalInfo {
  std::string group, name;
  int width = 1;
  char radix = 'h';
};

/// A GTKWave save file (.gtkw) showing these signals grouped by stage (lanes in closed
/// sub-groups), without a dump file line: open it with `gtkwave TRACE.vcd LAYOUT.gtkw`.
/// Signals of several presets may be merged: GTKWave skips those a trace does not have.
std::string gtkw_layout(const std::vector<SignalInfo>& signals, const std::string& title);

struct Done {
  uint32_t tag = 0;
  uint64_t d = 0;     ///< out_fmt bits
  uint64_t d32 = 0;   ///< widened to the stored width (binary16 output -> binary32)
  uint64_t cycle = 0; ///< clock cycle of completion
};

/// One stage of the built top, as the probes and the text monitor see it.
struct StageView {
  std::string name;
  StageKind kind;
  int level = 0;                     ///< pairwise level
  sc_core::sc_signal<Ctl>* ctl;
  sc_core::sc_object* data;          ///< sc_signal<the bus its kind drives>
};

/// Storage of the probes: stable addresses for sc_trace.
struct ProbeStore {
  std::deque<bool> b;
  std::deque<int> i;
  std::deque<unsigned> u;
  std::deque<sc_dt::uint64> q;
  std::deque<sc_dt::sc_bv_base> bv;
  bool overflow_warned = false;
};

/// What the text monitor keeps of a group between two of its stages, by the group's seq.
struct TextState {
  bool keep_products = false;  ///< a later stage prints the product terms (the aligner)
  std::map<uint64_t, ProductBus> products;  ///< multiplier / scale stage output (for the aligner)
  std::map<uint64_t, AccBus> acc;           ///< accumulator before the normaliser / rounder
  std::map<uint64_t, ResultBus> res;        ///< rounder result (for the final c add)
};

class DatapathTop : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(DatapathTop);
  static constexpr double kPeriodNs = 10.0;

  DatapathTop(sc_core::sc_module_name nm, const mc::Datapath& dp, const TopOptions& opt = {});

  const mc::Datapath& datapath() const { return dp_; }
  /// Queues one sample (a, b: K values; c in out_fmt, as mc::dot).
  void push(Job j) { issue_->push(std::move(j)); }
  /// Runs the simulation until every queued sample is done (sc_start until starvation).
  void run();
  /// Finished samples, in completion order; take() empties the list.
  std::vector<Done> take() { std::vector<Done> r; r.swap(done_); return r; }

  /// Stage names in pipeline order (index 0 = the operand register of the issue stage).
  const std::vector<std::string>& stages() const { return names_; }
  /// Cycles from the operand register to the final output register.
  int latency() const { return static_cast<int>(names_.size()) - 1; }
  /// Cycles between the launches of two consecutive groups of one sample.
  int recurrence() const { return rounder_ + 1; }
  /// "issue -> multiplier -> ... -> rounder" with the stage numbers.
  std::string diagram() const;
  uint64_t cycles() const { return cycle_; }
  /// The waveform signals (with TopOptions::vcd or ::catalog), in stage order.
  const std::vector<SignalInfo>& signals() const { return catalog_; }

  /// Text trace: only these sample tags are logged (empty: all).
  void trace_tags(std::set<uint32_t> t) { text_tags_ = std::move(t); }
  std::string take_text() { std::string s = text_.str(); text_.str(""); return s; }

  /// Instantiates module M as the next stage (its control register, or the specials detector
  /// where the plan puts it): what the registry's build entries call (sc/src/registry.cpp).
  template <class M, class In, class Out>
  sc_core::sc_signal<Out>* add_stage(const std::string& name, StageKind kind, sc_core::sc_signal<In>* in,
                                     int level = 0);

 private:
  void build();
  void clockgen();
  void make_probes(sc_core::sc_trace_file* tf);
  void monitor();
  

  mc::Datapath dp_;
  TopOptions opt_;
  sc_core::sc_signal<bool> clk_{"clk"};
  Issue* issue_ = nullptr;
  sc_core::sc_signal<Ctl>* ctl_cur_ = nullptr;
  sc_core::sc_signal<ProductBus>* mul_out_ = nullptr;
  std::vector<StageView> views_;
  std::vector<std::string> names_;
  int rounder_ = 0;
  sc_core::sc_event kick_;
  int drain_ = 0;
  uint64_t cycle_ = 0;
  std::vector<Done> done_;
  // text trace
  std::set<uint32_t> text_tags_;
  std::ostringstream text_;
  TextState seen_;
  ProbeStore probes_;
  std::vector<SignalInfo> catalog_;
};

}  // namespace mcsc
