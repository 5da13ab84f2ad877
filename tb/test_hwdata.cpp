// Real NVIDIA GPU results (../shared/hwdata/nvidia, 5000 samples per set): every set the spec
// marks confirmed must give zero mismatches; the open sets assert their documented mismatch
// count (docs/nvidia-open-sets.md), so any change in the model's behaviour on them is seen.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "matcore/presets.hpp"
#include "matcore/validate.hpp"

using namespace mc;

namespace {

struct Set {
  const char* gpu;
  const char* arch;
  const char* fmt;   // folder / file tag
  const char* type;  // preset type
  const char* out;   // fp32 | fp16
  int K;
  bool zero_c;
  long expect;       // expected mismatches (0 for confirmed sets)
};

void PrintTo(const Set& s, std::ostream* os) {
  *os << s.gpu << "/" << s.fmt << " out " << s.out << (s.zero_c ? " c=0" : "");
}

std::string dir() { return std::string(MATCORE_SHARED_DIR) + "/hwdata/nvidia/"; }

void run(const Set& s) {
  const std::string d = dir() + s.gpu + "/" + s.fmt + "/";
  const std::string tag = std::string("_") + s.gpu + "_";
  const std::string a = d + "a" + tag + s.fmt + ".txt", b = d + "b" + tag + s.fmt + ".txt",
                    c = d + "c" + tag + "fp32.txt", dd = d + "d" + tag + s.out + ".txt";
  ASSERT_TRUE(std::ifstream(a).good()) << "hardware data missing: " << a
                                       << " (set MATCORE_SHARED_DIR to the shared/ folder)";
  const Datapath dp = find_preset(s.arch, s.type, s.out);
  SampleSet set = load_sample_set(dp, a, b, c, dd, s.K);
  ASSERT_EQ(set.n, 5000u);
  if (s.zero_c) std::fill(set.c.begin(), set.c.end(), zero_bits(dp.out_fmt, false));
  const auto got = run_samples(dp, set, 0);
  const auto mm = mismatches(set, got);
  std::string first;
  if (!mm.empty())
    first = "first mismatch: line " + std::to_string(mm[0] + 1) + " model 0x" + to_hex(got[mm[0]]) +
            " hardware 0x" + to_hex(set.d[mm[0]]);
  EXPECT_EQ(static_cast<long>(mm.size()), s.expect) << dp.name() << " out " << s.out << ": " << first;
}

const Set kConfirmed[] = {
    {"V100", "v100", "fp16", "fp16", "fp32", 4, false, 0},
    {"V100", "v100", "fp16", "fp16", "fp16", 4, false, 0},
    {"A100", "a100", "fp16", "fp16", "fp32", 8, false, 0},
    {"A100", "a100", "fp16", "fp16", "fp16", 8, false, 0},
    {"A100", "a100", "bf16", "bf16", "fp32", 8, false, 0},
    {"A100", "a100", "tf32", "tf32", "fp32", 4, false, 0},
    {"Ada", "l40s", "fp16", "fp16", "fp32", 8, false, 0},
    {"Ada", "l40s", "fp16", "fp16", "fp16", 8, false, 0},
    {"Ada", "l40s", "bf16", "bf16", "fp32", 8, false, 0},
    {"Ada", "l40s", "tf32", "tf32", "fp32", 4, false, 0},
    {"Ada", "l40s", "E4M3", "e4m3", "fp32", 32, false, 0},
    {"Ada", "l40s", "E5M2", "e5m2", "fp32", 32, false, 0},
    {"Ada", "l40s", "E4M3", "e4m3", "fp16", 32, false, 0},
    {"Ada", "l40s", "E5M2", "e5m2", "fp16", 32, false, 0},
    {"H100", "h100", "fp16", "fp16", "fp32", 16, false, 0},
    {"H100", "h100", "fp16", "fp16", "fp16", 16, false, 0},
    {"H100", "h100", "bf16", "bf16", "fp32", 16, false, 0},
    {"H100", "h100", "tf32", "tf32", "fp32", 4, false, 0},
    {"H100", "h100", "E4M3", "e4m3", "fp32", 32, true, 0},
    {"H100", "h100", "E5M2", "e5m2", "fp32", 32, true, 0},
    {"B200", "b200", "fp16", "fp16", "fp32", 16, false, 0},
    {"B200", "b200", "fp16", "fp16", "fp16", 16, false, 0},
    {"B200", "b200", "bf16", "bf16", "fp32", 16, false, 0},
    {"B200", "b200", "tf32", "tf32", "fp32", 4, false, 0},
    // Open in the published description, resolved here (docs/nvidia-open-sets.md): fp8
    // mma.sync on sm_90/sm_100 runs as two interleaved 16-product HMMAs, c added last (RNE).
    {"H100", "h100", "E4M3", "e4m3", "fp16", 32, false, 0},
    {"H100", "h100", "E5M2", "e5m2", "fp16", 32, false, 0},
    {"B200", "b200", "E4M3", "e4m3", "fp32", 32, false, 0},
    {"B200", "b200", "E5M2", "e5m2", "fp32", 32, false, 0},
    {"B200", "b200", "E4M3", "e4m3", "fp16", 32, false, 0},
    {"B200", "b200", "E5M2", "e5m2", "fp16", 32, false, 0},
};

}  // namespace

class Confirmed : public ::testing::TestWithParam<Set> {};
TEST_P(Confirmed, ZeroMismatches) { run(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Hwdata, Confirmed, ::testing::ValuesIn(kConfirmed),
                         [](const ::testing::TestParamInfo<Set>& i) {
                           return std::string(i.param.gpu) + "_" + i.param.fmt + "_" + i.param.out;
                         });

// The published description of B200 fp8 (one fused group of 32 products, F = 25, c inside,
// RTZ) is kept as the "tcgen05" variant. On the mma.sync data it is off by one ulp on about 35%
// of the samples: these counts are the evidence for the refinement and must not drift.
TEST(HwdataPublishedDescription, B200Fp8SingleGroupMisses) {
  for (const auto& t : {std::make_pair("E4M3", 1793L), std::make_pair("E5M2", 1764L)}) {
    const std::string f = t.first, ty = f == "E4M3" ? "e4m3" : "e5m2";
    const std::string d = dir() + "B200/" + f + "/";
    const Datapath dp = find_preset("b200", ty, "fp32", "tcgen05");
    SampleSet set = load_sample_set(dp, d + "a_B200_" + f + ".txt", d + "b_B200_" + f + ".txt",
                                    d + "c_B200_fp32.txt", d + "d_B200_fp32.txt", 32);
    EXPECT_EQ(static_cast<long>(mismatches(set, run_samples(dp, set)).size()), t.second) << f;
  }
}
