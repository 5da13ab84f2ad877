// matcore-sc: the generic top, its probes (VCD) and its text monitor.
#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn for the probe and monitor methods
#include "matcore_sc/top.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "matcore/format.hpp"
#include "matcore/plan.hpp"
#include "stages.hpp"

#include <stdexcept>

namespace mcsc {

using namespace mc;
using sc_core::sc_signal;

// ------------------------------------------------------------------------------ building
// Modules and signals are created with new and never deleted: they belong to the SystemC
// hierarchy, which lives as long as the process (one elaboration per process).
DatapathTop::DatapathTop(sc_core::sc_module_name nm, const Datapath& dp, const TopOptions& opt)
    : sc_core::sc_module(nm), dp_(dp), opt_(opt) {
  validate_datapath(dp_);
  build();
  SC_THREAD(clockgen);
  if (opt_.vcd || opt_.catalog) make_probes(opt_.vcd);
  if (opt_.text) {
    sc_core::sc_spawn_options so;
    so.spawn_method();
    so.set_sensitivity(&clk_.negedge_event());
    so.dont_initialize();
    sc_core::sc_spawn([this] { monitor(); }, "monitor", &so);
  }
}

void DatapathTop::build() {
  auto* ctl0 = new sc_signal<Ctl>("issue_ctl");
  auto* op0 = new sc_signal<OperandBus>("issue_q");
  issue_ = new Issue("issue", dp_, 1);
  issue_->clk(clk_);
  issue_->ctl_out(*ctl0);
  issue_->out(*op0);
  issue_->on_done = [this](uint32_t tag, uint64_t d, uint64_t d32) {
    done_.push_back(Done{tag, d, d32, cycle_});
  };
  names_.push_back("issue");
  views_.push_back(StageView{"issue", StageKind::Issue, 0, ctl0, op0});
  ctl_cur_ = ctl0;

  // One module per stage of the core plan (matcore/plan.hpp), built by its kind's registry
  // entry on the bus its predecessor drives.
  Buses b;
  b.op = op0;
  for (const mc::PlannedStage& st : mc::plan(dp_)) {
    const ScStage& e = sc_stage(st.kind);
    if (!e.build) continue;  // the issue stage, built above: it closes the loops of the pipeline
    e.build(*this, st, b);
    if (e.products) mul_out_ = b.prod;
    if (e.shows_terms) seen_.keep_products = true;
    if (e.result) {
      rounder_ = static_cast<int>(names_.size()) - 1;
      issue_->fb_ctl(*ctl_cur_);  // the next group of a sample starts from the rounded d
      issue_->fb_res(*b.res);
    }
  }
  issue_->fin_ctl(*ctl_cur_);
  issue_->fin_res(*b.res);
  // a sample lives from its launch to its last stage: this many in flight keep one group
  // entering per cycle
  issue_->set_window(latency() + 2);
}

std::string DatapathTop::diagram() const {
  std::string s;
  for (size_t i = 0; i < names_.size(); ++i)
    s += (i ? " -> " : "") + std::to_string(i) + ":" + names_[i];
  return s;
}

// ------------------------------------------------------------------------------- running
void DatapathTop::clockgen() {
  const sc_core::sc_time half(kPeriodNs / 2, sc_core::SC_NS);
  for (;;) {
    if (issue_->busy()) drain_ = 2;
    else if (drain_ > 0) --drain_;
    else {
      wait(kick_);
      continue;
    }
    clk_.write(true);
    ++cycle_;
    wait(half);
    clk_.write(false);
    wait(half);
  }
}

void DatapathTop::run() {
  if (sc_core::sc_get_status() == sc_core::SC_PAUSED) kick_.notify(sc_core::SC_ZERO_TIME);
  sc_core::sc_start();
}

}  // namespace mcsc
