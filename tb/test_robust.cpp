// Reliability of the command line (issue "no crash, no silent wrong answer, no lost file"):
// every class of bad input gets exit status 2 and a message naming file, line and field; outputs
// appear complete or not at all; flags take values; every subcommand has --help. Each test is a
// regression test of a failure a user met, and asserts the exit status and the message.
#include <gtest/gtest.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test.hpp"

namespace {

using mc_test::CliRun;
using mc_test::slurp;

CliRun run(const std::string& args, const std::string& prefix = "") { return mc_test::run_cli(args, prefix); }

std::string dir() {
  static const std::string d = mc_test::scratch_dir("matcore-robust");
  return d;
}

std::string tmp(const std::string& name, const std::string& content) { return mc_test::write_file(dir() + "/" + name, content); }

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

/// Names in a directory that look like matcore's temporaries (".NAME.tmp-XXXXXX").
std::vector<std::string> temporaries(const std::string& d) {
  std::vector<std::string> r;
  if (DIR* dp = ::opendir(d.c_str())) {
    while (dirent* e = ::readdir(dp))
      if (std::string(e->d_name).find(".tmp-") != std::string::npos) r.push_back(e->d_name);
    ::closedir(dp);
  }
  return r;
}


// Small well-formed mi300x fp16 set: two samples of K = 2.
// sample 0: 1*1 + 1*1 + c 1 = 3 (0x40400000); sample 1: 2*2 + 0 + c 0 = 4 (0x40800000)
const char* kA = "3c00 3c00\n4000 0000\n";
const char* kB = "3c00 3c00\n4000 0000\n";
const char* kC = "3f800000\n00000000\n";
const char* kD = "40400000\n40800000\n";
const std::string kArch = "--arch mi300x --type fp16 ";

std::string files(const std::string& a, const std::string& b, const std::string& c, const std::string& d) {
  return "--a " + a + " --b " + b + " --c " + c + (d.empty() ? "" : " --d " + d);
}

}  // namespace

// ------------------------------------------------------------------------------------ crashes
TEST(Robust, KFarLargerThanTheFileIsAnErrorNotAnAllocation) {
  const std::string a = tmp("k_a.txt", kA), b = tmp("k_b.txt", kB), c = tmp("k_c.txt", kC), d = tmp("k_d.txt", kD);
  for (const char* cmd : {"validate", "run"}) {
    const std::string out = std::string(cmd) == "run" ? dir() + "/k_out.txt" : d;
    CliRun r = run(std::string(cmd) + " " + kArch + "--k 1000000 " + files(a, b, c, out));
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_HAS(r.out, "k_a.txt:1: K: line holds 2 values, expected K = 1000000");
  }
  // the general engine too (a comment line in the middle makes the files irregular)
  const std::string a2 = tmp("k_a2.txt", std::string("3c00 3c00\n# note\n") + "4000 0000\n");
  CliRun r = run("validate " + kArch + "--k 1000000 " + files(a2, b, c, d));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "k_a2.txt:1: K: line holds 2 values, expected K = 1000000");
}

TEST(Robust, VeryLongFirstLineIsRefusedWithBoundedMemory) {
  // 1.1 million values on the first line: more than the 2^20 any line may hold
  std::string line;
  line.reserve(5u * 1100000u);
  for (int i = 0; i < 1100000; ++i) line += i ? " 3c00" : "3c00";
  const std::string a = tmp("long_a.txt", line + "\n"), b = tmp("long_b.txt", line + "\n");
  const std::string c = tmp("long_c.txt", "00000000\n"), d = tmp("long_d.txt", "00000000\n");
  CliRun r = run("validate " + kArch + files(a, b, c, d));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "long_a.txt:1: K: line holds 1100000 values, more than 1048576");
  EXPECT_LT(r.out.size(), 400u) << "the message must not echo the line";
  // one token of 40 MiB: longer than any line may be
  const std::string big(40u << 20, '3');
  const std::string a2 = tmp("long_a2.txt", big + "\n");
  r = run("validate " + kArch + files(a2, b, c, d));
  EXPECT_EQ(r.status, 2) << r.out.substr(0, 400);
  EXPECT_HAS(r.out, "long_a2.txt:1: line: longer than 32 MiB");
  EXPECT_LT(r.out.size(), 400u);
  ::unlink(a2.c_str());
}

TEST(Robust, DeeplyNestedExpressionsAreAnErrorNotAStackOverflow) {
  const std::string deep = std::string(20000, '(') + "1" + std::string(20000, ')');
  CliRun r = run("dot " + kArch + "--a '" + deep + "' --b 1");
  EXPECT_EQ(r.status, 2) << r.out.substr(0, 300);
  EXPECT_HAS(r.out, "parentheses nested deeper than 100 levels");
  EXPECT_LT(r.out.size(), 400u);
}

TEST(Robust, ThreadsThatCannotBeCreatedDoNotAbort) {
  // a 2 GiB address-space limit and 3 GiB thread stacks: no thread can be created, matcore
  // does every share in the main thread and gets the same counts
  const std::string a = tmp("t_a.txt", kA), b = tmp("t_b.txt", kB), c = tmp("t_c.txt", kC), d = tmp("t_d.txt", kD);
  CliRun r = run("validate " + kArch + "--threads 4 " + files(a, b, c, d), "ulimit -s 3000000; ulimit -v 2000000; ");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_HAS(r.out, "samples=2 mismatches=0");
  const std::string out = dir() + "/t_run_d.txt";
  r = run("run " + kArch + "--threads 4 " + files(a, b, c, out), "ulimit -s 3000000; ulimit -v 2000000; ");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(slurp(out), kD);
  r = run("sample --type fp16 --k 4 --n 1000 --threads 3 --out " + dir() + "/t_sample",
          "ulimit -s 3000000; ulimit -v 2000000; ");
  EXPECT_EQ(r.status, 0) << r.out;
  CliRun ref = run("sample --type fp16 --k 4 --n 1000 --threads 1 --out " + dir() + "/t_sample1");
  EXPECT_EQ(ref.status, 0) << ref.out;
  EXPECT_EQ(slurp(dir() + "/t_sample/a.txt"), slurp(dir() + "/t_sample1/a.txt"));
}

// ----------------------------------------------------------------------------------- lost data
TEST(Robust, AnOutputThatIsAlsoAnInputIsRefused) {
  const std::string a = tmp("io_a.txt", kA), b = tmp("io_b.txt", kB), c = tmp("io_c.txt", kC);
  CliRun r = run("run " + kArch + files(a, b, c, c));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "--d " + c + ": is also an input");
  EXPECT_EQ(slurp(c), kC);
  // the same file under another name (a symbolic link)
  const std::string link = dir() + "/io_link.txt";
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(a.c_str(), link.c_str()), 0);
  r = run("run " + kArch + files(a, b, c, link));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "is also an input");
  EXPECT_EQ(slurp(a), kA);
  r = run("gemm --arch mi300x --type fp16 --A " + a + " --B " + b + " --D " + b);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "is also an input");
}

TEST(Robust, StandardOutputAndSymbolicLinksAreWrittenThrough) {
  const std::string a = tmp("so_a.txt", kA), b = tmp("so_b.txt", kB), c = tmp("so_c.txt", kC);
  // /dev/stdout and "-": d goes to standard output (the link /dev/stdout is never replaced)
  for (const char* out : {"/dev/stdout", "-"}) {
    CliRun r{-1, ""};
    r.status = mc_test::run_command(std::string(MATCORE_CLI) + " run " + kArch + files(a, b, c, out) + " 2>/dev/null",
                                    &r.out);
    EXPECT_EQ(r.status, 0) << out;
    EXPECT_EQ(r.out, kD) << out;
  }
  struct stat st;
  ASSERT_EQ(::lstat("/dev/stdout", &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "/dev/stdout must stay a symbolic link";
  // a symbolic link to a file: the file gets d, the link stays
  const std::string target = tmp("so_target.txt", "old\n"), link = dir() + "/so_link.txt";
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  CliRun r = run("run " + kArch + files(a, b, c, link));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(slurp(target), kD);
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_TRUE(temporaries(dir()).empty());
}

TEST(Robust, RunLeavesAnExistingDUntouchedOnAnInputError) {
  const std::string a = tmp("keep_a.txt", std::string(kA) + "4000 zz00\n");  // line 3 is bad
  const std::string b = tmp("keep_b.txt", std::string(kB) + "4000 0000\n");
  const std::string c = tmp("keep_c.txt", std::string(kC) + "00000000\n");
  const std::string d = tmp("keep_d.txt", "old content\n");
  CliRun r = run("run " + kArch + files(a, b, c, d));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "keep_a.txt:3: value 2: 'zz00' is not hex");
  EXPECT_EQ(slurp(d), "old content\n");
  EXPECT_TRUE(temporaries(dir()).empty());
}

TEST(Robust, InterruptedSampleLeavesNoFileThatPassesForComplete) {
  const std::string out = dir() + "/interrupted";
  ::mkdir(out.c_str(), 0777);
  // 10^8 samples take far longer than 0.5 s: SIGINT arrives in the middle
  CliRun r = run("sample --type fp16 --k 16 --n 100000000 --out " + out, "timeout -s INT 0.5 ");
  EXPECT_NE(r.status, 0) << r.out;
  for (const char* f : {"/a.txt", "/b.txt", "/c.txt"}) EXPECT_FALSE(exists(out + f)) << f;
  EXPECT_TRUE(temporaries(out).empty());
}

TEST(Robust, FailedWritesAreErrors) {
  const std::string a = tmp("w_a.txt", kA), b = tmp("w_b.txt", kB), c = tmp("w_c.txt", kC);
  std::string rows;  // v_mfma_f32_4x4x4f16: A and B are 64 x 4 (16 blocks)
  for (int i = 0; i < 64; ++i) rows += "3c00 3c00 3c00 3c00\n";
  const std::string M = tmp("w_M.txt", rows);
  for (const std::string& cmd :
       {"run " + kArch + files(a, b, c, "/dev/full"),
        "gemm --arch mi300x --type fp16 --A " + a + " --B " + b + " --D /dev/full",
        "mfma --arch mi300x --instr v_mfma_f32_4x4x4f16 --A " + M + " --B " + M + " --D /dev/full"}) {
    CliRun r = run(cmd);
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.out;
    EXPECT_HAS(r.out, "/dev/full: write failed (No space left on device)");
  }
  // standard output that cannot be written (the message goes to the test through stderr)
  CliRun r{-1, ""};
  r.status = mc_test::run_command(std::string(MATCORE_CLI) + " gemm --arch mi300x --type fp16 --A " + a +
                                      " --B " + b + " 2>&1 >/dev/full", &r.out);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "standard output: write failed");
  // a file-size limit (as on a full quota): an error, and no partial file
  const std::string big = dir() + "/fsize";
  r = run("sample --type fp16 --k 16 --n 10000 --out " + big, "ulimit -f 64; ");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "write failed (File too large)");
  EXPECT_FALSE(exists(big + "/a.txt"));
  EXPECT_TRUE(temporaries(big).empty());
}

// ------------------------------------------------------------------------ silent wrong answers
TEST(Robust, FlagsTakeTrueAndFalse) {
  const std::string a = tmp("f_a.txt", kA), b = tmp("f_b.txt", kB), c = tmp("f_c.txt", kC), d = tmp("f_d.txt", kD);
  // --zero-c=no keeps c: the set validates
  CliRun r = run("validate " + kArch + "--zero-c=no " + files(a, b, c, d));
  EXPECT_EQ(r.status, 0) << r.out;
  // --zero-c (= true): c is taken as 0, so sample 0 gives 2, not 3
  r = run("validate " + kArch + "--zero-c " + files(a, b, c, d));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_HAS(r.out, "samples=2 mismatches=1");
  r = run("validate " + kArch + "--zero-c=maybe " + files(a, b, c, d));
  EXPECT_EQ(r.status, 2) << r.out;
  // --widen=false and --subnormal=0 are the defaults
  ASSERT_EQ(run("sample --type fp16 --k 2 --n 5 --widen=false --subnormal=0 --out " + dir() + "/f1").status, 0);
  ASSERT_EQ(run("sample --type fp16 --k 2 --n 5 --out " + dir() + "/f2").status, 0);
  EXPECT_EQ(slurp(dir() + "/f1/a.txt"), slurp(dir() + "/f2/a.txt"));
  ASSERT_EQ(run("sample --type fp16 --k 2 --n 5 --widen=true --out " + dir() + "/f3").status, 0);
  EXPECT_HAS(slurp(dir() + "/f3/a.txt"), "values=widened");
}

TEST(Robust, Binary16AccumulatorSaysWhenItRoundsC) {
  const std::string fp16 = "--arch h100 --type fp16 --out fp16 --a 1 --b 1 ";
  // a hex c of four digits is a binary16 pattern: 1 + 1 = 2
  CliRun r = run("dot " + fp16 + "--c 0x3c00");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_HAS(r.out, "d = 0x4000");
  EXPECT_EQ(r.out.find("note:"), std::string::npos) << r.out;
  // a decimal c that binary16 rounds, one that overflows it, a binary32 pattern it cannot hold:
  // rounded to nearest even (as the hardware data sets give c to the GPU), with a note each
  r = run("dot " + fp16 + "--c 0.1");
  EXPECT_HAS(r.out, "note: c = 0.1 rounded (rne) to binary16: 0x2e66");
  r = run("dot " + fp16 + "--c 2^20");
  EXPECT_HAS(r.out, "note: c = 2^20 rounded (rne) to binary16: 0x7c00 (inf)");
  EXPECT_HAS(r.out, "d = 0x7c00");
  r = run("dot " + fp16 + "--c 0x3dcccccd");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_HAS(r.out, "note: c = 0x3dcccccd rounded (rne) to binary16: 0x2e66");
  // in a c file: counted, and the first line named
  const std::string a = tmp("h_a.txt", "3c00\n3c00\n3c00\n"), b = tmp("h_b.txt", "3c00\n3c00\n3c00\n");
  const std::string c = tmp("h_c.txt", "3f800000\n3dcccccd\n3dcccccd\n");
  const std::string d = tmp("h_d.txt", "40000000\n40000000\n40000000\n");
  r = run("validate --arch h100 --type fp16 --out fp16 " + files(a, b, c, d));
  EXPECT_HAS(r.out, "note: 2 c values of " + c + " (the first on line 2) rounded (rne) to binary16");
  EXPECT_HAS(r.out, "samples=3");
}

TEST(Robust, ExplainNotesRoundedOperands) {
  CliRun r = run("explain --arch mi300x --type fp16 --a 0.1 --b 1 --d 0x3dccc000 --no-trace");
  EXPECT_HAS(r.out, "note: a1 = 0.1 rounded (rne) to binary16: 0x2e66");
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(Robust, ExplainRefusesValuesWiderThanTheirFormat) {
  const std::string log = tmp("wide.log",
                              "mismatch sample 0 (a line 1, d line 1): model 0x3f800000 (1) hardware 0x3f800001 (1)\n"
                              "  a: 3c00 3c0000\n  b: 3c00 3c00\n  c: 00000000\n");
  CliRun r = run("explain --arch mi300x --type fp16 --mismatches " + log);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "wide.log:2: a: '3c0000' is wider than 16 bits");
}

TEST(Robust, ExplainRefusesFilesOfDifferentLengths) {
  const std::string d = dir() + "/uneven";
  ::mkdir(d.c_str(), 0777);
  tmp("uneven/a.txt", kA);
  tmp("uneven/b.txt", "3c00 3c00\n");
  tmp("uneven/c.txt", kC);
  tmp("uneven/d.txt", kD);
  CliRun r = run("explain " + kArch + "--file " + d);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "sample counts differ: " + d + "/a.txt has 2, " + d + "/b.txt 1");
}

TEST(Robust, UnknownTypeOfAPresetIsAnError) {
  CliRun r = run("dot --arch mi100 --type bf16_1k --a 1 --b 1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "architecture 'mi100' has no input type 'bf16_1k'");
  r = run("dot --arch h100 --type bf16_1k --a 1 --b 1");
  EXPECT_EQ(r.status, 2) << r.out;
  // CDNA3: bf16_1k is its bf16 (the only bf16 instructions there)
  r = run("dot --arch mi300x --type bf16_1k --a 1 --b 1");
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(Robust, FilesWhoseHeaderNamesAnotherFormatAreRefused) {
  const std::string s = dir() + "/hdr";
  ASSERT_EQ(run("sample --type e4m3 --k 2 --n 3 --out " + s).status, 0);
  tmp("hdr/d.txt", "00000000\n00000000\n00000000\n");
  CliRun r = run("validate --arch h100 --type fp16 " + files(s + "/a.txt", s + "/b.txt", s + "/c.txt", s + "/d.txt"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, s + "/a.txt:1: header: the file holds e4m3 values (a=e4m3) but the datapath's a format is binary16");
}

// ------------------------------------------------------------------------------ clear errors
TEST(Robust, TheEarliestErrorOfAFileIsReported) {
  // a bad value on line 3 and a blank line 6: line 3 is reported (both engines: the blank line
  // makes the files irregular, so the general engine reads them)
  const std::string a = tmp("e_a.txt", "3c00 3c00\n3c00 3c00\n3c00 3cxx\n3c00 3c00\n3c00 3c00\n\n3c00 3c00\n");
  const std::string b = tmp("e_b.txt", "3c00 3c00\n3c00 3c00\n3c00 3c00\n3c00 3c00\n3c00 3c00\n3c00 3c00\n3c00 3c00\n");
  const std::string c = tmp("e_c.txt", "00000000\n00000000\n00000000\n00000000\n00000000\n00000000\n00000000\n");
  CliRun r = run("validate " + kArch + files(a, b, c, c));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "e_a.txt:3: value 2: '3cxx' is not hex");
  // without the bad value the blank line is reported
  const std::string a2 = tmp("e_a2.txt", "3c00 3c00\n3c00 3c00\n3c00 3c00\n3c00 3c00\n3c00 3c00\n\n3c00 3c00\n");
  r = run("validate " + kArch + files(a2, b, c, c));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "e_a2.txt:6: line: empty line");
}

// Files of equal lines (the grid engine, its values parsed with AVX2 six at a time): a bad
// character in a value, a tab for a separator, are still reported with file, line and value.
TEST(Robust, GridFilesReportTheBadValueOfALongLine) {
  std::string a, b, c;
  for (int i = 0; i < 5; ++i) {
    for (int k = 0; k < 16; ++k) a += std::string(k ? " " : "") + "3c00", b += std::string(k ? " " : "") + "4000";
    a += "\n", b += "\n", c += "00000000\n";
  }
  std::string bad = a;
  bad.replace(2 * 80 + 8 * 5, 4, "3cxx");  // line 3, value 9
  const std::string fb = tmp("g_b.txt", b), fc = tmp("g_c.txt", c);
  CliRun r = run("validate " + kArch + files(tmp("g_a.txt", bad), fb, fc, fc));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "g_a.txt:3: value 9: '3cxx' is not hex");
  std::string tab = a;
  tab[3 * 80 + 13 * 5 + 4] = '\t';  // line 4: a tab after value 14
  r = run("run " + kArch + " --a " + tmp("g_t.txt", tab) + " --b " + fb + " --c " + fc + " --d " + dir() + "/g_d.txt");
  EXPECT_EQ(r.status, 0) << r.out;  // a tab separates values too (the general engine reads the file)
  r = run("validate " + kArch + files(tmp("g_a2.txt", a), fb, fc, dir() + "/g_d.txt"));
  EXPECT_EQ(r.status, 0) << r.out;  // and gives the same d as the grid engine on spaces
}

TEST(Robust, MessagesNameDirectoriesBomNulAndQuoteShortExcerpts) {
  const std::string b = tmp("m_b.txt", kB), c = tmp("m_c.txt", kC), d = tmp("m_d.txt", kD);
  CliRun r = run("validate " + kArch + files(dir(), b, c, d));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, dir() + ": is a directory");
  const std::string bom = tmp("m_bom.txt", "\xEF\xBB\xBF" + std::string(kA));
  r = run("validate " + kArch + files(bom, b, c, d));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "m_bom.txt:1: line: starts with a UTF-8 byte-order mark");
  const std::string nul = tmp("m_nul.txt", std::string("3c00 3c\0" "0\n4000 0000\n", 21));
  r = run("validate " + kArch + files(nul, b, c, d));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "m_nul.txt:1: value 2: '3c\\x000' is not hex");
  // a 1 MB token: the message quotes 24 characters and says how long it was
  const std::string huge = tmp("m_huge.txt", std::string(1000000, 'z') + " 3c00\n4000 0000\n");
  r = run("validate " + kArch + files(huge, b, c, d));
  EXPECT_EQ(r.status, 2);
  EXPECT_HAS(r.out, "'zzzzzzzzzzzzzzzzzzzzzzzz... (1000000 characters)' is not hex");
  EXPECT_LT(r.out.size(), 300u);
}

TEST(Robust, LineNumbersAreLinesOfTheFileNamed) {
  // gemm: a header comment line, then the bad value on row 2 = line 3
  const std::string A = tmp("g_A.txt", "# A\n3c00 3c00\n3c00 zz00\n");
  const std::string B = tmp("g_B.txt", "3c00\n3c00\n");
  CliRun r = run("gemm --arch mi300x --type fp16 --A " + A + " --B " + B);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "g_A.txt:3: value 2: 'zz00' is not 4 hex digits");
  // validate: the mismatch names the line of d as well as the line of a
  const std::string a = tmp("l_a.txt", kA), b = tmp("l_b.txt", kB), c = tmp("l_c.txt", kC);
  const std::string d = tmp("l_d.txt", "# header\n# from the device\n40400000\n40800001\n");
  r = run("validate " + kArch + files(a, b, c, d));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_HAS(r.out, "mismatch sample 1 (a line 2, d line 4)");
}

TEST(Robust, EverySubcommandHasHelpWithAnExample) {
  for (const char* cmd : {"list", "dot", "validate", "gemm", "mfma", "sample", "run", "features", "explain",
                          "check-table"}) {
    CliRun r = run(std::string(cmd) + " --help");
    EXPECT_EQ(r.status, 0) << cmd << "\n" << r.out;
    EXPECT_HAS(r.out, "example:");
    EXPECT_HAS(r.out, std::string("matcore ") + cmd);
  }
  CliRun r = run("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_HAS(r.out, "validate");
  EXPECT_EQ(run("").status, 2);
}

TEST(Robust, OptionsAreCheckedStrictly) {
  const std::string b = tmp("o_b.txt", kB);
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"validate " + kArch + "--a --b " + b + " --c x --d y", "--a: needs a value (got the option '--b')"},
      {"dot " + kArch + "--a 1 --b 1 stray", "not expected: stray"},
      {"dot " + kArch + "--a 1 --b 1 --bogus 3", "--bogus"},
      {"validate " + kArch + "--k abc --a x --b y --c z --d w", "--k: must be an integer in 1..1048576 (got 'abc')"},
      {"validate " + kArch + "--k 99999999999 --a x --b y --c z --d w", "must be an integer in 1..1048576"},
      {"sample --type fp16 --k 2 --n 0 --out x", "--n: must be an integer in 1..1000000000000 (got '0')"},
      {"sample --type fp16 --k 2 --n 5 --ea 3 --out x", "--ea takes LO,HI (got '3')"},
      {"sample --type fp16 --k 2 --n 5 --ea 9,3 --out x", "--ea: LO > HI"},
      {"sample --type fp16 --k 2 --n 5 --out " + b, "is not a directory"},
      {"features --type fp16 --k 16 --emit x --results y", "excludes"},
      {"dot --arch nosuch --type fp16 --a 1 --b 1", "unknown architecture 'nosuch'"},
      {"nosuch", "unknown command 'nosuch'"},
      {"dot " + kArch + "--a 1,2 --b 1", "--a has 2 values but --b has 1"},
  };
  for (const Case& c : cases) {
    CliRun r = run(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_HAS(r.out, c.message);
  }
}

// ------------------------------------------------------------- trace (matcore-sc, SystemC)
// `matcore trace` runs the SystemC model; these need sc/ built (not in `make sanitize`).

TEST(RobustTrace, VcdWriteFailureIsAnErrorAndLeavesNoFile) {
  // the VCD of a trace (SystemC's writer does not check its writes: matcore does)
  const std::string vcd = dir() + "/limited.vcd";
  CliRun r = run("trace --arch mi300x --type fp16 --a 1,2 --b 1,2 --no-fst --vcd " + vcd, "ulimit -f 4; ");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, vcd + ": write failed (File too large)");
  EXPECT_FALSE(exists(vcd));
  EXPECT_TRUE(temporaries(dir()).empty());
  // and without the limit the same trace writes the VCD and its layout
  r = run("trace --arch mi300x --type fp16 --a 1,2 --b 1,2 --no-fst --vcd " + vcd);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_HAS(slurp(vcd), "$enddefinitions");
  EXPECT_HAS(slurp(dir() + "/limited.gtkw"), "aligner.e_max");
}

TEST(RobustTrace, NotesRoundedOperandsAndRefusesUnevenFiles) {
  CliRun r = run("trace --arch mi300x --type fp16 --a 0.1 --b 1 --no-fst --vcd " + dir() + "/note.vcd");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_HAS(r.out, "note: a1 = 0.1 rounded (rne) to binary16: 0x2e66");
  const std::string d = dir() + "/uneven_t";
  ::mkdir(d.c_str(), 0777);
  tmp("uneven_t/a.txt", kA);
  tmp("uneven_t/b.txt", "3c00 3c00\n");
  tmp("uneven_t/c.txt", kC);
  r = run("trace " + kArch + "--file " + d + " --no-fst --vcd " + dir() + "/u.vcd");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "sample counts differ: " + d + "/a.txt has 2, " + d + "/b.txt 1");
}

TEST(RobustTrace, HelpAndVcdName) {
  // trace is matcore-sc's: its help comes from there
  CliRun r = run("trace --help");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_HAS(r.out, "--vcd");
  EXPECT_HAS(r.out, "example:");
  r = run("trace " + kArch + "--a 1 --b 1 --vcd " + dir() + "/x");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "does not end in .vcd");
}
