// matcore RTL: odd-even combine (stage 4b; CDNA3 fp8, interleave 2).
//
//   s_sum_odd  at e_odd (F fraction bits), s_sum_even at e_even:
//   e = max(e_odd, e_even) (a set without finite terms does not count; both empty: e_none)
//      s_sum_odd:   1x.xxxxxxxxxxxxxxxxxxxxxx  x 2^e_odd          (e = e_odd >= e_even)
//      s_sum_even:  00.0001xxxxxxxxxxxxx|xxxx  x 2^e   floor to PF fraction bits
//   s_sum = floor(odd) + floor(even), PF fraction bits at e.
module mc_oddeven #(
    parameter int XW = 20,
    parameter int F = 24,
    parameter int PF = 24,
    parameter int SUMW = 33,   // input sums
    parameter int OW = 33      // output sum: PF + 5 + clog2(N+1)
) (
    input  logic signed [SUMW-1:0] s_odd,
    input  logic signed [XW-1:0]   e_odd,
    input  logic                   none_odd,
    input  logic signed [SUMW-1:0] s_even,
    input  logic signed [XW-1:0]   e_even,
    input  logic                   none_even,
    output logic signed [OW-1:0]   s_sum,
    output logic signed [XW-1:0]   e,
    output logic                   e_none
);
  localparam int WW = (SUMW > OW ? SUMW : OW) + 2;
  integer sh;
  logic signed [WW-1:0] a, b;
  function automatic logic signed [WW-1:0] to_e(input logic signed [SUMW-1:0] x, input integer shift);
    logic signed [WW-1:0] w;
    w = WW'(x);
    if (shift <= 0) to_e = w <<< (-shift);
    else if (shift >= WW) to_e = x < 0 ? '1 : '0;
    else to_e = w >>> shift;
  endfunction
  always_comb begin
    e_none = none_odd && none_even;
    e = none_odd ? e_even : (none_even ? e_odd : (e_even > e_odd ? e_even : e_odd));
    sh = (32'($signed(e)) - PF) - (32'($signed(e_odd)) - F);
    a = none_odd ? '0 : to_e(s_odd, sh);
    sh = (32'($signed(e)) - PF) - (32'($signed(e_even)) - F);
    b = none_even ? '0 : to_e(s_even, sh);
    s_sum = e_none ? '0 : OW'(a + b);
  end
endmodule
