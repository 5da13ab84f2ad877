// matcore RTL: the fused multi-term adder (stage 4): the exact sum of the aligned lanes.
//
//   s_acc (early c) / s_sum (late c) = sum of the N + 1 lanes, F fraction bits at e_max
//   ODDEVEN: s_sum_odd (lanes of even index) and s_sum_even (odd index) summed apart
//   (s, s_even: SUMW = F + 5 + clog2(N+1) bits, two's complement)
module mc_adder #(
    parameter int N = 8,
    parameter int AW = 28,
    parameter int SUMW = 33,
    parameter int ODDEVEN = 0
) (
    input  logic [(N+1)*AW-1:0]   v,
    output logic signed [SUMW-1:0] s,
    output logic signed [SUMW-1:0] s_even
);
  integer i;
  always_comb begin
    s = '0;
    s_even = '0;
    for (i = 0; i <= N; i = i + 1)
      if (ODDEVEN != 0 && i < N && (i % 2) == 1) s_even = s_even + SUMW'($signed(v[i*AW +: AW]));
      else s = s + SUMW'($signed(v[i*AW +: AW]));
  end
endmodule
