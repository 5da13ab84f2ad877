// matcore-sc: the SystemC registry of stage kinds (sc/src/registry.cpp), private to the model.
//
// One entry per mc::StageKind: how the top instantiates its module (build), which named probes
// it gives the VCD (probe; names and widths from mc::signal_table), and how the text monitor
// prints it (text). DatapathTop walks mc::plan(dp) and takes each stage's entry; nothing else
// in sc/ switches on the stage kind.
#pragma once
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "matcore/plan.hpp"
#include "matcore_sc/top.hpp"

namespace mcsc {

/// The register a probe reads (the stage's data signal).
template <class T>
const T& bus(sc_core::sc_object* o) {
  return static_cast<sc_core::sc_signal<T>*>(o)->read();
}

/// A fixed-point probe: NAME (two's complement bits), NAME_e, NAME_f (plan.hpp, SignalField).
struct FixedProbe {
  sc_dt::sc_bv_base* v;
  int* e;
  int* f;
  bool* warned;  ///< the top's "does not fit" warning, given once
};
/// v into bv's width (two's complement); *overflow when it does not fit.
void set_bv(sc_dt::sc_bv_base& bv, mc::i128 v, bool* overflow);
void set_fixed(const FixedProbe& p, const mc::Fixed& x);

/// The probe makers: each takes the next entry of the field table, which must carry the name
/// asked for (the widths are the table's), and traces it into the VCD (if any).
class ProbeKit {
 public:
  ProbeKit(const mc::Datapath& dp, sc_core::sc_trace_file* tf, ProbeStore& store);
  bool& B(const std::string& nm);
  int& I(const std::string& nm);
  unsigned& U(const std::string& nm);
  sc_dt::uint64& Q(const std::string& nm);
  sc_dt::sc_bv_base& V(const std::string& nm);
  FixedProbe FX(const std::string& nm);
  /// Throws std::logic_error if a table entry has no probe.
  void finish() const;
  const std::vector<mc::SignalField>& table() const { return table_; }
  const mc::Datapath& dp;

 private:
  int take(const std::string& nm);
  sc_core::sc_trace_file* tf_;
  ProbeStore& st_;
  std::vector<mc::SignalField> table_;
  size_t next_ = 0;
};

/// What the text monitor keeps of a group between its stages (keyed by the group's seq).
struct TextCtx {
  const mc::Datapath& dp;
  TextState& seen;
};

/// The buses between the stages while the top is built (the output of the last stage of each type).
struct Buses {
  sc_core::sc_signal<OperandBus>* op = nullptr;
  sc_core::sc_signal<ProductBus>* prod = nullptr;
  sc_core::sc_signal<AlignBus>* al = nullptr;
  sc_core::sc_signal<AccBus>* acc = nullptr;
  sc_core::sc_signal<ResultBus>* res = nullptr;
};

/// One entry of the registry.
struct ScStage {
  mc::StageKind kind;
  /// Instantiates the stage's module on the buses (nullptr: the issue stage, built first).
  void (*build)(DatapathTop& top, const mc::PlannedStage& st, Buses& b);
  /// The stage's data probes (after the control word's); returns what updates them.
  std::function<void()> (*probe)(ProbeKit& kit, const StageView& v);
  /// The stage's lines of the text trace.
  void (*text)(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c);
  bool products = false;  ///< its output is the product bus the specials detector reads
  bool result = false;    ///< the group's rounded d: fed back to the issue stage (next group's c)
  bool shows_terms = false;  ///< its text shows the terms the product stages keep (TextState::products)
};

/// The entry of kind k.
const ScStage& sc_stage(mc::StageKind k);

// The entries' functions (probes.cpp, text.cpp).
#define MCSC_STAGE_FNS(name)                                                     \
  std::function<void()> probe_##name(ProbeKit& kit, const StageView& v);         \
  void text_##name(TextCtx& ctx, std::ostream& os, const StageView& v, const Ctl& c);
MCSC_STAGE_FNS(issue)
MCSC_STAGE_FNS(multiplier)
MCSC_STAGE_FNS(aligner)
MCSC_STAGE_FNS(adder)
MCSC_STAGE_FNS(oddeven)
MCSC_STAGE_FNS(cadd)
MCSC_STAGE_FNS(normaliser)
MCSC_STAGE_FNS(exact)
MCSC_STAGE_FNS(pair_level)
MCSC_STAGE_FNS(pair_cadd)
MCSC_STAGE_FNS(rounder)
MCSC_STAGE_FNS(cfinal)
MCSC_STAGE_FNS(outconv)
MCSC_STAGE_FNS(scaler)
MCSC_STAGE_FNS(grouper)
#undef MCSC_STAGE_FNS

}  // namespace mcsc
