// matcore RTL: rounding of an exact magnitude to an IEEE-encoded format (the arithmetic core of
// the rounder, and of every intermediate rounding: CDNA2 products and pair sums, NVIDIA c_final).
//
//   value = (-1)^sign * mag * 2^lsb_exp                 mag: W bits, unsigned
//
//   mag:  000001xxxxxxxxxxxxxxxxx|r|sssssss              lzc -> msb, e = lsb_exp + msb
//              ^ 2^e   PREC bits ^ round bit, sticky = OR of the rest
//   e < emin: e = emin (subnormal, fewer kept bits); a carry out of the kept bits renormalises;
//   e > emax after rounding: Inf (RNE, RNA, RU+, RD-, or OVF_INF) else the largest finite.
//   kept == 0, or subnormal with SUB_OUT == 0: a zero of the input sign.
//
// MODE: 0 RNE, 1 RTZ, 2 RD, 3 RU, 4 RNA.  PREC: fraction bits kept (<= MW; e8m13: 13).
// A zero magnitude gives the zero of `sign` (callers pass the zero-sum sign).
module mc_round #(
    parameter int W = 64,
    parameter int EW = 8,
    parameter int MW = 23,
    parameter int BIAS = 127,
    parameter int PREC = 23,
    parameter int MODE = 0,
    parameter int SUB_OUT = 1,
    parameter int OVF_INF = 0,
    parameter int XW = 20
) (
    input  logic                 sign,
    input  logic [W-1:0]         mag,
    input  logic signed [XW-1:0] lsb_exp,
    output logic [EW+MW:0]       bits
);
  localparam int EMIN = 1 - BIAS;
  localparam int EMAX = (1 << EW) - 2 - BIAS;
  localparam int KW = PREC + 2;  // kept significand: hidden bit, PREC bits, carry

  integer msb, e, sh, i;
  logic sub, rb, st, up, nz;
  logic [W-1:0] below;
  logic [W+KW-1:0] magx;  // mag with room for the left shift of a small subnormal
  logic [KW-1:0] kept;
  logic [MW-1:0] frac_field;
  logic [EW-1:0] exp_field;

  always_comb begin
    msb = -1;
    for (i = 0; i < W; i = i + 1)
      if (mag[i]) msb = i;
    nz = msb >= 0;
    e = 32'($signed(lsb_exp)) + msb;
    sub = 1'b0;
    if (e < EMIN) begin
      e = EMIN;
      sub = 1'b1;
    end
    sh = (e - PREC) - 32'($signed(lsb_exp));
    rb = 1'b0;
    st = 1'b0;
    below = '0;
    magx = (W + KW)'(mag);
    if (sh <= 0) begin
      kept = (-sh >= KW) ? '0 : KW'(magx << (-sh));
    end else begin
      kept = (sh >= W) ? '0 : KW'(magx >> sh);
      rb = (sh - 1 < W) ? mag[sh-1] : 1'b0;
      below = (sh - 1 >= W) ? mag : (mag & ~({W{1'b1}} << (sh - 1)));
      st = |below;
    end
    case (MODE)
      0: up = rb && (st || kept[0]);
      1: up = 1'b0;
      2: up = sign && (rb || st);
      3: up = !sign && (rb || st);
      default: up = rb;
    endcase
    kept = kept + KW'(up);
    if (kept[PREC+1]) begin
      kept = kept >> 1;
      e = e + 1;
      sub = 1'b0;
    end
    if (sub && kept[PREC]) sub = 1'b0;
    frac_field = MW'(kept[PREC-1:0]) << (MW - PREC);
    exp_field = sub ? '0 : EW'(e + BIAS);
    if (!nz || kept == '0 || (sub && SUB_OUT == 0)) begin
      bits = {sign, {(EW + MW) {1'b0}}};
    end else if (e > EMAX) begin
      if (OVF_INF != 0 || MODE == 0 || MODE == 4 || (MODE == 3 && !sign) || (MODE == 2 && sign))
        bits = {sign, {EW{1'b1}}, {MW{1'b0}}};
      else
        bits = {sign, {(EW - 1) {1'b1}}, 1'b0, {MW{1'b1}}};
    end else begin
      bits = {sign, exp_field, frac_field};
    end
  end
endmodule
