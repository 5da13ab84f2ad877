// Reliability, second round (issue 25): the surfaces beyond the vector files. Every output rule
// of docs/cli.md ("Outputs"), the datapath files, explore, standard output, the limits and the
// external tools. Each test is one class of failure and asserts the exit status, the message,
// that the inputs are byte-identical and that no temporary is left behind.
#include <gtest/gtest.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

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
  static const std::string d = mc_test::scratch_dir("matcore-robust2");
  return d;
}

std::string tmp(const std::string& name, const std::string& content) { return mc_test::write_file(dir() + "/" + name, content); }

/// Names in a directory that look like temporaries (".NAME.tmp-XXXXXX", matcore-cost-XXXXXX).
std::vector<std::string> leftovers(const std::string& d) {
  std::vector<std::string> r;
  if (DIR* dp = ::opendir(d.c_str())) {
    while (dirent* e = ::readdir(dp)) {
      const std::string n = e->d_name;
      if (n.find(".tmp-") != std::string::npos || n.rfind("matcore-", 0) == 0) r.push_back(n);
    }
    ::closedir(dp);
  }
  return r;
}


const std::string kArch = "--arch mi300x --type fp16 ";

/// A datapath file written by `show`, and its text.
std::string datapath_file(const std::string& name) {
  const std::string p = dir() + "/" + name;
  std::string text;
  EXPECT_EQ(mc_test::run_command(std::string(MATCORE_CLI) + " show " + kArch, &text), 0);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

}  // namespace

// ---------------------------------------------------------------- outputs never replace an input
TEST(RobustOutputs, NoOutputOfAnyKindReplacesAnInput) {
  const std::string dp = datapath_file("in.toml"), text = slurp(dp);
  const std::string a = tmp("o_a.txt", "3c00 3c00\n"), b = tmp("o_b.txt", "3c00 3c00\n"), c = tmp("o_c.txt", "3f800000\n");
  const std::string sa = slurp(a);
  const std::vector<std::string> cmds = {
      // a datapath file as the d file, the D matrix, the CSV, the SVG
      "run --datapath " + dp + " --a " + a + " --b " + b + " --c " + c + " --d " + dp,
      "gemm --datapath " + dp + " --A " + a + " --B " + tmp("o_B.txt", "3c00\n3c00\n") + " --D " + dp,
      "explore --dp " + dp + " --k 16,32 --n 10 --csv " + dp,
      "dot --datapath " + dp + " --a 1 --b 1 --svg " + dp,
      // an a file of --file as the SVG of trace
      "trace --arch mi300x --type fp16 --file " + dir() + "/tf --svg " + dir() + "/tf/a.txt",
  };
  ::mkdir((dir() + "/tf").c_str(), 0777);
  tmp("tf/a.txt", "3c00 3c00\n");
  tmp("tf/b.txt", "3c00 3c00\n");
  tmp("tf/c.txt", "3f800000\n");
  for (const std::string& cmd : cmds) {
    CliRun r = run(cmd);
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.out;
    EXPECT_HAS(r.out, "is also an input of this command");
  }
  EXPECT_EQ(slurp(dp), text);
  EXPECT_EQ(slurp(a), sa);
  EXPECT_EQ(slurp(dir() + "/tf/a.txt"), "3c00 3c00\n");
  EXPECT_TRUE(leftovers(dir()).empty());
  EXPECT_TRUE(leftovers(dir() + "/tf").empty());
}

TEST(RobustOutputs, TwoOutputsOfOneCommandMayNotNameOneFile) {
  // the CSV named like the plot the script would write
  const std::string csv = dir() + "/e-k.png";
  CliRun r = run("explore --dp mi300x/fp16 --k 16,32 --n 10 --csv " + csv + " --png " + dir() + "/e");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "is also another output of this command");
  struct stat st;
  EXPECT_NE(::stat(csv.c_str(), &st), 0);
  EXPECT_TRUE(leftovers(dir()).empty());
}

// ------------------------------------------------------------------------------ datapath files
TEST(RobustOutputs, DatapathFilesThatAreNoFilesAreErrors) {
  const std::string d = dir() + "/adir.toml", fifo = dir() + "/fifo.toml";
  ::mkdir(d.c_str(), 0777);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  const std::string empty = tmp("empty.toml", ""), comments = tmp("comments.toml", "# nothing\n");
  struct Case { std::string file, message; };
  for (const Case& c : {Case{d, "is a directory"}, Case{fifo, "is not a regular file"}, Case{empty, "is empty"},
                        Case{comments, "no fields"}}) {
    for (const char* cmd : {"dot --a 1 --b 1 --datapath ", "show --datapath ", "explore --k 16,32 --n 10 --dp "}) {
      CliRun r = run(std::string(cmd) + c.file);
      EXPECT_EQ(r.status, 2) << cmd << c.file << "\n" << r.out;
      EXPECT_HAS(r.out, c.message);
    }
  }
  // a directory named like a preset does not hide the preset
  ::mkdir((dir() + "/h100").c_str(), 0777);
  ::mkdir((dir() + "/h100/fp16").c_str(), 0777);
  CliRun r = run("dot --dp h100/fp16 --a 1,1 --b 1,1", "cd " + dir() + " && ");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_HAS(r.out, "d = 0x40000000");
}

TEST(RobustOutputs, DatapathFileErrorsInFileOrderAndStrictTypes) {
  // line 1 is wrong and line 3 too: line 1 is reported (keys used to be checked alphabetically)
  const std::string f = tmp("order.toml", "frac_bits = 5000\narch = \"x\"\nzzz = 1\n");
  CliRun r = run("dot --a 1 --b 1 --datapath " + f);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "order.toml:1:13: field 'frac_bits'");
  // a quoted integer is no integer; "none" stays the word of a limit
  const std::string q = tmp("quoted.toml", "base = \"mi300x/fp16\"\nemin_lim = \"12\"\n");
  r = run("dot --a 1 --b 1 --datapath " + q);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "quoted.toml:2:12: field 'emin_lim'");
  const std::string n = tmp("none.toml", "base = \"mi300x/fp16\"\nemin_lim = \"none\"\n");
  EXPECT_EQ(run("dot --a 1 --b 1 --datapath " + n).status, 0);
  // non-ASCII bytes (toml++ reached __builtin_unreachable on " \xef\xbb\xb1": fuzz_datapath)
  const std::string u = tmp("utf8.toml", "base = \"mi300x/fp16\"\n \xef\xbb\xb1\n");
  r = run("dot --a 1 --b 1 --datapath " + u);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "utf8.toml:2:2: byte 0xEF (a datapath file is ASCII text)");
  // text that `show` could not write back: a control character
  r = run(std::string("show ") + kArch + "--set arch=$(printf 'a\\001b')");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "printable ASCII");
}

TEST(RobustOutputs, SetIsHonouredOrRefused) {
  CliRun r = run("dot " + kArch + "--a 1 --b 1 --set ''");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "empty setting");
  // mfma took --set and ignored it
  const std::string A = tmp("m_A.txt", "3c00 3c00 3c00 3c00\n"), B = tmp("m_B.txt", "3c00\n3c00\n3c00\n3c00\n");
  r = run("mfma --arch mi300x --instr v_mfma_f32_4x4x4f16 --A " + A + " --B " + B + " --set nosuchfield=1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "unknown field 'nosuchfield'");
  // --set with only --dp datapaths has nothing to change
  r = run("dot --dp h100/fp16 --a 1 --b 1 --set frac_bits=30");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "--set changes the datapath of --arch/--type or --datapath");
  // mfma does not offer --datapath or --type, which it cannot take
  std::string help;
  EXPECT_EQ(mc_test::run_command(std::string(MATCORE_CLI) + " mfma --help", &help), 0);
  EXPECT_EQ(help.find("--datapath"), std::string::npos) << help;
}

TEST(RobustOutputs, FlagsTakeNoValue) {
  const std::string a = tmp("f_a.txt", "3c00\n"), c = tmp("f_c.txt", "00000000\n");
  CliRun r = run("validate " + kArch + "--a " + a + " --b " + a + " --c " + c + " --d " + c + " --zero-c=2");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "zero-c");
}

// ---------------------------------------------------------------------------- standard output
TEST(RobustOutputs, FailedWritesToStandardOutputAreFailures) {
  for (const std::string& cmd : {"show " + kArch, std::string("list"), "dot " + kArch + "--a 1 --b 1",
                                 std::string("show --fields"), std::string("dot --help"), std::string("--help"),
                                 std::string("check-table ") + MATCORE_SOURCE_DIR + "/tb/vectors/paper_cdna3.pvt"}) {
    std::string out;
    const int st = mc_test::run_command(std::string(MATCORE_CLI) + " " + cmd + " > /dev/full 2>&1; echo rc=$?", &out);
    EXPECT_EQ(st, 0);
    EXPECT_HAS(out, "rc=2");
  }
}

// ------------------------------------------------------------------------------------ explore
TEST(RobustOutputs, ExploreSweepsAndListsAreBounded) {
  CliRun r = run("explore --dp mi300x/fp16 --sweep frac_bits=20..9223372036854775807 --k 16 --n 10");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "frac_bits");
  r = run("explore --dp mi300x/fp16 --sweep frac_bits=20..22 --sweep frac_bits=23,24 --k 16 --n 10");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "two --sweep of the same field");
  std::string ks = "1";
  for (int k = 2; k <= 70; ++k) ks += "," + std::to_string(k);
  r = run("explore --dp mi300x/fp16 --k " + ks + " --n 10");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "more than 64 values");
  r = run("explore --dp mi300x/fp16 --k 16 --n 10 --csv " + dir() + "/one.csv --png " + dir() + "/one");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "nothing to plot");
  r = run("explore --dp mi300x/fp16 --k 16,32 --n 10 --csv " + dir() + "/x.csv --png " + dir() + "/nodir/x");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "does not exist");
  EXPECT_TRUE(leftovers(dir()).empty());
}

TEST(RobustOutputs, ExploreCsvQuotesLabelsWithCommas) {
  const std::string csv = dir() + "/mixed.csv";
  CliRun r = run("explore --dp mi300x/e4m3fnuz,e5m2fnuz --k 16 --n 20 --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.out;
  std::istringstream in(slurp(csv));
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_EQ(row.rfind("\"mi300x/e4m3fnuz,e5m2fnuz\",,,16,", 0), 0u) << row;
  // outside the quotes, as many commas as the header has
  auto commas = [](const std::string& s) {
    int n = 0;
    bool q = false;
    for (char ch : s) {
      if (ch == '"') q = !q;
      n += ch == ',' && !q;
    }
    return n;
  };
  EXPECT_EQ(commas(row), commas(header));
}

// -------------------------------------------------------------------------- limits and tools
TEST(RobustOutputs, ValidateOfOneVeryLongSampleFitsInBoundedMemory) {
  // K = 2^20 ones times ones: d = 2^20 exactly; under a 2 GB address-space limit (it took 17 GB)
  std::string line;
  line.reserve(5u << 20);
  for (int i = 0; i < (1 << 20); ++i) line += i ? " 3c00" : "3c00";
  const std::string a = tmp("big_a.txt", line + "\n");
  const std::string c = tmp("big_c.txt", "00000000\n"), d = tmp("big_d.txt", "49800000\n");
  CliRun r = run("validate " + kArch + "--threads 2 --a " + a + " --b " + a + " --c " + c + " --d " + d,
                 "ulimit -v 2000000; ");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_HAS(r.out, "samples=1 mismatches=0");
}

TEST(RobustOutputs, RtlAndCostSizesAreCheckedBeforeAnyWork) {
  CliRun r = run("cost --arch mi300x --type fp64");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "too large for matcore cost");
  r = run("cost " + kArch + "--set n_fma=64,frac_bits=100");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "too large");
  r = run("rtl " + kArch + "--set n_fma=64,frac_bits=100,c_frac=100");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "too large for the RTL engine");
}

TEST(RobustOutputs, ExternalToolsStopAtTheirTimeLimitAndLeaveNothing) {
  const std::string t = dir() + "/tmpdir";
  ::mkdir(t.c_str(), 0777);
  // an empty RTL cache: the cost's synthesis runs (a cached one would not), in a temporary below it
  CliRun r = run("cost " + kArch, "TMPDIR=" + t + " MATCORE_RTL_CACHE=" + t + " MATCORE_TOOL_TIMEOUT=1 ");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "stopped after its time limit of 1 s");
  EXPECT_TRUE(leftovers(t).empty());
  r = run("cost " + kArch, "MATCORE_RTL_CACHE=" + t + " MATCORE_TOOL_TIMEOUT=abc ");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "MATCORE_TOOL_TIMEOUT");
}

TEST(RobustOutputs, RtlCacheOnlyInAnExistingWritableDirectory) {
  const std::string a = tmp("r_a.txt", "3c00\n"), c = tmp("r_c.txt", "00000000\n");
  CliRun r = run("validate --engine rtl " + kArch + "--a " + a + " --b " + a + " --c " + c + " --d " + c,
                 "MATCORE_RTL_CACHE=" + dir() + "/no/such/dir ");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "MATCORE_RTL_CACHE");
  struct stat st;
  EXPECT_NE(::stat((dir() + "/no").c_str(), &st), 0);
}

TEST(RobustOutputs, SignalsLeaveNoTemporaries) {
  for (const char* sig : {"USR1", "PIPE", "TERM"}) {  // (a background job of sh ignores SIGINT and SIGQUIT)
    const std::string out = dir() + "/sig-" + sig;
    std::string text;
    mc_test::run_command(std::string(MATCORE_CLI) + " sample " + kArch + "--n 20000000 --threads 1 --out " + out +
                             " > /dev/null 2>&1 & p=$!; sleep 1; kill -" + sig + " $p; wait $p; echo rc=$?",
                         &text);
    EXPECT_EQ(text.find("rc=0"), std::string::npos) << text;  // killed, not finished
    EXPECT_TRUE(leftovers(out).empty()) << sig;
    EXPECT_NE(::access(out.c_str(), F_OK), 0) << sig << ": the directory sample created is left behind";
  }
}

TEST(RobustOutputs, FailedWritesLeaveNoDirectoryTheyCreated) {
  // A file-size limit stands for a full disk: every write past 4 KiB fails with EFBIG.
  const std::string s = dir() + "/fsize-sample", f = dir() + "/fsize-probes";
  CliRun r = run("sample " + kArch + "--n 20000 --out " + s, "ulimit -f 4; ");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "a.txt: write failed");
  EXPECT_NE(::access(s.c_str(), F_OK), 0) << s;
  r = run("features --type fp16 --k 16 --emit " + f, "ulimit -f 4; ");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "write failed");
  EXPECT_NE(::access(f.c_str(), F_OK), 0) << f;
  // an existing directory stays, with nothing new in it
  ASSERT_EQ(::mkdir(s.c_str(), 0777), 0);
  r = run("sample " + kArch + "--n 20000 --out " + s, "ulimit -f 4; ");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(::access(s.c_str(), F_OK), 0);
  EXPECT_NE(::access((s + "/a.txt").c_str(), F_OK), 0);
  EXPECT_TRUE(leftovers(s).empty());
  r = run("features --type fp16 --k 16 --emit " + f);  // and the four probe files appear together
  EXPECT_EQ(r.status, 0) << r.out;
  for (const char* n : {"a.txt", "b.txt", "c.txt", "manifest.txt"})
    EXPECT_EQ(::access((f + "/" + n).c_str(), F_OK), 0) << n;
}

TEST(RobustOutputs, HelpOfEveryEngineAndHonestRanges) {
  CliRun r = run("trace --engine rtl --help");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_HAS(r.out, "--vcd");
  r = run("features --type fp16 --k 100 --emit " + dir() + "/probes");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_HAS(r.out, "2..64");
}
