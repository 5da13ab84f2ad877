// matcore RTL: output conversion (binary16 results widened exactly to the stored binary32).
//
//   normal     s | E | M          ->  s | E - BIASF + BIAST | M << (MWT - MWF)
//   subnormal  s | 0 | 0001xxxx   ->  normalised: leading one of M becomes the hidden bit
//   zero, Inf  -> zero, Inf of the same sign
//   NaN        -> s | all ones | payload << (MWT - MWF)   (sign and payload kept, as hardware)
module mc_outconv #(
    parameter int EWF = 5, parameter int MWF = 10, parameter int BIASF = 15,
    parameter int EWT = 8, parameter int MWT = 23, parameter int BIAST = 127
) (
    input  logic [EWF+MWF:0] d,
    output logic [EWT+MWT:0] d32
);
  logic s;
  logic [EWF-1:0] e;
  logic [MWF-1:0] m;
  logic [MWT-1:0] mt;
  integer msb, i;
  logic [EWT-1:0] ex;
  always_comb begin
    s = d[EWF+MWF];
    e = d[MWF +: EWF];
    m = d[MWF-1:0];
    msb = -1;
    for (i = 0; i < MWF; i = i + 1)
      if (m[i]) msb = i;
    mt = MWT'(m) << (MWT - MWF);
    ex = EWT'(32'($signed({1'b0, e})) - BIASF + BIAST);
    if (&e) d32 = {s, {EWT{1'b1}}, mt};
    else if (e != 0) d32 = {s, ex, mt};
    else if (msb < 0) d32 = {s, {(EWT + MWT) {1'b0}}};
    else begin
      // value = m * 2^(1 - BIASF - MWF); leading one at exponent msb + 1 - BIASF - MWF
      ex = EWT'(msb + 1 - BIASF - MWF + BIAST);
      mt = MWT'(m) << (MWT - msb);
      d32 = {s, ex, mt};
    end
  end
endmodule
