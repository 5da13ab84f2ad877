// Special values that arise inside the datapath: a sum rounded to Inf on overflow meeting an
// infinity of the other sign later (Inf - Inf = NaN) or a finite term (Inf stays). The samples
// and their hand-derived results are in overflow_cases.hpp (also run on the SystemC model).
#include <gtest/gtest.h>

#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/stages.hpp"
#include "overflow_cases.hpp"

using namespace mc;

namespace {

uint64_t run(const Datapath& dp, const std::string& a, const std::string& b, int reps, const std::string& c) {
  const std::vector<uint64_t> va = ovf::operands(dp.a_fmt, a, reps), vb = ovf::operands(dp.b_fmt, b, reps);
  EXPECT_EQ(va.size(), vb.size());
  return dot(dp, va.data(), vb.data(), static_cast<int>(va.size()), parse_operand(dp.out_fmt, c));
}

}  // namespace

TEST(IntermediateOverflow, EveryCaseGivesTheHandDerivedBits) {
  const std::vector<ovf::Case> cs = ovf::cases();
  ASSERT_GT(cs.size(), 50u);
  for (const ovf::Case& k : cs) {
    const Datapath dp = find_preset(k.arch, k.type, k.out, k.variant);
    EXPECT_EQ(to_hex_bits(dp.out_fmt, run(dp, k.a, k.b, k.reps, k.c)), to_hex_bits(dp.out_fmt, k.d))
        << ovf::label(k);
  }
}

TEST(IntermediateOverflow, OnlyThePairwiseTreeLeavesAnInfinityToTheAdder) {
  // NaN inputs and invalid terms decide d before any adder; an infinity does too, except in the
  // pairwise tree, where a later pair may overflow to the other infinity.
  for (const Datapath& dp : all_presets()) {
    EXPECT_TRUE(special_at_inputs(dp, SpecialKind::NaNIn)) << dp.name();
    EXPECT_TRUE(special_at_inputs(dp, SpecialKind::Invalid)) << dp.name();
    EXPECT_FALSE(special_at_inputs(dp, SpecialKind::None)) << dp.name();
    const bool pw = dp.adder == AdderKind::Pairwise;
    EXPECT_EQ(special_at_inputs(dp, SpecialKind::PosInf), !pw) << dp.name();
    EXPECT_EQ(special_at_inputs(dp, SpecialKind::NegInf), !pw) << dp.name();
  }
}

TEST(IntermediateOverflow, EachPairIsRoundedWithTheDatapathsRounding) {
  // The CDNA2 tree with another output rounding (no preset has one; the field is the datapath's).
  // Overflow of a binary32 fl(): RTZ gives +-max_finite (0x7F7FFFFF) for both signs; RD gives
  // +max_finite for a positive and -Inf for a negative sum; RU +Inf and -max_finite.
  Datapath dp = find_preset("mi250", "bf16_1k");
  const std::string opp = "2^127,2^127,-2^127,-2^127", ones = "1,1,1,1";
  struct Row { Rounding r; uint64_t opposite, single; };
  const Row rows[] = {
      // RTZ: fl(p1+p2) = max, fl(p3+p4) = -max, their sum is an exact 0 (+0 outside RD), c = +0: +0.
      //      single: fl(max + 2) = max (RTZ), fl(1 + max) = max.
      {Rounding::RTZ, 0x00000000, 0x7F7FFFFF},
      // RD: fl(2^128) = max, fl(-2^128) = -Inf; max + (-Inf) = -Inf.  single: as RTZ for a positive sum.
      {Rounding::RD, 0xFF800000, 0x7F7FFFFF},
      // RU: fl(2^128) = +Inf, fl(-2^128) = -max; +Inf + (-max) = +Inf.  single: +Inf.
      {Rounding::RU, 0x7F800000, 0x7F800000},
      // RNE: both pairs overflow to Inf; +Inf - Inf = NaN.  single: +Inf.
      {Rounding::RNE, 0xFFC00000, 0x7F800000},
  };
  for (const Row& r : rows) {
    dp.out_round = r.r;
    EXPECT_EQ(run(dp, opp, ones, 1, "0"), r.opposite) << to_string(r.r);
    EXPECT_EQ(run(dp, "2^127,2^127,1,1", ones, 1, "1"), r.single) << to_string(r.r);
  }
}

TEST(IntermediateOverflow, TheTraceShowsThePairThatOverflowed) {
  const Datapath dp = find_preset("mi250", "bf16_1k");
  const std::vector<uint64_t> a = ovf::operands(dp.a_fmt, "2^127,2^127,0,0", 1),
                              b = ovf::operands(dp.b_fmt, "1,1,1,1", 1);
  Trace tr;
  EXPECT_EQ(dot(dp, a.data(), b.data(), 4, ovf::kNInf32, &tr), ovf::kAmdNaN32);
  bool pair = false, decided = false;
  for (const auto& row : tr.rows) {
    if (row.name == "adder.pair0_0") pair = row.value == "0x7f800000";
    if (row.name == "specials.kind") decided = true;
  }
  EXPECT_TRUE(pair);
  EXPECT_FALSE(decided);  // c = -Inf did not decide d before the tree
}
