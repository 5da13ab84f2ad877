// matcore-sc: the probes (VCD signals) of the top: the control word of every stage, the
// specials detector's outputs, and each stage kind's data probes (its registry entry's
// `probe`, sc/src/stages.hpp). Names and widths are mc::signal_table's.
#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn for the probe methods
#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "matcore/format.hpp"
#include "matcore/plan.hpp"
#include "stages.hpp"

namespace mcsc {

using namespace mc;
using sc_core::sc_signal;

void set_bv(sc_dt::sc_bv_base& bv, i128 v, bool* overflow) {
  const int W = bv.length();
  if (W < 128) {
    const i128 lim = static_cast<i128>(1) << (W - 1);
    if ((v >= lim || v < -lim) && overflow) *overflow = true;
  }
  u128 u = static_cast<u128>(v);
  if (W < 128) u &= (static_cast<u128>(1) << W) - 1;
  for (int i = 0; i < (W + 31) / 32; ++i) bv.set_word(i, static_cast<sc_dt::sc_digit>(u >> (32 * i)));
}

void set_fixed(const FixedProbe& p, const Fixed& x) {
  bool of = false;
  set_bv(*p.v, x.v, &of);
  *p.e = x.exp;
  *p.f = x.frac;
  if (of && !*p.warned) {
    *p.warned = true;
    std::fprintf(stderr, "matcore-sc: warning: a fixed-point value does not fit its probe width\n");
  }
}

// ----------------------------------------------------------------------------- the makers
ProbeKit::ProbeKit(const Datapath& d, sc_core::sc_trace_file* tf, ProbeStore& store)
    : dp(d), tf_(tf), st_(store), table_(signal_table(d)) {}

int ProbeKit::take(const std::string& nm) {
  if (next_ >= table_.size() || table_[next_].name != nm)
    throw std::logic_error("matcore-sc probes: signal '" + nm + "' is not the next entry of the field table (" +
                           (next_ < table_.size() ? table_[next_].name : std::string("end")) + ")");
  return table_[next_++].width;
}

bool& ProbeKit::B(const std::string& nm) {
  take(nm);
  st_.b.push_back(false);
  if (tf_) sc_core::sc_trace(tf_, st_.b.back(), nm);
  return st_.b.back();
}

int& ProbeKit::I(const std::string& nm) {
  take(nm);
  st_.i.push_back(0);
  if (tf_) sc_core::sc_trace(tf_, st_.i.back(), nm);
  return st_.i.back();
}

unsigned& ProbeKit::U(const std::string& nm) {
  const int w = take(nm);
  st_.u.push_back(0);
  if (tf_) sc_core::sc_trace(tf_, st_.u.back(), nm, w);
  return st_.u.back();
}

sc_dt::uint64& ProbeKit::Q(const std::string& nm) {
  const int w = take(nm);
  st_.q.push_back(0);
  if (tf_) sc_core::sc_trace(tf_, st_.q.back(), nm, w);
  return st_.q.back();
}

sc_dt::sc_bv_base& ProbeKit::V(const std::string& nm) {
  st_.bv.emplace_back(take(nm));
  if (tf_) sc_core::sc_trace(tf_, st_.bv.back(), nm);
  return st_.bv.back();
}

FixedProbe ProbeKit::FX(const std::string& nm) {
  sc_dt::sc_bv_base* v = &V(nm);
  int* e = &I(nm + "_e");
  return FixedProbe{v, e, &I(nm + "_f"), &st_.overflow_warned};
}

void ProbeKit::finish() const {
  if (next_ != table_.size())
    throw std::logic_error("matcore-sc probes: field table entry '" + table_[next_].name + "' has no probe");
}

// ------------------------------------------------------------------- the top's probes
void DatapathTop::make_probes(sc_core::sc_trace_file* tf) {
  using sc_core::sc_trace;
  // The names, widths and radices come from the core field table (signal_table in
  // matcore/plan.hpp): each probe takes the next entry, which must carry the name its stage's
  // registry entry asks for. The catalog (GTKWave layouts) is that table.
  ProbeKit kit(dp_, tf, probes_);
  catalog_.clear();
  for (const mc::SignalField& f : kit.table()) catalog_.push_back(SignalInfo{f.group, f.name, f.width, f.radix});
  if (tf) sc_trace(tf, clk_, "clk");
  const size_t spec = static_cast<size_t>(specials_index(stage_list(dp_)));
  for (size_t vi = 0; vi < views_.size(); ++vi) {
    const StageView& v = views_[vi];
    // control word of the stage
    bool& valid = kit.B(v.name + ".valid");
    unsigned& tag = kit.U(v.name + ".tag");
    unsigned& grp = kit.U(v.name + ".grp");
    std::function<void(const Ctl&)> ctlp = [&valid, &tag, &grp](const Ctl& c) {
      valid = c.valid;
      tag = c.tag;
      grp = static_cast<unsigned>(c.grp);
    };
    if (vi == spec) {  // the specials detector's outputs
      unsigned& kind = kit.U("specials.kind");
      sc_dt::uint64& bits = kit.Q("specials.d");
      bool& zs = kit.B("specials.zero_sign");
      ctlp = [ctlp, &kind, &bits, &zs](const Ctl& c) {
        ctlp(c);
        kind = static_cast<unsigned>(c.special);
        bits = c.sbits;
        zs = c.zsign;
      };
    }
    std::function<void()> datap = sc_stage(v.kind).probe(kit, v);
    sc_core::sc_object* d = v.data;
    if (!tf) continue;  // catalog only
    sc_signal<Ctl>* cs = v.ctl;
    sc_core::sc_spawn_options so;
    so.spawn_method();
    so.set_sensitivity(&cs->value_changed_event());
    so.set_sensitivity(&dynamic_cast<sc_core::sc_interface*>(d)->default_event());
    so.dont_initialize();
    sc_core::sc_spawn([cs, ctlp, datap] { ctlp(cs->read()); datap(); }, (v.name + "_probe").c_str(), &so);
  }
  kit.finish();
}


// ------------------------------------------------------------------ each kind's probes
// The context of a kind's probe function: dp_ the datapath, d the stage's data register, n lanes.
#define PROBE_CONTEXT                                                                              \
  const Datapath& dp_ = kit.dp;                                                                    \
  sc_core::sc_object* d = v.data;                                                                  \
  [[maybe_unused]] const int n = dp_.n_fma;                                                        \
  (void)d

std::function<void()> probe_issue(ProbeKit& kit, const StageView& v) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  std::vector<sc_dt::uint64*> a, b;
  for (int i = 0; i < n; ++i) {
    a.push_back(&kit.Q("multiplier.a" + std::to_string(i)));
    b.push_back(&kit.Q("multiplier.b" + std::to_string(i)));
  }
  sc_dt::uint64& c = kit.Q("multiplier.c");
  datap = [d, a, b, &c] {
    const OperandBus& x = bus<OperandBus>(d);
    for (size_t i = 0; i < a.size(); ++i) {
      *a[i] = static_cast<int>(i) < x.n ? x.a[i] : 0;
      *b[i] = static_cast<int>(i) < x.n ? x.b[i] : 0;
    }
    c = x.c;
  };
  return datap;
}

std::function<void()> probe_multiplier(ProbeKit& kit, const StageView& v) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  struct P { sc_dt::sc_bv_base* sig; int* e; bool* s; unsigned* cls; };
  std::vector<P> ps;
  for (int i = 0; i < n; ++i) {
    const std::string p = "multiplier.p" + std::to_string(i);
    ps.push_back(P{&kit.V(p), &kit.I(p + "_e"), &kit.B(p + "_s"), &kit.U(p + "_cls")});
  }
  datap = [d, ps] {
    const ProductBus& x = bus<ProductBus>(d);
    for (size_t i = 0; i < ps.size(); ++i) {
      const Product p = static_cast<int>(i) < x.m ? x.p[i] : Product{};
      set_bv(*ps[i].sig, static_cast<i128>(p.sig), nullptr);
      *ps[i].e = p.exp;
      *ps[i].s = p.sign;
      *ps[i].cls = static_cast<unsigned>(p.cls);
    }
  };
  return datap;
}

std::function<void()> probe_aligner(ProbeKit& kit, const StageView& v) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  const bool ie = dp_.late_c && dp_.interleave == 2;
  int& e = kit.I(ie ? "aligner.e_max_odd" : "aligner.e_max");
  bool& st = kit.B(ie ? "aligner.sticky_odd" : "aligner.sticky");
  int* ee = ie ? &kit.I("aligner.e_max_even") : nullptr;
  bool* ste = ie ? &kit.B("aligner.sticky_even") : nullptr;
  std::vector<sc_dt::sc_bv_base*> lanes;
  for (int i = 0; i < term_count(dp_); ++i) lanes.push_back(&kit.V("aligner.v" + std::to_string(i)));
  if (!dp_.late_c) lanes.push_back(&kit.V("aligner.vc"));
  datap = [&dp_, d, &e, &st, ee, ste, lanes] {
    const AlignBus& x = bus<AlignBus>(d);
    e = x.e_max;
    st = x.sticky;
    if (ee) { *ee = x.e_even; *ste = x.sticky_even; }
    const int nl = static_cast<int>(lanes.size());
    for (int i = 0; i < nl; ++i) {
      // lane i; with early c the last probe is c (lane x.m - 1)
      int src = i;
      if (!dp_.late_c && i == nl - 1) src = x.m - 1;
      else if (!dp_.late_c && i >= x.m - 1) src = -1;
      else if (dp_.late_c && i >= x.m) src = -1;
      set_bv(*lanes[i], src >= 0 ? x.v[src] : 0, nullptr);
    }
  };
  return datap;
}

std::function<void()> probe_adder(ProbeKit& kit, const StageView& v) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  if (dp_.late_c && dp_.interleave == 2) {
    FixedProbe po = kit.FX("adder.s_sum_odd"), pe = kit.FX("adder.s_sum_even");
    datap = [d, po, pe] {
      const AccBus& x = bus<AccBus>(d);
      set_fixed(po, x.odd);
      set_fixed(pe, x.even);
    };
  } else {
    FixedProbe p = kit.FX(dp_.late_c ? "adder.s_sum" : "adder.s_acc");
    datap = [d, p] { set_fixed(p, bus<AccBus>(d).s); };
  }
  return datap;
}

std::function<void()> probe_oddeven(ProbeKit& kit, const StageView& v) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  FixedProbe p = kit.FX("adder.s_sum");
  datap = [d, p] { set_fixed(p, bus<AccBus>(d).s); };
  return datap;
}

std::function<void()> probe_cadd(ProbeKit& kit, const StageView& v) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  int& ec = kit.I("cadd.e_c");
  bool& br = kit.B("cadd.branch");
  bool& dr = kit.B("cadd.c_dropped");
  bool& st = kit.B("cadd.sticky");
  FixedProbe p = kit.FX("cadd.s_acc");
  datap = [d, &ec, &br, &dr, &st, p] {
    const AccBus& x = bus<AccBus>(d);
    ec = x.e_c;
    br = x.c_shifted;
    dr = x.c_dropped;
    st = x.sticky;
    set_fixed(p, x.s);
  };
  return datap;
}

std::function<void()> probe_normaliser(ProbeKit& kit, const StageView& v) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  bool& act = kit.B("normaliser.active");
  bool& st = kit.B("normaliser.sticky");
  FixedProbe p = kit.FX("normaliser.s_acc");
  datap = [d, &act, &st, p] {
    const AccBus& x = bus<AccBus>(d);
    act = x.normalised;
    st = x.sticky;
    set_fixed(p, x.s);
  };
  return datap;
}

/// An exact sum: NAME.exact (the magnitude), _e, _s, _sticky; the pairwise c addition also
/// shows whether a special decided it.
static std::function<void()> exact_probe(ProbeKit& kit, const StageView& v, bool pair_cadd) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  const std::string pre = v.name + ".exact";
  sc_dt::sc_bv_base& mag = kit.V(pre);
  int& e = kit.I(pre + "_e");
  bool& s = kit.B(pre + "_s");
  bool& st = kit.B(pre + "_sticky");
  bool* sp = pair_cadd ? &kit.B(v.name + ".special") : nullptr;
  datap = [d, &mag, &e, &s, &st, sp] {
    const AccBus& x = bus<AccBus>(d);
    set_bv(mag, static_cast<i128>(x.ex.mag), nullptr);
    e = x.ex.lsb_exp;
    s = x.ex.sign;
    st = x.ex.sticky;
    if (sp) *sp = x.mode == AccMode::Bits;
  };
  return datap;
}

std::function<void()> probe_pair_level(ProbeKit& kit, const StageView& v) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  std::vector<sc_dt::uint64*> ps;
  for (int k = 0; k < (n >> (v.level + 1)); ++k)
    ps.push_back(&kit.Q("adder.pair" + std::to_string(v.level) + "_" + std::to_string(k)));
  datap = [d, ps] {
    const ProductBus& x = bus<ProductBus>(d);
    for (size_t k = 0; k < ps.size(); ++k)
      *ps[k] = static_cast<int>(k) < x.pairs ? x.pair_bits[k] : 0;
  };
  return datap;
}

/// A result register: NAME.d (the rounder, the final c addition).
static std::function<void()> result_probe(ProbeKit& kit, const StageView& v) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  sc_dt::uint64& q = kit.Q(v.name + ".d");
  datap = [d, &q] { q = bus<ResultBus>(d).d; };
  return datap;
}

std::function<void()> probe_outconv(ProbeKit& kit, const StageView& v) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  sc_dt::uint64& q = kit.Q("outconv.d32");
  datap = [d, &q] { q = bus<ResultBus>(d).d32; };
  return datap;
}

std::function<void()> probe_scaler(ProbeKit& kit, const StageView& v) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  struct S { sc_dt::uint64 *a, *b; int* e; };
  std::vector<S> ss;
  for (int j = 0; j < std::max(1, n / dp_.scale_block); ++j) {
    const std::string l = std::to_string(j);
    ss.push_back(S{&kit.Q("scaler.sa" + l), &kit.Q("scaler.sb" + l), &kit.I("scaler.e_s" + l)});
  }
  datap = [&dp_, d, ss] {
    const ProductBus& x = bus<ProductBus>(d);
    for (size_t j = 0; j < ss.size(); ++j) {
      const bool on = static_cast<int>(j) < x.ns;
      *ss[j].a = on ? x.sa[j] : 0;
      *ss[j].b = on ? x.sb[j] : 0;
      *ss[j].e = on ? scale_product(dp_.scale_fmt, x.sa[j], x.sb[j]).exp : 0;
    }
  };
  return datap;
}

std::function<void()> probe_grouper(ProbeKit& kit, const StageView& v) {
  PROBE_CONTEXT;
  std::function<void()> datap;
  struct G { sc_dt::uint64 *a, *b; FixedProbe s; int* e; };
  std::vector<G> gs;
  for (int j = 0; j < n / dp_.group_size; ++j) {
    const std::string l = std::to_string(j);
    sc_dt::uint64* a = &kit.Q("grouper.sa" + l);
    sc_dt::uint64* b = &kit.Q("grouper.sb" + l);
    const FixedProbe s = kit.FX("grouper.s" + l);
    gs.push_back(G{a, b, s, &kit.I("grouper.e" + l)});
  }
  datap = [&dp_, d, gs] {
    const ProductBus& x = bus<ProductBus>(d);
    const int per = dp_.scale_block / dp_.group_size;  // groups per block
    for (size_t j = 0; j < gs.size(); ++j) {
      const int m = static_cast<int>(j), blk = (x.k0 % dp_.scale_block) / dp_.group_size + m;
      const bool on = m < x.m;
      *gs[j].a = on ? x.sa[blk / per] : 0;
      *gs[j].b = on ? x.sb[blk / per] : 0;
      const Product& t = x.p[j];
      const bool nz = on && t.cls == Class::Normal;
      const i128 v = static_cast<i128>(t.sig);
      set_fixed(gs[j].s, nz ? Fixed{t.sign ? -v : v, t.exp, t.frac} : Fixed{});
      *gs[j].e = nz ? t.exp : on && t.cls == Class::Zero ? dp_.emin_lim : 0;
    }
  };
  return datap;
}

std::function<void()> probe_exact(ProbeKit& kit, const StageView& v) { return exact_probe(kit, v, false); }
std::function<void()> probe_pair_cadd(ProbeKit& kit, const StageView& v) { return exact_probe(kit, v, true); }
std::function<void()> probe_rounder(ProbeKit& kit, const StageView& v) { return result_probe(kit, v); }
std::function<void()> probe_cfinal(ProbeKit& kit, const StageView& v) { return result_probe(kit, v); }

#undef PROBE_CONTEXT

}  // namespace mcsc
