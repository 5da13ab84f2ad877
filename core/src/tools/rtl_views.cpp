// matcore RTL generator: the widths of a generated top (docs/rtl.md, "Widths"), the
// expressions of the documented views (the named blocks at the end of each top) and the list of
// stage modules.
#include "rtl_gen.hpp"

#include <algorithm>
#include <cstdlib>

#include "matcore/bits.hpp"
#include "matcore/rtl.hpp"
#include "matcore/stages.hpp"

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
  d.NT = term_count(dp);
  d.IB = term_int_bits(dp);
  if (dp.group_size > 0) {
    // group terms share the products' record: TF leaves the products' low bits free for the
    // scales' fraction bits (the grouper's realignment is exact) and holds the C++ record's
    const int sfrac = 2 * dp.scale_fmt.mbits, eminp = dp.a_fmt.emin() + dp.b_fmt.emin();
    d.GF = -group_lsb(dp) + sfrac;
    d.TF = std::max(d.TF + std::max(0, sfrac - eminp), d.GF);
  }
  d.SW = d.TF + d.IB;
  d.PFRAC = dp.prod_round_out ? mc : pfr;
  const int lg = clog2(d.N + 1);
  d.F = dp.frac_bits;
  d.ALW = d.F + d.IB + 2;  // = aligned_probe_width: a term is below 2^IB at e_max
  d.SUMW = d.ALW + 1 + lg;
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

namespace {

/// A signal name split at its first dot ("aligner" "e_max"), with the helpers of the views.
struct View {
  const RtlViewCtx& c;
  const SignalField& f;
  std::string pre, sig;
  View(const RtlViewCtx& ctx, const SignalField& fld) : c(ctx), f(fld) {
    const size_t dot = f.name.find('.');
    pre = f.name.substr(0, dot);
    sig = f.name.substr(dot + 1);
  }
  bool ends(const std::string& s) const { return sig.size() >= s.size() && sig.compare(sig.size() - s.size(), s.size(), s) == 0; }
  static int num(const std::string& s, size_t from) { return std::atoi(s.c_str() + from); }
  bool has_stage(const std::string& s) const {
    for (const PlannedStage& st : c.stages)
      if (st.name == s) return true;
    return false;
  }
  std::string cut(const std::string& e) const { return std::to_string(f.width) + "'(" + e + ")"; }
  static std::string slice(const std::string& v, int idx, int width) {
    return v + "[" + std::to_string(idx * width) + " +: " + std::to_string(width) + "]";
  }
};

/// multiplier.a<i>, b<i>, c (the issue register) and p<i> with _e, _s, _cls.
std::string multiplier_view(const View& v) {
  const Dims& d = v.c.d;
  const std::string& sig = v.sig;
  if (sig == "c") return "issue_c";
  if (sig[0] == 'a') return View::slice("issue_a", View::num(sig, 1), d.AW);
  if (sig[0] == 'b') return View::slice("issue_b", View::num(sig, 1), d.BW);
  const int k = View::num(sig, 1);
  if (v.ends("_e"))  // the C++ record gives a zero product the exponent 0
    return "(multiplier_p_cls[" + std::to_string(2 * k) + " +: 2] == 2'd0 ? 32'd0 : 32'($signed(" +
           View::slice("multiplier_p_exp", k, d.XW) + ")))";
  if (v.ends("_s")) return "multiplier_p_sign[" + std::to_string(k) + "]";
  if (v.ends("_cls")) {
    const std::string c = "multiplier_p_cls[" + std::to_string(2 * k) + " +: 2]";
    return "(" + c + " == 2'd3 ? 3'd4 : " + c + " == 2'd2 ? 3'd3 : " + c + " == 2'd1 ? 3'd2 : 3'd0)";
  }
  return v.cut(View::slice("multiplier_p_sig", k, d.SW) + " >> " + std::to_string(d.TF - d.PFRAC));
}

/// scaler.sa<j>, sb<j>, e_s<j>: 0 for a pair no lane of the group uses.
std::string scaler_view(const View& v) {
  const Dims& d = v.c.d;
  const bool e = v.sig.rfind("e_s", 0) == 0;
  const int j = View::num(v.sig, e ? 3 : 2);
  const std::string on = "scaler_lanes[" + std::to_string(j * d.LPS) + "]";
  if (!e) return "(" + on + " ? " + View::slice("scaler_" + v.sig.substr(0, 2), j, 8) + " : 8'd0)";
  return "(" + on + " && !scaler_s_nan[" + std::to_string(j) + "] ? 32'($signed(" + View::slice("scaler_e_s", j, d.XW) +
         ")) : 32'd0)";
}

/// grouper.sa<m>, sb<m> (0 for a group with no active lane), s<m> with _e, _f (the C++ record:
/// the signed sum at GF fraction bits, exponent e_alpha + e_beta) and e<m> (a zero term: e_zero).
std::string grouper_view(const View& v) {
  const Dims& d = v.c.d;
  const Datapath& dp = v.c.dp;
  const std::string& sig = v.sig;
  const bool scale = sig.rfind("sa", 0) == 0 || sig.rfind("sb", 0) == 0;
  const int m = View::num(sig, scale ? 2 : 1);
  // a group no lane of the instruction's group reaches has no record (0), nor has a group
  // term that is not finite a sum (s, s_e, s_f: 0)
  const std::string ms = std::to_string(m), cls = View::slice("grouper_p_cls", m, 2);
  const std::string on = "grouper_lanes[" + std::to_string(m * dp.group_size) + "]", fin = "(" + on + " && " + cls + " == 2'd1)";
  const std::string exp = "32'($signed(" + View::slice("grouper_p_exp", m, d.XW) + "))";
  if (scale) return "(" + on + " ? " + View::slice("grouper_" + sig.substr(0, 2), m * dp.group_size / d.LPS, 8) + " : 8'd0)";
  if (sig[0] == 'e')
    return "(" + fin + " ? " + exp + " : " + on + " && " + cls + " == 2'd0 ? " +
           (dp.emin_lim == kNone ? std::string("32'h80000000") : "32'(" + std::to_string(dp.emin_lim) + ")") + " : 32'd0)";
  if (v.ends("_e")) return "(" + fin + " ? " + exp + " : 32'd0)";
  if (v.ends("_f")) return "(" + fin + " ? 32'(" + std::to_string(d.GF) + ") : 32'd0)";
  const std::string w = std::to_string(v.f.width), mag = w + "'(" + View::slice("grouper_p_sig", m, d.SW) + " >> " +
                                                         std::to_string(d.TF - d.GF) + ")";
  return "(grouper_p_sign[" + ms + "] ? " + w + "'(" + w + "'(0) - " + mag + ") : " + mag + ")";
}

/// aligner.e_max(_odd, _even), sticky(_odd, _even), v<i>, vc.
std::string aligner_view(const View& v) {
  const Dims& d = v.c.d;
  const std::string& sig = v.sig;
  if (sig == "e_max" || sig == "e_max_odd") return "32'(aligner_e_max)";
  if (sig == "e_max_even") return "32'(aligner_e_even)";
  if (sig == "sticky" || sig == "sticky_odd") return "aligner_sticky";
  if (sig == "sticky_even") return "aligner_sticky_even";
  if (sig == "vc") return View::slice("aligner_v", d.NT, d.ALW);
  return View::slice("aligner_v", View::num(sig, 1), d.ALW);
}

/// A fixed-point triple NAME, NAME_e, NAME_f: its value, exponent and fraction bits (a number,
/// or an expression where the register's frame depends on the branch taken).
struct Fx {
  std::string v, e;
  int frac;
  std::string frac_expr = "";
};
Fx fixed_view(const View& v, const std::string& base) {
  const Dims& d = v.c.d;
  const Datapath& dp = v.c.dp;
  const std::string& pre = v.pre;
  if (pre == "adder" && base == "s_sum_odd") return {"adder_s", "adder_e_max", d.F};
  if (pre == "adder" && base == "s_sum_even") return {"adder_s_even", "adder_e_even", d.F};
  if (pre == "adder" && base == "s_acc") return {"adder_s", "adder_e_max", d.F};
  if (pre == "adder" && base == "s_sum")
    return v.has_stage("oddeven") ? Fx{"oddeven_s", "oddeven_e", d.PF} : Fx{"adder_s", "adder_e_max", d.F};
  // the registers hold ACCF fraction bits; the C++ records c_align's: max(sum, c_frac) when c
  // is shifted (branch), max(sum_frac, c's) when the sum is, acc_frac once normalised
  const int f1 = std::max(d.FS, dp.c_frac), f2 = std::max(dp.sum_frac, dp.out_fmt.mbits);
  // r's register seen at the fraction bits `frame` selects (frame(f): a select over f(bits))
  auto view = [&](const std::string& r, auto frame) {
    return Fx{frame([&](int f) { return "($signed(" + r + "_s_acc) >>> " + std::to_string(d.ACCF - f) + ")"; }),
              r + "_exp", -1, frame([](int f) { return "32'(" + std::to_string(f) + ")"; })};
  };
  if (pre == "cadd") return view("cadd", [&](auto f) { return "(cadd_branch ? " + f(f1) + " : " + f(f2) + ")"; });
  return view("normaliser", [&](auto f) {
    return "(normaliser_active ? " + f(dp.acc_frac) + " : (normaliser_branch ? " + f(f1) + " : " + f(f2) + "))";
  });
}

/// adder.exact / cadd.exact with _e, _s, _sticky: the C++ record (stages.hpp exact_sum_round)
/// of the wide register (xrec_* of the top).
std::string exact_view(const View& v) {
  const std::string S = v.pre == "adder" ? "adder" : "cadd", m = S + "_x_mag", lo = S + "_xrec_lo(" + m + ")";
  if (v.sig == "exact") return "(" + lo + " < 0 ? 128'd0 : 128'(" + m + " >> " + lo + "))";
  if (v.sig == "exact_s") return S + "_x_sign";
  if (v.sig == "exact_sticky") return S + "_xrec_st(" + m + ")";
  const int lsb = v.pre == "adder" ? v.c.d.X_LSB : v.c.d.P_LSB;
  return "(" + lo + " < 0 ? 32'd0 : 32'(" + std::to_string(lsb) + " + " + lo + "))";
}

}  // namespace

std::string view_expr(const RtlViewCtx& c, const SignalField& f) {
  const View v(c, f);
  const std::string &pre = v.pre, &sig = v.sig;
  if (sig == "valid" || sig == "tag" || sig == "grp") return pre + "_" + sig;
  if (pre == "specials") {
    const std::string S = c.spec_stage;
    if (sig == "kind") return S + "_sk";
    if (sig == "d") return S + "_sd";
    return S + "_zs";
  }
  if (pre == "multiplier") return multiplier_view(v);
  if (pre == "scaler") return scaler_view(v);
  if (pre == "grouper") return grouper_view(v);
  if (pre == "aligner") return aligner_view(v);
  if (pre == "adder" && sig.rfind("pair", 0) == 0) {
    const int level = View::num(sig, 4);
    const int k = View::num(sig, sig.find('_') + 1);
    return View::slice("adder_l" + std::to_string(level) + "_bits", k, c.d.OW);
  }
  if (sig == "exact" || sig == "exact_e" || sig == "exact_s" || sig == "exact_sticky") return exact_view(v);
  if (pre == "cadd" && sig == "special") return "cadd_special";
  if (pre == "cadd" && sig == "e_c") return "32'(cadd_e_c)";
  if (pre == "cadd" && (sig == "branch" || sig == "c_dropped" || sig == "sticky")) return "cadd_" + sig;
  if (pre == "normaliser" && (sig == "active" || sig == "sticky")) return "normaliser_" + sig;
  if (sig == "d") return pre + "_d";
  if (sig == "d32") return "outconv_d32";
  if (v.ends("_e")) return "32'(" + fixed_view(v, sig.substr(0, sig.size() - 2)).e + ")";
  if (v.ends("_f")) {
    const Fx x = fixed_view(v, sig.substr(0, sig.size() - 2));
    return x.frac_expr.empty() ? "32'(" + std::to_string(x.frac) + ")" : x.frac_expr;
  }
  return v.cut(fixed_view(v, sig).v);
}

}  // namespace rtlgen

std::vector<std::string> rtl_stage_sources() {
  return {"mc_decode.sv", "mc_round.sv", "mc_multiplier.sv", "mc_specials.sv", "mc_aligner.sv",
          "mc_adder.sv", "mc_oddeven.sv", "mc_cadd.sv", "mc_normaliser.sv", "mc_exact_adder.sv",
          "mc_pair_sum.sv", "mc_outconv.sv", "mc_scaler.sv", "mc_grouper.sv"};
}

}  // namespace mc
