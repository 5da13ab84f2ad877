// matcore RTL: one fl(p + q) of the pairwise tree (CDNA2), in the output format.
//
//   p, q: terms (value = sig * 2^(exp - TF)), each a value of the output format or +/-Inf
//   NaN (inv: Inf*0 or Inf-Inf) -> NAN_INV with inv; NaN -> NAN_PROP; one sign of Inf -> Inf;
//   otherwise the exact p + q (mc_exact_adder) rounded once (mc_round: MODE, SUB_OUT);
//   an overflow becomes Inf or the largest finite as the rounding says. Also the final
//   d = fl(acc + c) of c_final datapaths (mc_cfinal).
//      p:  1.xxxxxxxxxx x 2^ep    q: 1.xxxxxxx x 2^eq   ->  exact p + q  ->  round  -> bits
//   The result leaves both as bits (adder.pair<level>_<k>) and re-decoded as a term.
module mc_pair_sum #(
    parameter int TF = 23, parameter int SW = 25, parameter int XW = 20,
    parameter int EWC = 8, parameter int MWC = 23, parameter int BIASC = 127,
    parameter int MODE = 0, parameter int SUB_OUT = 0,
    parameter int PREC = MWC, parameter int OVF_INF = 0,
    parameter int ZMODE = MODE,       // rounding mode that decides the sign of an exact zero
    parameter logic [63:0] NAN_PROP = 64'h7fc00000,
    parameter logic [63:0] NAN_INV = 64'hffc00000,
    // the exact sum's width: from the lowest bit of a term to the carry above the largest
    parameter int ACCW = (((1 << EWC) - 2 - BIASC) + 2) - ((1 - BIASC) - TF) + 2
) (
    input  logic [1:0]            p_cls, q_cls,
    input  logic                  p_sign, q_sign, p_inv, q_inv,
    input  logic signed [XW-1:0]  p_exp, q_exp,
    input  logic [SW-1:0]         p_sig, q_sig,
    output logic [EWC+MWC:0]      bits,
    output logic [1:0]            r_cls,
    output logic                  r_sign,
    output logic                  r_inv,
    output logic signed [XW-1:0]  r_exp,
    output logic [SW-1:0]         r_sig,
    output logic                  x_sign,     // the exact sum (cadd.exact)
    output logic [ACCW-1:0]       x_mag,
    output logic                  special     // a special value decided the result
);
  localparam int OW = 1 + EWC + MWC;
  localparam int LSB = (1 - BIASC) - TF;
  logic sum_sign, sum_zero, zs, nan, inv, pinf, ninf;
  logic [ACCW-1:0] sum_mag;
  assign x_sign = sum_sign;
  assign x_mag = sum_mag;
  assign special = nan || inv || pinf || ninf;
  logic [OW-1:0] rounded;
  logic [MWC:0] dsig;
  mc_exact_adder #(.M(2), .TF(TF), .SW(SW), .XW(XW), .LSB_MIN(LSB), .ACCW(ACCW)) add (
      .t_cls({q_cls, p_cls}), .t_sign({q_sign, p_sign}), .t_exp({q_exp, p_exp}),
      .t_sig({q_sig, p_sig}), .sign(sum_sign), .exact(sum_mag), .zero(sum_zero));
  mc_round #(.W(ACCW), .EW(EWC), .MW(MWC), .BIAS(BIASC), .PREC(PREC), .MODE(MODE),
             .SUB_OUT(SUB_OUT), .OVF_INF(OVF_INF), .XW(XW)) rnd (
      .sign(sum_zero ? zs : sum_sign), .mag(sum_mag), .lsb_exp(XW'(LSB)), .bits(rounded));
  mc_decode #(.EW(EWC), .MW(MWC), .BIAS(BIASC), .ENC(0), .SUB_IN(1), .XW(XW)) dec (
      .x(bits), .cls(r_cls), .sign(r_sign), .exp(r_exp), .sig(dsig));
  assign r_sig = SW'(dsig) << (TF - MWC);
  always_comb begin
    zs = (p_cls == 2'd0 && q_cls == 2'd0) ? (p_sign && q_sign) : (ZMODE == 2);
    nan = (p_cls == 2'd3 && !p_inv) || (q_cls == 2'd3 && !q_inv);
    inv = (p_cls == 2'd3 && p_inv) || (q_cls == 2'd3 && q_inv);
    pinf = (p_cls == 2'd2 && !p_sign) || (q_cls == 2'd2 && !q_sign);
    ninf = (p_cls == 2'd2 && p_sign) || (q_cls == 2'd2 && q_sign);
    r_inv = 1'b0;
    if (nan) bits = OW'(NAN_PROP);
    else if (inv || (pinf && ninf)) begin
      bits = OW'(NAN_INV);
      r_inv = 1'b1;
    end else if (pinf || ninf) bits = {ninf, {EWC{1'b1}}, {MWC{1'b0}}};
    else bits = rounded;
  end
endmodule
