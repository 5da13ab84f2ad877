// matcore RTL generator: the widths of a generated top (docs/rtl.md, "Widths") and the
// expressions of the documented views, the named blocks at the end of each top.
#include "rtl_gen.hpp"

#include <algorithm>
#include <cstdlib>

#include "matcore/bits.hpp"

namespace mc {
namespace rtlgen {

Dims dims_of(const Datapath& dp) {
  Dims d;
  d.N = dp.n_fma;
  d.AW = dp.a_fmt.width();
  d.BW = dp.b_fmt.width();
  d.OW = dp.out_fmt.width();
  d.DW = dp.out_fmt.width() < 32 ? 32 : dp.out_fmt.width();
  const int pfr = dp.a_fmt.mbits + dp.b_fmt.mbits, mc = dp.out_fmt.mbits;
  d.TF = std::max(pfr, mc);
  d.SW = d.TF + 2;
  d.PFRAC = dp.prod_round_out ? mc : pfr;
  const int lg = clog2(d.N + 1);
  d.F = dp.frac_bits;
  d.ALW = d.F + 4;
  d.SUMW = d.F + 5 + lg;
  d.PF = dp.partial_frac;
  d.OEW = d.PF + 5 + lg;
  const bool oe = dp.late_c && dp.interleave == 2;
  d.FS = oe ? d.PF : d.F;
  d.SUMW_IN = oe ? d.OEW : d.SUMW;
  d.ACCF = std::max({dp.frac_bits, dp.partial_frac, dp.c_frac, dp.sum_frac, dp.acc_frac, mc});
  d.ACCW = d.ACCF + 5 + lg;
  const int emin_a = dp.a_fmt.emin(), emin_b = dp.b_fmt.emin(), emin_c = dp.out_fmt.emin();
  const int emax_a = dp.a_fmt.emax(), emax_b = dp.b_fmt.emax(), emax_c = dp.out_fmt.emax();
  d.X_LSB = std::min(emin_a + emin_b, emin_c) - d.TF;
  const int msb = std::max(emax_a + emax_b + 1, emax_c);
  d.X_ACCW = msb - d.X_LSB + 1 + clog2(d.N + 1) + 1;
  d.P_LSB = emin_c - d.TF;
  if (dp.scaled()) {
    d.LPS = std::min(dp.scale_block, dp.n_fma);
    d.NS = dp.n_fma / d.LPS;
  }
  return d;
}

std::string view_expr(const RtlViewCtx& c, const SignalField& f) {
const Dims& d = c.d;
const Datapath& dp_ = c.dp;
const std::vector<PlannedStage>& stages_ = c.stages;
  const std::string& n = f.name;
  const size_t dot = n.find('.');
  const std::string pre = n.substr(0, dot), sig = n.substr(dot + 1);
  auto ends = [&](const std::string& s) { return sig.size() >= s.size() && sig.compare(sig.size() - s.size(), s.size(), s) == 0; };
  auto num = [](const std::string& s, size_t from) { return std::atoi(s.c_str() + from); };
  auto has_stage = [&](const std::string& s) {
    for (const PlannedStage& st : stages_)
      if (st.name == s) return true;
    return false;
  };
  if (sig == "valid" || sig == "tag" || sig == "grp") return pre + "_" + sig;
  if (pre == "specials") {
    const std::string S = c.spec_stage;
    if (sig == "kind") return S + "_sk";
    if (sig == "d") return S + "_sd";
    return S + "_zs";
  }
  const std::string W = std::to_string(f.width);
  auto cut = [&](const std::string& e) { return W + "'(" + e + ")"; };
  auto slice = [](const std::string& v, int idx, int width) {
    return v + "[" + std::to_string(idx * width) + " +: " + std::to_string(width) + "]";
  };
  if (pre == "multiplier") {
    if (sig == "c") return "issue_c";
    if (sig[0] == 'a') return slice("issue_a", num(sig, 1), d.AW);
    if (sig[0] == 'b') return slice("issue_b", num(sig, 1), d.BW);
    const int k = num(sig, 1);
    if (ends("_e"))  // the C++ record gives a zero product the exponent 0
      return "(multiplier_p_cls[" + std::to_string(2 * k) + " +: 2] == 2'd0 ? 32'd0 : 32'($signed(" +
             slice("multiplier_p_exp", k, d.XW) + ")))";
    if (ends("_s")) return "multiplier_p_sign[" + std::to_string(k) + "]";
    if (ends("_cls")) {
      const std::string c = "multiplier_p_cls[" + std::to_string(2 * k) + " +: 2]";
      return "(" + c + " == 2'd3 ? 3'd4 : " + c + " == 2'd2 ? 3'd3 : " + c + " == 2'd1 ? 3'd2 : 3'd0)";
    }
    return cut(slice("multiplier_p_sig", k, d.SW) + " >> " + std::to_string(d.TF - d.PFRAC));
  }
  if (pre == "scaler") {  // scaler.sa<j>, sb<j>, e_s<j>: 0 for a pair no lane of the group uses
    const bool e = sig.rfind("e_s", 0) == 0;
    const int j = num(sig, e ? 3 : 2);
    const std::string on = "scaler_lanes[" + std::to_string(j * d.LPS) + "]";
    if (!e) return "(" + on + " ? " + slice("scaler_" + sig.substr(0, 2), j, 8) + " : 8'd0)";
    return "(" + on + " && !scaler_s_nan[" + std::to_string(j) + "] ? 32'($signed(" + slice("scaler_e_s", j, d.XW) +
           ")) : 32'd0)";
  }
  if (pre == "aligner") {
    if (sig == "e_max" || sig == "e_max_odd") return "32'(aligner_e_max)";
    if (sig == "e_max_even") return "32'(aligner_e_even)";
    if (sig == "sticky" || sig == "sticky_odd") return "aligner_sticky";
    if (sig == "sticky_even") return "aligner_sticky_even";
    if (sig == "vc") return slice("aligner_v", d.N, d.ALW);
    return slice("aligner_v", num(sig, 1), d.ALW);
  }
  // fixed-point triples: NAME, NAME_e, NAME_f
  struct Fx { std::string v, e; int frac; std::string frac_expr = ""; };
  auto fixed = [&](const std::string& base) -> Fx {
    if (pre == "adder" && base == "s_sum_odd") return {"adder_s", "adder_e_max", d.F};
    if (pre == "adder" && base == "s_sum_even") return {"adder_s_even", "adder_e_even", d.F};
    if (pre == "adder" && base == "s_acc") return {"adder_s", "adder_e_max", d.F};
    if (pre == "adder" && base == "s_sum")
      return has_stage("oddeven") ? Fx{"oddeven_s", "oddeven_e", d.PF} : Fx{"adder_s", "adder_e_max", d.F};
    // the registers hold ACCF fraction bits; the C++ records c_align's: max(sum, c_frac) when c
    // is shifted (branch), max(sum_frac, c's) when the sum is, acc_frac once normalised
    const int f1 = std::max(d.FS, dp_.c_frac), f2 = std::max(dp_.sum_frac, dp_.out_fmt.mbits);
    // r's register seen at the fraction bits `frame` selects (frame(f): a select over f(bits))
    auto view = [&](const std::string& r, auto frame) {
      return Fx{frame([&](int f) { return "($signed(" + r + "_s_acc) >>> " + std::to_string(d.ACCF - f) + ")"; }),
                r + "_exp", -1, frame([](int f) { return "32'(" + std::to_string(f) + ")"; })};
    };
    if (pre == "cadd") return view("cadd", [&](auto f) { return "(cadd_branch ? " + f(f1) + " : " + f(f2) + ")"; });
    return view("normaliser", [&](auto f) {
      return "(normaliser_active ? " + f(dp_.acc_frac) + " : (normaliser_branch ? " + f(f1) + " : " + f(f2) + "))";
    });
  };
  if (pre == "adder" && sig.rfind("pair", 0) == 0) {
    const int level = num(sig, 4);
    const int k = num(sig, sig.find('_') + 1);
    return slice("adder_l" + std::to_string(level) + "_bits", k, d.OW);
  }
  if (sig == "exact" || sig == "exact_e" || sig == "exact_s" || sig == "exact_sticky") {
    // the C++ record (stages.hpp exact_sum_round) of the wide register: xrec_* below
    const std::string S = pre == "adder" ? "adder" : "cadd", m = S + "_x_mag", lo = S + "_xrec_lo(" + m + ")";
    if (sig == "exact") return "(" + lo + " < 0 ? 128'd0 : 128'(" + m + " >> " + lo + "))";
    if (sig == "exact_s") return S + "_x_sign";
    if (sig == "exact_sticky") return S + "_xrec_st(" + m + ")";
    const int lsb = pre == "adder" ? d.X_LSB : d.P_LSB;
    return "(" + lo + " < 0 ? 32'd0 : 32'(" + std::to_string(lsb) + " + " + lo + "))";
  }
  if (pre == "cadd" && sig == "special") return "cadd_special";
  if (pre == "cadd" && sig == "e_c") return "32'(cadd_e_c)";
  if (pre == "cadd" && (sig == "branch" || sig == "c_dropped" || sig == "sticky")) return "cadd_" + sig;
  if (pre == "normaliser" && (sig == "active" || sig == "sticky")) return "normaliser_" + sig;
  if (sig == "d") return pre + "_d";
  if (sig == "d32") return "outconv_d32";
  if (ends("_e")) return "32'(" + fixed(sig.substr(0, sig.size() - 2)).e + ")";
  if (ends("_f")) {
    const Fx x = fixed(sig.substr(0, sig.size() - 2));
    return x.frac_expr.empty() ? "32'(" + std::to_string(x.frac) + ")" : x.frac_expr;
  }
  return cut(fixed(sig).v);
}

}  // namespace rtlgen
}  // namespace mc
