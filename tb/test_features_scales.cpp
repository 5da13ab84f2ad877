// Feature detection of block scales (core/src/tools/features_scales.cpp, docs/features.md,
// "Block scales"): the scale probes fit group_size, group_align and frac_bits.
//  (1) every NVIDIA block-scaled preset (the published GST-FDPA and ST-FDPA units) is recovered
//      uniquely from its probe results, with E8M0 and UE4M3 scales;
//  (2) variants that no preset has (other G, the sum alignment, other F) are recovered;
//  (3) the emitted files (a, b, c, sa, sb, manifest) round-trip through a device stand-in;
//  (4) what the probes cannot see is said: one scale block a sample leaves G open, a unit
//      outside the fitted family (another output rounding) fits no candidate.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "matcore/features.hpp"
#include "matcore/fields.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"

using namespace mc;

namespace {

Datapath with(const std::string& arch, const std::string& type, const std::string& settings = "") {
  Datapath d = find_preset(arch, type);
  if (!settings.empty()) apply_settings(d, settings);
  return d;
}

void expect_recovered(const Datapath& dp) {
  const DetectedFeatures det = detect_scale_features(dp);
  EXPECT_EQ(det.fits, 1u) << dp.name() << "\n" << format_feature_table(det);
  EXPECT_EQ(det.dp.group_size, dp.group_size) << dp.name();
  EXPECT_EQ(det.dp.group_by_sum, dp.group_by_sum) << dp.name();
  EXPECT_EQ(det.dp.frac_bits, dp.frac_bits) << dp.name();
  EXPECT_EQ(det.reproduced, det.samples) << dp.name();
}

}  // namespace

TEST(FeatureScales, NvidiaPresetsRecovered) {
  // GST-FDPA (G = 16, F = 35): E8M0 per 32 and per 16, UE4M3 per 16; ST-FDPA (F = 25).
  expect_recovered(with("b200", "nvfp4"));
  expect_recovered(with("b200", "mxf4"));
  expect_recovered(with("rtxpro6000", "mxf4nvf4.e8m0"));
  expect_recovered(with("b200", "mxf8f6f4.e2m1.e3m2"));
  expect_recovered(with("rtxpro6000", "mxf8f6f4.e5m2.e4m3"));
  EXPECT_EQ(with("b200", "nvfp4").group_size, 16);  // the presets are what the spec says
  EXPECT_EQ(with("b200", "mxf8f6f4.e2m1.e3m2").group_size, 0);
}

TEST(FeatureScales, VariantsRecovered) {
  expect_recovered(with("b200", "nvfp4", "group_size=8,group_align=sum,frac_bits=30"));
  expect_recovered(with("b200", "nvfp4", "group_size=4,frac_bits=28"));
  expect_recovered(with("b200", "mxf4", "group_size=32,frac_bits=40"));
  expect_recovered(with("b200", "mxf4", "group_size=2,group_align=sum"));
  expect_recovered(with("b200", "nvfp4", "group_size=none,frac_bits=22"));  // ST with UE4M3 scales
}

TEST(FeatureScales, FilesRoundTripThroughADevice) {
  const std::string dir = ::testing::TempDir() + "/scale_probes_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const Datapath preset = with("b200", "nvfp4");
  const ScaleProbes p = scale_feature_vectors(preset, 64);
  emit_scale_probes(p, dir);
  for (const char* f : {"a", "b", "c", "sa", "sb", "manifest"}) EXPECT_TRUE(std::filesystem::exists(dir + "/" + f + ".txt")) << f;
  // The scale files hold one line of ceil(64 / 16) = 4 scales per probe.
  const ScaleFile sa = read_scale_file(dir + "/sa.txt", 4, kUE4M3);
  EXPECT_EQ(sa.samples(), p.v.size());
  EXPECT_EQ(sa.v, p.sa);
  // "The device": a unit with G = 8 aligned at the group sums, run from the files (sa.txt and
  // sb.txt found beside a.txt), its d read back as from hardware.
  const Datapath device = with("b200", "nvfp4", "group_size=8,group_align=sum,frac_bits=30");
  stream_files(device, dir + "/a.txt", dir + "/b.txt", dir + "/c.txt", "", dir + "/d.txt", 64, false, 1, 0, false);
  const DetectedFeatures det = decide_scale_features(scale_fit_base(preset), p, read_feature_results(p.v, dir + "/d.txt"));
  EXPECT_EQ(det.fits, 1u) << format_feature_table(det);
  EXPECT_EQ(det.dp.group_size, 8);
  EXPECT_TRUE(det.dp.group_by_sum);
  EXPECT_EQ(det.dp.frac_bits, 30);
  std::filesystem::remove_all(dir);
}

TEST(FeatureScales, WhatTheProbesCannotSeeIsSaid) {
  // K = 32 = one E8M0 block: the two-block group probes cannot run, so G >= 1 stays open
  // (GST is still told from ST by where a group aligns).
  const DetectedFeatures one = detect_scale_features(with("b200", "mxf8f6f4.e4m3.e4m3", "group_size=8,frac_bits=31"));
  EXPECT_GT(one.fits, 1u);
  EXPECT_EQ(one.dp.frac_bits, 31);
  EXPECT_NE(format_feature_table(one).find("group_size (G)   undecided"), std::string::npos) << format_feature_table(one);
  EXPECT_NE(format_feature_table(one).find("GST-FDPA: products summed exactly"), std::string::npos);
  // A unit that rounds its output to nearest, fitted on a base that truncates: no candidate.
  const Datapath base = with("b200", "nvfp4");
  const Datapath device = with("b200", "nvfp4", "out_round=rne");
  const ScaleProbes p = scale_feature_vectors(base, 64);
  const DetectedFeatures off = decide_scale_features(scale_fit_base(base), p, run_scale_probes(device, p));
  EXPECT_EQ(off.fits, 0u);
  EXPECT_LT(off.reproduced, off.samples);
  EXPECT_NE(format_feature_table(off).find("no candidate reproduces every scale probe"), std::string::npos);
  // Unscaled datapaths and K outside the probes' range are refused.
  EXPECT_THROW(scale_feature_vectors(find_preset("h100", "fp16"), 16), std::invalid_argument);
  EXPECT_THROW(scale_feature_vectors(base, 65), std::invalid_argument);
}
