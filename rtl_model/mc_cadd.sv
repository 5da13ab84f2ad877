// matcore RTL: the c-aligner with its round-downs (stage 5, late c: Algorithms 1 and 2).
//
//   e_c = c's exponent (c finite nonzero), CZE for c = 0 (HAS_CZE), else none: d = round(s_sum)
//   branch 1, e_max >= e_c (c_shifted):
//       s_c' = RD(c >> (e_max - e_c)) at CF fraction bits  (0 when e_max - e_c > GAP: c_dropped)
//       s_acc = s_sum + s_c'                                 at e_max
//   branch 2, e_max < e_c or no product term (sum shifted):
//       S'   = RD(s_sum >> (e_c - e_max)) at SF fraction bits
//       s_acc = S' + c                                       at e_c   (normaliser follows)
//   RD = floor of the two's complement value; sticky = some bit lost by these shifts.
//   s_acc leaves with ACCF fraction bits (the largest of all), value = s_acc * 2^(exp - ACCF).
module mc_cadd #(
    parameter int TF = 23, parameter int SW = 25, parameter int XW = 20,
    parameter int MWC = 23,
    parameter int FS = 24,            // fraction bits of s_sum
    parameter int SUMW = 33,
    parameter int CF = 24, parameter int SF = 32,
    parameter int HAS_GAP = 0, parameter int GAP = 25,
    parameter int HAS_CZE = 1, parameter int CZE = -126,
    parameter int ACCF = 32, parameter int ACCW = 41
) (
    input  logic signed [SUMW-1:0] s_sum,
    input  logic signed [XW-1:0]   e_max,
    input  logic                   e_none,
    input  logic [1:0]             c_cls,
    input  logic                   c_sign,
    input  logic signed [XW-1:0]   c_exp,
    input  logic [SW-1:0]          c_sig,
    output logic signed [ACCW-1:0] s_acc,
    output logic signed [XW-1:0]   exp,
    output logic signed [XW-1:0]   e_c,
    output logic                   e_c_none,
    output logic                   branch,     // 1: c shifted (e_max >= e_c)
    output logic                   c_dropped,
    output logic                   sticky
);
  localparam int WW = ACCW + 2;
  logic signed [WW-1:0] cv, sv, t;
  integer sh;
  // floor(x * 2^-shift) (shift <= 0: exact left shift); *lost: nonzero magnitude bits dropped
  function automatic logic signed [WW-1:0] rd_shift(input logic signed [WW-1:0] x, input integer shift,
                                                    output logic lost);
    logic [WW-1:0] m;
    m = x < 0 ? WW'(-x) : WW'(x);
    lost = 1'b0;
    if (shift <= 0) begin
      rd_shift = x <<< (-shift);
    end else if (shift >= WW) begin
      lost = |m;
      rd_shift = x < 0 ? '1 : '0;
    end else begin
      lost = |(m & ~({WW{1'b1}} << shift));
      rd_shift = x >>> shift;
    end
  endfunction
  logic l1, l2;
  always_comb begin
    cv = WW'($signed({1'b0, c_sig >> (TF - MWC)}));
    if (c_sign) cv = -cv;
    if (c_cls != 2'd1) cv = '0;
    e_c_none = !(c_cls == 2'd1 || HAS_CZE != 0);
    e_c = c_cls == 2'd1 ? c_exp : XW'(CZE);
    sv = WW'(s_sum);
    branch = 1'b0;
    c_dropped = 1'b0;
    sticky = 1'b0;
    l1 = 1'b0;
    l2 = 1'b0;
    exp = e_max;
    t = '0;
    sh = 0;
    if (e_c_none) begin
      // c = 0 discarded: the product sum is the result
      s_acc = ACCW'(sv <<< (ACCF - FS));
    end else if (!e_none && e_max >= e_c) begin
      branch = 1'b1;
      t = '0;
      if (cv != 0) begin
        if (HAS_GAP != 0 && 32'($signed(e_max)) - 32'($signed(e_c)) > GAP) c_dropped = 1'b1;
        else begin
          sh = (32'($signed(e_max)) - CF) - (32'($signed(e_c)) - MWC);
          t = rd_shift(cv, sh, l1);
        end
      end
      sticky = l1;
      s_acc = ACCW'((sv <<< (ACCF - FS)) + (t <<< (ACCF - CF)));
    end else begin
      exp = e_c;
      t = '0;
      if (!e_none && sv != 0) begin
        sh = (32'($signed(e_c)) - SF) - (32'($signed(e_max)) - FS);
        t = rd_shift(sv, sh, l2);
      end
      sticky = l2;
      s_acc = ACCW'((t <<< (ACCF - SF)) + (cv <<< (ACCF - MWC)));
    end
  end
endmodule
