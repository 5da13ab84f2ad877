// matcore RTL: the multiplier stage (stage 2). N lanes of exact products and the decoded c.
//
//   a_i: 1.aaaa x 2^ea   b_i: 1.bbb x 2^eb   (decode: mc_decode)
//   p_i = a_i.sig * b_i.sig  ->  ii.ffffffff x 2^(ea+eb)   (MWA+MWB fraction bits, unnormalised)
//
// Every term leaves this stage in one common record, value = sig * 2^(exp - TF):
//   cls (0 zero, 1 finite, 2 Inf, 3 NaN), sign, inv (Inf*0), exp (XW bits, signed), sig (SW bits)
// with TF = max(MWA+MWB, MWC) fraction bits (products and c share it).
// NaN in -> NaN; Inf * 0 -> NaN with inv; Inf * x -> Inf. HAS_OE: |p| >= 2^OE -> Inf (ovf).
// ROUND_OUT: the product is rounded (RNE, SUB_OUT) to the c/output format first (CDNA2).
// A lane whose bit in `lanes` is 0 is not part of the group: it becomes -0, which no sum, no
// special-value rule and no zero-sign rule can tell from an absent term.
module mc_multiplier #(
    parameter int N = 8,
    parameter int EWA = 5, parameter int MWA = 10, parameter int BIASA = 15, parameter int ENCA = 0,
    parameter int EWB = 5, parameter int MWB = 10, parameter int BIASB = 15, parameter int ENCB = 0,
    parameter int EWC = 8, parameter int MWC = 23, parameter int BIASC = 127,
    parameter int SUB_IN = 1,
    parameter int HAS_OE = 0, parameter int OE = 128,
    parameter int ROUND_OUT = 0, parameter int SUB_OUT = 1,
    parameter int TF = 23, parameter int SW = 25, parameter int XW = 20
) (
    input  logic [N*(1+EWA+MWA)-1:0] a,
    input  logic [N*(1+EWB+MWB)-1:0] b,
    input  logic [N-1:0]             lanes,
    input  logic [EWC+MWC:0]         c,
    output logic [2*N-1:0]           p_cls,
    output logic [N-1:0]             p_sign,
    output logic [N-1:0]             p_inv,
    output logic [N-1:0]             p_ovf,
    output logic [N*XW-1:0]          p_exp,
    output logic [N*SW-1:0]          p_sig,
    output logic [1:0]               c_cls,
    output logic                     c_sign,
    output logic signed [XW-1:0]     c_exp,
    output logic [SW-1:0]            c_sig
);
  localparam int AW = 1 + EWA + MWA;
  localparam int BW = 1 + EWB + MWB;
  localparam int PW = MWA + MWB + 2;      // exact product significand
  localparam int PF = MWA + MWB;          // its fraction bits

  logic [MWC:0] csig_raw;
  mc_decode #(.EW(EWC), .MW(MWC), .BIAS(BIASC), .ENC(0), .SUB_IN(SUB_IN), .XW(XW)) dec_c (
      .x(c), .cls(c_cls), .sign(c_sign), .exp(c_exp), .sig(csig_raw));
  assign c_sig = SW'(csig_raw) << (TF - MWC);

  genvar i;
  generate
    for (i = 0; i < N; i = i + 1) begin : lane
      logic [1:0] ca, cb;
      logic sa, sb;
      logic signed [XW-1:0] ea, eb;
      logic [MWA:0] ma;
      logic [MWB:0] mb;
      mc_decode #(.EW(EWA), .MW(MWA), .BIAS(BIASA), .ENC(ENCA), .SUB_IN(SUB_IN), .XW(XW)) dec_a (
          .x(a[i*AW +: AW]), .cls(ca), .sign(sa), .exp(ea), .sig(ma));
      mc_decode #(.EW(EWB), .MW(MWB), .BIAS(BIASB), .ENC(ENCB), .SUB_IN(SUB_IN), .XW(XW)) dec_b (
          .x(b[i*BW +: BW]), .cls(cb), .sign(sb), .exp(eb), .sig(mb));

      logic [PW-1:0] prod;
      logic signed [XW-1:0] pexp;
      integer pmsb, k;
      // the rounded product (ROUND_OUT), re-decoded as a term of the output format
      logic [1:0] rcls;
      logic rsign;
      logic signed [XW-1:0] rexp;
      logic [MWC:0] rsig;
      assign prod = PW'(ma) * PW'(mb);
      assign pexp = ea + eb;
      if (ROUND_OUT != 0) begin : round_out
        logic [EWC+MWC:0] rbits;
        mc_round #(.W(PW), .EW(EWC), .MW(MWC), .BIAS(BIASC), .PREC(MWC), .MODE(0), .SUB_OUT(SUB_OUT),
                   .OVF_INF(0), .XW(XW)) rnd (
            .sign(sa ^ sb), .mag(prod), .lsb_exp(pexp - XW'(PF)), .bits(rbits));
        mc_decode #(.EW(EWC), .MW(MWC), .BIAS(BIASC), .ENC(0), .SUB_IN(1), .XW(XW)) dec_r (
            .x(rbits), .cls(rcls), .sign(rsign), .exp(rexp), .sig(rsig));
      end else begin : exact_product
        assign rcls = 2'd0;
        assign rsign = 1'b0;
        assign rexp = '0;
        assign rsig = '0;
      end

      always_comb begin
        pmsb = -1;
        for (k = 0; k < PW; k = k + 1)
          if (prod[k]) pmsb = k;
        p_sign[i] = sa ^ sb;
        p_inv[i] = 1'b0;
        p_ovf[i] = 1'b0;
        p_exp[i*XW +: XW] = pexp;
        p_sig[i*SW +: SW] = SW'(prod) << (TF - PF);
        if (ca == 2'd3 || cb == 2'd3) begin
          p_cls[2*i +: 2] = 2'd3;
        end else if (ca == 2'd2 || cb == 2'd2) begin
          p_cls[2*i +: 2] = (ca == 2'd0 || cb == 2'd0) ? 2'd3 : 2'd2;
          p_inv[i] = ca == 2'd0 || cb == 2'd0;
        end else if (ca == 2'd0 || cb == 2'd0) begin
          p_cls[2*i +: 2] = 2'd0;
        end else begin
          p_cls[2*i +: 2] = 2'd1;
          if (HAS_OE != 0 && pmsb + 32'($signed(pexp)) - PF >= OE) begin
            p_cls[2*i +: 2] = 2'd2;
            p_ovf[i] = 1'b1;
          end else if (ROUND_OUT != 0) begin
            p_cls[2*i +: 2] = rcls;
            p_sign[i] = rsign;  // = sa ^ sb: rounding keeps the sign
            p_ovf[i] = rcls == 2'd2;
            p_exp[i*XW +: XW] = rexp;
            p_sig[i*SW +: SW] = SW'(rsig) << (TF - MWC);
          end
        end
        if (p_cls[2*i +: 2] != 2'd1) begin
          p_sig[i*SW +: SW] = '0;
        end
        if (!lanes[i]) begin
          p_cls[2*i +: 2] = 2'd0;
          p_sign[i] = 1'b1;
          p_inv[i] = 1'b0;
          p_ovf[i] = 1'b0;
          p_sig[i*SW +: SW] = '0;
        end
      end
    end
  endgenerate
endmodule
