// Presets: the special-value matrix (+/-0, +/-Inf, NaN, subnormal, largest normal in each
// operand) for every preset, with the behaviour the paper (AMD) and the NVIDIA spec state,
// written out here per family rather than read back from the presets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include "matcore/instructions.hpp"
#include "matcore/model.hpp"
#include "matcore/plan.hpp"
#include "matcore/presets.hpp"
#include "matcore/vectors.hpp"

using namespace mc;

namespace {

struct Expect {
  uint64_t inf_minus_inf;  // bits of d for +Inf + -Inf (binary32 output)
  bool sub_in;             // subnormal inputs are kept (else flushed to zero)
  bool canonical_nan;      // NaN input gives exactly inf_minus_inf's NaN pattern
};

Expect expected_for(const Datapath& d) {
  const std::string f = d.family;
  // AMD, sections 4.1-4.3: "the output is NaN with a negative sign" for +Inf + -Inf;
  // CDNA2 fp16/bf16: "Subnormals are not supported neither in input nor in the output".
  // CDNA4: the CDNA3 behaviour (a hypothesis, docs/architectures/cdna4.md).
  if (f == "cdna1" || f == "cdna3" || f == "cdna4") return {0xFFC00000, true, false};
  if (f == "cdna2") return {0xFFC00000, d.type == "fp32" || d.type == "fp64", false};
  // NVIDIA spec: "NaN in, or Inf - Inf: canonical NaN 0x7FFFFFFF"; subnormal inputs kept.
  return {0x7FFFFFFF, true, true};
}

std::vector<Datapath> fp32_out_presets() {
  std::vector<Datapath> v;
  for (const Datapath& d : all_presets())
    if (d.out_fmt == kBinary32) v.push_back(d);
  return v;
}

uint64_t run(const Datapath& dp, std::vector<uint64_t> a, std::vector<uint64_t> b, uint64_t c = 0) {
  a.resize(dp.k_default, 0);
  b.resize(dp.k_default, 0);
  return dot(dp, a.data(), b.data(), dp.k_default, c);
}

uint64_t one(const Format& f) { return parse_operand(f, "1"); }
uint64_t neg(const Format& f, uint64_t v) { return v ^ (uint64_t{1} << (f.width() - 1)); }

}  // namespace

class SpecialValues : public ::testing::TestWithParam<Datapath> {};

TEST_P(SpecialValues, Matrix) {
  const Datapath& dp = GetParam();
  const Expect ex = expected_for(dp);
  const Format &fa = dp.a_fmt, &fb = dp.b_fmt;
  const uint64_t a1 = one(fa), b1 = one(fb);
  // +0 and -0 in either operand: d = c exactly
  for (uint64_t z : {zero_bits(fa, false), zero_bits(fa, true)}) {
    EXPECT_EQ(run(dp, {z}, {b1}, 0x3F800000), 0x3F800000u) << dp.name();
    EXPECT_EQ(run(dp, {a1}, {zero_bits(fb, true)}, 0x40000000), 0x40000000u) << dp.name();
  }
  // infinities (formats that have them)
  if (fa.has_inf()) {
    EXPECT_EQ(run(dp, {fa.inf_bits(false)}, {b1}), 0x7F800000u) << dp.name() << " +Inf*1";
    EXPECT_EQ(run(dp, {fa.inf_bits(true)}, {b1}), 0xFF800000u) << dp.name() << " -Inf*1";
    EXPECT_EQ(run(dp, {a1}, {fb.has_inf() ? fb.inf_bits(true) : b1}), fb.has_inf() ? 0xFF800000u : 0x3F800000u);
    EXPECT_EQ(run(dp, {fa.inf_bits(false), fa.inf_bits(true)}, {b1, b1}), ex.inf_minus_inf)
        << dp.name() << " +Inf - Inf";
    // Inf * 0 is invalid
    const Unpacked r = decode(kBinary32, run(dp, {fa.inf_bits(false)}, {zero_bits(fb, false)}));
    EXPECT_EQ(r.cls, Class::NaN) << dp.name() << " Inf*0";
    // Inf in c
    EXPECT_EQ(run(dp, {a1}, {b1}, 0xFF800000), 0xFF800000u) << dp.name() << " c=-Inf";
    EXPECT_EQ(run(dp, {fa.inf_bits(false)}, {b1}, 0xFF800000), ex.inf_minus_inf) << dp.name();
  }
  // NaN in a (formats that have one: not the OCP MX fp6/fp4 elements)
  if (fa.has_nan()) {
    const uint64_t nan = run(dp, {fa.qnan_bits(false)}, {b1});
    EXPECT_EQ(decode(kBinary32, nan).cls, Class::NaN) << dp.name();
    if (ex.canonical_nan) {
      EXPECT_EQ(nan, ex.inf_minus_inf) << dp.name();
    }
  }
  EXPECT_EQ(decode(kBinary32, run(dp, {a1}, {b1}, 0x7FC00001)).cls, Class::NaN) << dp.name();
  // smallest subnormal input times one
  const uint64_t sub = 1;  // bit pattern of the smallest positive subnormal, every format
  const uint64_t ds = run(dp, {sub}, {b1});
  const Unpacked us = decode(fa, sub);
  if (ex.sub_in) {
    // the exact value of the subnormal, in binary32 (all these inputs are representable)
    EXPECT_EQ(ds, convert(fa, sub, kBinary32)) << dp.name() << " subnormal input";
  } else {
    EXPECT_EQ(ds, 0u) << dp.name() << " subnormal input flushed";
  }
  EXPECT_EQ(us.cls, Class::Subnormal);
  // largest normal times one (and its negative): exact in binary32, except binary32 itself
  const uint64_t mx = fa.max_finite_bits();
  const uint64_t want = dp.a_fmt == kBinary32 ? 0x7F7FFFFF : convert(fa, mx, kBinary32);
  uint64_t got = run(dp, {mx}, {b1});
  if (dp.a_fmt == kTf32) {
    EXPECT_EQ(got, 0x7F7FE000u) << dp.name();  // tf32 max
  } else {
    EXPECT_EQ(got, want) << dp.name() << " max*1";
  }
  EXPECT_EQ(run(dp, {neg(fa, mx)}, {b1}), got | 0x80000000u) << dp.name() << " -max*1";
}

INSTANTIATE_TEST_SUITE_P(AllPresets, SpecialValues, ::testing::ValuesIn(fp32_out_presets()),
                         [](const ::testing::TestParamInfo<Datapath>& i) {
                           std::string s = i.param.name() + "_" + i.param.variant;
                           for (char& ch : s)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

TEST(Presets, PaperOverflowBehaviour) {
  // section 4.1.1: a1 = a2 = max_fp32, b = 1 -> +Inf on every SFMA
  for (const char* arch : {"mi100", "mi250", "mi300x"}) {
    const Datapath dp = find_preset(arch, "fp32");
    EXPECT_EQ(run(dp, {0x7F7FFFFF, 0x7F7FFFFF}, {0x3F800000, 0x3F800000}), 0x7F800000u) << arch;
    EXPECT_EQ(run(dp, {0xFF7FFFFF, 0xFF7FFFFF}, {0x3F800000, 0x3F800000}), 0xFF800000u) << arch;
  }
  // section 4.3.2: bf16 products with |p| >= 2^128 are Inf on CDNA3, even 2.25*2^127
  const Datapath c3 = find_preset("mi300x", "bf16");
  const uint64_t x = parse_operand(kBfloat16, "1.5*2^64"), y = parse_operand(kBfloat16, "1.5*2^63");
  EXPECT_EQ(run(c3, {x, x}, {y, y ^ 0x8000}), 0xFFC00000u);
  // section 4.1.3: CDNA1 keeps such products exact: 2^129 - 2^129 = 0
  const Datapath c1 = find_preset("mi100", "bf16");
  const uint64_t p65 = parse_operand(kBfloat16, "2^65"), p64 = parse_operand(kBfloat16, "2^64");
  EXPECT_EQ(run(c1, {p65, p65}, {p64, p64 ^ 0x8000}), 0u);
  // NVIDIA: products never overflow; RTZ output still overflows to Inf
  const Datapath h = find_preset("h100", "bf16");
  EXPECT_EQ(run(h, {x, x}, {y, y}), 0x7F800000u);
  EXPECT_EQ(run(h, {x, x}, {y, y ^ 0x8000}), 0u);
}

TEST(Presets, LookupErrorsListTheChoices) {
  try {
    find_preset("mi400", "fp16");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("mi300x"), std::string::npos);
  }
  try {
    find_preset("mi100", "e4m3fnuz");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos);
  }
  EXPECT_THROW(find_preset("mi300x", "fp16", "fp16"), std::invalid_argument);
  EXPECT_THROW(find_preset("b200", "e4m3", "", "wgmma"), std::invalid_argument);
  EXPECT_EQ(find_preset("b200", "e4m3").variant, "mma.sync");
  EXPECT_EQ(find_preset("h100", "e4m3").variant, "wgmma");
  EXPECT_EQ(find_preset("h100", "e4m3", "fp16").variant, "mma.sync");
  EXPECT_EQ(find_preset("mi300x", "bf16_1k").type, "bf16");
  EXPECT_EQ(find_preset("mi300x", "e5m2fnuz,e5m2fnuz").type, "e5m2fnuz");
}

// Architecture facts are fields of the presets (issue 26, item 5): the layout file, the
// binary16-output instructions (PTX: f16 accumulators for fp16 and fp8 inputs only) and the
// instruction classes of sm_120 (mma.sync only, no tf32 mma), each checked against the spec.
TEST(Presets, ArchitectureFactsAreFields) {
  for (const Datapath& d : all_presets()) {
    EXPECT_TRUE(std::ifstream(std::string(MATCORE_SOURCE_DIR) + "/waves/" + d.layout + ".gtkw").good()) << d.name();
    const bool nv_half =
        d.nan_invalid == 0x7FFFFFFF && !d.scaled() &&  // block_scale: f32 accumulators only
        (d.a_fmt == kBinary16 || (d.a_fmt.width() == 8 && d.b_fmt.width() == 8));
    EXPECT_EQ(d.half_out, nv_half) << d.name();
    if (d.half_out) {
      EXPECT_EQ(find_preset(d.arch, d.type, "fp16").out_fmt, kBinary16) << d.name();
    } else {
      EXPECT_THROW(find_preset(d.arch, d.type, "fp16"), std::invalid_argument) << d.name();
    }
  }
  EXPECT_EQ(find_preset("mi300x", "fp32").layout, "cdna3");
  EXPECT_EQ(find_preset("h100", "fp16").layout, "nvidia");
  int mma = 0;
  for (const Instruction* i : instructions_for("rtxpro6000")) {
    EXPECT_EQ(i->name.rfind("mma.", 0), 0u) << i->name;
    EXPECT_NE(i->a_type, "tf32") << i->name;
    ++mma;
  }
  // m16n8k8 and m16n8k16 of f16 and bf16, m16n8k32 of the four fp8 pairs and of the 21 fp6/fp4
  // pairs (kind::f8f6f4), the 25 mxf8f6f4 block_scale forms and the three fp4 block_scale ones
  EXPECT_EQ(mma, 8 + 21 + 25 + 3);
  // the same family without the restriction (b200) keeps tcgen05 and tf32
  bool b200_wgmma = false, b200_tf32 = false;
  for (const Instruction* i : instructions_for("b200")) {
    b200_wgmma |= i->name.rfind("tcgen05.", 0) == 0;
    b200_tf32 |= i->a_type == "tf32";
  }
  EXPECT_TRUE(b200_wgmma);
  EXPECT_TRUE(b200_tf32);
}

TEST(Presets, EveryPresetIsConsistent) {
  for (const Datapath& d : all_presets()) EXPECT_NO_THROW(validate_datapath(d)) << d.name();
  EXPECT_EQ(arch_names().size(), 17u);
}

// The pipeline of each family, as the paper draws it: CDNA1 one exact sum (section 4.1);
// CDNA2 fp16 a pairwise tree of four products fl(fl(p1+p2)+fl(p3+p4)) then fl(c + tree), bf16 of
// two (4.2); CDNA3 fused with c added late, fp8 summing odd and even products apart (4.3);
// NVIDIA fused with c in the sum, the fp8 mma.sync of Hopper adding c after the groups
// (shared/spec/nvidia-tensor-cores.md); binary16 results widened for the d files.
TEST(Plan, StagesOfEachFamily) {
  using mc::find_preset;
  using mc::plan_diagram;
  EXPECT_EQ(plan_diagram(find_preset("mi100", "fp16")), "issue -> multiplier -> adder -> rounder");
  EXPECT_EQ(plan_diagram(find_preset("mi250", "fp16")),
            "issue -> multiplier -> adder_l0 -> adder_l1 -> cadd -> rounder");
  EXPECT_EQ(plan_diagram(find_preset("mi250", "bf16")), "issue -> multiplier -> adder_l0 -> cadd -> rounder");
  EXPECT_EQ(plan_diagram(find_preset("mi300x", "fp16")),
            "issue -> multiplier -> aligner -> adder -> cadd -> normaliser -> rounder");
  EXPECT_EQ(plan_diagram(find_preset("mi300x", "e4m3fnuz")),
            "issue -> multiplier -> aligner -> adder -> oddeven -> cadd -> normaliser -> rounder");
  EXPECT_EQ(plan_diagram(find_preset("a100", "fp16")), "issue -> multiplier -> aligner -> adder -> rounder");
  EXPECT_EQ(plan_diagram(find_preset("h100", "e4m3", "", "mma.sync")),
            "issue -> multiplier -> aligner -> adder -> rounder -> cfinal");
  EXPECT_EQ(plan_diagram(find_preset("h100", "fp16", "fp16")),
            "issue -> multiplier -> aligner -> adder -> rounder -> outconv");
}

// The reference interpreter's trace uses the names of the signal table, the names SystemC's VCD
// and the RTL views carry (one name for one bit at every level): every row of `dot --trace`, on
// random samples with specials, of every preset and its binary16-output form, is a signal of
// signal_table(dp), apart from the two rows of the dot product itself ("group", "order").
TEST(Plan, TraceRowsAreSignalsOfThePlan) {
  std::mt19937_64 g(7);
  for (const Datapath& p : all_presets()) {
    std::vector<Datapath> dps{p};
    if (p.half_out) dps.push_back(find_preset(p.arch, p.type, "fp16", p.variant));
    for (const Datapath& dp : dps) {
      const std::vector<SignalField> table = signal_table(dp);
      const int K = dp.k_default * 2;
      for (int s = 0; s < 40; ++s) {
        std::vector<uint64_t> a(K), b(K);
        auto mask = [](int w) { return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1; };
        const uint64_t ma = mask(dp.a_fmt.width()), mb = mask(dp.b_fmt.width());
        for (int k = 0; k < K; ++k) {
          a[k] = g() & ma;  // every bit pattern: zeros, subnormals, Inf and NaN among them
          b[k] = g() & mb;
        }
        const uint64_t c = s % 3 == 0 ? 0 : g() & mask(dp.out_fmt.width());
        Trace t;
        dot(dp, a.data(), b.data(), K, c, &t);
        for (const auto& row : t.rows) {
          if (row.name == "group" || row.name == "order") continue;
          EXPECT_NE(find_signal(table, row.name), nullptr) << dp.name() << " " << dp.out_fmt.name << ": " << row.name;
        }
      }
    }
  }
}

// Turing (T4) fp16 mma: L = 8, F = 24, toward zero; the spec's Eq. 10 example gives -0.5 (the
// Turing/Ampere/Ada value: F = 24 keeps 2^-1 below 2^23 but not 2^-2).
TEST(Presets, TuringFollowsThePublishedExample) {
  const Datapath& t4 = find_preset("t4", "fp16");
  EXPECT_EQ(t4.n_fma, 8);
  EXPECT_EQ(t4.k_default, 8);
  const uint64_t a[8] = {0xF000, 0xB800, 0xB400, 0xB000, 0, 0, 0, 0};  // -2^13, -0.5, -0.25, -0.125
  const uint64_t b[8] = {0x6400, 0x3C00, 0x3C00, 0x3C00, 0, 0, 0, 0};  // 2^10, 1, 1, 1
  EXPECT_EQ(dot(t4, a, b, 8, 0x4B000000), 0xBF000000u);                // -0.5
  EXPECT_EQ(dot(find_preset("v100", "fp16"), a, b, 4, 0x4B000000), 0x00000000u);  // Volta: 0
  EXPECT_EQ(dot(find_preset("h100", "fp16"), a, b, 8, 0x4B000000), 0xBF400000u);  // Hopper: -0.75
  EXPECT_EQ(instructions_for("t4").size(), 1u);
}

// NVIDIA fp64 (DMMA): a chain of IEEE binary64 FMAs in k order, RNE, subnormals kept. Checked
// against the host's own fma() (an independent IEEE implementation) on random finite samples
// spread over the whole exponent range, subnormals and cancellations included.
TEST(Presets, NvidiaFp64IsAChainOfFmas) {
  std::mt19937_64 g(64);
  for (const char* arch : {"a100", "h100", "b200"}) {
    const Datapath& dp = find_preset(arch, "fp64");
    EXPECT_EQ(dp.out_fmt, kBinary64);
    int checked = 0;
    for (int s = 0; s < 20000; ++s) {
      const int K = 1 + static_cast<int>(g() % 8);
      std::vector<uint64_t> a(K), b(K);
      auto draw = [&] {
        // exponent within +-600 (products stay finite), or a subnormal, or a plain small value
        const uint64_t m = g() & 0x000FFFFFFFFFFFFFull, sgn = g() & 0x8000000000000000ull;
        const uint64_t e = g() % 8 == 0 ? 0 : 1023 - 600 + g() % 1200;
        return sgn | (e << 52) | m;
      };
      for (int k = 0; k < K; ++k) {
        a[k] = draw();
        b[k] = k > 0 && g() % 4 == 0 ? (b[k - 1] ^ 0x8000000000000000ull) : draw();  // cancellations
        if (k > 0 && g() % 4 == 0) a[k] = a[k - 1];
      }
      const uint64_t c = draw();
      double acc;
      std::memcpy(&acc, &c, 8);
      for (int k = 0; k < K; ++k) {
        double x, y;
        std::memcpy(&x, &a[k], 8);
        std::memcpy(&y, &b[k], 8);
        acc = std::fma(x, y, acc);
      }
      if (std::isnan(acc) || std::isinf(acc)) continue;
      uint64_t want;
      std::memcpy(&want, &acc, 8);
      ASSERT_EQ(dot(dp, a.data(), b.data(), K, c), want) << arch << " sample " << s;
      ++checked;
    }
    EXPECT_GT(checked, 19000);
  }
  const uint64_t inf = 0x7FF0000000000000ull, zero = 0;
  EXPECT_EQ(dot(find_preset("a100", "fp64"), &inf, &zero, 1, 0), 0x7FFFFFFFFFFFFFFFull);  // Inf * 0
}
