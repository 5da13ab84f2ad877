// The SystemC top of every preset equals the fast model (mc::dot) bit for bit:
//   * PaperVectors: every test vector of tb/vectors/paper_cdna*.pvt on the AMD presets it names;
//   * Random: samples of both sampling strategies of core (sample.hpp: exponent-mantissa, with
//     the normal and the subnormal exponent ranges, and independent bits), written by
//     mc::write_samples and read back like hardware files;
//   * Specials: independent-bit samples with zeros, infinities, NaNs and extreme values injected.
//   * IntermediateOverflow: the fixed samples of tb/overflow_cases.hpp (a sum rounded to Inf
//     meeting the other infinity), checked against their hand-derived bits and mc::dot.
// Sample counts: see kBig below and docs/systemc.md; MATCORE_SC_SAMPLES=N overrides them all.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <unistd.h>

#include "matcore/explain.hpp"
#include "matcore/sample.hpp"
#include "matcore/table.hpp"
#include "matcore/vectors.hpp"
#include "overflow_cases.hpp"
#include "sc_bench.hpp"

using namespace mc;
using scb::PresetRef;
using scb::Sample;

namespace {

const PresetRef& ref(const std::string& key) {
  for (const PresetRef& p : scb::sc_presets())
    if (p.key == key) return p;
  throw std::invalid_argument("no preset " + key);
}

std::vector<std::string> all_keys() {
  std::vector<std::string> k;
  for (const PresetRef& p : scb::sc_presets()) k.push_back(p.key);
  return k;
}

// ------------------------------------------------------------------------- paper vectors
/// The paper vectors of one AMD preset: the cases of its family's table that name its
/// architecture and type (operands that its formats cannot hold are left out, as the table
/// tests report them).
std::vector<Sample> paper_samples(const PresetRef& p) {
  std::vector<Sample> r;
  const std::string table = std::string(MATCORE_SOURCE_DIR) + "/tb/vectors/paper_" + p.dp.family + ".pvt";
  for (const TableCase& tc : read_table(table)) {
    if (std::find(tc.presets.begin(), tc.presets.end(), p.dp.arch) == tc.presets.end()) continue;
    const Datapath dp = find_preset(p.dp.arch, tc.type);
    if (dp.type != p.dp.type) continue;
    Sample s;
    try {
      build_operands(tc, dp, s.a, s.b, s.c);
    } catch (const InputError&) {
      continue;
    }
    r.push_back(s);
  }
  return r;
}

// The AMD presets the paper has vectors for (the tables are read only when a test runs, not at
// registration). The paper characterises no fp64 instruction: the fp64 presets are covered by
// the random-sample tests below.
std::vector<std::string> paper_keys() {
  std::vector<std::string> k;
  for (const PresetRef& p : scb::sc_presets())
    if (scb::has_paper(p.dp)) k.push_back(p.key);
  return k;
}

class PaperVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(PaperVectors, SystemCEqualsFastModel) {
  const std::vector<Sample> s = paper_samples(ref(GetParam()));
  ASSERT_FALSE(s.empty()) << "no paper vectors for " << GetParam();
  std::string first;
  const size_t bad = scb::compare_with_dot(scb::top_for(GetParam()), s, &first);
  EXPECT_EQ(bad, 0u) << first;
  RecordProperty("vectors", static_cast<int>(s.size()));
}

INSTANTIATE_TEST_SUITE_P(Paper, PaperVectors, ::testing::ValuesIn(paper_keys()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// ------------------------------------------------------------------------ random samples
// 10^5 samples per strategy for every preset (the target); MATCORE_SC_SAMPLES=N changes
// the count (e.g. a quick local run). kBig marks one preset of every datapath structure, which
// also gets the larger subnormal-range check.
const std::set<std::string> kBig = {"mi100_fp16",  "mi250_fp16",       "mi300x_fp16",
                                    "mi300x_e4m3fnuz", "mi300x_fp32",  "h100_fp16",
                                    "b200_e4m3_mma_sync_out_fp16"};

uint64_t count_for(const std::string& key, const std::string& strategy) {
  if (const char* e = std::getenv("MATCORE_SC_SAMPLES")) return std::strtoull(e, nullptr, 10);
  if (ref(key).dp.scaled()) return 5000;  // block-scaled: checked against the reference stages
  const bool big = kBig.count(key) != 0;
  if (strategy == "expmant_sub") return big ? 20000 : 4000;  // the subnormal ranges: a check, not a target
  return 100000;
}

using mc_test::random_samples;

struct RandomCase {
  std::string key, strategy;
};
std::vector<RandomCase> random_cases() {
  std::vector<RandomCase> r;
  for (const std::string& k : all_keys())
    for (const char* st : {"expmant", "expmant_sub", "bits"}) r.push_back(RandomCase{k, st});
  return r;
}

class Random : public ::testing::TestWithParam<RandomCase> {};

TEST_P(Random, SystemCEqualsFastModel) {
  const RandomCase& rc = GetParam();
  const Datapath& dp = ref(rc.key).dp;
  const uint64_t n = count_for(rc.key, rc.strategy);
  const std::vector<Sample> s = random_samples(dp, rc.strategy, n, 7);
  mcsc::DatapathTop& top = scb::top_for(rc.key);
  const uint64_t c0 = top.cycles();
  std::string first;
  const size_t bad = scb::compare_with_dot(top, s, &first);
  EXPECT_EQ(bad, 0u) << first;
  // throughput: independent samples keep one group per cycle entering the pipeline; each chunk
  // of 4096 samples (compare_with_dot) ends with a tail where only its last samples' groups run
  const uint64_t G = (dp.k_default + dp.n_fma - 1) / dp.n_fma;
  const uint64_t chunks = (n + 4095) / 4096;
  EXPECT_LE(top.cycles() - c0, n * G + chunks * (G * top.recurrence() + top.latency() + 4))
      << "pipeline did not stream";
  RecordProperty("samples", static_cast<int>(n));
}

INSTANTIATE_TEST_SUITE_P(Sampled, Random, ::testing::ValuesIn(random_cases()),
                         [](const ::testing::TestParamInfo<RandomCase>& i) {
                           return i.param.key + "_" + i.param.strategy;
                         });

// ----------------------------------------------------------------- injected special values
class Specials : public ::testing::TestWithParam<std::string> {};

TEST_P(Specials, SystemCEqualsFastModel) {
  const Datapath& dp = ref(GetParam()).dp;
  const uint64_t n = std::getenv("MATCORE_SC_SAMPLES") ? count_for(GetParam(), "bits") / 4 : 5000;
  const std::vector<Sample> s = mc_test::special_samples(dp, n);
  std::string first;
  EXPECT_EQ(scb::compare_with_dot(scb::top_for(GetParam()), s, &first), 0u) << first;
}

INSTANTIATE_TEST_SUITE_P(Injected, Specials, ::testing::ValuesIn(all_keys()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// ------------------------------------------------------------ overflow inside the datapath
TEST(IntermediateOverflow, SystemCGivesTheHandDerivedBits) {
  size_t ran = 0;
  for (const ovf::Case& k : ovf::cases()) {
    const Datapath want = find_preset(k.arch, k.type, k.out, k.variant);
    for (const PresetRef& p : scb::sc_presets()) {
      if (p.dp.name() != want.name() || p.dp.variant != want.variant || !(p.dp.out_fmt == want.out_fmt)) continue;
      mcsc::DatapathTop& top = scb::top_for(p.key);
      Sample s{ovf::operands(want.a_fmt, k.a, k.reps), ovf::operands(want.b_fmt, k.b, k.reps),
               parse_operand(want.out_fmt, k.c), {}, {}};
      std::string first;
      EXPECT_EQ(scb::compare_with_dot(top, {s}, &first), 0u) << ovf::label(k) << "\n" << first;
      top.push(mcsc::Job{0, s.a, s.b, s.c, {}, {}});
      top.run();
      const std::vector<mcsc::Done> done = top.take();
      ASSERT_EQ(done.size(), 1u) << ovf::label(k);
      EXPECT_EQ(to_hex_bits(want.out_fmt, done[0].d), to_hex_bits(want.out_fmt, k.d)) << ovf::label(k);
      ++ran;
    }
  }
  EXPECT_EQ(ran, ovf::cases().size());  // every case found its top
}

// ---------------------------------------------------------------------- pipeline timing
TEST(Pipeline, ChainedGroupsWaitForTheirC) {
  // One sample of a multi-group preset: its groups are `recurrence` cycles apart; many samples
  // stream one group per cycle.
  mcsc::DatapathTop& top = scb::top_for("mi300x_fp16");
  const Datapath& dp = top.datapath();
  ASSERT_EQ(dp.k_default / dp.n_fma, 2);
  EXPECT_EQ(top.latency(), 6);
  EXPECT_EQ(top.recurrence(), 7);
  Sample one{std::vector<uint64_t>(16, 0x3c00), std::vector<uint64_t>(16, 0x3c00), 0, {}, {}};
  const uint64_t c0 = top.cycles();
  EXPECT_EQ(scb::compare_with_dot(top, {one}, nullptr), 0u);
  const uint64_t single = top.cycles() - c0;
  // group 0 issued at cycle 1, its result at the rounder at 1+6, group 1 issued at 1+7,
  // result 1+7+6, seen by the issue stage one cycle later, then 2 drain cycles
  EXPECT_EQ(single, 1u + 7 + 6 + 1 + 2);
  std::vector<Sample> many(200, one);
  const uint64_t c1 = top.cycles();
  EXPECT_EQ(scb::compare_with_dot(top, many, nullptr), 0u);
  EXPECT_LE(top.cycles() - c1, 400u + 7 + 6 + 1 + 2 + 8);  // 400 groups, one per cycle
}

}  // namespace
