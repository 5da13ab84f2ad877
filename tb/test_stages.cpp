// Unit tests of each datapath stage's edge cases, plus independent-implementation checks of the
// exact adder (host fmaf/fma chains, exact binary64 sums).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/stages.hpp"
#include "matcore/vectors.hpp"
#include "matcore/wide.hpp"

using namespace mc;

namespace {
uint32_t f2u(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
float u2f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
uint64_t d2u(double d) { uint64_t u; std::memcpy(&u, &d, 8); return u; }
uint64_t v(const Format& f, const char* s) { return parse_operand(f, s); }
Product term(const Format& f, const char* s) { return addend(decode(f, v(f, s))); }
}  // namespace

TEST(Bits, ShiftWithSticky) {
  bool st = false;
  EXPECT_EQ(shr_sticky(0b1011, 2, st), 0b10u);
  EXPECT_TRUE(st);
  st = false;
  EXPECT_EQ(shr_sticky(0b1100, 2, st), 0b11u);
  EXPECT_FALSE(st);
  st = false;
  EXPECT_EQ(shr_sticky(1, 128, st), 0u);  // shift >= width
  EXPECT_TRUE(st);
  st = false;
  EXPECT_EQ(shr_sticky(static_cast<u128>(1) << 127, 500, st), 0u);
  EXPECT_TRUE(st);
  EXPECT_EQ(shr_floor(-5, 1), -3);
  EXPECT_EQ(shr_trunc(-5, 1), -2);
  EXPECT_EQ(shr_floor(-1, 200), -1);
  EXPECT_EQ(shr_trunc(-1, 200), 0);
  EXPECT_EQ(to_binary_fixed(-6, 2), "-1.10");
}

TEST(Multiplier, ExactUnnormalisedProduct) {
  const Unpacked a = decode(kBinary16, v(kBinary16, "1.5"));
  const Product p = multiply(a, a, MulCfg{});
  EXPECT_EQ(p.cls, Class::Normal);
  EXPECT_EQ(p.exp, 0);          // 2.25 kept as 10.01 x 2^0, not 1.001 x 2^1
  EXPECT_EQ(p.frac, 20);
  EXPECT_EQ(p.sig, static_cast<u128>(9) << 18);
  // subnormal x subnormal: 2^-24 * 2^-24 = 2^-48 with exponent -28
  const Unpacked s = decode(kBinary16, 1);
  const Product q = multiply(s, s, MulCfg{});
  EXPECT_EQ(q.exp, -28);
  EXPECT_EQ(q.sig, 1u);
}

TEST(Multiplier, SpecialsAndOverflow) {
  const Unpacked inf = decode(kBfloat16, 0x7F80), zero = decode(kBfloat16, 0), one = decode(kBfloat16, 0x3F80);
  EXPECT_TRUE(multiply(inf, zero, MulCfg{}).invalid);
  EXPECT_EQ(multiply(inf, one, MulCfg{}).cls, Class::Inf);
  EXPECT_EQ(multiply(decode(kBfloat16, 0x7FC1), one, MulCfg{}).cls, Class::NaN);
  // 1.5*2^64 * 1.5*2^63 = 2.25*2^127 >= 2^128: overflow on magnitude (section 4.3.2)
  const Unpacked x = decode(kBfloat16, v(kBfloat16, "1.5*2^64"));
  const Unpacked y = decode(kBfloat16, v(kBfloat16, "1.5*2^63"));
  MulCfg ov;
  ov.overflow_exp = 128;
  const Product p = multiply(x, y, ov);
  EXPECT_EQ(p.cls, Class::Inf);
  EXPECT_TRUE(p.overflow);
  EXPECT_EQ(multiply(x, y, MulCfg{}).cls, Class::Normal);  // no overflow without the feature
  // 1.5*2^63 * 1.25*2^64 = 1.875*2^127 < 2^128: no overflow
  const Unpacked z = decode(kBfloat16, v(kBfloat16, "1.25*2^64"));
  EXPECT_EQ(multiply(y, z, ov).cls, Class::Normal);
  // product rounded to binary32 with FTZ (CDNA2): 2^-64 * 2^-63 = 2^-127 flushes
  MulCfg r;
  r.round_out = true;
  r.out = &kBinary32;
  r.sub_out = false;
  const Product t = multiply(decode(kBfloat16, v(kBfloat16, "2^-64")), decode(kBfloat16, v(kBfloat16, "2^-63")), r);
  EXPECT_EQ(t.cls, Class::Zero);
}

TEST(Aligner, MaxExponentAndLimits) {
  Product t[3] = {term(kBinary32, "1"), term(kBinary32, "2^-30"), Product{}};
  EXPECT_EQ(align_exponent(t, 3, kNone), 0);
  Product s[2] = {term(kBinary64, "2^-140"), Product{}};
  EXPECT_EQ(align_exponent(s, 2, -133), -133);  // e_min^lim
  Product z[2] = {Product{}, Product{}};
  EXPECT_EQ(align_exponent(z, 2, -133), kNone);  // zero terms do not take part
}

TEST(Aligner, TruncationAndRoundDown) {
  const Product x = term(kBinary32, "2^-24+2^-26");
  Aligned a = align_term(x, 0, 24, AlignRound::Truncate);
  EXPECT_EQ(a.v, 1);
  EXPECT_TRUE(a.sticky);
  const Product nx = term(kBinary32, "-(2^-24+2^-26)");
  EXPECT_EQ(align_term(nx, 0, 24, AlignRound::Truncate).v, -1);  // toward zero
  EXPECT_EQ(align_term(nx, 0, 24, AlignRound::RD).v, -2);        // floor
  // shift far beyond the width
  const Product tiny = term(kBinary32, "-2^-149");
  a = align_term(tiny, 127, 24, AlignRound::RD);
  EXPECT_EQ(a.v, -1);
  EXPECT_TRUE(a.sticky);
  EXPECT_EQ(align_term(tiny, 127, 24, AlignRound::Truncate).v, 0);
}

TEST(CAligner, BothBranches) {
  CAlignCfg cfg;
  // e_max >= e_c: c = -(2^-24 + 2^-25) shifted to e_max = 0 and rounded down at 24 bits
  Fixed sum{static_cast<i128>(1) << 24, 0, 24};  // S_sum = 1.0
  CAlignOut o = c_align(sum, term(kBinary32, "-(2^-24+2^-25)"), -24, cfg);
  EXPECT_TRUE(o.c_shifted);
  EXPECT_EQ(o.acc.v, (static_cast<i128>(1) << 24) - 2);  // 1 - 2^-23
  // e_c > e_max: S_sum = 2^-24 (units 2^-24 at e_max = -24) + c = 1: sum shifted, RD at 32
  Fixed s2{static_cast<i128>(1) << 24, -24, 24};
  o = c_align(s2, term(kBinary32, "1"), 0, cfg);
  EXPECT_FALSE(o.c_shifted);
  EXPECT_TRUE(o.normalised);
  EXPECT_EQ(o.acc.exp, 0);
  EXPECT_EQ(o.acc.frac, 31);
  EXPECT_EQ(o.acc.v, (static_cast<i128>(1) << 31) + (1 << 7));  // 1 + 2^-24
  // binary8: c more than 25 binades below is dropped
  cfg.c_drop_gap = 25;
  o = c_align(sum, term(kBinary32, "-2^-26"), -26, cfg);
  EXPECT_TRUE(o.c_dropped);
  EXPECT_EQ(o.acc.v, static_cast<i128>(1) << 24);
  o = c_align(sum, term(kBinary32, "-2^-25"), -25, cfg);
  EXPECT_FALSE(o.c_dropped);
  EXPECT_EQ(o.acc.v, (static_cast<i128>(1) << 24) - 1);
}

TEST(Normaliser, SubnormalAware) {
  // 2^-130 at exponent -126 cannot be normalised below -126
  Fixed x{static_cast<i128>(1) << 28, -126, 32};  // 2^-4 * 2^-126
  Fixed n = normalise_rd(x, -126, 31);
  EXPECT_EQ(n.exp, -126);
  EXPECT_EQ(n.v, static_cast<i128>(1) << 27);
  // a normal value is moved to its leading one and rounded down there
  Fixed y{-((static_cast<i128>(1) << 32) + 3), 0, 32};  // -(1 + 3*2^-32), leading one at 2^0
  n = normalise_rd(y, -126, 31);
  EXPECT_EQ(n.exp, 0);
  EXPECT_EQ(n.v, -((static_cast<i128>(1) << 31) + 2));  // floor(-(1+3*2^-32)) at 31 bits
  EXPECT_EQ(normalise_rd(Fixed{0, 5, 10}, -126, 31).v, 0);
}

TEST(Rounder, ZeroSignAndCarryOut) {
  EXPECT_EQ(round_fixed(Fixed{0, 0, 24}, kBinary32, RoundOpts{}, true), 0x80000000u);
  EXPECT_EQ(round_fixed(Fixed{0, 0, 24}, kBinary32, RoundOpts{}, false), 0u);
  // 1.111...1 (25 ones) rounds up and carries out of the top bit: 2.0
  Fixed x{(static_cast<i128>(1) << 25) - 1, 0, 24};
  EXPECT_EQ(round_fixed(x, kBinary32, RoundOpts{}, false), 0x40000000u);
  // subnormal boundary: (2^-126 - 2^-150) rounds to the smallest normal
  Fixed s{(static_cast<i128>(1) << 24) - 1, -126, 24};
  EXPECT_EQ(round_fixed(s, kBinary32, RoundOpts{}, false), 0x00800000u);
  EXPECT_EQ(round_fixed(s, kBinary32, RoundOpts{Rounding::RTZ, true, -1, false}, false), 0x007FFFFFu);
}

TEST(ExactAdder, CancellationAndWideRange) {
  Product t[3] = {term(kBinary64, "2^1000"), term(kBinary64, "-2^1000"), term(kBinary64, "2^-1074")};
  EXPECT_EQ(exact_sum_round(t, 3, kBinary64, RoundOpts{}, false), 1u);  // 2^-1074 survives
  Product u[2] = {term(kBinary32, "1"), term(kBinary32, "-1")};
  EXPECT_EQ(exact_sum_round(u, 2, kBinary32, RoundOpts{}, false), 0u);  // +0
  EXPECT_EQ(exact_sum_round(u, 2, kBinary32, RoundOpts{Rounding::RD, true, -1, false}, true), 0x80000000u);
}

TEST(Wide, MatchesInt128OnSmallRanges) {
  std::mt19937_64 rng(7);
  for (int it = 0; it < 20000; ++it) {
    Wide w;
    w.reset(-40, 100);
    i128 ref = 0;
    for (int j = 0; j < 6; ++j) {
      const u128 mag = rng() >> (rng() % 64);
      const int e = -40 + static_cast<int>(rng() % 30);
      const bool neg = rng() & 1;
      w.add(neg, mag, e);
      const i128 term = static_cast<i128>(mag) << (e + 40);
      ref += neg ? -term : term;
    }
    const Exact x = w.to_exact();
    const u128 m = ref < 0 ? static_cast<u128>(-ref) : static_cast<u128>(ref);
    ASSERT_EQ(x.sign, ref < 0);
    ASSERT_FALSE(x.sticky);
    const int sh = x.lsb_exp + 40;
    ASSERT_EQ(x.mag << sh, m);
  }
}

TEST(IndependentCheck, Cdna1Fp32IsAnFmaChain) {
  // SFMA: d = fl(fl(fl(c + p1) + p2) ...) with exact products == fmaf chain on the host.
  const Datapath dp = find_preset("mi100", "fp32");
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> ex(-80, 60);
  for (int it = 0; it < 50000; ++it) {
    uint64_t a[4], b[4];
    float acc = std::ldexp(static_cast<float>(rng() % 2000) - 1000.0f, ex(rng));
    const uint32_t c = f2u(acc);
    for (int k = 0; k < 4; ++k) {
      const float fa = std::ldexp(1.0f + static_cast<float>(rng() & 0x7FFFFF) * 0x1p-23f, ex(rng)) * ((rng() & 1) ? -1.f : 1.f);
      const float fb = std::ldexp(1.0f + static_cast<float>(rng() & 0x7FFFFF) * 0x1p-23f, ex(rng));
      a[k] = f2u(fa);
      b[k] = f2u(fb);
      acc = std::fmaf(fa, fb, acc);
    }
    ASSERT_EQ(dot(dp, a, b, 4, c), f2u(acc)) << it;
  }
}

TEST(IndependentCheck, Cdna2Fp64IsAnFmaChain) {
  const Datapath dp = find_preset("mi250", "fp64");
  std::mt19937_64 rng(5);
  for (int it = 0; it < 50000; ++it) {
    uint64_t a[4], b[4];
    double acc = std::ldexp(static_cast<double>(rng() % 100000) - 50000.0, static_cast<int>(rng() % 2000) - 1000);
    const uint64_t c = d2u(acc);
    for (int k = 0; k < 4; ++k) {
      const double fa = std::ldexp(1.0 + static_cast<double>(rng() >> 12) * 0x1p-52, static_cast<int>(rng() % 1200) - 600);
      const double fb = std::ldexp(1.0 + static_cast<double>(rng() >> 12) * 0x1p-52, static_cast<int>(rng() % 1200) - 600) * ((rng() & 1) ? -1 : 1);
      a[k] = d2u(fa);
      b[k] = d2u(fb);
      acc = std::fma(fa, fb, acc);
    }
    ASSERT_EQ(dot(dp, a, b, 4, c), d2u(acc)) << it;
  }
}

TEST(IndependentCheck, Cdna1Fp16IsCorrectlyRoundedSum) {
  // CDNA1 fp16: c + 4 products exact, one RNE. With exponents in a narrow window the exact sum
  // fits binary64, and the host's double->float conversion is a correct RNE.
  const Datapath dp = find_preset("mi100", "fp16");
  std::mt19937 rng(11);
  for (int it = 0; it < 100000; ++it) {
    uint64_t a[4], b[4];
    const int cexp = static_cast<int>(rng() % 12) - 6;
    const float cf = std::ldexp(1.0f + static_cast<float>(rng() & 0x7FFFFF) * 0x1p-23f, cexp) * ((rng() & 1) ? -1.f : 1.f);
    double exact = cf;
    for (int k = 0; k < 4; ++k) {
      const uint64_t ea = 12 + rng() % 7, eb = 12 + rng() % 7;
      a[k] = (static_cast<uint64_t>(rng() & 1) << 15) | (ea << 10) | (rng() & 0x3FF);
      b[k] = (eb << 10) | (rng() & 0x3FF);
      const double da = std::ldexp(1.0 + (a[k] & 0x3FF) / 1024.0, static_cast<int>(ea) - 15) * ((a[k] >> 15) ? -1 : 1);
      const double db = std::ldexp(1.0 + (b[k] & 0x3FF) / 1024.0, static_cast<int>(eb) - 15);
      exact += da * db;  // every partial sum is exact in binary64 within this window
    }
    ASSERT_EQ(dot(dp, a, b, 4, f2u(cf)), f2u(static_cast<float>(exact))) << it;
  }
  (void)u2f;
}
