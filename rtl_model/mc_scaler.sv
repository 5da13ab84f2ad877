// matcore RTL: the scaler stage of ST-FDPA (block-scaled MMA, kind::mxf8f6f4; CDNA4
// v_mfma_scale): every product of the group times its block's two E8M0 scales, exactly.
//
//   sa_j, sb_j: E8M0 (8 bits, no sign, no zero): 2^(E - 127); 0xFF is NaN
//   e_s_j = (sa_j - 127) + (sb_j - 127)                          (scaler.e_s<j>)
//   product i of block j = i / LPS:   ii.ffffffff x 2^(ea+eb)  ->  ii.ffffffff x 2^(ea+eb+e_s_j)
//
// The record is the multiplier's (cls 0 zero, 1 finite, 2 Inf, 3 NaN; sign; inv; ovf; exp; sig):
// a finite product's exponent moves by e_s_j; zeros and infinities pass unchanged (an E8M0
// scale is never zero); a NaN scale makes every active product of its block a NaN that is not
// an invalid operation (inv = 0, ovf = 0). Lanes outside the group (`lanes` bit 0) pass
// unchanged. c passes through the stage's control word, not through here.
// Contract: core/include/matcore/stages.hpp, scale_product and scale_term (E8M0 scales).
module mc_scaler #(
    parameter int N = 32,   // products per group
    parameter int NS = 1,   // scale pairs per group (N / LPS)
    parameter int LPS = 32, // products per scale pair: min(scale_block, N)
    parameter int XW = 20,
    parameter int SW = 25
) (
    input  logic [N-1:0]         lanes,
    input  logic [NS*8-1:0]      sa,
    input  logic [NS*8-1:0]      sb,
    input  logic [2*N-1:0]       p_cls_in,
    input  logic [N-1:0]         p_sign_in,
    input  logic [N-1:0]         p_inv_in,
    input  logic [N-1:0]         p_ovf_in,
    input  logic [N*XW-1:0]      p_exp_in,
    input  logic [N*SW-1:0]      p_sig_in,
    output logic [2*N-1:0]       p_cls,
    output logic [N-1:0]         p_sign,
    output logic [N-1:0]         p_inv,
    output logic [N-1:0]         p_ovf,
    output logic [N*XW-1:0]      p_exp,
    output logic [N*SW-1:0]      p_sig,
    output logic [NS*XW-1:0]     e_s,
    output logic [NS-1:0]        s_nan
);
  always_comb begin
    for (int j = 0; j < NS; j++) begin
      s_nan[j] = sa[8*j +: 8] == 8'hFF || sb[8*j +: 8] == 8'hFF;
      e_s[XW*j +: XW] = XW'(sa[8*j +: 8]) + XW'(sb[8*j +: 8]) - XW'(254);
    end
    p_cls = p_cls_in;
    p_sign = p_sign_in;
    p_inv = p_inv_in;
    p_ovf = p_ovf_in;
    p_exp = p_exp_in;
    p_sig = p_sig_in;
    for (int i = 0; i < N; i++) begin
      if (lanes[i]) begin
        if (s_nan[i / LPS]) begin
          p_cls[2*i +: 2] = 2'd3;
          p_inv[i] = 1'b0;
          p_ovf[i] = 1'b0;
        end else if (p_cls_in[2*i +: 2] == 2'd1) begin
          p_exp[XW*i +: XW] = p_exp_in[XW*i +: XW] + e_s[XW*(i / LPS) +: XW];
        end
      end
    end
  end
endmodule
