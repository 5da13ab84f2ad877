// Formats as values: decode/encode bit patterns, special-value encodings, exact parsing and
// correctly rounded conversion (checked against the host FPU as an independent implementation).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "matcore/exact.hpp"
#include "matcore/format.hpp"
#include "matcore/vectors.hpp"

using namespace mc;

namespace {
uint32_t f2u(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
float u2f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
uint64_t d2u(double d) { uint64_t u; std::memcpy(&u, &d, 8); return u; }
double u2d(uint64_t u) { double d; std::memcpy(&d, &u, 8); return d; }
uint64_t px(const Format& f, const char* s) {
  bool inexact = false;
  const uint64_t v = parse_operand(f, s, &inexact);
  EXPECT_FALSE(inexact) << s << " in " << f.name;
  return v;
}
}  // namespace

TEST(Format, Parameters) {
  EXPECT_EQ(kBinary16.emin(), -14);
  EXPECT_EQ(kBinary16.emax(), 15);
  EXPECT_EQ(kE4M3.emax(), 8);
  EXPECT_EQ(kE4M3Fnuz.emin(), -7);
  EXPECT_EQ(kE5M2Fnuz.emin(), -15);
  EXPECT_EQ(kE4M3.max_finite_bits(), 0x7Eu);       // 448
  EXPECT_EQ(kE4M3Fnuz.max_finite_bits(), 0x7Fu);   // 240
  EXPECT_EQ(kE5M2Fnuz.max_finite_bits(), 0x7Fu);   // 57344
  EXPECT_EQ(kE5M2.max_finite_bits(), 0x7Bu);       // 57344
  EXPECT_EQ(kBfloat16.max_finite_bits(), 0x7F7Fu);
  EXPECT_EQ(to_decimal(kE4M3, 0x7E), "448");
  EXPECT_EQ(to_decimal(kE4M3Fnuz, 0x7F), "240");
  EXPECT_EQ(to_decimal(kE5M2Fnuz, 0x7F), "57344");
  EXPECT_EQ(to_decimal(kE5M2, 0x7B), "57344");
  EXPECT_EQ(to_decimal(kBinary16, 0x7BFF), "65504");
}

TEST(Format, SpecialEncodings) {
  EXPECT_EQ(decode(kBinary32, 0x7F800000).cls, Class::Inf);
  EXPECT_EQ(decode(kBinary32, 0x7FC00000).cls, Class::NaN);
  EXPECT_EQ(decode(kE4M3, 0x7F).cls, Class::NaN);
  EXPECT_EQ(decode(kE4M3, 0xFF).cls, Class::NaN);
  EXPECT_EQ(decode(kE4M3, 0x78).cls, Class::Normal);  // 256: E=1111 is a normal binade in fn
  EXPECT_EQ(decode(kE5M2, 0x7C).cls, Class::Inf);
  EXPECT_EQ(decode(kE4M3Fnuz, 0x80).cls, Class::NaN);
  EXPECT_EQ(decode(kE5M2Fnuz, 0x80).cls, Class::NaN);
  EXPECT_EQ(decode(kE4M3Fnuz, 0x00).cls, Class::Zero);
  EXPECT_EQ(decode(kE4M3Fnuz, 0xFF).cls, Class::Normal);  // -240
  EXPECT_FALSE(kE4M3Fnuz.has_inf());
  EXPECT_EQ(zero_bits(kE4M3Fnuz, true), 0u);  // no -0 in FNUZ
  EXPECT_EQ(zero_bits(kBinary16, true), 0x8000u);
  EXPECT_EQ(kBinary32.qnan_bits(true), 0xFFC00000u);
}

TEST(Format, DecodeSubnormalAndNormal) {
  Unpacked u = decode(kBinary16, 0x0001);  // 2^-24
  EXPECT_EQ(u.cls, Class::Subnormal);
  EXPECT_EQ(u.exp, -14);
  EXPECT_EQ(u.sig, 1u);
  u = decode(kBinary16, 0x3E00);  // 1.5
  EXPECT_EQ(u.cls, Class::Normal);
  EXPECT_EQ(u.exp, 0);
  EXPECT_EQ(u.sig, 0x600u);
  u = decode(kE4M3Fnuz, 0x01);  // 2^-10
  EXPECT_EQ(u.exp, -7);
  EXPECT_EQ(u.sig, 1u);
  u = decode(kE5M2Fnuz, 0x01);  // 2^-17
  EXPECT_EQ(u.exp, -15);
  EXPECT_EQ(px(kE5M2Fnuz, "2^-17"), 0x01u);
  EXPECT_EQ(px(kE4M3Fnuz, "2^-10"), 0x01u);
  EXPECT_EQ(px(kE4M3, "2^-9"), 0x01u);
  EXPECT_EQ(px(kE5M2, "2^-16"), 0x01u);
}

TEST(Format, ExactExpressions) {
  EXPECT_EQ(px(kBinary32, "1+2^-23"), 0x3F800001u);
  EXPECT_EQ(px(kBinary32, "-(2^-24+2^-25)"), f2u(-(std::ldexp(1.0f, -24) + std::ldexp(1.0f, -25))));
  EXPECT_EQ(px(kBinary32, "2^-149"), 0x00000001u);
  EXPECT_EQ(px(kBinary32, "2-2^-22"), f2u(2.0f - std::ldexp(1.0f, -22)));
  EXPECT_EQ(px(kBinary32, "1-S(24,24)"), f2u(1.0f - std::ldexp(1.0f, -24)));
  EXPECT_EQ(px(kBinary32, "S(1,3)"), f2u(0.875f));
  EXPECT_EQ(px(kBinary32, "1.5*2^-3"), f2u(0.1875f));
  EXPECT_EQ(px(kBinary32, "-0"), 0x80000000u);
  EXPECT_EQ(px(kBinary32, "-inf"), 0xFF800000u);
  EXPECT_EQ(px(kBinary32, "max"), 0x7F7FFFFFu);
  EXPECT_EQ(px(kBinary16, "0x3c00"), 0x3C00u);
  EXPECT_THROW(parse_operand(kBinary16, "1.5.3"), std::invalid_argument);
  EXPECT_THROW(parse_operand(kBinary16, "0x1ffff"), std::invalid_argument);
  EXPECT_THROW(parse_operand(kE4M3Fnuz, "inf"), std::invalid_argument);
  EXPECT_THROW(parse_operand(kBinary16, ""), std::invalid_argument);
}

// Regression of fuzz_exact (fuzz/regressions/fuzz_exact/): deeply nested parentheses recursed
// once per level and overflowed the stack; the nesting is now limited to 100 levels.
TEST(Format, ExactNestingIsLimited) {
  auto nested = [](int n) { return std::string(n, '(') + "1+2^-3" + std::string(n, ')'); };
  EXPECT_EQ(px(kBinary32, nested(100).c_str()), f2u(1.125f));
  for (int n : {101, 30000}) {
    try {
      parse_exact(nested(n));
      FAIL() << n << " levels accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("parentheses nested deeper than 100 levels"),
                std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(px(kBinary32, ("-" + nested(100) + "+(2^-1)").c_str()), f2u(-0.625f));
}

TEST(Format, DecimalRoundingMatchesHostStrtof) {
  // Decimal strings are rounded exactly (no double rounding); glibc's strtof is correctly
  // rounded too, so the two must agree on every case, including near-ties.
  const char* cases[] = {"0.1", "3.14159265358979", "1e0", "16777217", "16777219", "0.3",
                         "1.00000005960464477539062500001", "1.000000059604644775390625",
                         "1.00000005960464477539062499999", "340282356779733661637539395458142568448",
                         "0.000000000000000000000000000000000000000000001"};
  for (const char* c : cases) {
    std::string s = c;
    if (s == "1e0") continue;  // no exponent notation in the grammar
    bool inexact = false;
    const uint64_t v = parse_operand(kBinary32, s, &inexact);
    EXPECT_EQ(v, f2u(std::strtof(c, nullptr))) << c;
  }
}

TEST(Format, RoundToBinary32MatchesHostFpu) {
  // Independent check: binary64 -> binary32 RNE (with subnormals) against the host conversion.
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200000; ++i) {
    uint64_t bits = rng();
    // concentrate exponents near the binary32 range (incl. subnormals and overflow)
    const uint64_t e = 1023 - 160 + (rng() % 300);
    bits = (bits & 0x800FFFFFFFFFFFFFull) | (e << 52);
    const double d = u2d(bits);
    const uint64_t got = convert(kBinary64, bits, kBinary32, Rounding::RNE);
    ASSERT_EQ(got, f2u(static_cast<float>(d))) << std::hex << bits;
  }
}

TEST(Format, DirectedRoundingModes) {
  const uint64_t x = px(kBinary64, "1+2^-24+2^-30");  // above the binary32 tie
  EXPECT_EQ(convert(kBinary64, x, kBinary32, Rounding::RNE), 0x3F800001u);
  EXPECT_EQ(convert(kBinary64, x, kBinary32, Rounding::RTZ), 0x3F800000u);
  EXPECT_EQ(convert(kBinary64, x, kBinary32, Rounding::RD), 0x3F800000u);
  EXPECT_EQ(convert(kBinary64, x, kBinary32, Rounding::RU), 0x3F800001u);
  const uint64_t y = px(kBinary64, "-(1+2^-24)");  // exact tie, negative
  EXPECT_EQ(convert(kBinary64, y, kBinary32, Rounding::RNE), 0xBF800000u);
  EXPECT_EQ(convert(kBinary64, y, kBinary32, Rounding::RNA), 0xBF800001u);
  EXPECT_EQ(convert(kBinary64, y, kBinary32, Rounding::RD), 0xBF800001u);
  EXPECT_EQ(convert(kBinary64, y, kBinary32, Rounding::RU), 0xBF800000u);
  // overflow: RNE -> Inf, RTZ -> max
  const uint64_t big = px(kBinary64, "2^128");
  EXPECT_EQ(convert(kBinary64, big, kBinary32, Rounding::RNE), 0x7F800000u);
  EXPECT_EQ(convert(kBinary64, big, kBinary32, Rounding::RTZ), 0x7F7FFFFFu);
  // fp8: overflow of a format without Inf gives NaN; 464 rounds (tie) to 448 in OCP E4M3
  EXPECT_EQ(convert(kBinary64, px(kBinary64, "464"), kE4M3, Rounding::RNE), 0x7Eu);
  EXPECT_EQ(convert(kBinary64, px(kBinary64, "480"), kE4M3, Rounding::RNE), 0x7Fu);
  EXPECT_EQ(convert(kBinary64, px(kBinary64, "-1000"), kE4M3Fnuz, Rounding::RNE), 0x80u);
  // subnormal carry into the smallest normal of binary16
  EXPECT_EQ(convert(kBinary64, px(kBinary64, "2^-14-2^-26"), kBinary16, Rounding::RNE), 0x0400u);
}

TEST(Format, FlushToZeroAndReducedPrecision) {
  Exact x{false, 1, -127, false};  // 2^-127: subnormal in binary32
  EXPECT_EQ(round_to_format(kBinary32, x, RoundOpts{Rounding::RNE, true, -1, false}), 0x00400000u);
  EXPECT_EQ(round_to_format(kBinary32, x, RoundOpts{Rounding::RNE, false, -1, false}), 0u);
  x.sign = true;
  EXPECT_EQ(round_to_format(kBinary32, x, RoundOpts{Rounding::RNE, false, -1, false}), 0x80000000u);
  // e8m13: keep 13 fraction bits of binary32, truncated
  Exact y{false, (static_cast<u128>(1) << 23) | 0x3FF, -23, false};  // 1 + 1023*2^-23
  EXPECT_EQ(round_to_format(kBinary32, y, RoundOpts{Rounding::RTZ, true, 13, false}), 0x3F800000u);
  Exact z{false, (static_cast<u128>(1) << 23) | 0x400, -23, false};  // 1 + 2^-13
  EXPECT_EQ(round_to_format(kBinary32, z, RoundOpts{Rounding::RTZ, true, 13, false}), 0x3F800400u);
  // NVIDIA: RTZ overflow still gives Inf
  Exact w{false, 1, 128, false};
  EXPECT_EQ(round_to_format(kBinary32, w, RoundOpts{Rounding::RTZ, true, -1, true}), 0x7F800000u);
}

TEST(Format, Tf32IngestTruncates) {
  // xf32/tf32 inputs: binary32 with the low 13 fraction bits ignored (section 4.3.3)
  const uint32_t v = f2u(1.0f + std::ldexp(1.0f, -10) + std::ldexp(1.0f, -11));
  const uint64_t t = ingest_value(kTf32, Rounding::RTZ, v, 32, "x");
  EXPECT_EQ(to_decimal(kTf32, t), "1.0009765625");  // 1 + 2^-10
  EXPECT_THROW(ingest_value(kBinary16, Rounding::RNE, f2u(0.1f), 32, "f:1: value 1"), InputError);
  try {
    ingest_value(kBinary16, Rounding::RNE, f2u(0.1f), 32, "f:1: value 1");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("f:1: value 1"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("binary16"), std::string::npos);
  }
  EXPECT_THROW(ingest_value(kE4M3Fnuz, Rounding::RNE, 0x7F800000u, 32, "x"), InputError);
  (void)u2f;
  (void)d2u;
}

TEST(Format, WideningKeepsNaNPayload) {
  EXPECT_EQ(widen_exact(kBinary16, 0x7FFF, kBinary32), 0x7FFFE000u);  // NVIDIA fp16 canonical NaN
  EXPECT_EQ(widen_exact(kBinary16, 0xFE00, kBinary32), 0xFFC00000u);
  EXPECT_EQ(widen_exact(kBinary16, 0x3C00, kBinary32), 0x3F800000u);
  EXPECT_EQ(widen_exact(kBinary16, 0x0001, kBinary32), 0x33800000u);  // 2^-24
  EXPECT_EQ(widen_exact(kBinary32, 0x7F800001, kBinary64), 0x7FF0000020000000ull);
}


// The OCP MX element formats (OCP Microscaling Formats v1.0, section 5.3; ../shared/spec/
// block-scaled.md): every pattern a number (no Inf, no NaN), subnormals, the value tables of
// the spec.
TEST(FormatMx, E2M1IsTheSpecTable) {
  // OCP MX v1.0 Table 5 (FP4 E2M1): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives
  const char* want[16] = {"0", "0.5", "1", "1.5", "2", "3", "4", "6",
                          "-0", "-0.5", "-1", "-1.5", "-2", "-3", "-4", "-6"};
  for (uint64_t x = 0; x < 16; ++x) {
    EXPECT_EQ(to_decimal(kE2M1, x), want[x]) << x;
    EXPECT_EQ(px(kE2M1, want[x]), x) << want[x];
  }
  EXPECT_EQ(kE2M1.width(), 4);
  EXPECT_EQ(decode(kE2M1, 0x1).cls, Class::Subnormal);
}

TEST(FormatMx, Fp6RangesAndNoSpecials) {
  // E3M2: bias 3, largest 28 = 1.75 * 2^4, smallest subnormal 0.0625 = 2^-4
  EXPECT_EQ(kE3M2.width(), 6);
  EXPECT_EQ(kE3M2.max_finite_bits(), 0x1Fu);
  EXPECT_EQ(to_decimal(kE3M2, 0x1F), "28");
  EXPECT_EQ(to_decimal(kE3M2, 0x01), "0.0625");
  EXPECT_EQ(to_decimal(kE3M2, 0x04), "0.25");  // smallest normal 2^-2
  // E2M3: bias 1, largest 7.5 = 1.875 * 2^2, smallest subnormal 0.125 = 2^-3
  EXPECT_EQ(kE2M3.max_finite_bits(), 0x1Fu);
  EXPECT_EQ(to_decimal(kE2M3, 0x1F), "7.5");
  EXPECT_EQ(to_decimal(kE2M3, 0x01), "0.125");
  EXPECT_EQ(to_decimal(kE2M3, 0x3F), "-7.5");
  for (const Format* f : {&kE3M2, &kE2M3, &kE2M1}) {
    EXPECT_FALSE(f->has_inf());
    EXPECT_FALSE(f->has_nan());
    for (uint64_t x = 0; x < (uint64_t{1} << f->width()); ++x) EXPECT_TRUE(decode(*f, x).is_finite()) << f->name << " " << x;
  }
}

TEST(FormatMx, RoundingSaturatesAndSpecialsAreRefused) {
  // beyond the largest finite: the largest finite (OCP MX saturating conversion), in every mode
  for (Rounding m : {Rounding::RNE, Rounding::RTZ, Rounding::RU, Rounding::RNA}) {
    EXPECT_EQ(round_to_format(kE2M1, Exact{false, 7, 0, false}, RoundOpts{m, true, -1, true}), 0x7u) << to_string(m);
    EXPECT_EQ(round_to_format(kE2M1, Exact{true, 100, 0, false}, RoundOpts{m, true, -1, true}), 0xFu) << to_string(m);
  }
  // to nearest even between the table's values: 5 -> 4 (tie to even mantissa), 0.25 -> 0
  EXPECT_EQ(round_to_format(kE2M1, Exact{false, 5, 0, false}, RoundOpts{}), 0x6u);
  EXPECT_EQ(round_to_format(kE2M1, Exact{false, 1, -2, false}, RoundOpts{}), 0x0u);
  EXPECT_EQ(round_to_format(kE2M1, Exact{false, 3, -2, false}, RoundOpts{}), 0x2u);  // 0.75 -> 1
  bool inexact = false;
  EXPECT_EQ(parse_operand(kE2M1, "5", &inexact), 0x6u);
  EXPECT_TRUE(inexact);
  EXPECT_THROW(parse_operand(kE2M1, "nan"), std::invalid_argument);
  EXPECT_THROW(parse_operand(kE3M2, "inf"), std::invalid_argument);
  EXPECT_THROW(convert(kBinary32, 0x7FC00000u, kE2M3), std::invalid_argument);
  EXPECT_THROW(kE2M1.qnan_bits(false), std::logic_error);
  EXPECT_THROW(parse_operand(kE2M1, "0x10"), std::invalid_argument);  // 5 bits: not an e2m1 pattern
  // widening is exact: every pattern through binary32 and back
  for (const Format* f : {&kE3M2, &kE2M3, &kE2M1})
    for (uint64_t x = 0; x < (uint64_t{1} << f->width()); ++x) {
      const uint64_t w = convert(*f, x, kBinary32);
      EXPECT_EQ(convert(kBinary32, w, *f), x) << f->name << " " << x;
    }
}
