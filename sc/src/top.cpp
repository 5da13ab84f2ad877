// matcore-sc: the generic top, its probes (VCD) and its text monitor.
#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn for the probe and monitor methods
#include "matcore_sc/top.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "matcore/format.hpp"
#include "matcore/plan.hpp"

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

template <class M, class In, class Out>
sc_signal<Out>* DatapathTop::add(const std::string& name, StageKind kind, sc_signal<In>* in, int level) {
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
  views_.push_back(View{name, kind, level, cn, out});
  return out;
}

void DatapathTop::build() {
  using mc::PlannedStage;
  using mc::plan;
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
  views_.push_back(View{"issue", StageKind::Issue, 0, ctl0, op0});
  ctl_cur_ = ctl0;

  // One module per stage of the core plan (matcore/plan.hpp), each consuming the bus its
  // predecessor drives.
  sc_signal<AlignBus>* al = nullptr;
  sc_signal<AccBus>* acc = nullptr;
  sc_signal<ResultBus>* res = nullptr;
  sc_signal<ProductBus>* prod = nullptr;
  for (const PlannedStage& st : plan(dp_)) {
    switch (st.kind) {
      case StageKind::Issue: break;  // built above: it closes the loops of the pipeline
      case StageKind::Multiplier:
        prod = mul_out_ = add<Multiplier, OperandBus, ProductBus>(st.name, st.kind, op0);
        break;
      case StageKind::Exact: acc = add<ExactAdder, ProductBus, AccBus>(st.name, st.kind, prod); break;
      case StageKind::PairLevel:
        prod = add<PairLevel, ProductBus, ProductBus>(st.name, st.kind, prod, st.level);
        break;
      case StageKind::PairCAdd: acc = add<PairCAdd, ProductBus, AccBus>(st.name, st.kind, prod); break;
      case StageKind::Aligner: al = add<Aligner, ProductBus, AlignBus>(st.name, st.kind, prod); break;
      case StageKind::Adder: acc = add<AdderTree, AlignBus, AccBus>(st.name, st.kind, al); break;
      case StageKind::OddEven: acc = add<OddEven, AccBus, AccBus>(st.name, st.kind, acc); break;
      case StageKind::CAdd: acc = add<CAligner, AccBus, AccBus>(st.name, st.kind, acc); break;
      case StageKind::Normaliser: acc = add<Normaliser, AccBus, AccBus>(st.name, st.kind, acc); break;
      case StageKind::Rounder:
        res = add<Rounder, AccBus, ResultBus>(st.name, st.kind, acc);
        rounder_ = static_cast<int>(names_.size()) - 1;
        issue_->fb_ctl(*ctl_cur_);  // the next group of a sample starts from the rounded d
        issue_->fb_res(*res);
        break;
      case StageKind::CFinal: res = add<CFinal, ResultBus, ResultBus>(st.name, st.kind, res); break;
      case StageKind::OutConv: res = add<OutConv, ResultBus, ResultBus>(st.name, st.kind, res); break;
      case StageKind::Scaler:
        prod = mul_out_ = add<Scaler, ProductBus, ProductBus>(st.name, st.kind, prod);
        break;
      case StageKind::GroupSum:
        prod = mul_out_ = add<Grouper, ProductBus, ProductBus>(st.name, st.kind, prod);
        break;
    }
  }
  issue_->fin_ctl(*ctl_cur_);
  issue_->fin_res(*res);
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

// -------------------------------------------------------------------------------- probes
namespace {

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

template <class T>
sc_signal<T>& sig(sc_core::sc_object* o) { return *static_cast<sc_signal<T>*>(o); }

}  // namespace

void DatapathTop::make_probes(sc_core::sc_trace_file* tf) {
  using sc_core::sc_trace;
  const int n = dp_.n_fma;
  const int ow = dp_.out_fmt.width();
  // The names, widths and radices come from the core field table (signal_table in
  // matcore/plan.hpp): each probe takes the next entry, which must carry the name the binding
  // below expects. The catalog (GTKWave layouts) is that table.
  const std::vector<mc::SignalField> table = mc::signal_table(dp_);
  catalog_.clear();
  for (const mc::SignalField& f : table) catalog_.push_back(SignalInfo{f.group, f.name, f.width, f.radix});
  size_t next = 0;
  auto take = [&](const std::string& nm) -> int {
    if (next >= table.size() || table[next].name != nm)
      throw std::logic_error("matcore-sc probes: signal '" + nm + "' is not the next entry of the field table (" +
                             (next < table.size() ? table[next].name : std::string("end")) + ")");
    return table[next++].width;
  };
  auto B = [&](const std::string& nm) -> bool& {
    take(nm);
    pb_.push_back(false);
    if (tf) sc_trace(tf, pb_.back(), nm);
    return pb_.back();
  };
  auto I = [&](const std::string& nm) -> int& {
    take(nm);
    pi_.push_back(0);
    if (tf) sc_trace(tf, pi_.back(), nm);
    return pi_.back();
  };
  auto U = [&](const std::string& nm, int) -> unsigned& {
    const int w = take(nm);
    pu_.push_back(0);
    if (tf) sc_trace(tf, pu_.back(), nm, w);
    return pu_.back();
  };
  auto Q = [&](const std::string& nm, int) -> sc_dt::uint64& {
    const int w = take(nm);
    p64_.push_back(0);
    if (tf) sc_trace(tf, p64_.back(), nm, w);
    return p64_.back();
  };
  auto V = [&](const std::string& nm, int, char = 'h') -> sc_dt::sc_bv_base& {
    pbv_.emplace_back(take(nm));
    if (tf) sc_trace(tf, pbv_.back(), nm);
    return pbv_.back();
  };
  struct FixedProbe { sc_dt::sc_bv_base* v; int* e; int* f; };
  auto FX = [&](const std::string& nm, int frac_max) {
    return FixedProbe{&V(nm, frac_max), &I(nm + "_e"), &I(nm + "_f")};
  };
  auto setfx = [this](FixedProbe p, const Fixed& x) {
    bool of = false;
    set_bv(*p.v, x.v, &of);
    *p.e = x.exp;
    *p.f = x.frac;
    if (of && !probe_overflow_warned_) {
      probe_overflow_warned_ = true;
      std::fprintf(stderr, "matcore-sc: warning: a fixed-point value does not fit its probe width\n");
    }
  };
  if (tf) sc_trace(tf, clk_, "clk");
  const int pw = mc::product_probe_width(dp_);
  const int fmax = std::max({dp_.frac_bits, dp_.partial_frac, dp_.c_frac, dp_.sum_frac, dp_.acc_frac,
                             dp_.out_fmt.mbits});

  const size_t spec = static_cast<size_t>(specials_index(stage_list(dp_)));
  const int sw = dp_.scale_fmt.width();
  for (size_t vi = 0; vi < views_.size(); ++vi) {
    const View& v = views_[vi];
    // control word of the stage
    bool& valid = B(v.name + ".valid");
    unsigned& tag = U(v.name + ".tag", 32);
    unsigned& grp = U(v.name + ".grp", 8);
    std::function<void(const Ctl&)> ctlp = [&valid, &tag, &grp](const Ctl& c) {
      valid = c.valid;
      tag = c.tag;
      grp = static_cast<unsigned>(c.grp);
    };
    if (vi == spec) {  // the specials detector's outputs
      unsigned& kind = U("specials.kind", 3);
      sc_dt::uint64& bits = Q("specials.d", ow);
      bool& zs = B("specials.zero_sign");
      ctlp = [ctlp, &kind, &bits, &zs](const Ctl& c) {
        ctlp(c);
        kind = static_cast<unsigned>(c.special);
        bits = c.sbits;
        zs = c.zsign;
      };
    }
    std::function<void()> datap;
    sc_core::sc_object* d = v.data;
    switch (v.kind) {
      case StageKind::Issue: {
        std::vector<sc_dt::uint64*> a, b;
        for (int i = 0; i < n; ++i) {
          a.push_back(&Q("multiplier.a" + std::to_string(i), dp_.a_fmt.width()));
          b.push_back(&Q("multiplier.b" + std::to_string(i), dp_.b_fmt.width()));
        }
        sc_dt::uint64& c = Q("multiplier.c", ow);
        datap = [d, a, b, &c] {
          const OperandBus& x = sig<OperandBus>(d).read();
          for (size_t i = 0; i < a.size(); ++i) {
            *a[i] = static_cast<int>(i) < x.n ? x.a[i] : 0;
            *b[i] = static_cast<int>(i) < x.n ? x.b[i] : 0;
          }
          c = x.c;
        };
        break;
      }
      case StageKind::Multiplier: {
        struct P { sc_dt::sc_bv_base* sig; int* e; bool* s; unsigned* cls; };
        std::vector<P> ps;
        for (int i = 0; i < n; ++i) {
          const std::string p = "multiplier.p" + std::to_string(i);
          ps.push_back(P{&V(p, pw), &I(p + "_e"), &B(p + "_s"), &U(p + "_cls", 3)});
        }
        datap = [d, ps] {
          const ProductBus& x = sig<ProductBus>(d).read();
          for (size_t i = 0; i < ps.size(); ++i) {
            const Product p = static_cast<int>(i) < x.m ? x.p[i] : Product{};
            set_bv(*ps[i].sig, static_cast<i128>(p.sig), nullptr);
            *ps[i].e = p.exp;
            *ps[i].s = p.sign;
            *ps[i].cls = static_cast<unsigned>(p.cls);
          }
        };
        break;
      }
      case StageKind::Aligner: {
        const bool ie = dp_.late_c && dp_.interleave == 2;
        int& e = I(ie ? "aligner.e_max_odd" : "aligner.e_max");
        bool& st = B(ie ? "aligner.sticky_odd" : "aligner.sticky");
        int* ee = ie ? &I("aligner.e_max_even") : nullptr;
        bool* ste = ie ? &B("aligner.sticky_even") : nullptr;
        std::vector<sc_dt::sc_bv_base*> lanes;
        for (int i = 0; i < n; ++i) lanes.push_back(&V("aligner.v" + std::to_string(i), dp_.frac_bits + 4, 'b'));
        if (!dp_.late_c) lanes.push_back(&V("aligner.vc", dp_.frac_bits + 4, 'b'));
        datap = [this, d, &e, &st, ee, ste, lanes] {
          const AlignBus& x = sig<AlignBus>(d).read();
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
        break;
      }
      case StageKind::Adder: {
        if (dp_.late_c && dp_.interleave == 2) {
          FixedProbe po = FX("adder.s_sum_odd", dp_.frac_bits), pe = FX("adder.s_sum_even", dp_.frac_bits);
          datap = [d, po, pe, setfx] {
            const AccBus& x = sig<AccBus>(d).read();
            setfx(po, x.odd);
            setfx(pe, x.even);
          };
        } else {
          FixedProbe p = FX(dp_.late_c ? "adder.s_sum" : "adder.s_acc", dp_.frac_bits);
          datap = [d, p, setfx] { setfx(p, sig<AccBus>(d).read().s); };
        }
        break;
      }
      case StageKind::OddEven: {
        FixedProbe p = FX("adder.s_sum", dp_.partial_frac);
        datap = [d, p, setfx] { setfx(p, sig<AccBus>(d).read().s); };
        break;
      }
      case StageKind::CAdd: {
        int& ec = I("cadd.e_c");
        bool& br = B("cadd.branch");
        bool& dr = B("cadd.c_dropped");
        bool& st = B("cadd.sticky");
        FixedProbe p = FX("cadd.s_acc", fmax);
        datap = [d, &ec, &br, &dr, &st, p, setfx] {
          const AccBus& x = sig<AccBus>(d).read();
          ec = x.e_c;
          br = x.c_shifted;
          dr = x.c_dropped;
          st = x.sticky;
          setfx(p, x.s);
        };
        break;
      }
      case StageKind::Normaliser: {
        bool& act = B("normaliser.active");
        bool& st = B("normaliser.sticky");
        FixedProbe p = FX("normaliser.s_acc", fmax);
        datap = [d, &act, &st, p, setfx] {
          const AccBus& x = sig<AccBus>(d).read();
          act = x.normalised;
          st = x.sticky;
          setfx(p, x.s);
        };
        break;
      }
      case StageKind::Exact:
      case StageKind::PairCAdd: {
        const std::string pre = v.kind == StageKind::Exact ? "adder.exact" : "cadd.exact";
        sc_dt::sc_bv_base& mag = V(pre, 128);
        int& e = I(pre + "_e");
        bool& s = B(pre + "_s");
        bool& st = B(pre + "_sticky");
        bool* sp = v.kind == StageKind::PairCAdd ? &B("cadd.special") : nullptr;
        datap = [d, &mag, &e, &s, &st, sp] {
          const AccBus& x = sig<AccBus>(d).read();
          set_bv(mag, static_cast<i128>(x.ex.mag), nullptr);
          e = x.ex.lsb_exp;
          s = x.ex.sign;
          st = x.ex.sticky;
          if (sp) *sp = x.mode == AccMode::Bits;
        };
        break;
      }
      case StageKind::PairLevel: {
        std::vector<sc_dt::uint64*> ps;
        for (int k = 0; k < (n >> (v.level + 1)); ++k)
          ps.push_back(&Q("adder.pair" + std::to_string(v.level) + "_" + std::to_string(k), ow));
        datap = [d, ps] {
          const ProductBus& x = sig<ProductBus>(d).read();
          for (size_t k = 0; k < ps.size(); ++k)
            *ps[k] = static_cast<int>(k) < x.pairs ? x.pair_bits[k] : 0;
        };
        break;
      }
      case StageKind::Rounder:
      case StageKind::CFinal: {
        sc_dt::uint64& q = Q(v.kind == StageKind::Rounder ? "rounder.d" : "cfinal.d", ow);
        datap = [d, &q] { q = sig<ResultBus>(d).read().d; };
        break;
      }
      case StageKind::OutConv: {
        sc_dt::uint64& q = Q("outconv.d32", 32);
        datap = [d, &q] { q = sig<ResultBus>(d).read().d32; };
        break;
      }
      case StageKind::Scaler: {
        struct S { sc_dt::uint64 *a, *b; int* e; };
        std::vector<S> ss;
        for (int j = 0; j < std::max(1, n / dp_.scale_block); ++j) {
          const std::string l = std::to_string(j);
          ss.push_back(S{&Q("scaler.sa" + l, sw), &Q("scaler.sb" + l, sw), &I("scaler.e_s" + l)});
        }
        datap = [this, d, ss] {
          const ProductBus& x = sig<ProductBus>(d).read();
          for (size_t j = 0; j < ss.size(); ++j) {
            const bool on = static_cast<int>(j) < x.ns;
            *ss[j].a = on ? x.sa[j] : 0;
            *ss[j].b = on ? x.sb[j] : 0;
            *ss[j].e = on ? scale_product(dp_.scale_fmt, x.sa[j], x.sb[j]).exp : 0;
          }
        };
        break;
      }
      case StageKind::GroupSum: {
        struct G { sc_dt::uint64 *a, *b; FixedProbe s; int* e; };
        std::vector<G> gs;
        const int gw = mc::group_probe_width(dp_);
        for (int j = 0; j < n / dp_.group_size; ++j) {
          const std::string l = std::to_string(j);
          sc_dt::uint64* a = &Q("grouper.sa" + l, sw);
          sc_dt::uint64* b = &Q("grouper.sb" + l, sw);
          const FixedProbe s = FX("grouper.s" + l, gw);
          gs.push_back(G{a, b, s, &I("grouper.e" + l)});
        }
        datap = [this, d, gs, setfx] {
          const ProductBus& x = sig<ProductBus>(d).read();
          const int per = dp_.scale_block / dp_.group_size;  // groups per block
          for (size_t j = 0; j < gs.size(); ++j) {
            const int m = static_cast<int>(j), blk = (x.k0 % dp_.scale_block) / dp_.group_size + m;
            const bool on = m < x.m;
            *gs[j].a = on ? x.sa[blk / per] : 0;
            *gs[j].b = on ? x.sb[blk / per] : 0;
            const Product& t = x.p[j];
            const bool nz = on && t.cls == Class::Normal;
            const i128 v = static_cast<i128>(t.sig);
            setfx(gs[j].s, nz ? Fixed{t.sign ? -v : v, t.exp, t.frac} : Fixed{});
            *gs[j].e = nz ? t.exp : on && t.cls == Class::Zero ? dp_.emin_lim : 0;
          }
        };
        break;
      }
    }
    if (!tf) continue;  // catalog only
    sc_signal<Ctl>* cs = v.ctl;
    sc_core::sc_spawn_options so;
    so.spawn_method();
    so.set_sensitivity(&cs->value_changed_event());
    so.set_sensitivity(&dynamic_cast<sc_core::sc_interface*>(d)->default_event());
    so.dont_initialize();
    sc_core::sc_spawn([cs, ctlp, datap] { ctlp(cs->read()); datap(); }, (v.name + "_probe").c_str(), &so);
  }
  if (next != table.size())
    throw std::logic_error("matcore-sc probes: field table entry '" + table[next].name + "' has no probe");
}

// --------------------------------------------------------------------------- text trace
namespace {

std::string describe_bits(const Format& f, uint64_t bits) { return mc::describe(f, bits); }

const char* special_name(SpecialKind k) {
  switch (k) {
    case SpecialKind::NaNIn: return "nan_in";
    case SpecialKind::Invalid: return "invalid";
    case SpecialKind::PosInf: return "+inf";
    case SpecialKind::NegInf: return "-inf";
    default: return "none";
  }
}

/// mag * 2^lsb in binary, the units digit at weight 2^e_ref, `keep` fraction bits, then '|'
/// and the bits that do not fit (dropped by the stage).
std::string bin_cut(bool neg, u128 mag, int lsb, int e_ref, int keep) {
  if (mag == 0) return "0";
  const int top = lsb + msb_index(mag);
  const int hi = std::max(top, e_ref);
  const int cut = e_ref - keep;  // lowest kept weight
  const int lo = std::min(lsb, cut);
  std::string s = neg ? "-" : "+";
  int dropped = 0;
  for (int w = hi; w >= lo; --w) {
    if (w < cut && ++dropped > 48) {
      s += "...(" + std::to_string(w - lo + 1) + " more)";
      break;
    }
    const int i = w - lsb;
    s += (i >= 0 && i < 128 && ((mag >> i) & 1)) ? '1' : '0';
    if (w == e_ref) s += '.';
    if (w == cut && lo < cut) s += '|';
  }
  return s + " x2^" + std::to_string(e_ref);
}

/// An exact magnitude mag * 2^lsb as a normalised binary number.
std::string exact_str(bool neg, u128 mag, int lsb, bool sticky) {
  if (mag == 0) return "0";
  const int m = msb_index(mag);
  return std::string(neg ? "-" : "+") + to_binary_fixed(static_cast<i128>(mag), m) + " x2^" +
         std::to_string(lsb + m) + (sticky ? " +sticky" : "");
}

std::string fixed_str(const Fixed& x) {
  if (x.exp == kNone) return "none (no nonzero term)";
  return render(x);
}

std::string prod_str(const Product& p) {
  if (p.cls != Class::Normal)
    return std::string(p.sign ? "-" : "+") + to_string(p.cls) + (p.overflow ? " (overflow)" : "") +
           (p.invalid ? " (invalid)" : "");
  return std::string(p.sign ? "-" : "+") + to_binary_fixed(static_cast<i128>(p.sig), p.frac) + " x2^" +
         std::to_string(p.exp);
}

}  // namespace

void DatapathTop::monitor() {
  for (const View& v : views_) {
    const Ctl& c = v.ctl->read();
    if (!c.valid) continue;
    if (!text_tags_.empty() && !text_tags_.count(c.tag)) continue;
    char head[96];
    std::snprintf(head, sizeof head, "[cycle %3llu] %-11s sample %u group %d\n",
                  static_cast<unsigned long long>(cycle_), v.name.c_str(), c.tag, c.grp);
    text_ << head;
    describe(text_, v, c);
  }
}

void DatapathTop::describe(std::ostream& os, const View& v, const Ctl& c) {
  const Format& of = dp_.out_fmt;
  const std::string ind = "      ";
  const int F = dp_.frac_bits;
  auto prev_acc = [&]() -> const AccBus* {
    auto it = seen_acc_.find(c.seq);
    return it == seen_acc_.end() ? nullptr : &it->second;
  };
  switch (v.kind) {
    case StageKind::Issue: {
      const OperandBus& x = sig<OperandBus>(v.data).read();
      os << ind << "a =";
      for (int i = 0; i < x.n; ++i) os << " " << to_hex_bits(dp_.a_fmt, x.a[i]);
      os << "\n" << ind << "b =";
      for (int i = 0; i < x.n; ++i) os << " " << to_hex_bits(dp_.b_fmt, x.b[i]);
      os << "\n" << ind << "c = " << describe_bits(of, x.c)
         << (c.grp > 0 ? "  (previous group's d)" : dp_.c_final_add ? "  (+0: c is added at the end)" : "")
         << "\n";
      break;
    }
    case StageKind::Multiplier: {
      const ProductBus& x = sig<ProductBus>(v.data).read();
      if (dp_.adder == AdderKind::Fused) seen_products_[c.seq] = x;  // for the aligner
      for (int i = 0; i < x.m; ++i) os << ind << "p" << i << " = " << prod_str(x.p[i]) << "\n";
      os << ind << "c  = " << prod_str(x.c) << "\n";
      break;
    }
    case StageKind::Aligner: {
      const AlignBus& x = sig<AlignBus>(v.data).read();
      auto pit = seen_products_.find(c.seq);
      const bool ie = dp_.late_c && dp_.interleave == 2;
      os << ind << (ie ? "e_max(odd k) = " : "e_max = ") << (x.e_max == kNone ? std::string("none") : std::to_string(x.e_max));
      if (ie) os << ", e_max(even k) = " << (x.e_even == kNone ? std::string("none") : std::to_string(x.e_even));
      os << "   F = " << F << " fraction bits, "
         << (dp_.prod_align == AlignRound::RD    ? "round-down"
             : dp_.prod_align == AlignRound::RNE ? "round to nearest even"
             : dp_.prod_align == AlignRound::RNA ? "round to nearest away"
                                                 : "truncation") << ", '|' = cut\n";
      if (pit != seen_products_.end()) {
        const ProductBus& p = pit->second;
        for (int i = 0; i < x.m; ++i) {
          Product t = i < p.m ? p.p[i] : p.c;
          const bool isc = i >= p.m;
          if (isc && t.cls == Class::Zero && dp_.c_zero_exp != kNone) {
            os << ind << "c : 0 at exponent " << dp_.c_zero_exp << " (c_zero_exp)\n";
            continue;
          }
          const int e_ref = ie && (i & 1) ? x.e_even : x.e_max;
          os << ind << (isc ? std::string("c ") : "p" + std::to_string(i)) << ": ";
          if (t.cls != Class::Normal || e_ref == kNone) os << prod_str(t) << "\n";
          else
            os << bin_cut(t.sign, t.sig, t.exp - t.frac, e_ref, F) << "  -> v = "
               << to_binary_fixed(x.v[i], F) << "\n";
        }
        seen_products_.erase(pit);
      }
      os << ind << "sticky = " << x.sticky << (ie ? std::string(" (odd), ") + (x.sticky_even ? "1" : "0") + " (even)" : "") << "\n";
      break;
    }
    case StageKind::Adder: {
      const AccBus& x = sig<AccBus>(v.data).read();
      seen_acc_[c.seq] = x;
      if (dp_.late_c && dp_.interleave == 2)
        os << ind << "s_sum_odd  = " << fixed_str(x.odd) << "\n" << ind << "s_sum_even = " << fixed_str(x.even) << "\n";
      else
        os << ind << (dp_.late_c ? "s_sum = " : "s_acc = ") << fixed_str(x.s) << "\n";
      break;
    }
    case StageKind::OddEven: {
      const AccBus& x = sig<AccBus>(v.data).read();
      if (x.s.exp != kNone) {
        for (const Fixed* p : {&x.odd, &x.even}) {
          if (p->exp == kNone) continue;
          const bool neg = p->v < 0;
          const u128 mag = neg ? static_cast<u128>(-p->v) : static_cast<u128>(p->v);
          os << ind << (p == &x.odd ? "odd : " : "even: ") << bin_cut(neg, mag, p->exp - p->frac, x.s.exp, dp_.partial_frac)
             << "  (round-down to " << dp_.partial_frac << " bits)\n";
        }
      }
      os << ind << "s_sum = " << fixed_str(x.s) << "\n";
      seen_acc_[c.seq] = x;
      break;
    }
    case StageKind::CAdd: {
      const AccBus& x = sig<AccBus>(v.data).read();
      const AccBus* in = prev_acc();
      if (!x.cadd) {
        os << ind << "c = 0 discarded (c_zero_exp none)\n";
      } else if (in) {
        const Product& cc = x.c;
        const int e_max = in->s.exp;
        os << ind << "e_c = " << x.e_c << ", e_max = " << (e_max == kNone ? std::string("none") : std::to_string(e_max)) << " -> "
           << (x.c_shifted ? "c shifted to e_max, round-down to c_frac = " + std::to_string(dp_.c_frac)
                           : "sum shifted to e_c, round-down to sum_frac = " + std::to_string(dp_.sum_frac))
           << (x.c_dropped ? " (c dropped: gap > c_drop_gap)" : "") << "\n";
        if (x.c_shifted && cc.cls == Class::Normal)
          os << ind << "c    : " << bin_cut(cc.sign, cc.sig, cc.exp - cc.frac, e_max, dp_.c_frac) << "\n";
        if (!x.c_shifted && in->s.exp != kNone && in->s.v != 0) {
          const bool neg = in->s.v < 0;
          const u128 mag = neg ? static_cast<u128>(-in->s.v) : static_cast<u128>(in->s.v);
          os << ind << "s_sum: " << bin_cut(neg, mag, in->s.exp - in->s.frac, x.e_c, dp_.sum_frac) << "\n";
        }
      }
      os << ind << "s_acc = " << fixed_str(x.s) << "   sticky = " << x.sticky << "\n";
      seen_acc_[c.seq] = x;
      break;
    }
    case StageKind::Normaliser: {
      const AccBus& x = sig<AccBus>(v.data).read();
      const AccBus* in = prev_acc();
      if (x.normalised && in && in->s.v != 0) {
        const bool neg = in->s.v < 0;
        const u128 mag = neg ? static_cast<u128>(-in->s.v) : static_cast<u128>(in->s.v);
        os << ind << "in   : " << bin_cut(neg, mag, in->s.exp - in->s.frac, x.s.exp, dp_.acc_frac)
           << "  (leading one to 2^" << x.s.exp << ", emin " << of.emin() << "; round-down to acc_frac = " << dp_.acc_frac << ")\n";
      } else if (!x.normalised) {
        os << ind << "pass (no normalisation in this branch)\n";
      }
      os << ind << "s_acc = " << fixed_str(x.s) << "\n";
      seen_acc_[c.seq] = x;
      break;
    }
    case StageKind::Exact: {
      const AccBus& x = sig<AccBus>(v.data).read();
      os << ind << "exact sum (products and c, no rounding) = " << exact_str(x.ex.sign, x.ex.mag, x.ex.lsb_exp, x.ex.sticky)
         << "\n";
      seen_acc_[c.seq] = x;
      break;
    }
    case StageKind::PairLevel: {
      const ProductBus& x = sig<ProductBus>(v.data).read();
      if (x.pairs == 0) os << ind << "pass (short group)\n";
      for (int k = 0; k < x.pairs; ++k)
        os << ind << "pair" << v.level << "_" << k << " = " << describe_bits(of, x.pair_bits[k]) << "\n";
      break;
    }
    case StageKind::PairCAdd: {
      const AccBus& x = sig<AccBus>(v.data).read();
      if (x.mode == AccMode::Bits) os << ind << "c + tree: special -> 0x" << to_hex_bits(of, x.bits) << "\n";
      else
        os << ind << "c + tree, exact = " << exact_str(x.ex.sign, x.ex.mag, x.ex.lsb_exp, x.ex.sticky) << "\n";
      seen_acc_[c.seq] = x;
      break;
    }
    case StageKind::Rounder: {
      const ResultBus& x = sig<ResultBus>(v.data).read();
      const AccBus* in = prev_acc();
      const int p = dp_.out_prec >= 0 ? dp_.out_prec : of.mbits;
      if (c.special != SpecialKind::None) {
        os << ind << "special: " << special_name(c.special) << "\n";
      } else if (in && in->mode == AccMode::Bits) {
        os << ind << "special from the tree (c + tree)\n";
      } else if (in) {
        bool neg = false;
        u128 mag = 0;
        int lsb = 0;
        bool sticky = false;
        if (in->mode == AccMode::Fixed) {
          neg = in->s.v < 0;
          mag = neg ? static_cast<u128>(-in->s.v) : static_cast<u128>(in->s.v);
          lsb = in->s.exp - in->s.frac;
        } else if (in->mode == AccMode::Exact) {
          neg = in->ex.sign;
          mag = in->ex.mag;
          lsb = in->ex.lsb_exp;
          sticky = in->ex.sticky;
        }
        if (mag != 0) {
          const int lead = lsb + msb_index(mag);
          os << ind << "in   : " << bin_cut(neg, mag, lsb, std::max(lead, of.emin()), p) << (sticky ? " +sticky" : "")
             << "  (" << p << " fraction bits kept, " << to_string(dp_.out_round)
             << (dp_.sub_out ? "" : ", FTZ") << ")\n";
        }
      }
      os << ind << "d = " << describe_bits(of, x.d) << "\n";
      seen_acc_.erase(c.seq);
      if (dp_.c_final_add) seen_res_[c.seq] = x;
      break;
    }
    case StageKind::CFinal: {
      const ResultBus& x = sig<ResultBus>(v.data).read();
      auto it = seen_res_.find(c.seq);
      if (c.last && it != seen_res_.end())
        os << ind << "acc = " << describe_bits(of, it->second.d) << "\n"
           << ind << "  + c = " << describe_bits(of, c.c0) << "  (one addition, " << to_string(dp_.c_final_round) << ")\n";
      else
        os << ind << "pass (not the last group: its d is the next group's c)\n";
      if (it != seen_res_.end()) seen_res_.erase(it);
      os << ind << "d = " << describe_bits(of, x.d) << "\n";
      break;
    }
    case StageKind::OutConv: {
      const ResultBus& x = sig<ResultBus>(v.data).read();
      os << ind << "d32 = 0x" << to_hex_bits(kBinary32, x.d32) << "\n";
      break;
    }
    case StageKind::Scaler:
    case StageKind::GroupSum: {
      const ProductBus& x = sig<ProductBus>(v.data).read();
      if (dp_.adder == AdderKind::Fused) seen_products_[c.seq] = x;  // the aligner's terms
      for (int j = 0; j < x.ns; ++j) {
        const ScaleProduct s = scale_product(dp_.scale_fmt, x.sa[j], x.sb[j]);
        os << ind << "block " << (x.k0 / dp_.scale_block + j) << ": sa = " << describe_bits(dp_.scale_fmt, x.sa[j])
           << ", sb = " << describe_bits(dp_.scale_fmt, x.sb[j]) << ", e_alpha + e_beta = "
           << (s.cls == Class::Normal ? std::to_string(s.exp) : s.cls == Class::Zero ? std::string("zero") : std::string("nan"))
           << "\n";
      }
      const char* what = v.kind == StageKind::Scaler ? "p" : "group ";
      for (int i = 0; i < x.m; ++i) os << ind << what << i << " = " << prod_str(x.p[i]) << "\n";
      break;
    }
  }
}

}  // namespace mcsc
