#include "matcore/plan.hpp"

#include <algorithm>

namespace mc {

const char* to_string(StageKind k) {
  switch (k) {
    case StageKind::Issue: return "issue";
    case StageKind::Multiplier: return "multiplier";
    case StageKind::Aligner: return "aligner";
    case StageKind::Adder: return "adder";
    case StageKind::OddEven: return "oddeven";
    case StageKind::CAdd: return "cadd";
    case StageKind::Normaliser: return "normaliser";
    case StageKind::Exact: return "exact adder";
    case StageKind::PairLevel: return "pair level";
    case StageKind::PairCAdd: return "pair c addition";
    case StageKind::Rounder: return "rounder";
    case StageKind::CFinal: return "cfinal";
    case StageKind::OutConv: return "outconv";
    case StageKind::Scaler: return "scaler";
    case StageKind::GroupSum: return "grouper";
  }
  return "?";
}

StageList stage_list(const Datapath& dp) {
  StageList p;
  p.push(StageKind::Issue);
  p.push(StageKind::Multiplier);
  if (dp.scaled()) p.push(dp.group_size > 0 ? StageKind::GroupSum : StageKind::Scaler);
  switch (dp.adder) {
    case AdderKind::Exact:
      p.push(StageKind::Exact);
      break;
    case AdderKind::Pairwise:
      for (int d = 0; (1 << d) < dp.n_fma; ++d) p.push(StageKind::PairLevel, d);
      p.push(StageKind::PairCAdd);
      break;
    case AdderKind::Fused:
    default:
      p.push(StageKind::Aligner);
      p.push(StageKind::Adder);
      if (dp.late_c) {
        if (dp.interleave == 2) p.push(StageKind::OddEven);
        p.push(StageKind::CAdd);
        p.push(StageKind::Normaliser);
      }
      break;
  }
  p.push(StageKind::Rounder);
  if (dp.c_final_add) p.push(StageKind::CFinal);
  if (!(dp.out_fmt == kBinary32) && !(dp.out_fmt == kBinary64)) p.push(StageKind::OutConv);
  return p;
}

int specials_index(const StageList& l) {
  int i = 0;
  while (i < l.n && (l.step[i].kind == StageKind::Issue || l.step[i].kind == StageKind::Multiplier ||
                     l.step[i].kind == StageKind::Scaler || l.step[i].kind == StageKind::GroupSum))
    ++i;
  return i;
}

std::string stage_name(const StageStep& s) {
  switch (s.kind) {
    case StageKind::Exact: return "adder";
    case StageKind::PairLevel: return "adder_l" + std::to_string(s.level);
    case StageKind::PairCAdd: return "cadd";
    default: return to_string(s.kind);
  }
}

std::vector<PlannedStage> plan(const Datapath& dp) {
  const StageList l = stage_list(dp);
  std::vector<PlannedStage> p;
  for (int i = 0; i < l.n; ++i) p.push_back({stage_name(l.step[i]), l.step[i].kind, l.step[i].level});
  return p;
}

int product_probe_width(const Datapath& dp) {
  return std::max(dp.a_fmt.mbits + dp.b_fmt.mbits + 2, dp.out_fmt.mbits + 1);
}

int term_count(const Datapath& dp) { return dp.group_size > 0 ? dp.n_fma / dp.group_size : dp.n_fma; }

int term_int_bits(const Datapath& dp) {
  if (dp.group_size <= 0) return 2;
  return dp.a_fmt.emax() + dp.b_fmt.emax() + 2 + clog2(dp.group_size) + (dp.scale_fmt.mbits > 0 ? 2 : 0);
}

int aligned_probe_width(const Datapath& dp) { return std::min(dp.frac_bits + term_int_bits(dp) + 2, 128); }

int fixed_probe_width(const Datapath& dp, int frac_max) {
  return std::min(frac_max + term_int_bits(dp) + 3 + clog2(dp.n_fma + 1), 128);
}

int group_probe_width(const Datapath& dp) {
  auto span = [](const Format& f) { return f.emax() - f.emin() + f.mbits + 2; };
  const int scale_sig = 2 * (dp.scale_fmt.mbits + 1);
  return std::min(span(dp.a_fmt) + span(dp.b_fmt) + clog2(std::max(dp.group_size, 1) + 1) + scale_sig + 1, 128);
}

namespace {

/// The signal table being built: the entries in order, under the group (stage) of the moment.
struct SignalTable {
  const Datapath& dp;
  std::vector<SignalField> t;
  std::string group;
  void add(const std::string& nm, int w, char radix) { t.push_back(SignalField{group, nm, std::min(w, 128), radix}); }
  void B(const std::string& nm) { add(nm, 1, 'b'); }
  void I(const std::string& nm) { add(nm, 32, 's'); }
  void U(const std::string& nm, int w) { add(nm, w, w == 1 ? 'b' : 'd'); }
  /// A fixed-point value: NAME (two's complement), NAME_e, NAME_f.
  void FX(const std::string& nm, int frac_max) {
    add(nm, fixed_probe_width(dp, frac_max), 'b');
    I(nm + "_e");
    I(nm + "_f");
  }
};

/// The data signals of one planned stage, by its kind.
void kind_signals(SignalTable& T, const PlannedStage& st) {
  const Datapath& dp = T.dp;
  const int n = dp.n_fma, ow = dp.out_fmt.width();
  const int fmax = std::max({dp.frac_bits, dp.partial_frac, dp.c_frac, dp.sum_frac, dp.acc_frac, dp.out_fmt.mbits});
  const int sw = dp.scale_fmt.width(), blocks = dp.scaled() ? std::max(1, n / dp.scale_block) : 0;
  auto add = [&T](const std::string& nm, int w, char radix) { T.add(nm, w, radix); };
  auto B = [&T](const std::string& nm) { T.B(nm); };
  auto I = [&T](const std::string& nm) { T.I(nm); };
  auto U = [&T](const std::string& nm, int w) { T.U(nm, w); };
  auto FX = [&T](const std::string& nm, int frac_max) { T.FX(nm, frac_max); };
  switch (st.kind) {
    case StageKind::Issue:
      for (int i = 0; i < n; ++i) {
        add("multiplier.a" + std::to_string(i), dp.a_fmt.width(), 'h');
        add("multiplier.b" + std::to_string(i), dp.b_fmt.width(), 'h');
      }
      add("multiplier.c", ow, 'h');
      break;
    case StageKind::Multiplier:
      for (int i = 0; i < n; ++i) {
        const std::string p = "multiplier.p" + std::to_string(i);
        add(p, product_probe_width(dp), 'h');
        I(p + "_e");
        B(p + "_s");
        U(p + "_cls", 3);
      }
      break;
    case StageKind::Aligner: {
      const bool ie = dp.late_c && dp.interleave == 2;
      I(ie ? "aligner.e_max_odd" : "aligner.e_max");
      B(ie ? "aligner.sticky_odd" : "aligner.sticky");
      if (ie) {
        I("aligner.e_max_even");
        B("aligner.sticky_even");
      }
      for (int i = 0; i < term_count(dp); ++i) add("aligner.v" + std::to_string(i), aligned_probe_width(dp), 'b');
      if (!dp.late_c) add("aligner.vc", aligned_probe_width(dp), 'b');
      break;
    }
    case StageKind::Adder:
      if (dp.late_c && dp.interleave == 2) {
        FX("adder.s_sum_odd", dp.frac_bits);
        FX("adder.s_sum_even", dp.frac_bits);
      } else {
        FX(dp.late_c ? "adder.s_sum" : "adder.s_acc", dp.frac_bits);
      }
      break;
    case StageKind::OddEven: FX("adder.s_sum", dp.partial_frac); break;
    case StageKind::CAdd:
      I("cadd.e_c");
      B("cadd.branch");
      B("cadd.c_dropped");
      B("cadd.sticky");
      FX("cadd.s_acc", fmax);
      break;
    case StageKind::Normaliser:
      B("normaliser.active");
      B("normaliser.sticky");
      FX("normaliser.s_acc", fmax);
      break;
    case StageKind::Exact:
    case StageKind::PairCAdd: {
      const std::string pre = st.kind == StageKind::Exact ? "adder.exact" : "cadd.exact";
      add(pre, 128, 'h');
      I(pre + "_e");
      B(pre + "_s");
      B(pre + "_sticky");
      if (st.kind == StageKind::PairCAdd) B("cadd.special");
      break;
    }
    case StageKind::PairLevel:
      for (int k = 0; k < (n >> (st.level + 1)); ++k)
        add("adder.pair" + std::to_string(st.level) + "_" + std::to_string(k), ow, 'h');
      break;
    case StageKind::Rounder: add("rounder.d", ow, 'h'); break;
    case StageKind::CFinal: add("cfinal.d", ow, 'h'); break;
    case StageKind::OutConv: add("outconv.d32", 32, 'h'); break;
    case StageKind::Scaler:
      for (int j = 0; j < blocks; ++j) {
        add("scaler.sa" + std::to_string(j), sw, 'h');
        add("scaler.sb" + std::to_string(j), sw, 'h');
        I("scaler.e_s" + std::to_string(j));
      }
      break;
    case StageKind::GroupSum:
      for (int j = 0; j < n / std::max(1, dp.group_size); ++j) {
        add("grouper.sa" + std::to_string(j), sw, 'h');
        add("grouper.sb" + std::to_string(j), sw, 'h');
        add("grouper.s" + std::to_string(j), group_probe_width(dp), 'b');
        I("grouper.s" + std::to_string(j) + "_e");
        I("grouper.s" + std::to_string(j) + "_f");
        I("grouper.e" + std::to_string(j));
      }
      break;
  }
}

}  // namespace

std::vector<SignalField> signal_table(const Datapath& dp) {
  SignalTable T{dp, {}, ""};
  const int ow = dp.out_fmt.width();
  const std::vector<PlannedStage> stages = plan(dp);
  const size_t spec = static_cast<size_t>(specials_index(stage_list(dp)));
  for (size_t vi = 0; vi < stages.size(); ++vi) {
    const PlannedStage& st = stages[vi];
    T.group = st.name;
    T.B(st.name + ".valid");
    T.U(st.name + ".tag", 32);
    T.U(st.name + ".grp", 8);
    if (vi == spec) {  // the specials detector: the control register of the stage after the multiplier
      T.group = "specials";
      T.U("specials.kind", 3);
      T.add("specials.d", ow, 'h');
      T.B("specials.zero_sign");
      T.group = st.name;
    }
    kind_signals(T, st);
  }
  return T.t;
}

const SignalField* find_signal(const std::vector<SignalField>& table, const std::string& name) {
  for (const SignalField& f : table)
    if (f.name == name) return &f;
  return nullptr;
}

std::string plan_diagram(const Datapath& dp) {
  std::string s;
  for (const PlannedStage& st : plan(dp)) s += (s.empty() ? "" : " -> ") + st.name;
  return s;
}

}  // namespace mc
