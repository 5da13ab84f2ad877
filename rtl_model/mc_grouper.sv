// matcore RTL: the grouper stage of GST-FDPA (block-scaled MMA with group sums: tcgen05
// kind::mxf4 / kind::mxf4nvf4, sm_120a mma.sync block_scale with e2m1). Every G products of
// the group are summed exactly; each sum is multiplied by its block's two scales and becomes one
// term at the ALIGNMENT exponent e_alpha + e_beta (not at its own magnitude):
//
//   scales (8 bits each; SFMT 0: E8M0 = 2^(E-127), 0xFF NaN, no zero;
//                          SFMT 1: UE4M3 = 1.mmm x 2^(E-7), E = 0: 0.mmm x 2^-6, the sign bit
//                                  ignored, 0x7F NaN, 0x00 zero)
//   acc_m  = sum of the finite products of lanes [m*G, (m+1)*G), exactly, in units of
//            2^(EMINP - PF) (EMINP: the lowest exponent a product can have; a product's PF + 2
//            significant bits are the bits TF - PF and up of its record)
//
//      p_(mG) .. p_(mG+G-1)   --exact-->   acc_m = sss...sss.000   (GW bits, two's complement)
//      term m: sig = |acc_m| * alpha.sig * beta.sig, realigned to TF fraction bits
//              exp = e_alpha + e_beta                     (sig may exceed [1, 4): up to
//                                                          2^(SW - TF) at its exponent)
//
// Special cases of a term, in order (contract: core/include/matcore/stages.hpp, group_term):
//   no active lane in the group    -> zero, sign 1 (neutral in the zero-sign rule)
//   NaN scale or a NaN product     -> NaN (not invalid)
//   Inf * 0 product, +Inf and -Inf -> invalid NaN
//   infinities of one sign         -> that Inf, or the invalid NaN with a zero scale
//   no finite nonzero product      -> zero, -0 only when every product is -0
//   a zero scale                   -> +0
//   otherwise finite (also a sum that cancels to 0: it keeps its scale exponent)
// The record out is the multiplier's (cls 0 zero, 1 finite, 2 Inf, 3 NaN; sign; inv; ovf; exp;
// sig), with NG = N / G terms. c passes through the stage's control word, not through here.
module mc_grouper #(
    parameter int N = 64,     // products per group of the instruction (n_fma)
    parameter int G = 16,     // products per group sum
    parameter int NS = 4,     // scale pairs per instruction group (N / LPS)
    parameter int LPS = 16,   // products per scale pair: min(scale_block, N)
    parameter int SFMT = 0,   // 0: E8M0, 1: UE4M3
    parameter int TF = 23, parameter int SW = 37, parameter int XW = 20,
    parameter int PF = 2,     // fraction bits of an exact product (MWA + MWB): its significant bits
    parameter int EMINP = 0,  // lowest product exponent (emin_a + emin_b)
    parameter int EMAXP = 4,  // highest product exponent (emax_a + emax_b)
    parameter int NG = N / G
) (
    input  logic [N-1:0]      lanes,
    input  logic [NS*8-1:0]   sa,
    input  logic [NS*8-1:0]   sb,
    input  logic [2*N-1:0]    p_cls_in,
    input  logic [N-1:0]      p_sign_in,
    input  logic [N-1:0]      p_inv_in,
    input  logic [N*XW-1:0]   p_exp_in,
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [N*SW-1:0]   p_sig_in,   // (bits below TF - PF and above TF + 2 are zero)
    /* verilator lint_on UNUSEDSIGNAL */
    output logic [2*NG-1:0]   p_cls,
    output logic [NG-1:0]     p_sign,
    output logic [NG-1:0]     p_inv,
    output logic [NG-1:0]     p_ovf,
    output logic [NG*XW-1:0]  p_exp,
    output logic [NG*SW-1:0]  p_sig
);
  localparam int SFRAC = SFMT == 0 ? 0 : 6;          // fraction bits of alpha.sig * beta.sig
  localparam int SSW = SFMT == 0 ? 1 : 8;            // width of alpha.sig * beta.sig
  localparam int PSW = PF + 2;                       // a product's significant bits: below 4 * 2^exp
  localparam int SPAN = EMAXP - EMINP;               // a product's shift into the sum
  localparam int GW = PSW + SPAN + $clog2(G) + 1;    // the exact sum, with its sign
  localparam int MW = GW + SSW;                      // the sum times the scales' significands
  localparam int SH = TF - PF + EMINP - SFRAC;       // realignment to TF fraction bits at 2^exp
  localparam int SHL = SH > 0 ? SH : 0;               // (the generator's TF makes SH >= 0: the
  localparam int SHR = SH < 0 ? -SH : 0;              //  realignment is exact)

  // One scale: NaN, zero, significand (SFMT 1: 1.mmm / 0.mmm as 4 bits), unbiased exponent.
  function automatic logic [XW+5:0] dec_scale(input logic [7:0] x);
    logic nan, zero;
    logic [3:0] sig;
    logic signed [XW-1:0] e;
    if (SFMT == 0) begin
      nan = x == 8'hFF;
      zero = 1'b0;
      sig = 4'd1;
      e = XW'(x) - XW'(127);
    end else begin
      nan = x[6:0] == 7'h7F;
      zero = x[6:0] == 7'h00;
      sig = {x[6:3] != 4'd0, x[2:0]};
      e = x[6:3] == 4'd0 ? -XW'(6) : XW'(x[6:3]) - XW'(7);
    end
    dec_scale = {nan, zero, sig, e};
  endfunction

  integer m, i;
  logic [XW+5:0] da, db;
  logic s_nan, s_zero, act, nan_in, inv, pinf, ninf, any, all_neg;
  logic [SSW-1:0] ssig;
  logic signed [XW-1:0] s_exp;
  logic signed [GW-1:0] acc;
  logic [GW-1:0] mag;
  logic [MW-1:0] prod;
  logic [1:0] c;

  always_comb begin
    p_cls = '0;
    p_sign = '0;
    p_inv = '0;
    p_ovf = '0;
    p_exp = '0;
    p_sig = '0;
    for (m = 0; m < NG; m = m + 1) begin
      da = dec_scale(sa[8*((m*G)/LPS) +: 8]);
      db = dec_scale(sb[8*((m*G)/LPS) +: 8]);
      s_nan = da[XW+5] | db[XW+5];
      s_zero = da[XW+4] | db[XW+4];
      ssig = SSW'(da[XW+3:XW] * db[XW+3:XW]);
      s_exp = da[XW-1:0] + db[XW-1:0];
      act = 1'b0; nan_in = 1'b0; inv = 1'b0; pinf = 1'b0; ninf = 1'b0; any = 1'b0; all_neg = 1'b1;
      acc = '0;
      for (i = m * G; i < (m + 1) * G; i = i + 1) begin
        c = p_cls_in[2*i +: 2];
        act = act | lanes[i];
        if (c == 2'd3 && p_inv_in[i]) inv = 1'b1;
        if (c == 2'd3 && !p_inv_in[i]) nan_in = 1'b1;
        if (c == 2'd2 && p_sign_in[i]) ninf = 1'b1;
        if (c == 2'd2 && !p_sign_in[i]) pinf = 1'b1;
        if (!p_sign_in[i]) all_neg = 1'b0;  // idle lanes are -0: neutral
        if (c == 2'd1) begin
          any = 1'b1;
          if (p_sign_in[i])
            acc = acc - (GW'(p_sig_in[i*SW + TF - PF +: PSW]) << (32'($signed(p_exp_in[i*XW +: XW])) - EMINP));
          else
            acc = acc + (GW'(p_sig_in[i*SW + TF - PF +: PSW]) << (32'($signed(p_exp_in[i*XW +: XW])) - EMINP));
        end
      end
      mag = acc < 0 ? GW'(-acc) : GW'(acc);
      prod = MW'(mag) * MW'(ssig);
      if (!act) begin
        p_cls[2*m +: 2] = 2'd0;
        p_sign[m] = 1'b1;
      end else if (s_nan || nan_in) begin
        p_cls[2*m +: 2] = 2'd3;
      end else if (inv || (pinf && ninf)) begin
        p_cls[2*m +: 2] = 2'd3;
        p_inv[m] = 1'b1;
      end else if (pinf || ninf) begin
        p_cls[2*m +: 2] = s_zero ? 2'd3 : 2'd2;
        p_inv[m] = s_zero;
        p_sign[m] = ninf;
      end else if (!any) begin
        p_cls[2*m +: 2] = 2'd0;
        p_sign[m] = all_neg;
      end else if (!s_zero) begin
        p_cls[2*m +: 2] = 2'd1;
        p_sign[m] = acc < 0;
        p_exp[m*XW +: XW] = s_exp;
        p_sig[m*SW +: SW] = SW'(((MW + SHL)'(prod)) << SHL >> SHR);
      end
    end
  end
endmodule
