// matcore RTL: the exact (Kulisch) adder (CDNA1, SFMA; also the core of every two-term fl()).
//
//   every finite term placed at its own position in one wide two's complement accumulator:
//
//   bit ACCW-1                                                           bit 0 = 2^LSB_MIN
//   | s | ....... 1xxxxxxxxxxxxxxxxxxxxxxxxx ......................................... |
//                 ^ term: sig * 2^(exp - TF), shifted left by (exp - TF) - LSB_MIN
//
//   LSB_MIN is the lowest bit any term can have, ACCW covers the highest plus the carries of
//   M terms: the sum is exact (no sticky). exact: sign and magnitude of the sum; zero: it is 0.
//   Terms other than finite nonzero add nothing (the specials detector decides those cases).
module mc_exact_adder #(
    parameter int M = 5,
    parameter int TF = 23, parameter int SW = 25, parameter int XW = 20,
    parameter int LSB_MIN = -300,
    parameter int ACCW = 560
) (
    input  logic [2*M-1:0]    t_cls,
    input  logic [M-1:0]      t_sign,
    input  logic [M*XW-1:0]   t_exp,
    input  logic [M*SW-1:0]   t_sig,
    output logic              sign,
    output logic [ACCW-1:0]   exact,
    output logic              zero
);
  integer i, pos;
  logic signed [ACCW:0] acc, term;
  always_comb begin
    acc = '0;
    pos = 0;
    term = '0;
    for (i = 0; i < M; i = i + 1)
      if (t_cls[2*i +: 2] == 2'd1) begin
        pos = (32'($signed($signed(t_exp[i*XW +: XW]))) - TF) - LSB_MIN;
        term = (ACCW + 1)'(t_sig[i*SW +: SW]) << pos;
        acc = t_sign[i] ? acc - term : acc + term;
      end
    sign = acc < 0;
    exact = sign ? ACCW'(-acc) : ACCW'(acc);
    zero = acc == 0;
  end
endmodule
