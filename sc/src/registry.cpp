// matcore-sc: the registry of stage kinds. One entry per mc::StageKind, in its order: the
// module the top instantiates for it (on which buses), its probes and its text (stages.hpp).
// Adding a stage kind to the SystemC model is one module (modules.hpp), one row here, one probe
// and one text function.
#include "stages.hpp"

#include <stdexcept>

namespace mcsc {

using mc::StageKind;
using sc_core::sc_signal;

template <class M, class In, class Out>
sc_signal<Out>* DatapathTop::add_stage(const std::string& name, StageKind kind, sc_signal<In>* in, int level) {
  auto* m = new M(name.c_str(), dp_);
  auto* out = new sc_signal<Out>((name + "_q").c_str());
  m->clk(clk_);
  m->ctl(*ctl_cur_);
  m->in(*in);
  m->out(*out);
  auto* cn = new sc_signal<Ctl>((name + "_ctl").c_str());
  if (names_.size() == static_cast<size_t>(specials_index(stage_list(dp_)))) {
    // the stage after the multiplier (and the scale stages): the specials detector is this
    // stage's control register
    auto* s = new Specials("specials", dp_);
    s->clk(clk_);
    s->in(*ctl_cur_);
    s->prod(*mul_out_);
    s->out(*cn);
  } else {
    auto* r = new CtlReg((name + "_ctlreg").c_str());
    r->clk(clk_);
    r->in(*ctl_cur_);
    r->out(*cn);
  }
  ctl_cur_ = cn;
  names_.push_back(name);
  views_.push_back(StageView{name, kind, level, cn, out});
  return out;
}


namespace {

/// Builds module M between the buses `from` and `to`.
template <class M, class In, class Out, sc_signal<In>* Buses::*from, sc_signal<Out>* Buses::*to>
void build(DatapathTop& top, const mc::PlannedStage& st, Buses& b) {
  b.*to = top.add_stage<M, In, Out>(st.name, st.kind, b.*from, st.level);
}

using Op = OperandBus;
using Pr = ProductBus;
using Al = AlignBus;
using Ac = AccBus;
using Re = ResultBus;
constexpr auto op = &Buses::op;
constexpr auto pr = &Buses::prod;
constexpr auto al = &Buses::al;
constexpr auto ac = &Buses::acc;
constexpr auto re = &Buses::res;

const ScStage kScStages[mc::kStageKinds] = {
    {StageKind::Issue, nullptr, probe_issue, text_issue},
    {StageKind::Multiplier, build<Multiplier, Op, Pr, op, pr>, probe_multiplier, text_multiplier, true},
    {StageKind::Aligner, build<Aligner, Pr, Al, pr, al>, probe_aligner, text_aligner, false, false, true},
    {StageKind::Adder, build<AdderTree, Al, Ac, al, ac>, probe_adder, text_adder},
    {StageKind::OddEven, build<OddEven, Ac, Ac, ac, ac>, probe_oddeven, text_oddeven},
    {StageKind::CAdd, build<CAligner, Ac, Ac, ac, ac>, probe_cadd, text_cadd},
    {StageKind::Normaliser, build<Normaliser, Ac, Ac, ac, ac>, probe_normaliser, text_normaliser},
    {StageKind::Exact, build<ExactAdder, Pr, Ac, pr, ac>, probe_exact, text_exact},
    {StageKind::PairLevel, build<PairLevel, Pr, Pr, pr, pr>, probe_pair_level, text_pair_level},
    {StageKind::PairCAdd, build<PairCAdd, Pr, Ac, pr, ac>, probe_pair_cadd, text_pair_cadd},
    {StageKind::Rounder, build<Rounder, Ac, Re, ac, re>, probe_rounder, text_rounder, false, true},
    {StageKind::CFinal, build<CFinal, Re, Re, re, re>, probe_cfinal, text_cfinal},
    {StageKind::OutConv, build<OutConv, Re, Re, re, re>, probe_outconv, text_outconv},
    {StageKind::Scaler, build<Scaler, Pr, Pr, pr, pr>, probe_scaler, text_scaler, true},
    {StageKind::GroupSum, build<Grouper, Pr, Pr, pr, pr>, probe_grouper, text_grouper, true},
};

}  // namespace

const ScStage& sc_stage(StageKind k) {
  const ScStage& e = kScStages[static_cast<int>(k)];
  if (e.kind != k) throw std::logic_error("matcore-sc: the stage registry is out of StageKind order");
  return e;
}

}  // namespace mcsc
