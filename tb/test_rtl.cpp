// The RTL (rtl_model/, the tops of `matcore rtl`, run by Verilator through the RTL engine of
// core/src/tools/rtl.cpp) against the hardware data, the paper vectors and the fast model:
//   * Generate: every preset's top is lint-clean under `verilator --lint-only -Wall` and holds
//     exactly the signals of the field table (signal_table) under their documented names;
//   * Hwdata: every confirmed NVIDIA hardware set, 0 mismatches (validate --engine rtl too);
//   * Paper: every paper vector of tb/vectors/paper_cdna*.pvt on the AMD presets it names: the
//     RTL gives the fast model's d (which reproduces the tables);
//   * Random: both sampling strategies (normal and subnormal ranges, independent bits); 10^5
//     samples per strategy on one preset of every datapath structure (kBig), fewer elsewhere;
//   * Specials: injected zeros, infinities, NaNs and extremes; the hand-derived overflow cases;
//   * Sensitivity: the RTL of a changed datapath (one parameter) differs from the preset's model.
// Each distinct top is Verilated once (the engine's cache: MATCORE_RTL_CACHE, set by CMake to
// the build folder) and shared by every test that uses it. MATCORE_RTL_SAMPLES=N sets every
// random count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "hwdata_sets.hpp"
#include "matcore/fast.hpp"
#include "matcore/model.hpp"
#include "matcore/plan.hpp"
#include "matcore/fields.hpp"
#include "matcore/rtl_driver.hpp"
#include "matcore/table.hpp"
#include "matcore/validate.hpp"
#include "overflow_cases.hpp"
#include "preset_refs.hpp"
#include "run_command.hpp"
#include "sampled.hpp"
#include "temp_dir.hpp"

using namespace mc;
using mc_test::Sample;

namespace {

std::string hexs(uint64_t v) { return "0x" + to_hex(v); }

/// Runs the samples through the RTL and the fast model; returns the number of samples whose
/// d differ and describes the first one (operands, both d in hex, the model's stage trace).
size_t compare_rtl(const Datapath& dp, const std::vector<Sample>& s, std::string* first) {
  std::vector<RtlSample> in(s.size());
  for (size_t i = 0; i < s.size(); ++i) in[i] = RtlSample{s[i].a, s[i].b, s[i].c, s[i].sa, s[i].sb};
  const std::vector<uint64_t> got = rtl_run(dp, in);
  size_t bad = 0;
  const FastDot fd(dp);
  for (size_t i = 0; i < s.size(); ++i) {
    Trace tr;
    const int K = static_cast<int>(s[i].a.size());  // block-scaled: the reference stages, with the sample's scales
    const uint64_t want = widen_result(dp, dp.scaled() ? dot(dp, s[i].a.data(), s[i].b.data(), K, s[i].c, scale_refs(s[i].sa, s[i].sb))
                                                       : fd(s[i].a.data(), s[i].b.data(), K, s[i].c));
    if (got[i] == want) continue;
    if (bad++ == 0 && first) {
      std::ostringstream o;
      o << dp.name() << " sample " << i << ": rtl " << hexs(got[i]) << " model " << hexs(want) << "\n  a:";
      for (uint64_t v : s[i].a) o << " " << to_hex_bits(dp.a_fmt, v);
      o << "\n  b:";
      for (uint64_t v : s[i].b) o << " " << to_hex_bits(dp.b_fmt, v);
      o << "\n  c: " << to_hex_bits(dp.out_fmt, s[i].c);
      for (size_t j = 0; j < s[i].sa.size(); ++j) o << (j ? " " : "\n  scales a/b: ") << to_hex(s[i].sa[j]) << "/" << to_hex(s[i].sb[j]);
      o << "\n  model stages:\n";
      dot(dp, s[i].a.data(), s[i].b.data(), K, s[i].c, scale_refs(s[i].sa, s[i].sb), &tr);
      o << tr.text("    ");
      *first = o.str();
    }
  }
  return bad;
}

// ---------------------------------------------------------------------------- generation
/// "stage.signal" of every view declared in a generated top's named blocks.
std::set<std::string> view_names(const std::string& text) {
  std::set<std::string> names;
  std::istringstream in(text);
  std::string line, block;
  while (std::getline(in, line)) {
    const size_t b = line.find("if (1) begin : ");
    if (b != std::string::npos) {
      block = line.substr(b + 15);
      continue;
    }
    if (line == "  end") block.clear();
    if (block.empty()) continue;
    const size_t l = line.find("    logic [");
    if (l != 0) continue;
    const size_t sp = line.find("] ");
    names.insert(block + "." + line.substr(sp + 2, line.size() - sp - 3));
  }
  return names;
}

class RtlGenerate : public ::testing::TestWithParam<std::string> {};

TEST_P(RtlGenerate, LintCleanWithTheFieldTableNames) {
  const Datapath& dp = mc_test::preset_ref(GetParam()).dp;
  const RtlTop t = rtl_top(dp);
  EXPECT_EQ(t.latency, static_cast<int>(plan(dp).size()) - 1);
  std::set<std::string> want;
  for (const SignalField& f : signal_table(dp)) want.insert(f.name);
  EXPECT_EQ(view_names(t.text), want);

  const std::string dir = mc_test::temp_dir();
  const std::string top = dir + "/" + t.module + ".sv";
  std::ofstream(top) << t.text;
  std::string cmd = "verilator --lint-only -Wall --top-module " + t.module;
  for (const std::string& s : t.sources) cmd += " " + rtl_model_dir() + "/" + s;
  std::string out;
  const int st = mc_test::run_command(cmd + " " + top + " 2>&1", &out);
  EXPECT_EQ(st, 0) << out;
  EXPECT_EQ(out, "");
}

INSTANTIATE_TEST_SUITE_P(Preset, RtlGenerate, ::testing::ValuesIn(mc_test::rtl_preset_keys()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(RtlGenerateCli, WritesTopAndFileList) {
  const std::string dir = mc_test::temp_dir();
  std::string out;
  ASSERT_EQ(mc_test::run_command(std::string(MATCORE_CLI) + " rtl --arch mi300x --type fp16 --dir " + dir + " 2>&1", &out), 0)
      << out;
  std::ifstream f(dir + "/mc_mi300x_fp16.sv");
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_EQ(text.str(), rtl_top(find_preset("mi300x", "fp16")).text);
  // the folder stands alone: a copy of every stage module, listed relative to it, then the top
  std::ifstream l(dir + "/mc_mi300x_fp16.f");
  std::vector<std::string> listed;
  for (std::string x; std::getline(l, x);) listed.push_back(x);
  std::vector<std::string> want = rtl_top(find_preset("mi300x", "fp16")).sources;
  want.push_back("mc_mi300x_fp16.sv");
  EXPECT_EQ(listed, want);
  for (const std::string& s : rtl_top(find_preset("mi300x", "fp16")).sources) {
    std::stringstream copy, orig;
    copy << std::ifstream(dir + "/" + s).rdbuf();
    orig << std::ifstream(rtl_model_dir() + "/" + s).rdbuf();
    EXPECT_FALSE(orig.str().empty()) << s;
    EXPECT_EQ(copy.str(), orig.str()) << s;
  }
  // the stage modules are inputs: rtl_model/ itself is refused as --dir, and left as it was
  out.clear();
  EXPECT_EQ(mc_test::run_command(std::string(MATCORE_CLI) + " rtl --arch mi300x --type fp16 --dir " + rtl_model_dir() + " 2>&1", &out), 2);
  EXPECT_NE(out.find("is also an input of this command"), std::string::npos) << out;
  EXPECT_FALSE(std::ifstream(rtl_model_dir() + "/mc_mi300x_fp16.sv").good());
  out.clear();
  // a missing directory is created (one level); a path below a file is an error
  ASSERT_EQ(mc_test::run_command(std::string(MATCORE_CLI) + " rtl --arch mi300x --type fp16 --dir " + dir + "/new 2>&1", &out), 0)
      << out;
  EXPECT_TRUE(std::ifstream(dir + "/new/mc_mi300x_fp16.sv").good());
  out.clear();
  const std::string below_file = dir + "/mc_mi300x_fp16.sv/x";
  EXPECT_EQ(mc_test::run_command(std::string(MATCORE_CLI) + " rtl --arch mi300x --type fp16 --dir " + below_file + " 2>&1", &out), 2);
  EXPECT_NE(out.find(below_file + ": cannot create the directory of --dir"), std::string::npos) << out;
}

// ------------------------------------------------------------------------------ hardware data
class RtlHwdata : public ::testing::TestWithParam<mc_test::Set> {};

TEST_P(RtlHwdata, ZeroMismatches) {
  const mc_test::Set& s = GetParam();
  const mc_test::SetFiles f = mc_test::files_of(s);
  const Datapath dp = find_preset(s.arch, s.type, s.out);
  SampleSet set = load_sample_set(dp, f.a, f.b, f.c, f.d, s.K);
  ASSERT_EQ(set.n, 5000u);
  std::vector<RtlSample> in(set.n);
  for (size_t i = 0; i < set.n; ++i) {
    in[i].a.assign(set.a.begin() + i * set.K, set.a.begin() + (i + 1) * set.K);
    in[i].b.assign(set.b.begin() + i * set.K, set.b.begin() + (i + 1) * set.K);
    in[i].c = s.zero_c ? zero_bits(dp.out_fmt, false) : set.c[i];
  }
  const std::vector<uint64_t> got = rtl_run(dp, in);
  size_t bad = 0;
  std::string first;
  for (size_t i = 0; i < set.n; ++i)
    if (got[i] != set.d[i] && bad++ == 0)
      first = "line " + std::to_string(i + 1) + ": rtl " + hexs(got[i]) + " hardware " + hexs(set.d[i]);
  EXPECT_EQ(static_cast<long>(bad), s.expect) << first;
}

INSTANTIATE_TEST_SUITE_P(Hwdata, RtlHwdata, ::testing::ValuesIn(mc_test::kConfirmed),
                         [](const ::testing::TestParamInfo<mc_test::Set>& i) {
                           return std::string(i.param.gpu) + "_" + i.param.fmt + "_" + i.param.out;
                         });

TEST(RtlHwdataCli, ValidateEngineRtl) {
  const mc_test::Set s{"A100", "a100", "fp16", "fp16", "fp32", 8, false, 0};
  const mc_test::SetFiles f = mc_test::files_of(s);
  const std::string args = " validate --arch a100 --type fp16 --engine rtl --a " + f.a + " --b " + f.b + " --c " + f.c;
  std::string out;
  EXPECT_EQ(mc_test::run_command(std::string(MATCORE_CLI) + args + " --d " + f.d + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("samples=5000 mismatches=0"), std::string::npos) << out;
  // the d of another set: mismatches, exit 1, reported as rtl vs d file
  const mc_test::SetFiles g = mc_test::files_of(mc_test::Set{"A100", "a100", "fp16", "fp16", "fp16", 8, false, 0});
  out.clear();
  EXPECT_EQ(mc_test::run_command(std::string(MATCORE_CLI) + args + " --d " + g.d + " --show 1 2>&1", &out), 1) << out;
  EXPECT_NE(out.find("mismatch sample 0 (a line 1, d line 1): rtl 0x"), std::string::npos) << out;
}

// ------------------------------------------------------------------------------ paper vectors
std::vector<std::string> amd_keys() {
  std::vector<std::string> k;
  for (const mc_test::PresetRef& p : mc_test::preset_refs())
    if (mc_test::has_paper(p.dp)) k.push_back(p.key);
  return k;
}

class RtlPaper : public ::testing::TestWithParam<std::string> {};

TEST_P(RtlPaper, GivesTheModelsD) {
  const Datapath& dp = mc_test::preset_ref(GetParam()).dp;
  const std::string table = std::string(MATCORE_SOURCE_DIR) + "/tb/vectors/paper_" + dp.family + ".pvt";
  std::vector<Sample> s;
  size_t table_passes = 0;
  for (const TableCase& tc : read_table(table)) {
    if (std::find(tc.presets.begin(), tc.presets.end(), dp.arch) == tc.presets.end()) continue;
    if (find_preset(dp.arch, tc.type).type != dp.type) continue;
    Sample x;
    try {
      build_operands(tc, dp, x.a, x.b, x.c);
    } catch (const InputError&) {
      continue;  // operands this format cannot hold (reported by the table tests)
    }
    for (const CaseResult& r : run_case(tc, false))
      if (r.preset == dp.name() && r.pass) ++table_passes;
    s.push_back(x);
  }
  ASSERT_FALSE(s.empty());
  std::string first;
  EXPECT_EQ(compare_rtl(dp, s, &first), 0u) << first;
  RecordProperty("vectors", static_cast<int>(s.size()));
  RecordProperty("table_passes", static_cast<int>(table_passes));
}

INSTANTIATE_TEST_SUITE_P(Paper, RtlPaper, ::testing::ValuesIn(amd_keys()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// ------------------------------------------------------------------------- random samples
// One preset of every datapath structure: exact (CDNA1, SFMA fp32/fp64), pairwise (CDNA2),
// fused late c (CDNA3), odd-even (CDNA3 fp8), fused early c (NVIDIA), reduced precision
// (Ada fp8), c_final with pair interleave and binary16 output (Hopper/Blackwell fp8 mma.sync).
const std::set<std::string> kBig = {"mi100_fp16",  "mi100_fp32",      "mi250_fp16",         "mi250_fp64",
                                    "mi300x_fp16", "mi300x_e4m3fnuz", "h100_fp16",          "l40s_e4m3_mma_sync",
                                    "b200_e4m3_mma_sync_out_fp16"};

uint64_t count_for(const std::string& key, const std::string& strategy) {
  if (const char* e = std::getenv("MATCORE_RTL_SAMPLES")) return std::strtoull(e, nullptr, 10);
  const bool big = kBig.count(key) != 0;
  if (strategy == "expmant_sub") return big ? 20000 : 1000;
  return big ? 100000 : 2000;
}

struct RandomCase {
  std::string key, strategy;
};
std::vector<RandomCase> random_cases() {
  std::vector<RandomCase> r;
  for (const std::string& k : mc_test::rtl_preset_keys())
    for (const char* st : {"expmant", "expmant_sub", "bits"}) r.push_back(RandomCase{k, st});
  return r;
}

class RtlRandom : public ::testing::TestWithParam<RandomCase> {};

TEST_P(RtlRandom, EqualsFastModel) {
  const RandomCase& rc = GetParam();
  const Datapath& dp = mc_test::preset_ref(rc.key).dp;
  const uint64_t n = count_for(rc.key, rc.strategy);
  std::string first;
  EXPECT_EQ(compare_rtl(dp, mc_test::random_samples(dp, rc.strategy, n, 7), &first), 0u) << first;
  RecordProperty("samples", static_cast<int>(n));
}

INSTANTIATE_TEST_SUITE_P(Sampled, RtlRandom, ::testing::ValuesIn(random_cases()),
                         [](const ::testing::TestParamInfo<RandomCase>& i) { return i.param.key + "_" + i.param.strategy; });

class RtlSpecials : public ::testing::TestWithParam<std::string> {};

TEST_P(RtlSpecials, EqualsFastModel) {
  const Datapath& dp = mc_test::preset_ref(GetParam()).dp;
  std::string first;
  EXPECT_EQ(compare_rtl(dp, mc_test::special_samples(dp, kBig.count(GetParam()) ? 20000 : 2000), &first), 0u) << first;
}

INSTANTIATE_TEST_SUITE_P(Injected, RtlSpecials, ::testing::ValuesIn(mc_test::rtl_preset_keys()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// The sign of an exact zero through the grouper (GST-FDPA): a group term is -0 only when every
// product of its group is -0, and d = -0 only when every term and c are (round toward zero).
// e2m1: +0 = 0x0, -0 = 0x8, 1.0 = 0x2; unit scales.
TEST(RtlGrouper, ZeroSignsHandDerived) {
  for (const char* type : {"nvfp4", "mxf4"}) {
    const Datapath dp = find_preset("b200", type, "", "tcgen05");
    const std::vector<uint64_t> neg(64, 0x8), one(64, 0x2);
    std::vector<uint64_t> mixed = neg;
    mixed[21] = 0x0;  // one +0 product in the second group of 16
    const struct { std::vector<uint64_t> a; uint64_t c, d; } cases[] = {
        {neg, 0x80000000, 0x80000000},    // every product and c -0: -0
        {mixed, 0x80000000, 0x00000000},  // one +0 product: +0
        {neg, 0x00000000, 0x00000000},    // c +0: +0
    };
    std::vector<RtlSample> in;
    for (const auto& k : cases) in.push_back(RtlSample{k.a, one, k.c, {}, {}});
    const std::vector<uint64_t> got = rtl_run(dp, in);
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_EQ(to_hex(got[i]), to_hex(cases[i].d)) << type << " case " << i << " (rtl)";
      EXPECT_EQ(to_hex(dot(dp, in[i].a.data(), one.data(), 64, cases[i].c)), to_hex(cases[i].d)) << type << " case " << i;
    }
  }
}

TEST(RtlOverflow, HandDerivedBits) {
  for (const ovf::Case& k : ovf::cases()) {
    const Datapath dp = find_preset(k.arch, k.type, k.out, k.variant);
    const RtlSample s{ovf::operands(dp.a_fmt, k.a, k.reps), ovf::operands(dp.b_fmt, k.b, k.reps), parse_operand(dp.out_fmt, k.c), {}, {}};
    const std::vector<uint64_t> d = rtl_run(dp, {s});
    EXPECT_EQ(to_hex(d.at(0)), to_hex(widen_result(dp, k.d))) << ovf::label(k);
  }
}

// ------------------------------------------------------------------------------ sensitivity
// The comparison can fail: the RTL of a datapath one parameter away from the preset differs
// from the preset's fast model on many samples (the engine really runs the generated top).
TEST(RtlSensitivity, OneParameterAwayDiffers) {
  const Datapath dp = find_preset("mi300x", "fp16");
  const std::vector<Sample> s = mc_test::random_samples(dp, "expmant", 2000, 3);
  std::vector<RtlSample> in(s.size());
  for (size_t i = 0; i < s.size(); ++i) in[i] = RtlSample{s[i].a, s[i].b, s[i].c, {}, {}};
  Datapath f23 = dp;
  f23.frac_bits = 23;
  const std::vector<uint64_t> got = rtl_run(f23, in);
  size_t differ = 0, differ_own = 0;
  const FastDot fd(dp), fd23(f23);
  for (size_t i = 0; i < s.size(); ++i) {
    differ += got[i] != fd(s[i].a.data(), s[i].b.data(), static_cast<int>(s[i].a.size()), s[i].c);
    differ_own += got[i] != fd23(s[i].a.data(), s[i].b.data(), static_cast<int>(s[i].a.size()), s[i].c);
  }
  EXPECT_GT(differ, 100u);
  EXPECT_EQ(differ_own, 0u);  // and it is exactly the changed datapath's model
}

// The aligner's rounding to nearest (prod_align = rne / rna, not in any preset): the RTL of a
// datapath file's design equals its fast model (which tb/test_datapath_file.cpp checks against
// an exact computation), on random and subnormal-range samples, and differs from the truncating
// preset.
class RtlAlignNearest : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};
TEST_P(RtlAlignNearest, EqualsTheModel) {
  const auto [key, mode] = GetParam();
  Datapath dp = mc_test::preset_ref(key).dp;
  set_field(dp, "prod_align", mode);
  size_t differ_preset = 0;
  const FastDot fd(dp), fd_preset(mc_test::preset_ref(key).dp);
  for (const char* strategy : {"expmant", "expmant_sub"}) {
    const std::vector<Sample> s = mc_test::random_samples(dp, strategy, 3000, 9);
    std::vector<RtlSample> in(s.size());
    for (size_t i = 0; i < s.size(); ++i) in[i] = RtlSample{s[i].a, s[i].b, s[i].c, {}, {}};
    const std::vector<uint64_t> got = rtl_run(dp, in);
    for (size_t i = 0; i < s.size(); ++i) {
      const int K = static_cast<int>(s[i].a.size());
      ASSERT_EQ(got[i], fd(s[i].a.data(), s[i].b.data(), K, s[i].c)) << strategy << " sample " << i;
      differ_preset += got[i] != fd_preset(s[i].a.data(), s[i].b.data(), K, s[i].c);
    }
  }
  EXPECT_GT(differ_preset, 100u);
}
INSTANTIATE_TEST_SUITE_P(Designs, RtlAlignNearest,
                         ::testing::Combine(::testing::Values("mi300x_fp16", "h100_fp16", "mi300x_e4m3fnuz"),
                                            ::testing::Values("rne", "rna")),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& i) {
                           return std::get<0>(i.param) + "_" + std::get<1>(i.param);
                         });

}  // namespace

namespace {

// ------------------------------------------------------------------------------------ cost
// matcore cost on one preset: yosys synthesises the top; the per-stage rows and the register row
// add up to the total, every stage with logic has cells, and the widest adder is the c-aligner's
// accumulator (ACCF = 32 fraction bits + 5 + clog2(n_fma + 1) = 41 bits for CDNA3 fp16).
TEST(RtlCost, StagesAddUpToTheTotal) {
  std::string v;
  if (mc_test::run_command("yosys -V 2>&1", &v) != 0) GTEST_SKIP() << "yosys not installed (scripts/install-deps.sh)";
  const RtlCost c = rtl_cost(find_preset("mi300x", "fp16"));
  long cells = c.reg_cells;
  double nand2 = c.reg_nand2;
  for (const StageCost& s : c.stages) {
    cells += s.cells;
    nand2 += s.nand2;
    EXPECT_GT(s.cells, 0) << s.stage;
  }
  EXPECT_EQ(cells, c.cells);
  EXPECT_NEAR(nand2, c.nand2, 1.0);
  EXPECT_EQ(c.stages.size(), 7u);  // multiplier, specials, aligner, adder, cadd, normaliser, rounder
  EXPECT_EQ(c.widest_stage, "cadd");
  EXPECT_EQ(c.widest_adder, 41);
  EXPECT_EQ(c.latency, 6);
  EXPECT_GT(c.flops, 500);  // operands, products, aligned lanes, sums, control: not optimised away
  // gate levels (yosys ltp on the generic netlist): every stage has some, the pipeline's
  // critical path is its deepest stage, and the aligner's shifters are deeper than the adder
  int deepest = 0;
  for (const StageCost& s : c.stages) {
    EXPECT_GT(s.depth, 0) << s.stage;
    deepest = std::max(deepest, s.depth);
  }
  EXPECT_EQ(c.depth, deepest);
  auto stage = [&](const std::string& n) {
    for (const StageCost& s : c.stages)
      if (s.stage == n) return s;
    return StageCost{};
  };
  EXPECT_GT(stage("aligner").depth, stage("adder").depth);
  // the command's delay estimate: each stage's levels times --gate-ps, the clock the deepest
  // stage plus 3 levels of register overhead (from the cache this run filled)
  std::string out;
  ASSERT_EQ(mc_test::run_command(std::string(MATCORE_CLI) + " cost --arch mi300x --type fp16 --gate-ps 20 2>&1", &out), 0) << out;
  std::ostringstream want_row, want_clock;
  want_row << stage("aligner").depth << " " << std::string(9 - std::to_string(stage("aligner").depth * 20).size(), ' ')
           << stage("aligner").depth * 20 << "\n";
  want_clock << "deepest stage " << c.depth * 20 << " ps, clock >= " << (c.depth + 3) * 20 << " ps";
  EXPECT_NE(out.find(want_row.str()), std::string::npos) << out;
  EXPECT_NE(out.find(want_clock.str()), std::string::npos) << out;
  EXPECT_EQ(mc_test::run_command(std::string(MATCORE_CLI) + " cost --arch mi300x --type fp16 --gate-ps 0 2>&1", &out), 2);
  // a second cost of the same design (here under another preset's name) comes from the cache
  const RtlCost again = rtl_cost(find_preset("mi300a", "fp16"));
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.cells, c.cells);
  EXPECT_EQ(again.depth, c.depth);
  EXPECT_EQ(again.module, "mc_mi300a_fp16");
}

}  // namespace

namespace {

// ------------------------------------------------------------------------------ RTL trace
/// "block.signal" of the VCD variables one scope below the top scope SystemC (the named blocks).
std::set<std::string> vcd_views(const std::string& path) {
  std::ifstream in(path);
  std::set<std::string> names;
  std::vector<std::string> scope;
  std::string w;
  while (in >> w) {
    if (w == "$scope") {
      std::string kind, name;
      in >> kind >> name;
      scope.push_back(name);
    } else if (w == "$upscope") {
      scope.pop_back();
    } else if (w == "$var") {
      std::string kind, width, id, name;
      in >> kind >> width >> id >> name;
      if (scope.size() == 2 && scope[0] == "SystemC" && scope[1].rfind("u_", 0) != 0) names.insert(scope[1] + "." + name);
    } else if (w == "$enddefinitions") {
      break;
    }
  }
  return names;
}

// matcore trace --engine rtl: the VCD holds exactly the field table's signals (the SystemC VCD's
// set: its probes are the table), and every row of the C++ stage trace is one of them.
TEST(RtlTrace, SameSignalsAsTheTableAndTheCoreTrace) {
  struct P {
    const char *arch, *type, *out, *variant;
  };
  for (const P& p : {P{"mi300x", "fp16", "", ""}, P{"mi300x", "e4m3fnuz", "", ""}, P{"mi250", "fp16", "", ""},
                     P{"mi100", "bf16", "", ""}, P{"b200", "e4m3", "fp16", "mma.sync"}}) {
    const Datapath dp = find_preset(p.arch, p.type, p.out, p.variant);
    const std::string vcd = mc_test::temp_dir() + "/" + rtl_module_name(dp) + ".vcd";
    std::string cmd = std::string(MATCORE_CLI) + " trace --engine rtl --arch " + p.arch + " --type " + p.type +
                      " --a 1,2,3 --b 0.5,0.25,-1 --c 0.75 --vcd " + vcd;
    if (*p.out) cmd += std::string(" --out ") + p.out;
    if (*p.variant) cmd += std::string(" --variant ") + p.variant;
    std::string out;
    ASSERT_EQ(mc_test::run_command(cmd + " 2>&1", &out), 0) << out;
    EXPECT_NE(out.find("sample 0: rtl d = 0x"), std::string::npos) << out;
    std::set<std::string> want;
    for (const SignalField& f : signal_table(dp)) want.insert(f.name);
    const std::set<std::string> got = vcd_views(vcd);
    EXPECT_EQ(got, want) << dp.name();
    const std::vector<uint64_t> a = {parse_operand(dp.a_fmt, "1"), parse_operand(dp.a_fmt, "2"), parse_operand(dp.a_fmt, "3")};
    const std::vector<uint64_t> b = {parse_operand(dp.b_fmt, "0.5"), parse_operand(dp.b_fmt, "0.25"),
                                     parse_operand(dp.b_fmt, "-1")};
    Trace tr;
    dot(dp, a.data(), b.data(), 3, parse_operand(dp.out_fmt, "0.75"), &tr);
    for (const auto& r : tr.rows) {
      if (r.name != "group" && r.name != "order") {
        EXPECT_TRUE(got.count(r.name)) << dp.name() << ": " << r.name;
      }
    }
  }
}

}  // namespace
