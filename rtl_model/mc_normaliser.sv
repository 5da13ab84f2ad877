// matcore RTL: the subnormal-aware normaliser with round-down (stage 6, late c, branch 2).
//
//   lead = exponent of the leading one of |s_acc|;  e = max(lead, EMIN)
//   s_acc moved to 2^e and floored to AF fraction bits below it:
//      0000001xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx|xxx   ->   1.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx x 2^e
//                                    AF bits ^ dropped (floor), sticky
//   active = 0 (branch 1, c = 0 discarded, or NORM_RD = 0): s_acc passes unchanged.
//   In and out: value = s_acc * 2^(exp - ACCF).
module mc_normaliser #(
    parameter int XW = 20,
    parameter int ACCF = 32, parameter int ACCW = 41,
    parameter int AF = 31,
    parameter int EMIN = -126,
    parameter int NORM_RD = 1
) (
    input  logic signed [ACCW-1:0] s_in,
    input  logic signed [XW-1:0]   e_in,
    input  logic                   branch,
    input  logic                   e_c_none,
    input  logic                   sticky_in,
    output logic signed [ACCW-1:0] s_acc,
    output logic signed [XW-1:0]   exp,
    output logic                   active,
    output logic                   sticky
);
  localparam int WW = ACCW + ACCF + 4;
  logic [ACCW-1:0] m;
  logic signed [WW-1:0] w;
  integer msb, i, lead, e, sh;
  always_comb begin
    active = NORM_RD != 0 && !branch && !e_c_none;
    s_acc = s_in;
    exp = e_in;
    sticky = sticky_in;
    m = s_in < 0 ? ACCW'(-s_in) : ACCW'(s_in);
    msb = -1;
    for (i = 0; i < ACCW; i = i + 1)
      if (m[i]) msb = i;
    lead = 32'($signed(e_in)) - ACCF + msb;
    e = lead > EMIN ? lead : EMIN;
    sh = (e - AF) - (32'($signed(e_in)) - ACCF);
    w = WW'(s_in);
    if (active && msb >= 0) begin
      exp = XW'(e);
      if (sh <= 0) begin
        w = w <<< (-sh);
      end else if (sh >= ACCW) begin
        sticky = sticky_in | (|m);
        w = s_in < 0 ? '1 : '0;
      end else begin
        sticky = sticky_in | (|(m & ~({ACCW{1'b1}} << sh)));
        w = w >>> sh;
      end
      s_acc = ACCW'(w <<< (ACCF - AF));
    end
  end
endmodule
