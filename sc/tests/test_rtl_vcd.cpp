// The RTL against the C++ stages, signal by signal (issue 26). For one preset of each layout
// family, and the odd/even and binary16-output structures, the same samples go through
// `matcore-sc trace` (the SystemC top: modules around the C++ stage functions, which
// test_sc_vcd checks against mc::dot's trace) and `matcore trace --engine rtl` (the Verilated
// Verilog: an independent implementation). Then
//   - both VCDs have the top scope SystemC and the time unit 1 ns, and every signal of the field
//     table (signal_table) is in both with its width and in the shipped layout
//     waves/<layout>.gtkw under that name and range: the layout opens either VCD;
//   - with a d.txt (the model's d, one sample's last bit flipped), both VCDs show check.d_hw and
//     check.mismatch for the sample the last stage holds;
//   - every signal holds the same bits in both, read when the stage that owns it holds a
//     (sample, group), for every sample and group: random bit patterns (NaN, Inf and subnormal
//     operands among them) and random exponent/mantissa draws with subnormals, several groups a
//     sample, the last one partial; samples numbered as in the file (issue.tag). The one
//     exceptions (holds_pair): a pair-level slot that holds no pair, and the lanes past K of the
//     last group, which hold no product (the C++ record has none, the RTL a -0 that no rule sees).
// A difference names the stage, the sample, the group, the signal and both values in hex.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "matcore/model.hpp"
#include "matcore/plan.hpp"
#include "matcore/presets.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"
#include "vcd_reader.hpp"

using namespace mc;
using mc_test::read_vcd;
using mc_test::Vcd;

namespace {

struct Case {
  const char *arch, *type, *out, *variant;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.arch << "/" << c.type << (*c.out ? " out " : "") << c.out; }

const Case kCases[] = {
    {"mi100", "bf16", "", ""},       // cdna1: exact adder
    {"mi250", "fp16", "", ""},       // cdna2: pairwise tree, pair c addition
    {"mi300x", "fp16", "", ""},      // cdna3: late c, normaliser
    {"mi300x", "e4m3fnuz", "", ""},  // cdna3: odd/even sums
    {"h100", "fp16", "", ""},        // nvidia: early c, truncation
    {"b200", "e4m3", "fp16", "mma.sync"},  // nvidia: pair interleave, final c add, binary16 output
    {"b200", "mxf8f6f4.e2m1.e5m2", "", "tcgen05"},  // block-scaled (ST-FDPA): the scaler, fp4 x fp8
    {"b200", "nvfp4", "", "tcgen05"},  // block-scaled (GST-FDPA): the grouper, UE4M3 scales
};

std::string dp_args(const Case& c) {
  std::string s = std::string(" --arch ") + c.arch + " --type " + c.type;
  if (*c.out) s += std::string(" --out ") + c.out;
  if (*c.variant) s += std::string(" --variant ") + c.variant;
  return s;
}

/// "name[hi:lo]" (or "name" for one bit) of each signal line of a .gtkw layout.
std::set<std::string> layout_signals(const std::string& path) {
  std::ifstream in(path);
  std::set<std::string> s;
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("SystemC.", 0) == 0) s.insert(line.substr(8));
  return s;
}

using Key = std::tuple<std::string, uint64_t, uint64_t>;  // owning stage, tag, group

/// Whether the signal holds a record of the C++ stages in group g of a sample of K products:
/// multiplier.p<i> a product (i < the group's products), adder.pair<l>_<k> a pair sum. A level of
/// m terms forms m/2 pairs and passes an odd last term on: the C++ record leaves that slot 0,
/// the RTL adds the term to a zero product there (the same value goes on). Only pairs compare.
bool holds_pair(const std::string& name, const Datapath& dp, int K, uint64_t g) {
  if (name.rfind("multiplier.p", 0) == 0)  // lanes past K in the last group: no product (the RTL's -0)
    return std::stoi(name.substr(12)) < K - static_cast<int>(g) * dp.n_fma;
  if (name.rfind("adder.pair", 0) != 0) return true;
  const int level = std::stoi(name.substr(10)), k = std::stoi(name.substr(name.find('_') + 1));
  int m = std::min(dp.n_fma, K - static_cast<int>(g) * dp.n_fma);
  for (int l = 0; l < level; ++l) m = m <= 1 ? m : m / 2 + (m & 1);
  return m > 1 && k < m / 2;
}

/// The bits of every table signal at each time its owning stage holds a (tag, group).
std::map<Key, std::map<std::string, std::string>> records(const Vcd& v, const Datapath& dp) {
  const std::vector<PlannedStage> stages = plan(dp);
  std::map<Key, std::map<std::string, std::string>> r;
  for (const SignalField& f : signal_table(dp)) {
    const std::string owner = f.group == "specials" ? stages[specials_index(stage_list(dp))].name : f.group;
    if (!v.has(f.name) || !v.has(owner + ".valid")) continue;  // reported by the caller
    std::vector<uint64_t> ts = v.times(owner + ".valid");
    for (const char* c : {".tag", ".grp"})
      for (uint64_t t : v.times(owner + c)) ts.push_back(t);
    std::sort(ts.begin(), ts.end());
    ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
    for (uint64_t t : ts)
      if (v.u(owner + ".valid", t) == 1)
        r[Key{owner, v.u(owner + ".tag", t), v.u(owner + ".grp", t)}][f.name] = v.bits(f.name, t);
  }
  return r;
}

std::string hex_of(const std::string& bits) {
  std::string h;
  const size_t lead = bits.size() % 4;
  auto nib = [](const std::string& b) {
    if (b.find_first_of("xz") != std::string::npos) return 'x';
    return "0123456789abcdef"[std::stoi(b, nullptr, 2)];
  };
  if (lead) h += nib(bits.substr(0, lead));
  for (size_t i = lead; i < bits.size(); i += 4) h += nib(bits.substr(i, 4));
  return "0x" + h;
}

/// check.d_hw and check.mismatch of a VCD while the last stage holds a sample: the hardware's d
/// of that sample, and whether it differs from the model's (sample 3's does).
void check_scope(const Datapath& dp, const Vcd& v, const std::string& who, const std::vector<uint64_t>& hw) {
  const std::string last = plan(dp).back().name;
  ASSERT_TRUE(v.has("check.d_hw") && v.has("check.mismatch")) << who << " VCD has no check scope";
  std::set<uint64_t> seen;
  for (uint64_t t : v.times(last + ".tag")) {
    if (v.u(last + ".valid", t) != 1) continue;
    const uint64_t tag = v.u(last + ".tag", t);
    seen.insert(tag);
    EXPECT_EQ(v.u("check.d_hw", t), hw[tag]) << who << " sample " << tag;
    EXPECT_EQ(v.u("check.mismatch", t), tag == 3 ? 1u : 0u) << who << " sample " << tag;
  }
  EXPECT_EQ(seen, (std::set<uint64_t>{0, 1, 3, 5})) << who << ": samples seen by " << last;
}

/// The RTL's records against SystemC's, signal by signal; returns the signals compared and
/// counts the (sample, group) pairs the issue stage held in *groups.
size_t compare_records(const Datapath& dp, const std::map<Key, std::map<std::string, std::string>>& want,
                       const std::map<Key, std::map<std::string, std::string>>& got, int k, const std::string& strategy,
                       size_t* groups) {
  std::set<Key> keys;
  for (const auto& e : want) keys.insert(e.first);
  for (const auto& e : got) keys.insert(e.first);
  size_t compared = 0;
  int reported = 0;
  for (const Key& key : keys) {  // stage by stage in (stage name, tag, group) order
    const std::string where = std::get<0>(key) + " sample " + std::to_string(std::get<1>(key)) + " group " +
                              std::to_string(std::get<2>(key)) + " (" + strategy + ")";
    if (!want.count(key) || !got.count(key)) {
      ADD_FAILURE() << where << ": held by " << (want.count(key) ? "SystemC only" : "the RTL only");
      continue;
    }
    if (std::get<0>(key) == "issue") ++*groups;
    for (const auto& s : want.at(key)) {
      if (!holds_pair(s.first, dp, k, std::get<2>(key))) continue;
      const auto it = got.at(key).find(s.first);
      ++compared;
      if (it != got.at(key).end() && it->second == s.second) continue;
      if (++reported <= 12)
        ADD_FAILURE() << where << ": " << s.first << " rtl " << (it == got.at(key).end() ? "-" : hex_of(it->second))
                      << " c++ " << hex_of(s.second);
    }
  }
  EXPECT_EQ(reported, 0) << "signals that differ (first 12 shown)";
  return compared;
}

/// The RTL against the records of the C++ trace itself (mc::dot, what `dot --trace` prints):
/// every signal of every record of the traced samples, read when the record's stage holds
/// (sample, group). Returns the signals compared.
size_t compare_trace(const Datapath& dp, const std::string& set, int k, const std::string& strategy,
                     const std::map<Key, std::map<std::string, std::string>>& got) {
  const SampleSet ss = load_sample_set(dp, set + "/a.txt", set + "/b.txt", set + "/c.txt", set + "/c.txt");
  const std::vector<SignalField> table = signal_table(dp);
  const int ns = dp.scaled() ? scales_per_sample(dp, k) : 0;
  const ScaleFile xa = ns ? read_scale_file(set + "/sa.txt", ns, dp.scale_fmt) : ScaleFile{},
                  xb = ns ? read_scale_file(set + "/sb.txt", ns, dp.scale_fmt) : ScaleFile{};
  size_t compared = 0;
  for (uint64_t i : {5u, 1u, 3u, 0u}) {
    Trace tr;
    dot(dp, &ss.a[i * k], &ss.b[i * k], k, ss.c[i], ns ? ScaleRefs{&xa.v[i * ns], &xb.v[i * ns]} : ScaleRefs{}, &tr);
    uint64_t g = 0;
    for (const TraceRow& row : tr.rows) {
      if (row.name == "group") g = std::stoull(row.value);
      for (const TraceSignal& sg : row.signals) {
        const Key key{mc_test::owner_of(dp, table, row.name), i, g};
        const auto at = got.find(key);
        const std::string where = std::get<0>(key) + " sample " + std::to_string(i) + " group " + std::to_string(g) + " (" + strategy + ")";
        if (at == got.end() || !at->second.count(sg.name)) {
          ADD_FAILURE() << where << ": the RTL VCD holds no " << sg.name << " (record " << row.name << ")";
          continue;
        }
        ++compared;
        EXPECT_EQ(to_hex(mc_test::to_u128(at->second.at(sg.name))), to_hex(sg.bits))
            << where << ": " << sg.name << " rtl against the C++ record " << row.name << " = " << row.value;
      }
    }
  }
  return compared;
}

/// The hardware's d of the set in `set`: the model's (with the samples' block scales, which both
/// traces read), but sample 3's last bit flipped (check.mismatch); written to set/d.txt.
std::vector<uint64_t> hardware_d(const Datapath& dp, const std::string& set, int k) {
  const SampleSet ss = load_sample_set(dp, set + "/a.txt", set + "/b.txt", set + "/c.txt", set + "/c.txt");  // (d unused)
  std::vector<uint64_t> hw = run_samples(dp, ss);
  if (dp.scaled()) {
    const int ns = scales_per_sample(dp, k);
    const ScaleFile xa = read_scale_file(set + "/sa.txt", ns, dp.scale_fmt), xb = read_scale_file(set + "/sb.txt", ns, dp.scale_fmt);
    for (size_t i = 0; i < ss.n; ++i)
      hw[i] = widen_result(dp, dot(dp, &ss.a[i * k], &ss.b[i * k], k, ss.c[i], ScaleRefs{&xa.v[i * ns], &xb.v[i * ns]}));
  }
  hw[3] ^= 1;
  std::ofstream d(set + "/d.txt");
  for (uint64_t x : hw) d << to_hex_bits(kBinary32, x) << "\n";
  return hw;
}

class RtlStages : public ::testing::TestWithParam<Case> {};

TEST_P(RtlStages, EverySignalEqualsTheCxxStages) {
  const Case& c = GetParam();
  const Datapath dp = find_preset(c.arch, c.type, c.out, c.variant);
  const std::string dir = mc_test::temp_dir();
  const std::string layout = std::string(MATCORE_SOURCE_DIR) + "/waves/" + dp.layout + ".gtkw";
  const std::set<std::string> shipped = layout_signals(layout);
  ASSERT_FALSE(shipped.empty()) << layout;
  const int k = 2 * dp.n_fma + 3;  // three groups or more, the last one partial
  const size_t per_sample = static_cast<size_t>((k + dp.n_fma - 1) / dp.n_fma);
  size_t compared = 0, groups = 0, compared_trace = 0;
  for (const char* strategy : {"bits", "expmant --subnormal"}) {
    const std::string set = dir + "/" + std::string(strategy).substr(0, 4);
    std::string out;
    ASSERT_EQ(mc_test::run_command(std::string(MATCORE_CLI) + " sample --arch " + c.arch + " --type " + c.type +
                                       " --k " + std::to_string(k) + " --n 6 --seed 26 --strategy " + strategy +
                                       " --out " + set + " 2>&1",
                                   &out),
              0)
        << out;
    const std::vector<uint64_t> hw = hardware_d(dp, set, k);
    const std::string pick = " --file " + set + " --samples 5,1,3,0";  // numbered as in the file
    const std::string sc_vcd = set + "/sc.vcd", rtl_vcd = set + "/rtl.vcd";
    out.clear();
    ASSERT_EQ(mc_test::run_command(std::string(MATCORE_SC_CLI) + " trace" + dp_args(c) + pick + " --vcd " + sc_vcd +
                                       " --no-text --no-fst 2>&1",
                                   &out),
              0)
        << out;
    out.clear();
    ASSERT_EQ(mc_test::run_command(std::string(MATCORE_CLI) + " trace --engine rtl" + dp_args(c) + pick + " --vcd " +
                                       rtl_vcd + " 2>&1",
                                   &out),
              0)
        << out;
    EXPECT_NE(out.find("sample 5: rtl d = 0x"), std::string::npos) << out;
    const Vcd sc = read_vcd(sc_vcd), rtl = read_vcd(rtl_vcd);
    EXPECT_TRUE(rtl.tops.count("SystemC")) << "RTL VCD top scopes";
    EXPECT_EQ(rtl.timescale, sc.timescale);
    EXPECT_EQ(rtl.timescale, "1ns");
    for (const SignalField& f : signal_table(dp)) {
      const std::string in_layout = f.name + (f.width > 1 ? "[" + std::to_string(f.width - 1) + ":0]" : "");
      EXPECT_TRUE(shipped.count(in_layout)) << in_layout << " is not in " << layout;
      for (const Vcd* v : {&sc, &rtl}) {
        ASSERT_TRUE(v->has(f.name)) << (v == &sc ? "SystemC" : "RTL") << " VCD lacks " << f.name;
        EXPECT_EQ(v->width.at(v->id_of.at(f.name)), f.width) << f.name;
      }
    }
    for (const Vcd* v : {&sc, &rtl}) check_scope(dp, *v, v == &sc ? "SystemC" : "RTL", hw);
    const auto got = records(rtl, dp);
    compared += compare_records(dp, records(sc, dp), got, k, strategy, &groups);
    compared_trace += compare_trace(dp, set, k, strategy, got);
    std::remove(sc_vcd.c_str());
    std::remove(rtl_vcd.c_str());
  }
  EXPECT_EQ(groups, 2u * 4u * per_sample) << "(sample, group) pairs seen by the issue stage";
  EXPECT_GT(compared_trace, 100u) << "signals of C++ trace records compared with the RTL";
  RecordProperty("signals_compared", static_cast<int>(compared));
  RecordProperty("trace_signals_compared", static_cast<int>(compared_trace));
}

INSTANTIATE_TEST_SUITE_P(Families, RtlStages, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::string s = std::string(i.param.arch) + "_" + i.param.type + "_" + i.param.out;
                           for (char& ch : s)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

}  // namespace
