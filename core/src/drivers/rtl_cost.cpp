// matcore cost: yosys synthesis of a generated top (generic gates, hierarchy kept): cells,
// NAND2-equivalents and gate levels per stage, cached per design (docs/rtl.md, "Cost").
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "matcore/output.hpp"
#include "matcore/plan.hpp"
#include "matcore/rtl_driver.hpp"
#include "matcore/vectors.hpp"
#include "rtl_tools.hpp"

namespace mc {

using namespace rtlio;

namespace {

/// One module of yosys's `stat -tech cmos` report: its own primitive cells and transistors, and
/// the submodule instances it holds.
struct StatModule {
  long cells = 0;
  long flops = 0;  ///< its own flip-flop cells
  double transistors = 0;
  std::vector<std::pair<std::string, long>> children;
};

std::map<std::string, StatModule> parse_stat(const std::string& text) {
  std::map<std::string, StatModule> mods;
  std::istringstream in(text);
  std::string line, cur;
  bool in_cells = false;
  while (std::getline(in, line)) {
    if (line.rfind("=== ", 0) == 0) {
      cur = line.substr(4, line.size() - 8);
      if (cur == "design hierarchy") cur.clear();
      in_cells = false;
      continue;
    }
    if (cur.empty()) continue;
    if (line.find("Number of cells:") != std::string::npos) {
      in_cells = true;
      continue;
    }
    const size_t t = line.find("Estimated number of transistors:");
    if (t != std::string::npos) {
      mods[cur].transistors = std::atof(line.c_str() + t + 32);
      in_cells = false;
      continue;
    }
    if (!in_cells) continue;
    std::istringstream ls(line);
    std::string type;
    long n = 0;
    if (!(ls >> type >> n)) {
      in_cells = false;
      continue;
    }
    if (type.rfind("$_", 0) == 0) {
      mods[cur].cells += n;
      if (type.find("DFF") != std::string::npos) mods[cur].flops += n;
    }
    else mods[cur].children.push_back({type, n});
  }
  return mods;
}

/// Cells and transistors of a module with everything below it.
std::pair<long, double> total_of(const std::map<std::string, StatModule>& m, const std::string& name) {
  const auto it = m.find(name);
  if (it == m.end()) return {0, 0};
  long c = it->second.cells;
  double t = it->second.transistors;
  for (const auto& ch : it->second.children) {
    const auto sub = total_of(m, ch.first);
    c += ch.second * sub.first;
    t += ch.second * sub.second;
  }
  return {c, t};
}

/// "mc_aligner" for "$paramod$1234\mc_aligner" (or a module without parameters).
std::string base_of(const std::string& type) {
  const size_t b = type.rfind('\\');
  return b == std::string::npos ? type : type.substr(b + 1);
}

/// Gate levels of each module's longest combinational path: yosys `ltp -noff` prints
/// "Longest topological path in MODULE (length=N):" for every module.
std::map<std::string, int> parse_ltp(const std::string& text) {
  std::map<std::string, int> r;
  std::istringstream in(text);
  std::string line;
  const std::string head = "Longest topological path in ";
  while (std::getline(in, line)) {
    const size_t p = line.find(head);
    if (p == std::string::npos) continue;
    const size_t a = p + head.size(), b = line.find(" (length=", a);
    if (b != std::string::npos) r[line.substr(a, b - a)] = std::atoi(line.c_str() + b + 9);
  }
  return r;
}

/// yosys's version line (part of the cost cache's key).
std::string yosys_version() {
  std::string out;
  FILE* p = ::popen("yosys -V 2>/dev/null", "r");
  if (!p) return out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  return ::pclose(p) == 0 ? out : std::string();
}

/// The synthesis of a top: yosys's stat and ltp reports, cached in the RTL cache under a hash of
/// the top's text, its stage sources, the script and yosys's version (a design met again, in
/// explore --cost or another command, costs nothing). `seconds`: the synthesis time, `cached`.
struct Synthesis {
  std::string stat, ltp;
  double seconds = 0;
  bool cached = false;
};
Synthesis synthesize(const RtlTop& t, const Datapath& dp) {
  const std::string version = yosys_version();
  if (version.empty()) throw InputError("matcore cost needs yosys (Debian package yosys; scripts/install-deps.sh installs it)");
  const std::string script = "synth -top %T; tee -q -o stat.txt stat -tech cmos; tee -q -o ltp.txt ltp -noff";
  uint64_t h = fnv1a(t.text);
  for (const std::string& s : t.sources) h = fnv1a(slurp(rtl_model_dir() + "/" + s), h);
  h = fnv1a(script + version, h);
  char key[17];
  std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(h));
  const std::string root = cache_root(), done = root + "/cost-" + key;
  Synthesis r;
  if (is_file(done + "/stat.txt") && is_file(done + "/ltp.txt") && is_file(done + "/seconds")) {
    r.stat = slurp(done + "/stat.txt");
    r.ltp = slurp(done + "/ltp.txt");
    r.seconds = std::atof(slurp(done + "/seconds").c_str());
    r.cached = true;
    return r;
  }
  mkdirs(root);
  TempDir work(root + "/.cost-XXXXXX");
  const std::string& dir = work.path;
  {
    std::ofstream f(dir + "/top.sv");
    f << t.text;
    if (!f.flush()) throw InputError(dir + "/top.sv: write failed");
  }
  std::string files;
  for (const std::string& s : t.sources) files += rtl_model_dir() + "/" + s + " ";
  files += dir + "/top.sv";
  const std::string run = "read_verilog -sv " + files + "; synth -top " + t.module + "; tee -q -o " + dir +
                          "/stat.txt stat -tech cmos; tee -q -o " + dir + "/ltp.txt ltp -noff";
  const auto t0 = std::chrono::steady_clock::now();
  const int st = run_tool("yosys -q -l " + shell_quote(dir + "/yosys.log") + " -p " + shell_quote(run) + " > /dev/null 2>&1",
                          tool_timeout(600), "yosys (the cost of " + dp.name() + ")");
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (st != 0) throw InputError("yosys failed on " + t.module + " (" + dp.name() + "):" + log_tail(dir + "/yosys.log"));
  r.stat = slurp(dir + "/stat.txt");
  r.ltp = slurp(dir + "/ltp.txt");
  {
    std::ofstream f(dir + "/seconds");
    f << r.seconds << "\n";
  }
  // the finished reports become the cache entry in one rename (a concurrent run that finished
  // first leaves its own: either is the same)
  work.keep = ::rename(dir.c_str(), done.c_str()) == 0;
  return r;
}

}  // namespace


RtlCost rtl_cost(const Datapath& dp) {
  // the top under a name of its own (no preset in the text): equal designs share the cache entry
  const RtlTop t = rtl_top(dp, "mc_cost_top");
  if (rtl_size(t, dp) > kCostSizeLimit)
    throw InputError("datapath " + dp.name() + ": too large for matcore cost (yosys would run for many minutes): lanes x "
                     "widest adder = " + std::to_string(rtl_size(t, dp)) + " bits > " + std::to_string(kCostSizeLimit) +
                     " (docs/cli.md, \"Limits\")");
  const Synthesis syn = synthesize(t, dp);
  const auto mods = parse_stat(syn.stat);
  const auto depth = parse_ltp(syn.ltp);
  const auto top = mods.find(t.module);
  if (top == mods.end()) throw InputError("yosys: no statistics of " + t.module + " (" + dp.name() + ")");

  RtlCost c;
  c.module = rtl_module_name(dp);
  c.latency = t.latency;
  c.seconds = syn.seconds;
  c.cached = syn.cached;
  // each stage: its instances, priced by the top's instances of that module (instances of one
  // module with several parameter sets at the top level are averaged)
  std::map<std::string, std::pair<long, double>> per_instance;  // base -> (cells, transistors)
  std::map<std::string, long> instances;
  for (const auto& ch : top->second.children) {
    const auto tot = total_of(mods, ch.first);
    auto& acc = per_instance[base_of(ch.first)];
    acc.first += ch.second * tot.first;
    acc.second += ch.second * tot.second;
    instances[base_of(ch.first)] += ch.second;
  }
  std::map<std::string, long> planned;  // instances the generator placed, per module
  for (const RtlInstance& i : t.instances) planned[i.module] += i.count;
  std::map<std::string, int> depth_of;  // base module -> gate levels (the deepest of its variants)
  for (const auto& m : depth) depth_of[base_of(m.first)] = std::max(depth_of[base_of(m.first)], m.second);
  std::vector<std::string> order;
  for (const PlannedStage& p : plan(dp)) order.push_back(p.name);
  order.insert(order.begin() + specials_index(stage_list(dp)), "specials");
  for (const std::string& stage : order) {
    StageCost sc;
    sc.stage = stage;
    for (const RtlInstance& i : t.instances) {
      if (i.stage != stage) continue;
      sc.modules += (sc.modules.empty() ? "" : ", ") + i.module + (i.count > 1 ? " x" + std::to_string(i.count) : "");
      sc.depth = std::max(sc.depth, depth_of[i.module]);
      const auto it = per_instance.find(i.module);
      if (it == per_instance.end() || !instances[i.module]) continue;  // optimised away entirely
      const double share = static_cast<double>(i.count) / static_cast<double>(std::max(planned[i.module], instances[i.module]));
      sc.cells += static_cast<long>(it->second.first * share + 0.5);
      sc.nand2 += it->second.second * share / 4.0;
    }
    for (const auto& a : t.adders)
      if (a.first == stage) sc.adder_bits = std::max(sc.adder_bits, a.second);
    if (sc.adder_bits > c.widest_adder) {
      c.widest_adder = sc.adder_bits;
      c.widest_stage = stage;
    }
    if (stage != "issue") c.stages.push_back(sc);
    c.depth = std::max(c.depth, sc.depth);
  }
  c.reg_cells = top->second.cells;
  c.reg_nand2 = top->second.transistors / 4.0;
  c.flops = top->second.flops;
  const auto all = total_of(mods, t.module);
  c.cells = all.first;
  c.nand2 = all.second / 4.0;
  return c;
}

}  // namespace mc
