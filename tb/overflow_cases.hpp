// Overflow inside the datapath, then an infinity of the other sign (or a finite term): the
// samples shared by tb/test_specials.cpp (fast model) and sc/tests/test_sc_equiv.cpp (SystemC).
//
// Every expected d below is worked out by hand from the semantics of the datapath's roundings,
// not by running a model. Notation: fl() rounds to the output format with the datapath's rounding
// (RNE on every preset here); RNE overflows to Inf once the exact value reaches
// max_finite + ulp/2 (binary32: (2 - 2^-24) * 2^127; binary16: 65520); Inf + finite = Inf;
// Inf - Inf = NaN with the preset's invalid pattern: AMD binary32 0xFFC00000 ("-NaN", paper
// sections 4.1-4.3), AMD binary64 0xFFF8000000000000, NVIDIA binary16 0x7FFF (canonical).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "matcore/format.hpp"
#include "matcore/vectors.hpp"

namespace ovf {

struct Case {
  std::string arch, type, out, variant;  ///< find_preset arguments
  std::string a, b;                      ///< comma lists (parse_operand), repeated `reps` times
  int reps;
  std::string c;                         ///< in the output format
  uint64_t d;                            ///< expected bits of d
  std::string why;
};

inline std::vector<uint64_t> operands(const mc::Format& f, const std::string& list, int reps) {
  std::vector<uint64_t> v;
  for (int r = 0; r < reps; ++r)
    for (const std::string& s : mc::split_commas(list)) v.push_back(mc::parse_operand(f, s));
  return v;
}

inline std::string label(const Case& k) {
  return k.arch + "/" + k.type + (k.out.empty() ? "" : " out " + k.out) +
         (k.variant.empty() ? "" : " " + k.variant) + ": a=" + k.a + (k.reps > 1 ? " (x" + std::to_string(k.reps) + ")" : "") +
         " b=" + k.b + " c=" + k.c + " -- " + k.why;
}

constexpr uint64_t kPInf32 = 0x7F800000, kNInf32 = 0xFF800000, kAmdNaN32 = 0xFFC00000;

inline std::vector<Case> cases() {
  std::vector<Case> v;
  // ---- CDNA2 pairwise (mi210 and mi250 are the same datapath). Products of bf16 operands are
  // exact in binary32 when in range, so p_i below is a_i * b_i.
  for (const char* arch : {"mi210", "mi250"}) {
    const std::string A = arch;
    // bf16, group of 2: each group is fl(c + fl(p1 + p2)); a group's d is the next group's c.
    v.push_back({A, "bf16", "", "", "2^127,2^127", "1,1", 1, "1", kPInf32,
                 "fl(p1+p2) = fl(2^128) = +Inf (2^128 > (2-2^-24)*2^127); fl(1 + Inf) = +Inf"});
    v.push_back({A, "bf16", "", "", "-2^127,-2^127", "1,1", 1, "1", kNInf32,
                 "fl(p1+p2) = fl(-2^128) = -Inf; fl(1 - Inf) = -Inf"});
    v.push_back({A, "bf16", "", "", "2^127,2^127", "1,1", 1, "-inf", kAmdNaN32,
                 "fl(p1+p2) = +Inf; fl(-Inf + Inf) = NaN (invalid)"});
    v.push_back({A, "bf16", "", "", "2^127,2^127,-2^127,-2^127", "1,1,1,1", 1, "0", kAmdNaN32,
                 "group 0: fl(0 + fl(2^128)) = +Inf; group 1: c = +Inf, fl(p3+p4) = -Inf; +Inf - Inf = NaN"});
    v.push_back({A, "bf16", "", "", "2^127,0", "1,1", 1, "2^127", kPInf32,
                 "the last fl overflows: fl(p1+p2) = 2^127; fl(2^127 + 2^127) = fl(2^128) = +Inf"});
    v.push_back({A, "bf16", "", "", "0x7f7f,0x7b7f", "1,1", 1, "0", 0x7F7FFF00,
                 "(2-2^-7)*2^127 + (2-2^-7)*2^119 = 2^128 - 2^112 = (2-2^-15)*2^127: exact, finite"});
    v.push_back({A, "bf16", "", "", "0x7f7f,0x7b80", "1,1", 1, "0", kPInf32,
                 "(2-2^-7)*2^127 + 2^120 = 2^128: overflows to +Inf"});
    v.push_back({A, "bf16", "", "", "2^127,1", "2^127,1", 1, "0", kPInf32,
                 "p1 = 2^254 is beyond binary32: fl(p1) = +Inf; +Inf + 1 = +Inf"});
    v.push_back({A, "bf16", "", "", "2^127,2^127", "2^127,-2^127", 1, "0", kAmdNaN32,
                 "fl(p1) = +Inf, fl(p2) = -Inf (paper 4.2.2: p1 = 2^128, p2 = -p1 gives -NaN)"});
    // bf16_1k, group of 4: fl(c + fl(fl(p1+p2) + fl(p3+p4))).
    v.push_back({A, "bf16_1k", "", "", "2^127,2^127,-2^127,-2^127", "1,1,1,1", 1, "0", kAmdNaN32,
                 "fl(p1+p2) = +Inf, fl(p3+p4) = -Inf: their sum is NaN"});
    v.push_back({A, "bf16_1k", "", "", "2^127,2^127,1,1", "1,1,1,1", 1, "1", kPInf32,
                 "fl(p1+p2) = +Inf, fl(p3+p4) = 2; +Inf + 2 = +Inf; fl(1 + Inf) = +Inf"});
    v.push_back({A, "bf16_1k", "", "", "2^127,2^127,0,0", "1,1,1,1", 1, "-inf", kAmdNaN32,
                 "the tree is +Inf (fl(p1+p2) overflows); fl(-Inf + Inf) = NaN"});
    v.push_back({A, "bf16_1k", "", "", "1.5*2^127,0,1.5*2^127,0", "1,1,1,1", 1, "0", kPInf32,
                 "both pairs 1.5*2^127 (finite); the second level fl(3*2^127) overflows to +Inf"});
    v.push_back({A, "bf16_1k", "", "", "1.5*2^127,0,1.5*2^127,0", "1,1,1,1", 1, "-inf", kAmdNaN32,
                 "second level +Inf; fl(-Inf + Inf) = NaN"});
    v.push_back({A, "bf16_1k", "", "", "inf,0,-2^127,-2^127", "1,1,1,1", 1, "0", kAmdNaN32,
                 "p1 = +Inf (input): fl(p1+p2) = +Inf; fl(p3+p4) = fl(-2^128) = -Inf; sum NaN"});
    v.push_back({A, "bf16_1k", "", "", "2^127,2^127,-2^127,-2^127,2^127,2^127,0,0", "1,1,1,1,1,1,1,1", 1,
                 "0", kAmdNaN32, "group 0: -NaN (opposite pairs overflow); group 1: c is that -NaN, and a NaN input\n"
                 "gives the quiet NaN with the sign of the first NaN (c): 0xFFC00000"});
    // fp16: |p| <= 65504^2 < 2^32, a group sum < 2^34 and fl(max_finite + 2^34) = max_finite, so
    // nothing overflows from finite operands; infinite inputs still reach the tree.
    v.push_back({A, "fp16", "", "", "inf,65504,65504,65504", "1,65504,65504,65504", 1, "0x7f7fffff", kPInf32,
                 "p1 = +Inf; the other terms finite: +Inf"});
    v.push_back({A, "fp16", "", "", "inf,1,1,1", "1,1,1,1", 1, "-inf", kAmdNaN32,
                 "p1 = +Inf and c = -Inf: NaN"});
  }
  // ---- SFMA (n_fma = 1, exact product, one RNE per step): d_k = fl(d_{k-1} + a_k*b_k). An
  // Inf accumulator plus any finite product stays Inf, so only an infinite input can meet it.
  for (const char* arch : {"mi100", "mi250"}) {
    v.push_back({arch, "fp32", "", "", "2^127,-2^127", "4,4", 1, "0", kPInf32,
                 "step 1: fl(2^129) = +Inf; step 2: fl(+Inf - 2^129) = +Inf (the product is exact)"});
    v.push_back({arch, "fp32", "", "", "2^127,-inf", "4,1", 1, "0", kAmdNaN32,
                 "step 1: +Inf (overflow); step 2: +Inf + (-Inf) = NaN"});
    v.push_back({arch, "fp32", "", "", "-2^127,inf", "4,1", 1, "0", kAmdNaN32,
                 "step 1: -Inf (overflow); step 2: -Inf + Inf = NaN"});
    v.push_back({arch, "fp32", "", "", "2^127", "4", 1, "-inf", kNInf32,
                 "one step: -Inf + 2^129 (exact, finite) = -Inf"});
  }
  v.push_back({"mi250", "fp64", "", "", "2^1023,-2^1023", "4,4", 1, "0", 0x7FF0000000000000ull,
               "step 1: fl(2^1025) = +Inf; step 2: +Inf - 2^1025 = +Inf"});
  v.push_back({"mi250", "fp64", "", "", "2^1023,-inf", "4,1", 1, "0", 0xFFF8000000000000ull,
               "step 1: +Inf; step 2: +Inf - Inf = NaN (binary64 invalid pattern)"});
  // ---- CDNA3 chained groups (n_fma = 8): the group sum is exact-ish fixed point, rounded once;
  // |p| >= 2^128 is Inf at the multiplier.
  const std::string b15 = "1.5*2^63";
  std::string bq;
  for (int i = 0; i < 16; ++i) bq += (i ? "," : "") + b15;
  v.push_back({"mi300x", "bf16", "", "", "2^64,2^64,2^64,2^64,2^64,2^64,2^64,2^64,-2^63,-2^63,-2^63,-2^63,-2^63,-2^63,-2^63,-2^63",
               bq, 1, "0", kPInf32,
               "group 0: 8 * 1.5*2^127 = 1.5*2^130 -> +Inf; group 1: +Inf + 8 * (-1.5*2^126) = +Inf"});
  v.push_back({"mi300x", "bf16", "", "", "2^64,2^64,2^64,2^64,2^64,2^64,2^64,2^64,-2^64,0,0,0,0,0,0,0",
               "1.5*2^63,1.5*2^63,1.5*2^63,1.5*2^63,1.5*2^63,1.5*2^63,1.5*2^63,1.5*2^63,2^64,0,0,0,0,0,0,0", 1, "0",
               kAmdNaN32, "group 0: +Inf; group 1: p = -2^128 is -Inf at the multiplier; +Inf - Inf = NaN"});
  // ---- NVIDIA fp8 mma.sync with binary16 output (c_final_add): two HMMAs of 16 products
  // (k mod 4 in {0,1}, then {2,3}), each rounded RNE to binary16, then d = fl(acc + c).
  // 57344^2 = 1.75^2 * 2^30 > 65520, so every group sum of same-sign products overflows.
  for (const char* arch : {"h100", "b200"}) {
    const std::string a = "57344,57344,-57344,-57344";  // k mod 4 in {0,1}: +, {2,3}: -
    v.push_back({arch, "e5m2", "fp16", "mma.sync", a, "57344,57344,57344,57344", 8, "0", 0x7C00,
                 "HMMA 1: 16 * 57344^2 -> +Inf; HMMA 2: c = +Inf plus finite = +Inf; fl(+Inf + 0) = +Inf"});
    v.push_back({arch, "e5m2", "fp16", "mma.sync", a, "57344,57344,57344,57344", 8, "-inf", 0x7FFF,
                 "acc = +Inf (as above); fl(+Inf + (-Inf)) = NaN"});
    v.push_back({arch, "e5m2", "fp16", "mma.sync", "-57344,-57344,57344,57344", "57344,57344,57344,57344", 8, "65504", 0xFC00,
                 "HMMA 1 -> -Inf, HMMA 2 -> -Inf; fl(-Inf + 65504) = -Inf"});
  }
  return v;
}

}  // namespace ovf
