// A traced vector per architecture family: `matcore-sc trace` writes a VCD holding every
// documented stage signal (docs/systemc.md), and the value of each signal, read back from the
// VCD at the cycle its stage holds the group, equals the core Trace of mc::dot for that stage
// (the same names, letter for letter: multiplier.p<i>, multiplier.c, aligner.e_max_odd,
// cadd.s_acc / normaliser.s_acc, rounder.d, ...: every core row must be a VCD signal). The AMD families use a paper vector
// (tb/vectors/paper_cdna*.pvt); NVIDIA has no paper vectors, so fixed vectors are used.
#include <gtest/gtest.h>

#include "run_command.hpp"
#include "vcd_reader.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "matcore/model.hpp"
#include "matcore/plan.hpp"
#include "matcore/presets.hpp"
#include "matcore/table.hpp"
#include "matcore/vectors.hpp"

using namespace mc;
using mc_test::read_vcd;
using mc_test::Vcd;

namespace {

// --------------------------------------------------------------------------- the traces
struct TraceCase {
  std::string family;     ///< layout family (cdna1, cdna2, cdna3, nvidia)
  std::string arch, type, out;
  std::vector<uint64_t> a, b;
  uint64_t c32 = 0;       ///< c as given on the command line (binary32 pattern)
  std::vector<uint64_t> sa, sb;  ///< block scales (block-scaled types)
  std::string paper_d;    ///< the paper's d (empty: none)
  std::string what;
  std::vector<std::string> documented;  ///< signals docs/systemc.md lists for this family
};

// Documented signals (docs/systemc.md, "Waveform signals").
const std::vector<std::string> kCommon = {"clk", "issue.valid", "issue.tag", "issue.grp",
                                          "multiplier.a0", "multiplier.b0", "multiplier.c",
                                          "multiplier.valid", "multiplier.p0", "multiplier.p0_e",
                                          "multiplier.p0_s", "multiplier.p0_cls", "specials.kind",
                                          "specials.d", "specials.zero_sign", "rounder.valid",
                                          "rounder.d"};
std::vector<std::string> with_common(std::vector<std::string> v) {
  v.insert(v.end(), kCommon.begin(), kCommon.end());
  return v;
}

/// The first (non-ambiguous) case of a paper table for arch/type whose nonzero operands are
/// exactly `ops` (e.g. {"c", "p1", "p16"}).
TraceCase from_paper(const std::string& family, const std::string& table, const std::string& arch,
                     const std::string& type, std::set<std::string> ops) {
  const TableCase* best = nullptr;
  static std::map<std::string, std::vector<TableCase>> cache;
  auto& cases = cache[table];
  if (cases.empty()) cases = read_table(std::string(MATCORE_SOURCE_DIR) + "/tb/vectors/" + table);
  for (const TableCase& tc : cases) {
    if (tc.ambiguous || tc.type != type) continue;
    if (std::find(tc.presets.begin(), tc.presets.end(), arch) == tc.presets.end()) continue;
    std::set<std::string> have;
    if (tc.c != "0") have.insert("c");
    for (const auto& x : tc.a) have.insert("a" + std::to_string(x.first));
    for (const auto& x : tc.b) have.insert("b" + std::to_string(x.first));
    for (const auto& x : tc.p) have.insert("p" + std::to_string(x.first));
    if (have == ops) { best = &tc; break; }
  }
  if (!best) throw std::runtime_error("no paper case with those operands for " + arch + "/" + type);
  TraceCase t;
  t.family = family;
  t.arch = arch;
  t.type = type;
  const Datapath dp = find_preset(arch, type);
  TableCase one = *best;
  one.presets = {arch};
  build_operands(one, dp, t.a, t.b, t.c32);  // c in out_fmt = binary32 for the AMD presets
  t.paper_d = best->d;
  t.what = table + ":" + std::to_string(best->line) + " " + best->comment;
  return t;
}

/// The AMD families: a paper vector each (the CDNA3 odd/even sums too).
void amd_cases(std::vector<TraceCase>& v) {
  {
    TraceCase t = from_paper("cdna1", "paper_cdna1.pvt", "mi100", "fp16", {"c", "p1", "p16"});
    t.documented = with_common({"adder.valid", "adder.exact", "adder.exact_e", "adder.exact_s", "adder.exact_sticky"});
    v.push_back(t);
  }
  {
    TraceCase t = from_paper("cdna2", "paper_cdna2.pvt", "mi250", "fp16", {"p1", "p2", "p3", "p4"});
    t.documented = with_common({"adder_l0.valid", "adder.pair0_0", "adder.pair0_1", "adder_l1.valid",
                                "adder.pair1_0", "cadd.valid", "cadd.exact", "cadd.exact_e", "cadd.exact_s",
                                "cadd.exact_sticky", "cadd.special"});
    v.push_back(t);
  }
  {
    TraceCase t = from_paper("cdna3", "paper_cdna3.pvt", "mi300x", "fp16", {"c", "p1", "p8"});
    t.documented = with_common({"aligner.valid", "aligner.e_max", "aligner.sticky", "aligner.v0",
                                "adder.valid", "adder.s_sum", "adder.s_sum_e", "adder.s_sum_f", "cadd.valid",
                                "cadd.e_c", "cadd.branch", "cadd.c_dropped", "cadd.sticky", "cadd.s_acc",
                                "cadd.s_acc_e", "cadd.s_acc_f", "normaliser.valid", "normaliser.active",
                                "normaliser.sticky", "normaliser.s_acc", "normaliser.s_acc_e",
                                "normaliser.s_acc_f"});
    v.push_back(t);
  }
  {
    TraceCase t = from_paper("cdna3", "paper_cdna3.pvt", "mi300x", "e5m2fnuz", {"c", "p1", "p2"});
    t.documented = with_common({"aligner.e_max_odd", "aligner.e_max_even", "aligner.sticky_odd",
                                "aligner.sticky_even", "aligner.v0", "adder.s_sum_odd", "adder.s_sum_even",
                                "oddeven.valid", "adder.s_sum", "cadd.s_acc", "normaliser.s_acc"});
    v.push_back(t);
  }
}

/// NVIDIA: fixed vectors (H100 fp16; B200 e4m3 mma.sync with binary16 output).
void nvidia_cases(std::vector<TraceCase>& v) {
  {  // NVIDIA H100 fp16: truncated alignment of a 2^-26 product and of a negative term
    TraceCase t;
    t.family = "nvidia";
    t.arch = "h100";
    t.type = "fp16";
    const Datapath dp = find_preset("h100", "fp16");
    const char* av[] = {"1", "2^-13", "3", "-2^-10", "0.375", "1.5", "-7", "2^-7"};
    const char* bv[] = {"1", "2^-13", "0.5", "1", "-2", "0.25", "2^-11", "3"};
    for (int i = 0; i < 16; ++i) {
      t.a.push_back(parse_operand(dp.a_fmt, av[i % 8]));
      t.b.push_back(parse_operand(dp.b_fmt, i < 8 ? bv[i] : "2^-20"));
    }
    t.c32 = 0x3dcccccd;  // 0.1
    t.what = "h100/fp16 fixed vector";
    t.documented = with_common({"aligner.valid", "aligner.e_max", "aligner.sticky", "aligner.v0", "aligner.vc",
                                "adder.valid", "adder.s_acc", "adder.s_acc_e", "adder.s_acc_f"});
    v.push_back(t);
  }
  {  // NVIDIA B200 e4m3 mma.sync with binary16 output: pair interleave, two groups, final c add
    TraceCase t;
    t.family = "nvidia";
    t.arch = "b200";
    t.type = "e4m3";
    t.out = "fp16";
    const Datapath dp = find_preset("b200", "e4m3", "fp16");
    for (int i = 0; i < 32; ++i) {
      t.a.push_back(parse_operand(dp.a_fmt, std::to_string((i * 7) % 13 - 6) + "*2^" + std::to_string(i % 5 - 2)));
      t.b.push_back(parse_operand(dp.b_fmt, std::to_string((i * 5) % 11 - 5) + "*2^-" + std::to_string(i % 4)));
    }
    t.c32 = 0x3fc00000;  // 1.5
    t.what = "b200/e4m3 mma.sync fp16-output fixed vector";
    t.documented = with_common({"aligner.e_max", "adder.s_acc", "cfinal.valid", "cfinal.d", "outconv.valid",
                                "outconv.d32"});
    v.push_back(t);
  }
}

/// The block-scaled types: fixed vectors with scales.
void blockscaled_cases(std::vector<TraceCase>& v) {
  {  // block-scaled (issue 27): ST-FDPA (mxf8f6f4 e4m3 x e2m1, E8M0 per 32) and GST-FDPA (nvfp4,
     // UE4M3 per 16, a group that cancels, a zero-scale group, a subnormal scale)
    TraceCase t;
    t.family = "nvidia";
    t.arch = "b200";
    t.type = "mxf8f6f4.e4m3.e2m1";
    const Datapath dp = find_preset("b200", t.type);
    for (int i = 0; i < 32; ++i) {
      t.a.push_back(parse_operand(dp.a_fmt, std::to_string((i * 7) % 13 - 6) + "*2^" + std::to_string(i % 5 - 2)));
      t.b.push_back(parse_operand(dp.b_fmt, std::to_string((i * 5) % 7 - 3) + "*2^-" + std::to_string(i % 2)));
    }
    t.c32 = 0x3fc00000;  // 1.5
    t.sa = {0x80};       // 2
    t.sb = {0x7d};       // 2^-2
    t.what = "b200/mxf8f6f4.e4m3.e2m1 fixed vector with scales";
    t.documented = with_common({"scaler.valid", "scaler.sa0", "scaler.sb0", "scaler.e_s0", "aligner.e_max", "adder.s_acc"});
    v.push_back(t);
    TraceCase n;
    n.family = "nvidia";
    n.arch = "b200";
    n.type = "nvfp4";
    const Datapath nv = find_preset("b200", n.type);
    for (int i = 0; i < 64; ++i) {
      n.a.push_back(parse_operand(nv.a_fmt, std::to_string(i % 7 - 3)));
      n.b.push_back(parse_operand(nv.b_fmt, i < 16 ? (i % 2 ? "-1" : "1") : std::to_string(i % 5 - 2) + "*2^-1"));
    }
    for (int i = 0; i < 16; i += 2) n.a[i + 1] = n.a[i];  // group 0 cancels to zero
    n.c32 = 0xbf800000;  // -1
    n.sa = {0x38, 0x01, 0x00, 0x5c};  // 1, the smallest subnormal, zero, 1.5*2^4
    n.sb = {0x40, 0x3c, 0x38, 0x2a};
    n.what = "b200/nvfp4 fixed vector with scales";
    n.documented = with_common({"grouper.valid", "grouper.sa0", "grouper.sb3", "grouper.s1", "grouper.s1_e",
                                "grouper.s1_f", "grouper.e2", "aligner.e_max", "adder.s_acc"});
    v.push_back(n);
  }
}

std::vector<TraceCase> cases() {
  std::vector<TraceCase> v;
  amd_cases(v);
  nvidia_cases(v);
  blockscaled_cases(v);
  return v;
}

void PrintTo(const TraceCase& t, std::ostream* os) { *os << t.what; }

std::string hexlist(const Format& f, const std::vector<uint64_t>& v) {
  std::string s;
  for (uint64_t x : v) s += (s.empty() ? "0x" : ",0x") + to_hex_bits(f, x);
  return s;
}

int run(const std::string& cmd, std::string* out) { return mc_test::run_command(cmd, out); }

/// The core Trace of dot, per group ("group" rows split it; rows after the last group that
/// belong to the final c addition are put in the last group).
std::vector<std::vector<TraceRow>> core_groups(const Datapath& dp, const TraceCase& t) {
  Trace tr;
  const uint64_t c = c_from_binary32(dp, t.c32);
  dot(dp, t.a.data(), t.b.data(), static_cast<int>(t.a.size()), c,
      scale_refs(t.sa, t.sb), &tr);
  std::vector<std::vector<TraceRow>> g(1);
  bool seen_group = false;
  for (const TraceRow& r : tr.rows) {
    if (r.name == "order") continue;
    if (r.name == "group") {
      if (seen_group) g.emplace_back();
      seen_group = true;
      continue;
    }
    g.back().push_back(r);
  }
  return g;
}

class VcdTrace : public ::testing::TestWithParam<TraceCase> {};

TEST_P(VcdTrace, EveryStageSignalHasTheCoreValue) {
  const TraceCase& t = GetParam();
  const Datapath dp = find_preset(t.arch, t.type, t.out);
  char tmpl[] = "/tmp/matcore_vcd_XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string vcd = dir + "/trace.vcd";
  const std::string cmd = std::string(MATCORE_SC_CLI) + " trace --arch " + t.arch + " --type " + t.type +
                          (t.out.empty() ? "" : " --out " + t.out) + " --a " + hexlist(dp.a_fmt, t.a) +
                          " --b " + hexlist(dp.b_fmt, t.b) + " --c 0x" + to_hex_bits(kBinary32, t.c32) +
                          (t.sa.empty() ? "" : " --sa " + hexlist(dp.scale_fmt, t.sa) + " --sb " + hexlist(dp.scale_fmt, t.sb)) +
                          " --vcd " + vcd + " --no-fst 2>&1";
  std::string out;
  ASSERT_EQ(run(cmd, &out), 0) << cmd << "\n" << out;
  EXPECT_NE(out.find("(equal)"), std::string::npos) << out;
  EXPECT_NE(out.find("[cycle"), std::string::npos) << "no text trace\n" << out;
  EXPECT_NE(out.find("waves/" + t.family + ".gtkw"), std::string::npos) << out;
  const Vcd v = read_vcd(vcd);
  for (const std::string& n : t.documented) EXPECT_TRUE(v.has(n)) << "documented signal " << n << " missing";

  const Format& of = dp.out_fmt;
  // the time at which `stage` holds group g
  auto when = [&](const std::string& stage, int g) -> uint64_t {
    std::vector<uint64_t> ts = v.times(stage + ".valid");
    for (uint64_t x : v.times(stage + ".grp")) ts.push_back(x);
    std::sort(ts.begin(), ts.end());
    for (uint64_t x : ts)
      if (v.u(stage + ".valid", x) == 1 && static_cast<int>(v.u(stage + ".grp", x)) == g) return x;
    ADD_FAILURE() << stage << " never holds group " << g;
    return 0;
  };
  const std::vector<SignalField> table = signal_table(dp);
  const auto groups = core_groups(dp, t);
  size_t checked = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const TraceRow& row : groups[g]) {
      // every record is a VCD signal of that name, and each of its signals has the record's
      // bits when the record's stage holds the group
      EXPECT_FALSE(row.signals.empty()) << row.name;
      const uint64_t x = when(mc_test::owner_of(dp, table, row.name), static_cast<int>(g));
      for (const TraceSignal& sg : row.signals) {
        if (!v.has(sg.name)) {
          ADD_FAILURE() << "core trace signal '" << sg.name << "' is not a VCD signal of that name";
          continue;
        }
        EXPECT_EQ(to_hex(mc_test::to_u128(v.bits(sg.name, x))), to_hex(sg.bits))
            << sg.name << " (group " << g << ", record " << row.name << " = " << row.value << ")";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 8u);
  if (!t.paper_d.empty()) {  // and the paper's d
    uint64_t last = 0;
    const uint64_t end = v.end;
    last = v.u(dp.c_final_add ? "cfinal.d" : "rounder.d", end);
    bool inexact = false;
    EXPECT_EQ(last, parse_operand(of, t.paper_d, &inexact)) << t.what;
  }
  RecordProperty("signals_checked", static_cast<int>(checked));
  std::remove(vcd.c_str());
  ::rmdir(dir.c_str());
}

INSTANTIATE_TEST_SUITE_P(Families, VcdTrace, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<TraceCase>& i) {
                           std::string s = i.param.family + "_" + i.param.arch + "_" + i.param.type;
                           for (char& ch : s)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

TEST(Cli, FileSamplesAndErrors) {
  // --file DIR --samples: the a/b/c files of the shared vector format; d.txt is compared
  char tmpl[] = "/tmp/matcore_vcd_XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  {
    std::ofstream a(dir + "/a.txt"), b(dir + "/b.txt"), c(dir + "/c.txt"), d(dir + "/d.txt");
    for (int i = 0; i < 4; ++i) {
      for (int k = 0; k < 16; ++k) a << (k ? " " : "") << (k == i ? "3f800000" : "33800000");
      a << "\n";
      for (int k = 0; k < 16; ++k) b << (k ? " " : "") << "3f800000";
      b << "\n";
      c << "3f800000\n";
      d << (i == 3 ? "40000000\n" : "40000004\n");  // 2 + 15*2^-24 rounds to 2 + 2^-20
    }
  }
  std::string out;
  const std::string base = std::string(MATCORE_SC_CLI) + " trace --arch mi300x --type fp16 --file " + dir;
  ASSERT_EQ(run(base + " --samples 1,3 --vcd " + dir + "/x.vcd --no-text --no-fst 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("sample 1: d = 0x40000004"), std::string::npos) << out;
  EXPECT_NE(out.find("sample 3: d = 0x40000004"), std::string::npos) << out;
  EXPECT_NE(out.find("(model matches)"), std::string::npos) << out;
  EXPECT_NE(out.find("(model differs"), std::string::npos) << out;
  EXPECT_EQ(out.find("[cycle"), std::string::npos) << "--no-text still printed the trace";
  out.clear();
  EXPECT_EQ(run(base + " --samples 9 --vcd " + dir + "/y.vcd 2>&1", &out), 2) << out;
  EXPECT_NE(out.find("sample 9 does not exist"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(run(std::string(MATCORE_SC_CLI) + " trace --arch nope --type fp16 --a 1 --b 1 2>&1", &out), 2);
  EXPECT_NE(out.find("unknown architecture"), std::string::npos) << out;
  for (const char* f : {"a.txt", "b.txt", "c.txt", "d.txt", "x.vcd", "y.vcd"}) std::remove((dir + "/" + f).c_str());
  ::rmdir(dir.c_str());
}

}  // namespace

namespace {

TEST(Layouts, CommittedLayoutsAreCurrent) {
  // waves/<family>.gtkw are `matcore-sc layout --family <family>`: every signal any preset of
  // the family traces, grouped by stage, no dump file or absolute path.
  for (const char* fam : {"cdna1", "cdna2", "cdna3", "cdna4", "nvidia"}) {
    std::string gen;
    ASSERT_EQ(run(std::string(MATCORE_SC_CLI) + " layout --family " + fam, &gen), 0) << fam;
    std::ifstream in(std::string(MATCORE_SOURCE_DIR) + "/waves/" + fam + ".gtkw");
    ASSERT_TRUE(in) << "waves/" << fam << ".gtkw missing";
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), gen) << "waves/" << fam << ".gtkw is stale: regenerate it with matcore-sc layout --family " << fam;
    EXPECT_EQ(gen.find("[dumpfile]"), std::string::npos);
    EXPECT_EQ(gen.find("\n/"), std::string::npos);
    EXPECT_NE(gen.find("@800200\n-rounder\n"), std::string::npos);  // stage groups
  }
}

}  // namespace
