// matcore RTL: the specials detector (it sits beside the multiplier stage, as in the SystemC top).
//
//   over the N products and c:  NaN (not Inf*0)        -> kind 1 nan_in   d = NAN_PROP
//                               Inf*0, or +Inf and -Inf -> kind 2 invalid  d = NAN_INV
//                               +Inf / -Inf only        -> kind 3 / 4      d = +/-Inf of the output
//   decide: the kind fixes d before the adder (NaN and invalid always; an infinity only when
//   INF_AT_INPUTS, i.e. nothing is rounded before the last rounding: not the pairwise tree).
//   KEEP_SIGN: a nan_in result takes the sign of the first NaN (c, then the products in order).
//   zero_sign: the sign of an exact zero sum: -0 only when every term is a -0, or in RD mode.
module mc_specials #(
    parameter int N = 8,
    parameter int OW = 32,
    parameter int EWC = 8,
    parameter int MWC = 23,
    parameter logic [63:0] NAN_PROP = 64'h7fc00000,
    parameter logic [63:0] NAN_INV = 64'hffc00000,
    parameter int KEEP_SIGN = 1,
    parameter int INF_AT_INPUTS = 1,
    parameter int MODE = 0
) (
    input  logic [2*N-1:0] p_cls,
    input  logic [N-1:0]   p_sign,
    input  logic [N-1:0]   p_inv,
    input  logic [1:0]     c_cls,
    input  logic           c_sign,
    output logic [2:0]     kind,
    output logic           decide,
    output logic [OW-1:0]  d,
    output logic           zero_sign
);
  integer i;
  logic nan, inv, pinf, ninf, found, nsign, all_zero, all_neg;
  always_comb begin
    nan = c_cls == 2'd3;
    inv = 1'b0;
    pinf = c_cls == 2'd2 && !c_sign;
    ninf = c_cls == 2'd2 && c_sign;
    found = c_cls == 2'd3;
    nsign = c_sign;
    all_zero = c_cls == 2'd0;
    all_neg = c_sign;
    for (i = 0; i < N; i = i + 1) begin
      if (p_cls[2*i +: 2] == 2'd3) begin
        if (p_inv[i]) inv = 1'b1;
        else begin
          nan = 1'b1;
          if (!found) nsign = p_sign[i];
          found = 1'b1;
        end
      end
      if (p_cls[2*i +: 2] == 2'd2) begin
        if (p_sign[i]) ninf = 1'b1;
        else pinf = 1'b1;
      end
      if (p_cls[2*i +: 2] != 2'd0) all_zero = 1'b0;
      if (!p_sign[i]) all_neg = 1'b0;
    end
    zero_sign = all_zero ? all_neg : (MODE == 2);
    kind = 3'd0;
    d = '0;
    if (nan) begin
      kind = 3'd1;
      d = OW'(NAN_PROP);
      if (KEEP_SIGN != 0) d[OW-1] = nsign;
    end else if (inv || (pinf && ninf)) begin
      kind = 3'd2;
      d = OW'(NAN_INV);
    end else if (pinf || ninf) begin
      kind = pinf ? 3'd3 : 3'd4;
      d = {ninf, {EWC{1'b1}}, {MWC{1'b0}}};
    end
    decide = kind == 3'd1 || kind == 3'd2 || (kind != 3'd0 && INF_AT_INPUTS != 0);
  end
endmodule
