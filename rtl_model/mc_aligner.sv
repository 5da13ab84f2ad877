// matcore RTL: the aligner of the fused multi-term adder (stage 3).
//
//   e_max = max exponent of the finite nonzero terms (early c: c too, and c = 0 with exponent
//           CZE when HAS_CZE), never below EMIN_LIM (HAS_LIM); e_none when there is no such term.
//   each term shifted to e_max, F fraction bits kept below 2^e_max:
//
//      before:      1.xxxxxxxxxxxxxxxxxxxx  x 2^e
//      after:   0.000001xxxxxxxxx|xxxxxxx   x 2^e_max     (| = F-th fraction bit)
//                               kept  ^ sticky = OR of the dropped bits
//   ALIGN_MODE 0: truncation of the magnitude (toward zero); 1: floor of the two's complement;
//   2 / 3: the magnitude rounded to nearest, ties to even / away from zero, from the guard bit
//   (the first bit cut) and the OR of the bits below it.
//   ODDEVEN: the products of even index (k = 1, 3, ... in the paper's numbering: "odd") and of
//   odd index ("even") are aligned to their own maxima e_max (odd) and e_max_even.
//   Lane N is c (early c) or zero (late c). v: AW = F + 4 bits, two's complement.
module mc_aligner #(
    parameter int N = 8,
    parameter int TF = 23, parameter int SW = 25, parameter int XW = 20,
    parameter int F = 24,
    parameter int HAS_LIM = 0, parameter int EMIN_LIM = 0,
    parameter int ALIGN_MODE = 0,
    parameter int EARLY_C = 1,
    parameter int HAS_CZE = 0, parameter int CZE = -126,
    parameter int ODDEVEN = 0,
    parameter int AW = F + 4
) (
    input  logic [2*N-1:0]          p_cls,
    input  logic [N-1:0]            p_sign,
    input  logic [N*XW-1:0]         p_exp,
    input  logic [N*SW-1:0]         p_sig,
    input  logic [1:0]              c_cls,
    input  logic                    c_sign,
    input  logic signed [XW-1:0]    c_exp,
    input  logic [SW-1:0]           c_sig,
    output logic signed [XW-1:0]    e_max,
    output logic                    e_none,
    output logic                    sticky,
    output logic signed [XW-1:0]    e_max_even,
    output logic                    e_none_even,
    output logic                    sticky_even,
    output logic [(N+1)*AW-1:0]     v
);
  localparam int M = N + 1;
  // lane view: products 0..N-1, c at N
  logic [1:0] cls[M];
  logic sgn[M];
  logic signed [XW-1:0] ex[M];
  logic [SW-1:0] sg[M];
  logic part[M];       // takes part in the alignment
  logic odd_set[M];    // belongs to the second (e_max_even) set

  integer i, s;
  logic signed [XW-1:0] e0, e1, eref;
  logic n0, n1, st, gb, lb;
  // the shifted magnitude is below 2^(F+2) (a term is below 4 * 2^e_max): bits of m at AW and
  // above are zero where SW > AW (fp8 inputs with a binary32 c, F = 13)
  /* verilator lint_off UNUSEDSIGNAL */
  logic [SW-1:0] m;
  logic [SW-1:0] m1;  // shifted one bit less: its bit 0 is the guard bit
  /* verilator lint_on UNUSEDSIGNAL */
  logic [AW-1:0] val;

  always_comb begin
    for (i = 0; i < N; i = i + 1) begin
      cls[i] = p_cls[2*i +: 2];
      sgn[i] = p_sign[i];
      ex[i] = p_exp[i*XW +: XW];
      sg[i] = p_sig[i*SW +: SW];
      part[i] = cls[i] == 2'd1;
      odd_set[i] = ODDEVEN != 0 && (i % 2) == 1;
    end
    cls[N] = c_cls;
    sgn[N] = c_sign;
    ex[N] = c_exp;
    sg[N] = c_sig;
    part[N] = EARLY_C != 0 && (c_cls == 2'd1 || (c_cls == 2'd0 && HAS_CZE != 0));
    if (c_cls == 2'd0) begin
      ex[N] = XW'(CZE);
      sg[N] = '0;
    end
    odd_set[N] = 1'b0;

    e0 = '0; e1 = '0; n0 = 1'b1; n1 = 1'b1;
    for (i = 0; i < M; i = i + 1)
      if (part[i]) begin
        if (!odd_set[i]) begin
          if (n0 || ex[i] > e0) e0 = ex[i];
          n0 = 1'b0;
        end else begin
          if (n1 || ex[i] > e1) e1 = ex[i];
          n1 = 1'b0;
        end
      end
    if (HAS_LIM != 0 && !n0 && e0 < XW'(EMIN_LIM)) e0 = XW'(EMIN_LIM);
    if (HAS_LIM != 0 && !n1 && e1 < XW'(EMIN_LIM)) e1 = XW'(EMIN_LIM);
    e_max = e0; e_none = n0; e_max_even = e1; e_none_even = n1;

    sticky = 1'b0;
    sticky_even = 1'b0;
    v = '0;
    m = '0;
    m1 = '0;
    s = 0;
    for (i = 0; i < M; i = i + 1) begin
      eref = odd_set[i] ? e1 : e0;
      // value = sg * 2^(ex - TF); unit 2^(eref - F): shift right by s
      s = (32'($signed(eref)) - F) - (32'($signed(ex[i])) - TF);
      st = 1'b0;
      gb = 1'b0;
      lb = 1'b0;
      if (s <= 0) begin
        val = AW'(sg[i]) << (-s);
      end else begin
        m = (s >= SW) ? '0 : (sg[i] >> s);
        st = (s >= SW) ? (|sg[i]) : (|(sg[i] & ~({SW{1'b1}} << s)));
        m1 = (s > SW) ? '0 : (sg[i] >> (s - 1));
        gb = m1[0];
        lb = (s == 1) ? 1'b0 : (s > SW) ? (|sg[i]) : (|(sg[i] & ~({SW{1'b1}} << (s - 1))));
        val = AW'(m);
        if (ALIGN_MODE == 2 && gb && (lb || m[0])) val = val + 1'b1;
        if (ALIGN_MODE == 3 && gb) val = val + 1'b1;
      end
      if (sgn[i]) begin
        val = -val;
        if (ALIGN_MODE == 1 && st) val = val - 1'b1;
      end
      if (!part[i]) begin
        val = '0;
        st = 1'b0;
      end
      if (odd_set[i]) sticky_even = sticky_even | st;
      else sticky = sticky | st;
      v[i*AW +: AW] = val;
    end
  end
endmodule
