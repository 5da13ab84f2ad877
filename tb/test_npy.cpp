// The binary form of the vector format (.npy arrays of bit patterns: matcore/npy.hpp,
// docs/vector-format.md) against the text form, through the command line:
//   * sample --npy writes the same bits as sample's text files (same seed), in the narrowest
//     unsigned dtype of each format (uint8 fp8, uint16 fp16, uint32 binary32, uint64 binary64);
//   * run on the arrays writes the d of run on the text files; validate finds 0 mismatches, and
//     a changed d is reported as the text path reports it (sample, a line, model vs hardware);
//     binary16 accumulators (c rounded), fp8, binary64 and block-scaled datapaths (sa.npy,
//     sb.npy: NVFP4's GST-FDPA, CDNA4's ST-FDPA) included;
//   * malformed arrays (dtype, order, shape, length, a value wider than its format, a mix of
//     .npy and text, a K other than --k) are errors that name the file and the field, exit 2.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "cli_test.hpp"
#include "matcore/npy.hpp"
#include "matcore/vectors.hpp"

using namespace mc;
using mc_test::run_cli;
using mc_test::slurp;

namespace {

/// Every hex value of a text vector file, in order ('#' lines skipped).
std::vector<uint64_t> text_values(const std::string& path) {
  std::vector<uint64_t> v;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    for (std::string t; ls >> t;) v.push_back(std::stoull(t, nullptr, 16));
  }
  return v;
}

std::vector<uint64_t> npy_values(const std::string& path) {
  const NpyArray a(path);
  std::vector<uint64_t> v(a.size());
  a.get(0, a.size(), v.data());
  return v;
}

struct Case {
  const char *args, *name;
  int word_ab, word_cd;
};

}  // namespace

TEST(Npy, SameBitsAsTheTextForm) {
  const std::string dir = mc_test::scratch_dir("npy");
  const Case cases[] = {{"--arch mi300x --type fp16", "mi300x_fp16", 2, 4},
                        {"--arch h100 --type fp16 --out fp16", "h100_fp16_out16", 2, 4},
                        {"--arch b200 --type e4m3", "b200_e4m3", 1, 4},
                        {"--arch mi250 --type fp64", "mi250_fp64", 8, 8},
                        {"--arch b200 --type nvfp4", "b200_nvfp4", 1, 4},  // block-scaled: sa.npy, sb.npy
                        {"--arch mi355x --type scale.e4m3.e2m1", "mi355x_scale", 1, 4}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string t = dir + "/" + c.name + "_t", b = dir + "/" + c.name + "_b";
    // --out of run is the datapath's; sample takes the formats of --arch/--type
    std::string sample_args = c.args;
    if (const char* o = std::strstr(c.args, " --out")) sample_args.resize(static_cast<size_t>(o - c.args));
    ASSERT_EQ(run_cli("sample " + sample_args + " --n 3000 --k 40 --seed 9 --strategy bits --out " + t).status, 0);
    const mc_test::CliRun sb = run_cli("sample " + sample_args + " --n 3000 --k 40 --seed 9 --strategy bits --npy --out " + b);
    ASSERT_EQ(sb.status, 0) << sb.out;
    for (const char* f : {"a", "b", "c"}) {
      EXPECT_EQ(npy_values(b + "/" + f + ".npy"), text_values(t + "/" + f + ".txt")) << f;
      EXPECT_EQ(NpyArray(b + "/" + f + ".npy").word(), *f == 'c' ? c.word_cd : c.word_ab) << f;
    }
    if (std::ifstream(t + "/sa.txt").good())
      for (const char* f : {"sa", "sb"}) {
        EXPECT_EQ(npy_values(b + "/" + f + ".npy"), text_values(t + "/" + f + ".txt")) << f;
        EXPECT_EQ(NpyArray(b + "/" + f + ".npy").shape(), (std::vector<uint64_t>{3000, c.name[1] == '2' ? 3u : 2u})) << f;
      }
    EXPECT_EQ(NpyArray(b + "/a.npy").shape(), (std::vector<uint64_t>{3000, 40}));
    auto files = [](const std::string& d, const char* ext) {
      return " --a " + d + "/a" + ext + " --b " + d + "/b" + ext + " --c " + d + "/c" + ext + " --d " + d + "/d" + ext;
    };
    ASSERT_EQ(run_cli(std::string("run ") + c.args + files(t, ".txt")).status, 0);
    const mc_test::CliRun rb = run_cli(std::string("run ") + c.args + files(b, ".npy"));
    ASSERT_EQ(rb.status, 0) << rb.out;
    EXPECT_EQ(npy_values(b + "/d.npy"), text_values(t + "/d.txt"));
    const mc_test::CliRun vb = run_cli(std::string("validate --threads 2 ") + c.args + files(b, ".npy"));
    EXPECT_EQ(vb.status, 0) << vb.out;
    EXPECT_HAS(vb.out, "samples=3000 mismatches=0");
    // sample 1234's d changed: the same report as from the text files
    std::string d = slurp(b + "/d.npy");
    d[d.size() - (3000 - 1234) * static_cast<size_t>(c.word_cd)] ^= 1;
    mc_test::write_file(b + "/d2.npy", d);
    std::string td = slurp(t + "/d.txt");
    std::vector<std::string> lines;
    std::istringstream ls(td);
    for (std::string l; std::getline(ls, l);) lines.push_back(l);
    const size_t first = lines.size() - 3000;  // header lines
    std::string& l = lines[first + 1234];
    l.back() = "0123456789abcdef"[std::stoi(std::string(1, l.back()), nullptr, 16) ^ 1];
    std::string td2;
    for (const std::string& x : lines) td2 += x + "\n";
    mc_test::write_file(t + "/d2.txt", td2);
    const mc_test::CliRun vt2 = run_cli(std::string("validate ") + c.args + files(t, ".txt").replace(files(t, ".txt").find("/d.txt"), 6, "/d2.txt"));
    const mc_test::CliRun vb2 = run_cli(std::string("validate ") + c.args + files(b, ".npy").replace(files(b, ".npy").find("/d.npy"), 6, "/d2.npy"));
    EXPECT_EQ(vb2.status, 1) << vb2.out;
    EXPECT_HAS(vb2.out, "mismatch sample 1234 (a line 1235, d line 1235): model 0x");
    EXPECT_HAS(vb2.out, "samples=3000 mismatches=1");
    // the text report names the file's lines (after its header); the rest is the same
    EXPECT_EQ(vb2.out.substr(vb2.out.find("): model")), vt2.out.substr(vt2.out.find("): model")));
  }
}

TEST(Npy, MalformedArraysNameTheFileAndField) {
  const std::string dir = mc_test::scratch_dir("npybad");
  ASSERT_EQ(run_cli("sample --arch mi300x --type fp16 --n 100 --seed 1 --npy --out " + dir).status, 0);
  const std::string dp = "--arch mi300x --type fp16 ";
  const std::string ok = " --b " + dir + "/b.npy --c " + dir + "/c.npy --d " + dir + "/d.npy";
  const std::string a = slurp(dir + "/a.npy");
  auto check = [&](const std::string& name, const std::string& content, const std::string& want) {
    mc_test::write_file(dir + "/" + name, content);
    const mc_test::CliRun r = run_cli("run " + dp + "--a " + dir + "/" + name + ok);
    EXPECT_EQ(r.status, 2) << name << ": " << r.out;
    EXPECT_HAS(r.out, dir + "/" + name);
    EXPECT_HAS(r.out, want);
  };
  std::string f8 = a;
  f8.replace(f8.find("'<u2'"), 5, "'<f2'");
  check("float.npy", f8, "header field 'descr'");
  std::string nul = a;  // a NUL where the word size goes (strchr finds the terminator: fuzz_npy)
  nul[nul.find("'<u2'") + 3] = '\0';
  check("nul.npy", nul, "header field 'descr'");
  std::string fo = a;
  fo.replace(fo.find("False"), 5, "True ");
  check("fortran.npy", fo, "header field 'fortran_order'");
  check("short.npy", a.substr(0, a.size() - 3), "the data is");
  check("empty.npy", "", "the file is empty");
  check("magic.npy", "not a numpy file at all", "magic");
  std::string wide = a;
  wide[wide.size() - 1] = static_cast<char>(0xff);  // fine for fp16 (16 bits): every pattern is one
  mc_test::write_file(dir + "/w.npy", wide);
  EXPECT_EQ(run_cli("run " + dp + "--a " + dir + "/w.npy" + ok).status, 0);
  std::string sh = a;
  sh.replace(sh.find("(100, 16)"), 9, "(50, 32) ");
  check("shape.npy", sh, "header field 'shape'");
  // a value wider than the format: fp16 patterns in 32-bit words
  {
    NpyWriter w(dir + "/w32.npy", 4, {100, 16});
    std::vector<uint64_t> v(1600, 0x3c00);
    v[17] = 0x13c00;
    w.put(0, v.size(), v.data());
    w.commit();
  }
  const mc_test::CliRun r32 = run_cli("run " + dp + "--a " + dir + "/w32.npy" + ok);
  EXPECT_EQ(r32.status, 2) << r32.out;
  EXPECT_HAS(r32.out, dir + "/w32.npy: sample 1, value 1: 0x13c00 is not a 16-bit pattern of binary16");
  // text and binary mixed, another K than --k
  const mc_test::CliRun mix = run_cli("run " + dp + "--a " + dir + "/a.npy --b " + dir + "/b.npy --c c.txt --d " + dir + "/d.npy");
  EXPECT_EQ(mix.status, 2);
  EXPECT_HAS(mix.out, "must be .npy arrays too");
  const mc_test::CliRun k = run_cli("validate " + dp + "--k 8 --a " + dir + "/a.npy" + ok);
  EXPECT_EQ(k.status, 2);
  EXPECT_HAS(k.out, "K = 16, but --k 8 was given");
  // block scales: missing, or of another shape than the samples need
  const std::string sdir = mc_test::scratch_dir("npyscales");
  ASSERT_EQ(run_cli("sample --arch b200 --type nvfp4 --n 50 --seed 1 --npy --out " + sdir).status, 0);
  const std::string sargs = "run --arch b200 --type nvfp4 --a " + sdir + "/a.npy --b " + sdir + "/b.npy --c " + sdir +
                            "/c.npy --d " + sdir + "/d.npy";
  ASSERT_EQ(run_cli(sargs).status, 0);
  const mc_test::CliRun ws = run_cli(sargs + " --sa " + sdir + "/b.npy");
  EXPECT_EQ(ws.status, 2);
  EXPECT_HAS(ws.out, sdir + "/b.npy: header field 'shape': (50, 64), the samples need (50, 4): one ue4m3 scale per 16 values");
  std::rename((sdir + "/sb.npy").c_str(), (sdir + "/sb.bak").c_str());
  const mc_test::CliRun ms = run_cli(sargs);
  EXPECT_EQ(ms.status, 2);
  EXPECT_HAS(ms.out, sdir + "/sb.npy: missing scale file");
  // the output never replaces an input
  const mc_test::CliRun same = run_cli("run " + dp + "--a " + dir + "/a.npy --b " + dir + "/b.npy --c " + dir + "/c.npy --d " + dir + "/a.npy");
  EXPECT_EQ(same.status, 2) << same.out;
  EXPECT_EQ(slurp(dir + "/a.npy"), a);
}
