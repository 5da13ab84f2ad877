// matcore RTL: operand decode (stage 1), written independently of core/include/matcore/format.hpp.
//
//   x:  | s | E (EW bits) | M (MW bits) |
//   normal     E != 0 (and not special): exp = E - BIAS,  sig = 1.M   (MW fraction bits)
//   subnormal  E == 0, M != 0:           exp = 1 - BIAS,  sig = 0.M   (zero when SUB_IN == 0)
//   ENC 0 IEEE: E all ones -> M == 0 ? Inf : NaN
//   ENC 1 FN  : E and M all ones -> NaN, no Inf
//   ENC 2 FNUZ: s = 1, E = M = 0 -> NaN, no Inf, no -0
//   ENC 3 finite (OCP MX E3M2, E2M3, E2M1): no Inf, no NaN
//
// cls: 0 zero, 1 finite nonzero, 2 Inf, 3 NaN (the term classes of every stage).
module mc_decode #(
    parameter int EW = 8,
    parameter int MW = 23,
    parameter int BIAS = 127,
    parameter int ENC = 0,
    parameter int SUB_IN = 1,
    parameter int XW = 20
) (
    input  logic [EW+MW:0]        x,
    output logic [1:0]            cls,
    output logic                  sign,
    output logic signed [XW-1:0]  exp,
    output logic [MW:0]           sig
);
  logic [EW-1:0] e_field;
  logic [MW-1:0] m_field;
  logic e_ones, e_zero, m_ones, m_zero;
  always_comb begin
    e_field = x[MW +: EW];
    m_field = x[MW-1:0];
    sign = x[EW+MW];
    e_ones = &e_field;
    e_zero = ~|e_field;
    m_ones = &m_field;
    m_zero = ~|m_field;
    cls = 2'd1;
    exp = XW'(32'(e_field)) - XW'(BIAS);
    sig = {1'b1, m_field};
    if (e_zero) begin
      exp = XW'(1 - BIAS);
      sig = {1'b0, m_field};
      cls = (m_zero || SUB_IN == 0) ? 2'd0 : 2'd1;
      if (SUB_IN == 0) sig = '0;
    end
    if (ENC == 0 && e_ones) cls = m_zero ? 2'd2 : 2'd3;
    if (ENC == 1 && e_ones && m_ones) cls = 2'd3;
    if (ENC == 2 && sign && e_zero && m_zero) cls = 2'd3;
    if (cls[1]) sig = '0;
  end
endmodule
