// matcore explore: the error statistics of a datapath against the exact sum rounded once.
// The reference is checked against host binary64 arithmetic (an independent exact computation
// where TwoSum shows the sum exact), the figures against datapaths whose errors are known
// (an exact adder: none; truncation of the result: never above), and the run is deterministic
// whatever the thread count.
#include <gtest/gtest.h>
#include <tuple>

#include <cmath>
#include <cstring>
#include <fstream>

#include "matcore/explore.hpp"
#include "matcore/fields.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

using namespace mc;

namespace {
double val16(uint64_t h) {
  const Unpacked u = decode(kBinary16, h);
  if (u.cls == Class::Zero) return 0;
  const double v = std::ldexp(static_cast<double>(u.sig), u.exp - u.mbits);
  return u.sign ? -v : v;
}
uint32_t bits32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
}  // namespace

TEST(Explore, ReferenceIsTheExactSumRoundedOnce) {
  // k = 2 through an exact adder of two products and c = 0 (mi100 fp16, one group): its d is
  // the exact sum rounded once, and so is binary64 p1 + p2 (exact when TwoSum's error is 0)
  // rounded to binary32. The fraction explore reports as correctly rounded must be 1, and the
  // host's rounding must agree with the model on every exact sample.
  const Datapath dp = find_preset("mi100", "fp16");
  ExploreSpec spec;
  spec.n = 4000;
  spec.workload = Workload::LogUniform;
  const ErrorStats e = measure_error(dp, 2, spec);
  EXPECT_EQ(e.n, 4000u);
  EXPECT_EQ(e.correct, e.finite);
  EXPECT_EQ(e.rms_rel, 0.0);
  int checked = 0;
  for (uint64_t i = 0; i < spec.n; ++i) {
    uint64_t a[2], b[2];
    workload_inputs(spec.workload, dp.a_fmt, dp.b_fmt, 2, spec.seed, i, a, b);
    const double p1 = val16(a[0]) * val16(b[0]), p2 = val16(a[1]) * val16(b[1]);
    const double s = p1 + p2, bb = s - p1, err = (p1 - (s - bb)) + (p2 - bb);  // TwoSum
    if (err != 0 || !std::isfinite(s) || std::fabs(s) > 3e38 || (s != 0 && std::fabs(s) < 1.2e-38)) continue;
    ++checked;
    ASSERT_EQ(dot(dp, a, b, 2, 0), bits32(static_cast<float>(s))) << "sample " << i;
  }
  EXPECT_GT(checked, 1000);
}

TEST(Explore, ErrorsOfKnownDatapaths) {
  ExploreSpec spec;
  spec.n = 3000;
  // one exact group of 64 products: no error at k <= 64, some at k = 256 (four roundings)
  Datapath ex = find_preset("mi100", "fp16");
  ex.n_fma = 64;
  const ErrorStats e16 = measure_error(ex, 16, spec), e256 = measure_error(ex, 256, spec);
  EXPECT_EQ(e16.correct, e16.finite);
  EXPECT_EQ(e16.max_rel, 0.0);
  EXPECT_LE(e16.rms_nw, 1.0);             // the one rounding: |d - exact| <= u |exact|
  EXPECT_NEAR(e16.mean_nw, 0.0, 0.03);    // unbiased
  EXPECT_LT(e256.correct, e256.finite);
  EXPECT_LT(e256.max_bound, 1.0);  // four roundings: within the classical bound k u sum|p|
  // the same with truncation of each group's result: errors only toward zero, below 1 ulp
  Datapath tz = ex;
  tz.out_round = Rounding::RTZ;
  const ErrorStats t16 = measure_error(tz, 16, spec);
  EXPECT_LT(t16.mean_ulp, -0.3);
  EXPECT_LT(t16.mean_rel, 0.0);
  EXPECT_LT(t16.mean_nw, 0.0);               // toward zero in the normwise measure too
  EXPECT_LE(-t16.mean_nw, t16.rms_nw);
  EXPECT_LE(t16.max_abs_ulp, 1.0);
  for (int i = 9; i < kUlpBins; ++i) EXPECT_EQ(t16.ulp_hist[i], 0u) << "bin " << i - 8;
  EXPECT_GT(t16.ulp_hist[7], 0u);  // -1 ulp after rounding to nearest of the error
  EXPECT_LT(t16.max_bound, 1.0);   // within the classical bound k u sum|p|
  EXPECT_EQ(t16.mono_ok, t16.mono_checked);
  EXPECT_GT(t16.mono_checked, 2900u);
}

TEST(Explore, SameFiguresWhateverTheThreads) {
  const Datapath dp = find_preset("h100", "fp16");
  for (Workload w : {Workload::Normal, Workload::Cancel, Workload::Uniform11}) {
    ExploreSpec spec;
    spec.workload = w;
    spec.n = 1500;
    spec.threads = 1;
    const ErrorStats a = measure_error(dp, 64, spec);
    spec.threads = 3;
    const ErrorStats b = measure_error(dp, 64, spec);
    EXPECT_EQ(a.rms_rel, b.rms_rel) << to_string(w);
    EXPECT_EQ(a.mean_ulp, b.mean_ulp) << to_string(w);
    EXPECT_EQ(a.correct, b.correct) << to_string(w);
    EXPECT_EQ(a.ulp_hist, b.ulp_hist) << to_string(w);
    EXPECT_GT(a.rms_rel, 0.0) << to_string(w);
  }
}

// The standard errors (issue 28): they shrink as 1/sqrt(n), two independent runs (other seeds)
// differ by no more than their intervals allow, and the ulp quantiles read the histogram. (Not
// the relative error's: one cancelling sample in 16000 dominates its fourth moment, which is why
// the normwise error is the figure to compare.)
TEST(Explore, StandardErrorsAndQuantiles) {
  const Datapath dp = find_preset("h100", "fp16");
  ExploreSpec spec;
  spec.monotonic = false;
  spec.n = 4000;
  const ErrorStats a = measure_error(dp, 64, spec);
  spec.seed = 2;
  const ErrorStats b = measure_error(dp, 64, spec);
  spec.n = 16000;
  const ErrorStats big = measure_error(dp, 64, spec);
  for (const auto& [name, s4, s16] : {std::tuple<const char*, double, double>{"rms_nw", a.se_rms_nw, big.se_rms_nw},
                                      {"mean_nw", a.se_mean_nw, big.se_mean_nw},
                                      {"correct", a.se_correct, big.se_correct}}) {
    EXPECT_GT(s4, 0.0) << name;
    EXPECT_GT(s16 / s4, 0.35) << name;  // 4x the samples: half the standard error
    EXPECT_LT(s16 / s4, 0.65) << name;
  }
  EXPECT_LT(a.se_rms_nw, a.rms_nw / 5);
  EXPECT_LT(std::fabs(a.rms_nw - b.rms_nw), 4 * std::hypot(a.se_rms_nw, b.se_rms_nw));
  EXPECT_LT(std::fabs(a.mean_nw - b.mean_nw), 4 * std::hypot(a.se_mean_nw, b.se_mean_nw));
  const double p = static_cast<double>(a.correct) / a.finite;
  EXPECT_DOUBLE_EQ(a.se_correct, std::sqrt(p * (1 - p) / a.finite));
  ErrorStats h;  // 10% at -8 ulps or below, 85% exact, 5% at +1
  h.ulp_hist[0] = 10;
  h.ulp_hist[8] = 85;
  h.ulp_hist[9] = 5;
  EXPECT_EQ(h.ulp_quantile(0.05), -8);
  EXPECT_EQ(h.ulp_quantile(0.5), 0);
  EXPECT_EQ(h.ulp_quantile(0.95), 0);
  EXPECT_EQ(h.ulp_quantile(0.99), 1);
}

TEST(Explore, WorkloadsHaveTheirShape) {
  uint64_t a[64], b[64];
  int neg = 0, cancel_pairs = 0;
  for (uint64_t i = 0; i < 200; ++i) {
    workload_inputs(Workload::Uniform01, kBinary16, kBinary16, 64, 3, i, a, b);
    for (int j = 0; j < 64; ++j) {
      ASSERT_GE(val16(a[j]), 0.0);
      ASSERT_LE(val16(a[j]), 1.0);  // [0, 1) rounded into binary16
    }
    workload_inputs(Workload::Uniform11, kBinary16, kBinary16, 64, 3, i, a, b);
    for (int j = 0; j < 64; ++j) neg += val16(b[j]) < 0;
    workload_inputs(Workload::Cancel, kBinary16, kBinary16, 64, 3, i, a, b);
    for (int j = 0; j < 64; j += 2) {
      const double p = val16(a[j]) * val16(b[j]), q = val16(a[j + 1]) * val16(b[j + 1]);
      cancel_pairs += p != 0 && std::fabs(p + q) <= std::fabs(p) * 0x1.0p-5;
    }
  }
  EXPECT_NEAR(neg, 6400, 400);
  EXPECT_GT(cancel_pairs, 6000);  // of 6400
}

TEST(Explore, SweepsParseAndCheckTheirField) {
  const Datapath dp = find_preset("mi300x", "fp16");
  auto s = parse_sweep("frac_bits=20..32:4", dp);
  EXPECT_EQ(s.first, "frac_bits");
  EXPECT_EQ(s.second, (std::vector<std::string>{"20", "24", "28", "32"}));
  s = parse_sweep("prod_align=truncate,rne", dp);
  EXPECT_EQ(s.second, (std::vector<std::string>{"truncate", "rne"}));
  EXPECT_THROW(parse_sweep("frac_bits=20..200", dp), FieldError);
  EXPECT_THROW(parse_sweep("fracbits=1,2", dp), FieldError);
  EXPECT_THROW(parse_sweep("frac_bits=32..20", dp), FieldError);
  EXPECT_THROW(parse_sweep("prod_align=up", dp), FieldError);
}

TEST(Explore, CommandWritesTableCsvAndPlots) {
  const std::string cli = MATCORE_CLI, dir = mc_test::temp_dir();
  std::string out;
  ASSERT_EQ(mc_test::run_command(cli + " explore --dp mi300x/fp16 --dp h100/fp16 --sweep n_fma=8,16 --k 16,64 --n 300 --csv " +
                                     dir + "/e.csv",
                                 &out),
            0)
      << out;
  std::ifstream f(dir + "/e.csv");
  std::string line;
  int rows = 0;
  std::getline(f, line);
  EXPECT_EQ(line.rfind("datapath,sweep1,sweep2,k,workload,n,finite,rms_rel", 0), 0u) << line;
  while (std::getline(f, line)) {
    ++rows;
    EXPECT_NE(line.find(",n_fma="), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 8);  // 2 datapaths x 2 values x 2 k
  // the exact same rows with one thread
  out.clear();
  ASSERT_EQ(mc_test::run_command(cli + " explore --dp mi300x/fp16 --dp h100/fp16 --sweep n_fma=8,16 --k 16,64 --n 300 --threads 1 --csv " +
                                     dir + "/e1.csv",
                                 &out),
            0);
  std::string x, y;
  mc_test::run_command("cat " + dir + "/e.csv", &x);
  mc_test::run_command("cat " + dir + "/e1.csv", &y);
  EXPECT_EQ(x, y);
  // bad input: exit 2 naming the problem
  for (const std::string& bad : {std::string(" --dp mi300x/fp16 --dist gauss"), std::string(" --dp mi300x/fp16 --sweep fracbits=1,2"),
                                 std::string(" --dp mi999/fp16"), std::string(" --dp mi300x/fp16 --k 0"),
                                 std::string(" --dp mi300x/fp16 --png p")}) {
    out.clear();
    EXPECT_EQ(mc_test::run_command(cli + " explore" + bad + " 2>&1", &out), 2) << bad << ": " << out;
  }
  // plots, when the Debian matplotlib is there
  std::string probe;
  if (mc_test::run_command("/usr/bin/python3 -c 'import matplotlib' 2>&1", &probe) != 0)
    GTEST_SKIP() << "python3-matplotlib not installed: the plots are not checked";
  out.clear();
  ASSERT_EQ(mc_test::run_command(cli + " explore --dp h100/fp16 --sweep frac_bits=23..25 --k 16,64 --n 200 --csv " + dir +
                                     "/p.csv --png " + dir + "/p 2>&1",
                                 &out),
            0)
      << out;
  for (const char* png : {"/p-k.png", "/p-bias.png", "/p-sweep.png"}) {
    std::ifstream pf(dir + png, std::ios::binary);
    char sig[8] = {};
    pf.read(sig, 8);
    EXPECT_EQ(std::string(sig + 1, 3), "PNG") << png;
  }
}
