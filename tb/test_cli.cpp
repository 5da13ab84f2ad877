// The matcore command line: real outputs, exit status (0 ok, 1 mismatches, 2 bad input) and
// error messages that name the file, line and field.
#include <gtest/gtest.h>

#include <sstream>

#include "temp_dir.hpp"
#include "run_command.hpp"

#include <cstdio>
#include <fstream>
#include <string>

namespace {

struct CliRun {
  int status;
  std::string out;  // stdout and stderr together
};

CliRun run(const std::string& args) {
  CliRun r{-1, ""};
  r.status = mc_test::run_command(std::string(MATCORE_CLI) + " " + args + " 2>&1", &r.out);
  return r;
}

std::string tmp(const std::string& name, const std::string& content) {
  const std::string p = mc_test::temp_dir() + "/" + name;
  std::ofstream(p) << content;
  return p;
}

std::string hw(const std::string& rel) { return std::string(MATCORE_SHARED_DIR) + "/hwdata/nvidia/" + rel; }

std::string last_line(const std::string& s) {
  std::string t = s;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t.substr(t.rfind('\n') + 1);
}

}  // namespace

TEST(Cli, DotPaperVector) {
  // section 4.3.1: c = 1, p1 = 2^-24, p2 = 2^-24 on MI300X fp16 gives 1 + 2^-23
  CliRun r = run("dot --arch mi300x --type fp16 --a 2^-12,2^-12 --b 2^-12,2^-12 --c 1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("d = 0x3f800001"), std::string::npos) << r.out;
  // CDNA2 pairwise: fl(c + fl(fl(p1+p2)+fl(p3+p4))) with p1=p3=1, p2=p4=2^-23+2^-24,
  // c = 2^-23+2^-25 gives 2 + 2^-21 + 2^-22 (section 4.2.1 test 4)
  r = run("dot --arch mi250 --type fp16 --a 1,1.5*2^-12,1,1.5*2^-12 --b 1,2^-11,1,2^-11 --c 2^-23+2^-25");
  EXPECT_NE(r.out.find("d = 0x40000003"), std::string::npos) << r.out;
  // section 4.3.3: xf32 inputs are truncated to 10 fraction bits: 1+2^-10+2^-11 -> 1+2^-10
  r = run("dot --arch mi300x --type xf32 --a 1+2^-10+2^-11 --b -1");
  EXPECT_NE(r.out.find("d = 0xbf802000"), std::string::npos) << r.out;
  // no binary16 accumulation for bf16 inputs in PTX
  r = run("dot --arch h100 --type bf16 --out fp16 --a 1 --b 1");
  EXPECT_EQ(r.status, 2);
  r = run("dot --arch mi300x --type fp16 --a 0x3c00 --b 0x3c00 --trace");
  EXPECT_NE(r.out.find("aligner.e_max"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cadd.s_acc"), std::string::npos) << r.out;
}

TEST(Cli, ListShowsArchitecturesTypesInstructions) {
  CliRun r = run("list");
  EXPECT_EQ(r.status, 0);
  for (const char* s : {"mi100", "mi300x", "h100", "b200", "e4m3fnuz,e5m2fnuz", "bf16_1k",
                        "v_mfma_f32_32x32x8f16", "v_mfma_f32_16x16x32_fp8_bf8", "wgmma", "xf32"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

// list presets: one line per preset with its element formats and K (the fp6/fp4 mixes of the
// Blackwell f8f6f4 instructions among them)
TEST(Cli, ListPresetsShowsFormatsAndK) {
  CliRun r = run("list presets --arch b200");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("b200        e2m1,e3m2  tcgen05   e2m1     x e3m2     scale none          K=32  n_fma=32 fused    -> binary32\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("b200        fp16       -         binary16 x binary16 scale none          K=16  n_fma=16 fused    -> binary32 (binary16 too"),
            std::string::npos)
      << r.out;
  // the block-scaled types (issue 27): scale format and block, G for the group-scaled sums
  EXPECT_NE(r.out.find("b200        mxf8f6f4.e4m3.e2m1 tcgen05   e4m3     x e2m1     scale e8m0/32       K=32  n_fma=32 fused    -> binary32\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("b200        nvfp4      tcgen05   e2m1     x e2m1     scale ue4m3/16 G=16 K=64  n_fma=64 fused    -> binary32\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("b200        mxf4       tcgen05   e2m1     x e2m1     scale e8m0/32 G=16  K=64"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("mi300x"), std::string::npos);
}

TEST(Cli, ValidateConfirmedSetAndLastLine) {
  CliRun r = run("validate --arch a100 --type fp16 --a " + hw("A100/fp16/a_A100_fp16.txt") + " --b " +
              hw("A100/fp16/b_A100_fp16.txt") + " --c " + hw("A100/fp16/c_A100_fp32.txt") +
              " --d " + hw("A100/fp16/d_A100_fp32.txt"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(last_line(r.out), "samples=5000 mismatches=0 p_upper=0.00276");
  // H100 fp8 with binary32 output needs c = 0
  r = run("validate --arch h100 --type e4m3 --zero-c --k 32 --a " + hw("H100/E4M3/a_H100_E4M3.txt") +
          " --b " + hw("H100/E4M3/b_H100_E4M3.txt") + " --c " + hw("H100/E4M3/c_H100_fp32.txt") +
          " --d " + hw("H100/E4M3/d_H100_fp32.txt"));
  EXPECT_EQ(r.status, 0) << last_line(r.out);
}

TEST(Cli, ValidateReportsMismatchesWithInputs) {
  // the A100 data against the V100 preset (K=8 in groups of 4, F=23): mismatches, exit 1
  CliRun r = run("validate --arch v100 --type fp16 --show 2 --a " + hw("A100/fp16/a_A100_fp16.txt") +
              " --b " + hw("A100/fp16/b_A100_fp16.txt") + " --c " + hw("A100/fp16/c_A100_fp32.txt") +
              " --d " + hw("A100/fp16/d_A100_fp32.txt"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("mismatch sample"), std::string::npos);
  EXPECT_NE(r.out.find("  a: "), std::string::npos);
  const std::string l = last_line(r.out);
  EXPECT_EQ(l.rfind("samples=5000 mismatches=", 0), 0u) << l;
}

TEST(Cli, BadInputIsAClearErrorWithExitTwo) {
  const std::string a = tmp("a.txt", "3f800000 3f800000\n3f800000\n");
  const std::string b = tmp("b.txt", "3f800000 3f800000\n3f800000 3f800000\n");
  const std::string c = tmp("c.txt", "00000000\n00000000\n");
  const std::string d = tmp("d.txt", "3f800000\n3f800000\n");
  const std::string common = " --b " + b + " --c " + c + " --d " + d;
  CliRun r = run("validate --arch a100 --type fp16 --a " + a + common);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("a.txt:2: K"), std::string::npos) << r.out;  // wrong K on line 2
  const std::string bad = tmp("bad.txt", "3f80000g 3f800000\n");
  r = run("validate --arch a100 --type fp16 --a " + bad + common);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("bad.txt:1: value 1"), std::string::npos) << r.out;
  const std::string empty = tmp("empty.txt", "");
  r = run("validate --arch a100 --type fp16 --a " + empty + common);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("empty"), std::string::npos) << r.out;
  // a value not representable in fp16 (0.1f)
  const std::string inex = tmp("inex.txt", "3dcccccd 3f800000\n3f800000 3f800000\n");
  r = run("validate --arch a100 --type fp16 --a " + inex + common);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("inex.txt:1: value 1"), std::string::npos) << r.out;
  // Inf given for a format without Inf
  const std::string inf = tmp("inf.txt", "7f800000 3f800000\n3f800000 3f800000\n");
  r = run("validate --arch mi300x --type e4m3fnuz --a " + inf + common);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("infinity"), std::string::npos) << r.out;
  // wrong --k
  r = run("validate --arch a100 --type fp16 --k 8 --a " + b + common);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("expected K = 8"), std::string::npos) << r.out;
  // the a file ends first (b, c, d have one more sample): an error, not a shorter validation
  const std::string a1 = tmp("a1.txt", "3f800000 3f800000\n");
  r = run("validate --arch a100 --type fp16 --a " + a1 + common);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("sample counts differ: " + a1 + " ends before the other files (at sample 2)"),
            std::string::npos) << r.out;
  // c file with a malformed line
  const std::string badc = tmp("badc.txt", "00000000\n0101\n");
  r = run("validate --arch a100 --type fp16 --a " + b + " --b " + b + " --c " + badc + " --d " + d);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("badc.txt:2: value"), std::string::npos) << r.out;
  // missing file, unknown arch, unknown type, unknown option, missing option
  r = run("validate --arch a100 --type fp16 --a /nonexistent/a.txt" + common);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("/nonexistent/a.txt"), std::string::npos);
  r = run("validate --arch a1000 --type fp16 --a " + b + common);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown architecture"), std::string::npos);
  r = run("dot --arch mi300x --type fp17 --a 1 --b 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("no input type 'fp17'"), std::string::npos) << r.out;
  r = run("dot --arch mi300x --type fp16 --a 1 --b 1 --bogus 3");
  EXPECT_EQ(r.status, 2);
  r = run("dot --arch mi300x --type fp16 --a 1,2 --b 1");
  EXPECT_EQ(r.status, 2);
  r = run("dot --arch mi300x --type fp16 --a 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--b is required"), std::string::npos) << r.out;
  r = run("dot --arch mi300x --type fp16 --a 1+ --b 1");
  EXPECT_EQ(r.status, 2);
  r = run("frobnicate");
  EXPECT_EQ(r.status, 2);
}

TEST(Cli, DecimalOperandsAreRoundedWithANote) {
  CliRun r = run("dot --arch mi100 --type fp32 --a 0.1 --b 1");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("d = 0x3dcccccd"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: a1 = 0.1 rounded"), std::string::npos) << r.out;
  r = run("dot --arch mi300x --type fp16 --a nan --b 1");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("nan"), std::string::npos);
}

TEST(Cli, GemmAndMfmaOnFiles) {
  // 2x3 * 3x2 in fp16 on MI300X: exact small integers
  const std::string A = tmp("A.txt", "3f800000 40000000 40400000\n40800000 40a00000 40c00000\n");
  const std::string B = tmp("B.txt", "3f800000 00000000\n00000000 3f800000\n3f800000 3f800000\n");
  CliRun r = run("gemm --arch mi300x --type fp16 --A " + A + " --B " + B);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("40800000 40a00000\n41200000 41300000"), std::string::npos) << r.out;
  // the same A written as binary16 patterns (the native form of the vector format)
  const std::string An = tmp("An.txt", "3c00 4000 4200\n4400 4500 4600\n");
  r = run("gemm --arch mi300x --type fp16 --A " + An + " --B " + B);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("40800000 40a00000\n41200000 41300000"), std::string::npos) << r.out;
  // shape errors name the files
  r = run("gemm --arch mi300x --type fp16 --A " + A + " --B " + A);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("columns"), std::string::npos) << r.out;
  r = run("mfma --arch mi300x --instr v_mfma_f32_4x4x4f16 --A " + A + " --B " + B);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("A must be 64 x 4"), std::string::npos) << r.out;
  r = run("mfma --arch mi100 --instr v_mfma_f32_16x16x32_fp8_fp8 --A " + A + " --B " + B);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("does not exist on mi100"), std::string::npos) << r.out;
}

TEST(Cli, BlockScaledGemmTakesScaleMatrices) {
  // 2x32 e4m3 ones times 32x2 e2m1 ones (native 2-digit patterns): every dot is 32; A's rows
  // scaled by 2 and 1, B's columns by 1 and 1/2 (E8M0 patterns): D = [64 32; 32 16]
  std::string a_row, b_text;
  for (int k = 0; k < 32; ++k) a_row += (k ? " 38" : "38");
  for (int k = 0; k < 32; ++k) b_text += "02 02\n";
  const std::string A = tmp("mxA.txt", a_row + "\n" + a_row + "\n"), B = tmp("mxB.txt", b_text);
  const std::string SA = tmp("mxSA.txt", "80\n7f\n"), SB = tmp("mxSB.txt", "7f\n7e\n");
  const std::string gemm = "gemm --arch b200 --type mxf8f6f4.e4m3.e2m1 --A " + A + " --B " + B;
  CliRun r = run(gemm + " --SA " + SA + " --SB " + SB);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("42800000 42000000\n42000000 41800000"), std::string::npos) << r.out;
  r = run(gemm);  // unit scales, with a note
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("42000000 42000000\n42000000 42000000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("scales are taken as 1"), std::string::npos) << r.out;
  r = run("mfma --arch rtxpro6000 --instr mma.m16n8k32.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e2m1.ue8m0 --A " +
          A + " --B " + B + " --SA " + SA + " --SB " + SB);
  EXPECT_EQ(r.status, 2);  // one instruction is 16 x 8 x 32
  EXPECT_NE(r.out.find("A must be 16 x 32"), std::string::npos) << r.out;
  r = run(gemm + " --SA " + tmp("mxSA3.txt", "80\n7f\n7f\n") + " --SB " + SB);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("3 lines, but A has 2 rows"), std::string::npos) << r.out;
  r = run(gemm + " --SA " + tmp("mxSAbad.txt", "80 7f\n7f 7f\n") + " --SB " + SB);
  EXPECT_EQ(r.status, 2);  // K = 32: one scale per line
  EXPECT_NE(r.out.find("mxSAbad.txt"), std::string::npos) << r.out;
  r = run("gemm --arch b200 --type e4m3,e2m1 --variant tcgen05 --A " + A + " --B " + B + " --SA " + SA);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("has no block scales"), std::string::npos) << r.out;
}

TEST(Cli, BrokenWidthRelationsWarnAndLinkedSweepsMoveBothFields) {
  CliRun r = run("show --arch mi300x --type fp16 --set frac_bits=28");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("warning: mi300x/fp16: frac_bits = 28 but c_frac = 24"), std::string::npos) << r.out;
  r = run("show --arch mi300x --type fp16 --set frac_bits=28,c_frac=28");
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  r = run("show --arch mi300x --type fp16");
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  // a linked sweep sets both fields to each value: the row frac_bits,c_frac=28 is the design
  // with both at 28 (its d differ from frac_bits=28 alone), and it does not warn
  const std::string csv = ::testing::TempDir() + "linked.csv", csv1 = ::testing::TempDir() + "alone.csv";
  r = run("explore --dp mi300x/fp16 --sweep frac_bits,c_frac=24..28:4 --k 256 --n 400 --dist cancel --csv " + csv);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("frac_bits,c_frac=28"), std::string::npos) << r.out;
  r = run("explore --dp mi300x/fp16 --sweep frac_bits=28 --k 256 --n 400 --dist cancel --csv " + csv1);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("warning: mi300x/fp16 frac_bits=28: frac_bits = 28 but c_frac = 24"), std::string::npos) << r.out;
  auto rms = [](const std::string& path, const std::string& sweep) {  // rms_nw_u (column 18) of the row
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      const size_t at = line.find("," + sweep + ",");
      if (at == std::string::npos) continue;
      line.replace(at + 1, sweep.size(), "S");  // the (quoted) sweep label holds a comma
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
      return f.size() > 17 ? f[17] : std::string();
    }
    return std::string();
  };
  const std::string both = rms(csv, "\"frac_bits,c_frac=28\""), alone = rms(csv1, "frac_bits=28");
  ASSERT_FALSE(both.empty());
  ASSERT_FALSE(alone.empty());
  EXPECT_LT(std::stod(both), std::stod(alone) / 4);  // the coupled design is far more accurate
  r = run("explore --dp mi300x/fp16 --sweep frac_bits,c_frac=24..28:4 --sweep c_frac=30 --k 16 --n 10");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("two --sweep of the same field 'c_frac'"), std::string::npos) << r.out;
  std::remove(csv.c_str());
  std::remove(csv1.c_str());
}

// explore --worst N DIR: the worst samples of each row as a vector set that validate and trace
// replay; d.txt is the exact sum rounded once, so validate shows the design's misses
TEST(Cli, ExploreWorstSamplesReplay) {
  const std::string dir = ::testing::TempDir() + "worst_set";
  CliRun r = run("explore --dp mi300x/fp16 --k 64 --n 2000 --dist cancel --worst 3 " + dir);
  EXPECT_EQ(r.status, 0) << r.out;
  const std::string row = dir + "/mi300x_fp16_k64";
  EXPECT_NE(r.out.find("wrote " + row + " (3 samples"), std::string::npos) << r.out;
  std::ifstream list(row + "/worst.txt");
  std::vector<double> errs;
  for (std::string line; std::getline(list, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    unsigned long long idx;
    double e;
    ss >> idx >> e;
    errs.push_back(e);
  }
  ASSERT_EQ(errs.size(), 3u);
  EXPECT_GE(errs[0], errs[1]);
  EXPECT_GE(errs[1], errs[2]);
  EXPECT_GT(errs[2], 0.05);  // cancelling sums: the worst are far from the correctly rounded result
  const std::string files = " --a " + row + "/a.txt --b " + row + "/b.txt --c " + row + "/c.txt --d " + row + "/d.txt";
  r = run("validate --arch mi300x --type fp16" + files + " --show 0");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("samples=3 mismatches=3"), std::string::npos) << r.out;
  r = run("validate --arch mi300x --type fp16 --set frac_bits=60,c_frac=60,sum_frac=60,acc_frac=60" + files + " --show 0");
  EXPECT_NE(r.out.find("samples=3 mismatches=0"), std::string::npos) << r.out;  // a wide design gets them right
  r = run("trace --arch mi300x --type fp16 --file " + row + " --samples 2 --svg " + dir + "/w.svg");  // (no SystemC needed)
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("wrote " + dir + "/w.svg"), std::string::npos) << r.out;
  r = run("explore --dp mi300x/fp16 --k 16 --n 10 --worst 0 " + dir);
  EXPECT_EQ(r.status, 2) << r.out;
}

// --file takes a hardware set's folder as it is (a_A100_fp16.txt, ..., d_A100_fp16.txt and
// d_A100_fp32.txt: the d of the datapath's output type)
TEST(Cli, FileTakesTheHardwareSetsNames) {
  CliRun r = run("explain --arch a100 --type fp16 --no-trace --file " + hw("A100/fp16") + " --samples 0,5");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("over 2 samples (the preset reproduces 2)"), std::string::npos) << r.out;
  r = run("explain --arch a100 --type fp16 --out fp16 --no-trace --file " + hw("A100/fp16") + " --samples 3");
  EXPECT_NE(r.out.find("(the preset already agrees)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("observed 0x3ec4e000"), std::string::npos) << r.out;  // d_A100_fp16.txt, widened
}

TEST(Cli, CheckTableRunsThePaperVectors) {
  CliRun r = run("check-table " + std::string(MATCORE_SOURCE_DIR) + "/tb/vectors/paper_cdna2.pvt");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(last_line(r.out), "264 passed, 0 failed");
}

TEST(Cli, SampleRunValidateNativeAndWidened) {
  const std::string dir = mc_test::temp_dir() + "/cli_sample";
  CliRun r = run("sample --arch mi300x --type fp16 --n 3000 --out " + dir);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream in(dir + "/a.txt");
  std::string header, first;
  std::getline(in, header);
  std::getline(in, first);
  EXPECT_NE(header.find("values=native"), std::string::npos) << header;
  EXPECT_EQ(first.size(), 16u * 5 - 1) << first;  // 16 binary16 patterns of 4 hex digits
  const std::string files = " --a " + dir + "/a.txt --b " + dir + "/b.txt --c " + dir + "/c.txt --d " + dir + "/d.txt";
  r = run("run --arch mi300x --type fp16" + files);
  ASSERT_EQ(r.status, 0) << r.out;
  r = run("validate --arch mi300x --type fp16" + files);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(last_line(r.out), "samples=3000 mismatches=0 p_upper=0.00459");  // 1 - 10^-6^(1/3001)
  // the same samples widened to binary32 (the hwdata form) give the same d
  const std::string wdir = mc_test::temp_dir() + "/cli_sample_w";
  r = run("sample --arch mi300x --type fp16 --n 3000 --widen --out " + wdir);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream win(wdir + "/a.txt");
  std::getline(win, header);
  std::getline(win, first);
  EXPECT_EQ(first.size(), 16u * 9 - 1) << first;
  r = run("validate --arch mi300x --type fp16 --a " + wdir + "/a.txt --b " + wdir + "/b.txt --c " + wdir +
          "/c.txt --d " + dir + "/d.txt");
  EXPECT_EQ(r.status, 0) << r.out;
  // one file mixes the two forms: an error naming the line and the value
  const std::string mixed = tmp("mixed.txt", "3c00 3c00\n3f800000 3c00\n");
  const std::string b2 = tmp("b2.txt", "3c00 3c00\n3c00 3c00\n");
  const std::string c2 = tmp("c2.txt", "00000000\n00000000\n");
  r = run("validate --arch mi300x --type fp16 --a " + mixed + " --b " + b2 + " --c " + c2 + " --d " + c2);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("mixed.txt:2: value 1: '3f800000' is not 4 hex digits (binary16 itself"), std::string::npos)
      << r.out;
  // native patterns of the wrong width for the type: fp8 needs 2 digits
  r = run("validate --arch mi300x --type e4m3fnuz --k 2 --a " + b2 + " --b " + b2 + " --c " + c2 + " --d " + c2);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("b2.txt:1: value 1: '3c00' is not 8 hex digits"), std::string::npos) << r.out;
}
