// Section 5: the sampling strategies, the Bayesian bound (Table 2 of the paper) and the
// determinism of sample files whatever the thread count.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "temp_dir.hpp"
#include "matcore/mt19937.hpp"
#include "matcore/presets.hpp"
#include "matcore/sample.hpp"
#include "matcore/stats.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"

using namespace mc;

namespace {
std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
double rel(double a, double b) { return std::fabs(a - b) / b; }
/// n samples of the preset's type (its k, normal ranges, seed 0) written to TempDir()/name.
std::string sampled(const Datapath& dp, uint64_t n, const std::string& name) {
  SampleSpec s = sample_spec_for(dp);
  s.N = n;
  const std::string d = mc_test::temp_dir() + "/" + name;
  write_samples(s, d, 2);
  return d;
}
}  // namespace

TEST(Bound, ReproducesTable2) {
  // Table 2 (eps = 1e-6): m = 0
  EXPECT_LT(rel(mismatch_upper_bound(1000000, 0), 1.38e-5), 5e-3);
  EXPECT_LT(rel(mismatch_upper_bound(2000000, 0), 6.91e-6), 5e-3);
  EXPECT_LT(rel(mismatch_upper_bound(10000000, 0), 1.38e-6), 5e-3);
  EXPECT_LT(rel(mismatch_upper_bound(20000000, 0), 6.91e-7), 5e-3);
  EXPECT_LT(rel(mismatch_upper_bound(100000, 0), 1.38e-4), 5e-3);  // section 5.4 text
  // m > 0 from the Beta(m+1, N-m+1) posterior. For m = 1 the posterior tail has the closed
  // form P(p > x) = (1-x)^N (1 + N x) (an independent check of the incomplete beta); the exact
  // bounds are 1.669e-5 (N = 10^6) and 1.335e-5 (N = 1.25*10^6), which Table 2 prints as
  // 1.69e-5 and 1.35e-5 (within 1.3%: see docs/decisions.md).
  for (const uint64_t n : {uint64_t{1000000}, uint64_t{1250000}}) {
    const double x = mismatch_upper_bound(n, 1);
    const double nd = static_cast<double>(n);
    EXPECT_NEAR(std::exp(nd * std::log1p(-x)) * (1 + nd * x), 1e-6, 1e-9) << n;
  }
  EXPECT_LT(rel(mismatch_upper_bound(1000000, 1), 1.669e-5), 1e-3);
  EXPECT_LT(rel(mismatch_upper_bound(1000000, 1), 1.69e-5), 0.015);
  EXPECT_LT(rel(mismatch_upper_bound(1250000, 1), 1.35e-5), 0.015);
  // monotone in m and the posterior CDF at the bound is 1 - eps
  const double p5 = mismatch_upper_bound(100000, 5);
  EXPECT_GT(p5, mismatch_upper_bound(100000, 1));
  EXPECT_NEAR(incomplete_beta(6, 100000 - 5 + 1, p5), 1 - 1e-6, 1e-9);
  EXPECT_EQ(mismatch_upper_bound(10, 10), 1.0);
}

TEST(Sampling, FastDrawEqualsGeneralRounder) {
  std::mt19937 g(3);
  for (const Format* f : {&kBinary16, &kBfloat16, &kTf32, &kE4M3, &kE5M2, &kE4M3Fnuz, &kE5M2Fnuz, &kBinary32}) {
    for (int i = 0; i < 200000; ++i) {
      const int e = f->emin() - f->mbits - 2 + static_cast<int>(g() % (f->emax() - f->emin() + f->mbits + 5));
      const uint64_t u = g();
      ASSERT_EQ(draw_expmant(*f, e, u, 32), draw_expmant_exact(*f, e, u, 32)) << f->name << " e=" << e;
    }
  }
}

TEST(Sampling, RangesOfThePaper) {
  SampleSpec s;
  s.a_fmt = s.b_fmt = kBinary16;
  default_ranges(s, false);
  EXPECT_EQ(s.ea_lo, -14);
  EXPECT_EQ(s.ea_hi, 15);
  EXPECT_EQ(s.ec_lo, -126);
  EXPECT_EQ(s.ec_hi, 127);
  default_ranges(s, true);
  EXPECT_EQ(s.ea_lo, -24);
  EXPECT_EQ(s.ea_hi, -14);
  EXPECT_EQ(s.ec_lo, -149);
  EXPECT_EQ(s.ec_hi, -126);
  s.a_fmt = s.b_fmt = kBfloat16;
  default_ranges(s, false);
  EXPECT_EQ(s.ea_lo, -126);
  EXPECT_EQ(s.ea_hi, 63);
  default_ranges(s, true);
  EXPECT_EQ(s.ea_lo, -133);
  s.a_fmt = s.b_fmt = kTf32;
  default_ranges(s, true);
  EXPECT_EQ(s.ea_lo, -136);
  s.a_fmt = s.b_fmt = kE4M3Fnuz;
  default_ranges(s, false);
  EXPECT_EQ(s.ea_lo, -7);
  EXPECT_EQ(s.ea_hi, 7);
  default_ranges(s, true);
  EXPECT_EQ(s.ea_lo, -10);
  s.a_fmt = s.b_fmt = kE5M2Fnuz;
  default_ranges(s, false);
  EXPECT_EQ(s.ea_lo, -15);
  EXPECT_EQ(s.ea_hi, 15);
  default_ranges(s, true);
  EXPECT_EQ(s.ea_lo, -17);
}

TEST(Sampling, DeterministicWhateverTheThreadCount) {
  SampleSpec s;
  s.K = 16;
  s.N = 70000;  // more than two chunks
  default_ranges(s, false);
  const std::string d1 = mc_test::temp_dir() + "/s1", d2 = mc_test::temp_dir() + "/s2";
  write_samples(s, d1, 1);
  write_samples(s, d2, 3);
  for (const char* f : {"/a.txt", "/b.txt", "/c.txt"}) EXPECT_EQ(slurp(d1 + f), slurp(d2 + f)) << f;
  s.seed = 1;
  write_samples(s, d2, 2);
  EXPECT_NE(slurp(d1 + "/a.txt"), slurp(d2 + "/a.txt"));
}

TEST(Sampling, ExponentsAndValuesStayInRange) {
  SampleSpec s;
  s.a_fmt = kE4M3Fnuz;
  s.b_fmt = kE5M2Fnuz;
  s.K = 32;
  s.N = 3000;
  default_ranges(s, false);
  const std::string d = mc_test::temp_dir() + "/r";
  write_samples(s, d, 2);
  const AbFile a = read_ab_file(d + "/a.txt", 32, kE4M3Fnuz);
  EXPECT_EQ(a.native_bits, 8);  // written as the fp8 patterns themselves (2 hex digits)
  int seen_hi = -1000, seen_lo = 1000;
  for (uint64_t n : a.v) {
    ASSERT_LT(n, 256u);
    const Unpacked u = decode(kE4M3Fnuz, n);
    if (u.cls == Class::Normal) { seen_hi = std::max(seen_hi, u.exp); seen_lo = std::min(seen_lo, u.exp); }
  }
  EXPECT_LE(seen_hi, 8);  // s*2^e with |s| < 2 can round up into 2^(e+1)
  EXPECT_GE(seen_lo, -7);
  EXPECT_EQ(read_cd_file(d + "/c.txt", 32).size(), 3000u);
}

TEST(Sampling, BitSamplingNeverDrawsInfOrNaN) {
  for (const Format* f : {&kE5M2, &kE4M3, &kE4M3Fnuz, &kBinary16}) {
    SampleSpec s;
    s.a_fmt = s.b_fmt = *f;
    s.K = 8;
    s.N = 4000;
    s.strategy = Strategy::Bits;
    const std::string d = mc_test::temp_dir() + "/bits_" + f->name;
    write_samples(s, d + "n", 2);
    s.native = false;  // widened to binary32, as in the hwdata files
    write_samples(s, d, 2);
    const AbFile a = read_ab_file(d + "/a.txt", 8, *f);
    EXPECT_EQ(a.native_bits, 0);
    // the same draws written in the format itself: the same operands
    const AbFile an = read_ab_file(d + "n/a.txt", 8, *f);
    EXPECT_EQ(an.native_bits, f->width());
    ASSERT_EQ(an.v.size(), a.v.size());
    for (size_t i = 0; i < a.v.size(); ++i)
      ASSERT_EQ(ab_operand(*f, Rounding::RNE, an, i, "n"), ab_operand(*f, Rounding::RNE, a, i, "w")) << i;
    size_t neg = 0, sub = 0;
    for (uint64_t v : a.v) {
      const Unpacked u = decode(kBinary32, v);
      ASSERT_TRUE(u.cls != Class::Inf && u.cls != Class::NaN) << f->name;
      neg += u.sign;
      uint64_t n;
      ASSERT_TRUE(ingest_exact(*f, Rounding::RNE, v, 32, &n));
      sub += decode(*f, n).cls == Class::Subnormal;
    }
    EXPECT_GT(neg, a.v.size() / 3);  // fair sign bit
    EXPECT_GT(sub, 0u);              // subnormal patterns are drawn too
    for (uint64_t c : read_cd_file(d + "/c.txt", 32)) ASSERT_NE((c >> 23) & 0xFF, 0xFFu);
  }
}

TEST(Sampling, ModelRoundTripThroughFiles) {
  // sample -> the model writes d (stand-in device) -> validate: zero mismatches; one corrupted
  // d line gives exactly one mismatch at that line.
  const Datapath dp = find_preset("mi300x", "e4m3fnuz,e5m2fnuz");
  const std::string d = sampled(dp, 5000, "rt");
  stream_files(dp, d + "/a.txt", d + "/b.txt", d + "/c.txt", "", d + "/d.txt", 0, false, 2, 0, false);
  StreamResult r = validate_files(dp, d + "/a.txt", d + "/b.txt", d + "/c.txt", d + "/d.txt");
  EXPECT_EQ(r.n, 5000u);
  EXPECT_EQ(r.mismatches, 0u);
  std::vector<uint64_t> dv = read_cd_file(d + "/d.txt", 32);
  dv[1234] ^= 1;
  write_cd_file(d + "/d2.txt", dv, 32);
  r = validate_files(dp, d + "/a.txt", d + "/b.txt", d + "/c.txt", d + "/d2.txt");
  ASSERT_EQ(r.mismatches, 1u);
  EXPECT_EQ(r.first[0].index, 1234u);
  EXPECT_EQ(r.first[0].line, 1236u);  // one header line in the a file
}

// ------------------------------------------------------------------------------------------
// The random stream and the files are those of the definition, checked against independent
// implementations: std::mt19937 itself, the general 128-bit rounder, r % span.

TEST(Sampling, BlockMersenneTwisterIsStdMt19937) {
  for (uint32_t seed : {0u, 1u, 5489u, 0xdeadbeefu}) {
    std::mt19937 ref(seed);
    Mt19937 g(seed);
    for (int i = 0; i < 200000; ++i) ASSERT_EQ(g(), ref()) << "seed " << seed << " word " << i;
    std::vector<uint32_t> block(3000);  // generate() continues the same stream
    g.generate(block.data(), block.size());
    for (size_t i = 0; i < block.size(); ++i) ASSERT_EQ(block[i], ref()) << "seed " << seed;
  }
}

namespace {
/// Algorithm 3 written out directly on std::mt19937 (the reference for the sample files).
struct RefDraw {
  std::mt19937 g;
  int rejected = 0;
  explicit RefDraw(uint32_t seed) : g(seed) {}
  int uniform(int lo, int hi) {
    const uint32_t span = static_cast<uint32_t>(hi - lo) + 1u;
    const uint32_t lim = UINT32_MAX - UINT32_MAX % span;
    uint32_t r;
    while ((r = static_cast<uint32_t>(g())) >= lim) ++rejected;
    return lo + static_cast<int>(r % span);
  }
  uint64_t value(const Format& f, int lo, int hi) {
    const int e = uniform(lo, hi);
    if (f.mbits + 1 > 24) {
      const uint64_t a = g() >> 5, b = g() >> 6;
      return draw_expmant_exact(f, e, (a << 26) | b, 53);
    }
    return draw_expmant_exact(f, e, g(), 32);
  }
};
}  // namespace

TEST(Sampling, FilesAreAlgorithm3OnTheStdMt19937Stream) {
  struct Case { const char* arch; const char* type; };
  for (const Case& cs : {Case{"mi300x", "fp16"}, Case{"mi300x", "e4m3fnuz,e5m2fnuz"},
                         Case{"mi300x", "fp64"}, Case{"mi250", "bf16"}, Case{"a100", "tf32"}}) {
    for (bool sub : {false, true}) {  // the normal and the subnormal ranges of section 5.1
      const Datapath dp = find_preset(cs.arch, cs.type);
      SampleSpec s = sample_spec_for(dp, sub);
      s.N = 2500;  // several chunks for the k = 32 types
      s.seed = 7;
      const std::string d = mc_test::temp_dir() + "/alg3_" + std::string(cs.arch) + dp.a_fmt.name +
                            dp.b_fmt.name + (sub ? "_sub" : "");
      write_samples(s, d, 2);
      const AbFile A = read_ab_file(d + "/a.txt", s.K, s.a_fmt), B = read_ab_file(d + "/b.txt", s.K, s.b_fmt);
      const std::vector<uint64_t> C = read_cd_file(d + "/c.txt", stored_width(s.c_fmt));
      ASSERT_EQ(A.samples(), s.N);
      EXPECT_EQ(A.native_bits, native_digits(s.a_fmt) * 4) << cs.type;
      RefDraw ref(7);
      for (uint64_t i = 0; i < s.N; ++i) {
        for (int k = 0; k < s.K; ++k)
          ASSERT_EQ(ab_operand(s.a_fmt, dp.ingest, A, i * s.K + k, "a"), ref.value(s.a_fmt, s.ea_lo, s.ea_hi))
              << cs.type << " sample " << i << " a" << k;
        for (int k = 0; k < s.K; ++k)
          ASSERT_EQ(ab_operand(s.b_fmt, dp.ingest, B, i * s.K + k, "b"), ref.value(s.b_fmt, s.eb_lo, s.eb_hi))
              << cs.type << " sample " << i << " b" << k;
        ASSERT_EQ(C[i], ref.value(s.c_fmt, s.ec_lo, s.ec_hi)) << cs.type << " sample " << i << " c";
      }
    }
  }
}

TEST(Sampling, RejectedExponentDrawsKeepTheStream) {
  // An exponent draw at or above the rejection limit takes one more word from the stream. With
  // a span of 39650 exponents, 1 + (2^32-1) mod 39650 = 39646 of the 2^32 words are rejected:
  // a few times in 660000 draws, so some chunks are drawn value by value.
  SampleSpec s;
  s.K = 16;
  s.N = 20000;
  s.ea_lo = s.eb_lo = s.ec_lo = -19825;
  s.ea_hi = s.eb_hi = s.ec_hi = 19824;
  const std::string d = mc_test::temp_dir() + "/reject";
  write_samples(s, d, 2);
  const AbFile A = read_ab_file(d + "/a.txt", 16, kBinary16), B = read_ab_file(d + "/b.txt", 16, kBinary16);
  const std::vector<uint64_t> C = read_cd_file(d + "/c.txt", 32);
  RefDraw ref(0);
  for (uint64_t i = 0; i < s.N; ++i) {
    for (int k = 0; k < 16; ++k) ASSERT_EQ(A.v[i * 16 + k], ref.value(kBinary16, s.ea_lo, s.ea_hi)) << i;
    for (int k = 0; k < 16; ++k) ASSERT_EQ(B.v[i * 16 + k], ref.value(kBinary16, s.eb_lo, s.eb_hi)) << i;
    ASSERT_EQ(C[i], ref.value(kBinary32, s.ec_lo, s.ec_hi)) << i;
  }
  EXPECT_GT(ref.rejected, 0);
}

TEST(Sampling, NativeAndWidenedFilesValidateAlike) {
  // The same samples written both ways; the fast (fixed-width, mapped) engine and the general
  // engine (forced by a comment line in the middle of the a file) give the same results,
  // mismatch positions included.
  const Datapath dp = find_preset("mi300x", "fp16");
  SampleSpec s = sample_spec_for(dp);
  s.N = 20000;
  const std::string dn = mc_test::temp_dir() + "/nat", dw = mc_test::temp_dir() + "/wid";
  write_samples(s, dn, 2);
  s.native = false;
  write_samples(s, dw, 2);
  const auto body = [&](const std::string& f) { const std::string t = slurp(f); return t.substr(t.find('\n')); };
  EXPECT_EQ(body(dn + "/c.txt"), body(dw + "/c.txt"));  // the header says values=native / widened
  EXPECT_LT(slurp(dn + "/a.txt").size() * 17 / 10, slurp(dw + "/a.txt").size());  // 5 vs 9 bytes a value
  stream_files(dp, dn + "/a.txt", dn + "/b.txt", dn + "/c.txt", "", dn + "/d.txt", 0, false, 2, 0, false);
  stream_files(dp, dw + "/a.txt", dw + "/b.txt", dw + "/c.txt", "", dw + "/d.txt", 0, false, 1, 0, false);
  EXPECT_EQ(slurp(dn + "/d.txt"), slurp(dw + "/d.txt"));
  // d from the in-memory model, sample by sample
  const SampleSet set = load_sample_set(dp, dn + "/a.txt", dn + "/b.txt", dn + "/c.txt", dn + "/d.txt");
  const std::vector<uint64_t> got = run_samples(dp, set, 2);
  EXPECT_TRUE(mismatches(set, got).empty());
  EXPECT_EQ(set.d, read_cd_file(dw + "/d.txt", 32));
  // three wrong d values
  std::vector<uint64_t> dv = set.d;
  for (size_t i : {17u, 9000u, 19999u}) dv[i] ^= 0x10;
  write_cd_file(dn + "/dbad.txt", dv, 32);
  // the general engine: a comment line in the middle of a copy of the a file
  std::string a = slurp(dn + "/a.txt");
  const size_t cut = a.find('\n', a.size() / 2) + 1;
  a.insert(cut, "# a comment in the middle\n");
  std::ofstream(dn + "/a2.txt") << a;
  for (const char* fa : {"/a.txt", "/a2.txt"}) {
    for (unsigned th : {1u, 2u, 3u}) {
      const StreamResult r = validate_files(dp, dn + fa, dn + "/b.txt", dn + "/c.txt", dn + "/dbad.txt", 0,
                                            false, th, 10, false);
      EXPECT_EQ(r.n, 20000u);
      ASSERT_EQ(r.mismatches, 3u) << fa << " threads " << th;
      EXPECT_EQ(r.first[0].index, 17u);
      EXPECT_EQ(r.first[0].line, 19u);  // one header line
      EXPECT_EQ(r.first[1].index, 9000u);
      EXPECT_EQ(r.first[2].index, 19999u);
      EXPECT_EQ(r.first[2].line, std::string(fa) == "/a2.txt" ? 20002u : 20001u);
      EXPECT_EQ(r.first[2].got, set.d[19999]);
      EXPECT_EQ(r.first[2].want, set.d[19999] ^ 0x10);
    }
  }
}

TEST(Sampling, MalformedLinesInLargeFilesNameTheLine) {
  // Files that look fixed-width but are not: the error names the file, line and field.
  const Datapath dp = find_preset("mi300x", "fp16");
  const std::string d = sampled(dp, 5000, "mal");
  const std::string a = slurp(d + "/a.txt");
  auto expect_error = [&](std::string text, const std::string& where) {
    std::ofstream(d + "/x.txt") << text;
    try {
      validate_files(dp, d + "/x.txt", d + "/b.txt", d + "/c.txt", d + "/c.txt", 0, false, 2, 10, false);
      ADD_FAILURE() << "no error for " << where;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
    }
  };
  const size_t line3000 = [&] {  // offset of line 3000 (the header is line 1)
    size_t at = 0;
    for (int i = 1; i < 3000; ++i) at = a.find('\n', at) + 1;
    return at;
  }();
  std::string t = a;
  t[line3000 + 5] = 'g';  // value 2 of line 3000
  expect_error(t, "x.txt:3000: value 2: 'g");
  t = a;
  t.replace(line3000 + 5, 4, "3c000");  // 5 digits: a different line length
  expect_error(t, "x.txt:3000: value 2");
  t = a;
  t.replace(line3000, 4, "7c00");  // +Inf: fine for fp16 ...
  std::ofstream(d + "/inf.txt") << t;
  const StreamResult r = validate_files(dp, d + "/inf.txt", d + "/b.txt", d + "/c.txt", d + "/c.txt", 0, false, 2, 0, false);
  EXPECT_EQ(r.n, 5000u);
  t = a;
  t.replace(line3000, 4, "3f800000");  // a widened value in a native file
  expect_error(t, "x.txt:3000: value 1: '3f800000' is not 4 hex digits (binary16 itself");
  // no final newline: not a fixed-width grid, but a valid file for the general engine
  std::ofstream(d + "/nonl.txt") << a.substr(0, a.size() - 1);
  EXPECT_EQ(validate_files(dp, d + "/nonl.txt", d + "/b.txt", d + "/c.txt", d + "/c.txt", 0, false, 2, 0, false).n,
            5000u);
}

TEST(Sampling, EveryCharacterIsCheckedInEveryTokenWidth) {
  // One character of a value replaced by each of the 255 nonzero byte values. The fixed-width
  // engine and the general engine (forced by a comment line at the end of a copy) agree on
  // accepting the files and on d; a non-hex character is always an error, and a native value
  // (every pattern valid) is accepted exactly when the character is a hex digit of either case.
  struct Case { const char* type; std::string tok; bool native; };
  for (const Case& cs : {Case{"fp16", "3c00", true}, Case{"fp16", "3f800000", false},
                         Case{"fp64", "3ff0000000000000", false}, Case{"e4m3fnuz", "38", true}}) {
    const Datapath dp = find_preset("mi300x", cs.type);
    const int w = dp.a_fmt == kBinary64 ? 16 : 8;
    const std::string cz(w, '0');
    const std::string dir = mc_test::temp_dir() + "/chars_" + std::string(cs.type) + std::to_string(cs.tok.size());
    ::mkdir(dir.c_str(), 0777);
    const int K = dp.k_default;
    std::string line;
    for (int k = 0; k < K; ++k) line += (k ? " " : "") + cs.tok;
    const std::string good = line + "\n" + line + "\n";
    std::ofstream(dir + "/b.txt") << good;
    std::ofstream(dir + "/c.txt") << cz << "\n" << cz << "\n";
    auto outcome = [&](const std::string& a, std::string& d) {
      std::ofstream(dir + "/a.txt", std::ios::binary) << a;
      try {
        stream_files(dp, dir + "/a.txt", dir + "/b.txt", dir + "/c.txt", "", dir + "/d.txt", 0, false, 1, 0, false);
      } catch (const InputError&) {
        return false;
      }
      d = slurp(dir + "/d.txt");
      return true;
    };
    std::string dref;
    ASSERT_TRUE(outcome(good, dref));
    for (size_t pos : {size_t{0}, cs.tok.size() - 1}) {
      for (int ch = 1; ch < 256; ++ch) {
        std::string a = good;
        const size_t at = line.size() + 1 + pos;  // line 2, value 1
        const char orig = a[at];
        a[at] = static_cast<char>(ch);
        std::string dg, dl;
        const bool grid = outcome(a, dg), general = outcome(a + "#\n", dl);
        const bool hex = std::isxdigit(ch) != 0;
        ASSERT_EQ(grid, general) << cs.type << " token " << cs.tok << " char " << ch << " at " << pos;
        if (!hex || cs.native) {
          ASSERT_EQ(grid, hex) << cs.type << " token " << cs.tok << " char " << ch << " at " << pos;
        }
        if (grid) {
          EXPECT_EQ(dg, dl) << ch;
        }
        if (hex && std::tolower(ch) == orig) {
          EXPECT_EQ(dg, dref) << ch;
        }
      }
    }
  }
}

// validate --regen (issue 29): the inputs drawn again from the seed give, bit for bit, what
// reading the files of `sample` gives: the same d, the same mismatches (samples, operands, c)
// and the same rounded-c note, over presets whose files hold native patterns (fp16, fp8),
// widened values (tf32, fp32, fp64), the bits strategy, the subnormal ranges, another K and a
// binary16 accumulator (c rounded into it).
TEST(Regen, EqualsReadingTheSampleFiles) {
  struct Case {
    const char *arch, *type, *out;
    Strategy st;
    bool subnormal;
    int k;
  };
  const Case cases[] = {{"mi300x", "fp16", "", Strategy::ExpMant, false, 0},
                        {"h100", "e4m3", "", Strategy::Bits, false, 0},
                        {"a100", "tf32", "", Strategy::ExpMant, true, 0},
                        {"mi250", "fp64", "", Strategy::ExpMant, false, 0},
                        {"mi100", "fp32", "", Strategy::Bits, false, 7},
                        {"h100", "fp16", "fp16", Strategy::ExpMant, false, 0}};
  for (const Case& t : cases) {
    const Datapath dp = find_preset(t.arch, t.type, t.out);
    SampleSpec s = sample_spec_for(dp, t.subnormal);
    s.N = 3000;
    s.seed = 11;
    s.strategy = t.st;
    if (t.k) s.K = t.k;
    std::string name = dp.name() + "_" + dp.out_fmt.name;
    for (char& ch : name)
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    ::mkdir(mc_test::temp_dir().c_str(), 0777);
    const std::string dir = mc_test::temp_dir() + "/" + name;
    write_samples(s, dir, 2);
    const SampleSet set = load_sample_set(dp, dir + "/a.txt", dir + "/b.txt", dir + "/c.txt", dir + "/c.txt", s.K);
    std::vector<uint64_t> d = run_samples(dp, set);
    for (size_t i : {size_t{5}, size_t{1234}, size_t{2999}}) d[i] ^= 1;  // three "hardware" mismatches
    {
      std::ofstream f(dir + "/d.txt");
      for (uint64_t x : d) f << to_hex_bits(dp.out_fmt == kBinary64 ? kBinary64 : kBinary32, x) << "\n";
    }
    const StreamResult files = validate_files(dp, dir + "/a.txt", dir + "/b.txt", dir + "/c.txt", dir + "/d.txt", s.K,
                                              false, 2, 10, false);
    const StreamResult regen = validate_regen(dp, s, dir + "/d.txt", false, 2, 10);
    SCOPED_TRACE(dp.name() + " out " + dp.out_fmt.name);
    EXPECT_EQ(regen.n, 3000u);
    EXPECT_EQ(files.mismatches, 3u);
    EXPECT_EQ(regen.mismatches, files.mismatches);
    ASSERT_EQ(regen.first.size(), files.first.size());
    for (size_t i = 0; i < files.first.size(); ++i) {
      EXPECT_EQ(regen.first[i].index, files.first[i].index);
      EXPECT_EQ(regen.first[i].line, files.first[i].line);
      EXPECT_EQ(regen.first[i].got, files.first[i].got);
      EXPECT_EQ(regen.first[i].a, files.first[i].a);
      EXPECT_EQ(regen.first[i].b, files.first[i].b);
      EXPECT_EQ(regen.first[i].c, files.first[i].c);
    }
    EXPECT_EQ(regen.c_rounded.count, files.c_rounded.count);
    EXPECT_EQ(regen.c_rounded.first_line, files.c_rounded.first_line);
    // another seed draws other inputs: (nearly) every d differs
    SampleSpec other = s;
    other.seed = 12;
    EXPECT_GT(validate_regen(dp, other, dir + "/d.txt", false, 2, 0).mismatches, 1500u);
  }
}
