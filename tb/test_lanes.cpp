// The lane kernels' primitives (core/src/engines/lanes/simd.hpp, terms.hpp, wide.hpp) against the stage
// functions they stand for (format.hpp decode and round_to_format, stages.hpp exact_sum_round)
// and against 128-bit host integers, lane by lane; and the lane kernels' strategy table
// (fast_lower.cpp) on the presets. The primitives are compiled here in a namespace of their own
// (MC_LANES_NS=unit) with this file's flags: the portable two-lane vectors. Every instruction
// set's build of the kernels is compared with the reference as a whole by tb/test_fast.cpp and
// make bench-check.
#define MC_LANES_NS unit
#include "src/engines/lanes/wide.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "matcore/fast.hpp"
#include "matcore/format.hpp"
#include "matcore/presets.hpp"
#include "matcore/stages.hpp"
#include "src/engines/fast_impl.hpp"
#include "src/io/hex.hpp"

using namespace mc;
namespace ln = mc::lanes::unit;

namespace {

std::string hex(uint64_t x) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(x));
  return b;
}

/// The lane formats of the test: every format the registry has.
std::vector<const Format*> formats() {
  std::vector<const Format*> v;
  for (const std::string& n : format_names()) v.push_back(&format_by_name(n));
  return v;
}

/// Patterns of f: all of them up to 16 bits, else 4096 random ones with the edges.
std::vector<uint64_t> patterns(const Format& f, std::mt19937_64& rng) {
  std::vector<uint64_t> v;
  const int w = f.width();
  const uint64_t mask = w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  if (w <= 16) {
    for (uint64_t x = 0; x <= mask; ++x) v.push_back(x);
    return v;
  }
  for (uint64_t e : {uint64_t{0}, uint64_t{1}, mask, mask >> 1, uint64_t{1} << (w - 1)}) v.push_back(e);
  while (v.size() < 4096) v.push_back(rng() & mask);
  return v;
}

TEST(LanePrimitives, DecodeIsDecodeOperand) {
  std::mt19937_64 rng(1);
  size_t n = 0;
  for (const Format* f : formats()) {
    for (bool sub : {true, false}) {
      const lanes::LaneFmt lf = fastk::lane_fmt(*f, sub);
      const std::vector<uint64_t> pats = patterns(*f, rng);
      for (size_t i = 0; i + ln::VL <= pats.size(); i += ln::VL) {
        ln::VU x{};
        for (int l = 0; l < ln::VL; ++l) x[l] = pats[i + l];
        const ln::Dec d = ln::dec(lf, x);
        for (int l = 0; l < ln::VL; ++l) {
          const Unpacked u = decode_operand(*f, pats[i + l], sub);
          const bool special = u.cls == Class::NaN || u.cls == Class::Inf;
          ASSERT_EQ(d.special[l] != 0, special) << f->name << " " << hex(pats[i + l]);
          if (special) continue;
          ASSERT_EQ(d.sign[l], u.sign ? 1u : 0u) << f->name << " " << hex(pats[i + l]);
          ASSERT_EQ(d.sig[l], u.is_zero() ? 0 : u.sig) << f->name << " sub=" << sub << " " << hex(pats[i + l]);
          if (!u.is_zero()) {
            ASSERT_EQ(d.exp[l], u.exp - (u.mbits - f->mbits)) << f->name << " " << hex(pats[i + l]);
          }
          ++n;
        }
      }
    }
  }
  EXPECT_GT(n, 300000u);
}

TEST(LanePrimitives, ShiftsAndCountsAsTheInstructions) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 20000; ++i) {
    ln::VU x{};
    ln::VI n{};
    for (int l = 0; l < ln::VL; ++l) {
      x[l] = rng() >> (rng() % 64);
      n[l] = static_cast<int64_t>(rng() % 140) - 6;  // negative and over 63: zero
    }
    const ln::VU r = ln::srl(x, n), s = ln::sll(x, n);
    const ln::VI a = ln::sra(ln::S(x), ln::vmax(n, ln::VI{})), z = ln::clz(x);
    for (int l = 0; l < ln::VL; ++l) {
      const bool out = n[l] < 0 || n[l] > 63;
      ASSERT_EQ(r[l], out ? 0 : x[l] >> n[l]) << hex(x[l]) << " >> " << n[l];
      ASSERT_EQ(s[l], out ? 0 : x[l] << n[l]) << hex(x[l]) << " << " << n[l];
      const int64_t sx = static_cast<int64_t>(x[l]);
      ASSERT_EQ(a[l], n[l] > 63 ? (sx < 0 ? -1 : 0) : sx >> std::max<int64_t>(n[l], 0)) << hex(x[l]);
      ASSERT_EQ(z[l], x[l] ? __builtin_clzll(x[l]) : 64) << hex(x[l]);
    }
  }
}

/// round_mag on every lane is round_to_format, for every format, rounding mode, subnormal rule,
/// overflow rule and reduced precision, on magnitudes of 1 to 63 bits around the format's range.
TEST(LanePrimitives, RoundIsRoundToFormat) {
  std::mt19937_64 rng(3);
  size_t n = 0;
  for (const Format* f : formats()) {
    for (Rounding mode : {Rounding::RNE, Rounding::RNA, Rounding::RTZ, Rounding::RD, Rounding::RU})
      for (bool subn : {true, false})
        for (bool ovf_inf : {false, true})
          for (int prec : {-1, f->mbits > 4 ? f->mbits - 3 : -1}) {
            const RoundOpts o{mode, subn, prec, ovf_inf};
            fastk::RoundK R;
            R.build(*f, o);
            const lanes::LaneRound& LR = R;
            for (int i = 0; i < 400; ++i) {
              ln::VU sign{}, mag{}, st{};
              ln::VI lsb{};
              for (int l = 0; l < ln::VL; ++l) {
                sign[l] = rng() & 1;
                mag[l] = (rng() >> (rng() % 64)) | 1;
                const int msb = 63 - __builtin_clzll(mag[l]);
                // the value's top bit from below the subnormals to beyond the largest finite
                const int top = f->emin() - f->mbits - 3 + static_cast<int>(rng() % (f->emax() - f->emin() + f->mbits + 8));
                lsb[l] = top - msb;
                // a sticky only below bits the rounder drops (the kernels' contract)
                st[l] = msb > 56 ? rng() & 1 : 0;
              }
              const ln::VU r = ln::round_mag(LR, sign, mag, lsb, st);
              for (int l = 0; l < ln::VL; ++l) {
                const uint64_t want =
                    round_to_format(*f, Exact{sign[l] != 0, mag[l], static_cast<int>(lsb[l]), st[l] != 0}, o);
                ASSERT_EQ(r[l], want) << f->name << " " << to_string(mode) << " subn=" << subn << " ovf_inf=" << ovf_inf
                                      << " prec=" << prec << ": " << (sign[l] ? "-" : "+") << hex(mag[l]) << " * 2^"
                                      << lsb[l] << (st[l] ? " + sticky" : "");
                ++n;
              }
            }
          }
  }
  EXPECT_GT(n, 100000u);
}

/// add2 (the two-term sum rounded once, every pairwise level, FMA step and c_final) is the exact
/// adder's exact_sum_round of the same two terms.
TEST(LaneTerms, Add2IsTheExactSumRounded) {
  std::mt19937_64 rng(4);
  size_t n = 0;
  for (const char* fn : {"binary32", "binary16", "bf16", "e4m3", "e5m2"}) {
    const Format& f = format_by_name(fn);
    for (Rounding mode : {Rounding::RNE, Rounding::RTZ, Rounding::RD, Rounding::RU})
      for (bool subn : {true, false}) {
        const RoundOpts o{mode, subn, -1, false};
        fastk::RoundK R;
        R.build(f, o);
        for (int i = 0; i < 3000; ++i) {
          ln::Term2 x{}, y{};
          for (int l = 0; l < ln::VL; ++l) {
            x.sig[l] = rng() >> (16 + rng() % 48);
            y.sig[l] = i % 7 == 0 ? x.sig[l] : rng() >> (16 + rng() % 48);  // cancellation
            x.sign[l] = rng() & 1;
            y.sign[l] = rng() & 1;
            const int span = f.emax() - f.emin() + 60;
            x.lsb[l] = f.emin() - 50 + static_cast<int>(rng() % span);
            y.lsb[l] = i % 3 == 0 ? x.lsb[l] + static_cast<int>(rng() % 9) - 4
                                  : f.emin() - 50 + static_cast<int>(rng() % span);
          }
          ln::VI fb{};
          const ln::VU r = ln::add2(R, x, y, fb);
          for (int l = 0; l < ln::VL; ++l) {
            ASSERT_EQ(fb[l], 0);
            Product t[2];
            int k = 0;
            for (const ln::Term2* q : {&x, &y})
              if (q->sig[l] != 0)
                t[k++] = Product{Class::Normal, q->sign[l] != 0, false, false, static_cast<int>(q->lsb[l]), 0, q->sig[l]};
            // a zero sum: the sign of two zeros of the same sign, else RD's -0, +0 otherwise
            const bool zs = (x.sign[l] && y.sign[l]) || ((x.sign[l] != y.sign[l] || k > 0) && mode == Rounding::RD);
            const uint64_t want = k == 0 ? zero_bits(f, x.sign[l] && y.sign[l]) : exact_sum_round(t, k, f, o, zs);
            ASSERT_EQ(r[l], want) << fn << " " << to_string(mode) << " subn=" << subn << ": "
                                  << (x.sign[l] ? "-" : "+") << hex(x.sig[l]) << "*2^" << x.lsb[l] << " "
                                  << (y.sign[l] ? "-" : "+") << hex(y.sig[l]) << "*2^" << y.lsb[l];
            ++n;
          }
        }
      }
  }
  EXPECT_GT(n, 200000u);
}

/// The two-limb arithmetic of the exact adder and the binary64 chains against unsigned __int128.
TEST(LaneWide, TwoLimbArithmeticIsInt128) {
  std::mt19937_64 rng(5);
  auto w = [](const ln::W2& x, int l) {
    return static_cast<__int128>((static_cast<unsigned __int128>(x.hi[l]) << 64) | x.lo[l]);
  };
  for (int i = 0; i < 50000; ++i) {
    ln::W2 a{}, b{};
    ln::VU s53a{}, s53b{}, sig{};
    ln::VI off{}, sh{};
    for (int l = 0; l < ln::VL; ++l) {
      a.lo[l] = rng();
      a.hi[l] = rng() >> (rng() % 64);
      a.hi[l] = rng() & 1 ? ~a.hi[l] : a.hi[l];
      b.lo[l] = rng();
      b.hi[l] = rng() >> (rng() % 64);
      s53a[l] = rng() >> 11;
      s53b[l] = rng() >> 11;
      sig[l] = rng() >> (rng() % 64);
      const int msb = sig[l] ? 63 - __builtin_clzll(sig[l]) : 0;
      off[l] = static_cast<int64_t>(rng() % (128 - msb));
      sh[l] = static_cast<int64_t>(rng() % 140);
    }
    const ln::W2 sum = ln::w_add(a, b), dif = ln::w_sub(a, b), shl = ln::w_shl(sig, off), p = ln::mul53(s53a, s53b);
    ln::VI st{};
    const ln::W2 sra = ln::w_sra(a, sh, st);
    for (int l = 0; l < ln::VL; ++l) {
      const __int128 A = w(a, l), B = w(b, l);
      ASSERT_EQ(w(sum, l), static_cast<__int128>(static_cast<unsigned __int128>(A) + static_cast<unsigned __int128>(B)));
      ASSERT_EQ(w(dif, l), static_cast<__int128>(static_cast<unsigned __int128>(A) - static_cast<unsigned __int128>(B)));
      ASSERT_EQ(w(shl, l), static_cast<__int128>(static_cast<unsigned __int128>(sig[l]) << off[l])) << off[l];
      ASSERT_EQ(static_cast<unsigned __int128>(w(p, l)), static_cast<unsigned __int128>(s53a[l]) * s53b[l]);
      const int s = static_cast<int>(sh[l]);
      const __int128 q = s >= 127 ? (A < 0 ? -1 : 0) : A >> s;
      ASSERT_EQ(w(sra, l), q) << "shift " << s;
      const bool dropped = s >= 128 ? A != 0 : (s > 0 && (static_cast<unsigned __int128>(A) << (128 - s)) != 0);
      ASSERT_EQ(st[l] != 0, dropped) << "shift " << s;
    }
  }
}

/// The strategy table chooses a lane kernel for every preset the lanes take, each named, and the
/// presets' structures reach the families they should.
TEST(LaneStrategy, PresetsReachTheirFamilies) {
  std::set<std::string> seen;
  for (const Datapath& p : all_presets()) {
    const FastDot fd(p);
    const std::string k = fd.lane_kernel();
    if (std::string(fd.lanes()) == "none") {
      EXPECT_EQ(k, "none") << p.arch << " " << p.type;
      continue;
    }
    EXPECT_NE(k, "?") << p.arch << " " << p.type;
    seen.insert(k);
    const std::string fam = k.substr(0, k.find('/'));
    switch (p.adder) {
      case AdderKind::Fused: EXPECT_EQ(fam, "fused") << p.arch << " " << p.type; break;
      case AdderKind::Pairwise: EXPECT_TRUE(fam == "pairwise" || fam == "fma") << p.arch << " " << p.type; break;
      case AdderKind::Exact: EXPECT_TRUE(fam == "exact" || fam == "fma") << p.arch << " " << p.type; break;
    }
  }
  EXPECT_GE(seen.size(), 6u);
  EXPECT_STREQ(FastDot(find_preset("mi300x", "fp16")).lane_kernel(), "fused/trunc-late");
  EXPECT_STREQ(FastDot(find_preset("a100", "fp16")).lane_kernel(), "fused/trunc");
  EXPECT_STREQ(FastDot(find_preset("mi250", "fp16")).lane_kernel(), "pairwise/bits");
  EXPECT_STREQ(FastDot(find_preset("mi100", "fp16")).lane_kernel(), "exact/sorted");
  EXPECT_STREQ(FastDot(find_preset("mi250", "fp32")).lane_kernel(), "fma/b32");
  EXPECT_STREQ(FastDot(find_preset("mi250", "fp64")).lane_kernel(), "fma/b64");
}

}  // namespace

// The grid engine's AVX2 parser of 4-digit values (core/src/io/hex_simd.cpp) against the values
// written: K = 1 .. 40 (the last six tokens parsed twice where K is not a multiple of six), both
// letter cases; then every byte of a line replaced by something that breaks its form (a
// non-hex character in a token, a space or a tab or a digit in place of a separator, the
// '\n' moved): -1, never a count with other values. Without AVX2 it parses nothing (0).
TEST(HexSimd, FourDigitLinesEqualTheirValuesAndRefuseEveryBrokenByte) {
  std::mt19937 rng(5);
  const bool simd = mc::hex::hex4_prefix("0000 0000 0000 0000 0000 0000\n ", 6, std::vector<uint64_t>(6).data()) == 6;
#if defined(__x86_64__)
  EXPECT_EQ(simd, __builtin_cpu_supports("avx2") != 0);
#endif
  for (int K = 1; K <= 40; ++K) {
    std::vector<uint64_t> want(K), got(K + 1, 0xdead);
    std::string line;
    for (int k = 0; k < K; ++k) {
      want[k] = rng() & 0xFFFF;
      char t[8];
      std::snprintf(t, sizeof t, rng() & 1 ? "%04x" : "%04X", static_cast<unsigned>(want[k]));
      line += t;
      line += k + 1 < K ? ' ' : '\n';
    }
    const std::string buf = line + std::string(16, '\0');
    const int n = mc::hex::hex4_prefix(buf.data(), K, got.data());
    ASSERT_EQ(n, simd && K >= 6 ? K : 0) << K;
    for (int k = 0; k < n; ++k) ASSERT_EQ(got[k], want[k]) << "K=" << K << " value " << k;
    EXPECT_EQ(got[K], 0xdeadu) << K;  // nothing written past the line's values
    if (n == 0) continue;
    for (size_t i = 0; i < line.size(); ++i) {
      const bool sep = i % 5 == 4;
      for (char bad : sep ? std::string("\t0x\n ") : std::string("g/:@G`\n ")) {
        if (bad == line[i] || (i + 1 == line.size() && bad == '\n')) continue;
        std::string b = buf;
        b[i] = bad;
        EXPECT_EQ(mc::hex::hex4_prefix(b.data(), K, got.data()), -1) << "K=" << K << " byte " << i << " '" << bad << "'";
      }
    }
  }
}
