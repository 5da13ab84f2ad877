// The RTL engine: Verilator builds of the generated tops (cached), their simulation over
// samples, and yosys synthesis for `matcore cost` (docs/rtl.md). The generator of the tops is
// core/src/tools/rtl.cpp.
#include "matcore/rtl_driver.hpp"
#include "matcore/model.hpp"
#include "matcore/output.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "matcore/plan.hpp"
#include "matcore/vectors.hpp"
#include "rtl_tools.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <fstream>

#ifndef MATCORE_RTL_DIR
#define MATCORE_RTL_DIR "rtl_model"
#endif


namespace mc {

namespace {
/// The module name of the top inside the simulators (the VCD's scope before vcd_as_systemc).
const char* const kSimTop = "mc_top";

}  // namespace

using rtlio::absolute;

std::string rtl_model_dir() {
  if (const char* e = std::getenv("MATCORE_RTL_DIR")) return absolute(e);
  return MATCORE_RTL_DIR;
}

// ------------------------------------------------------------------------- the RTL engine
namespace {

using namespace rtlio;

std::string verilator_cmd() {
  if (const char* e = std::getenv("MATCORE_VERILATOR")) return e;
  return "verilator";
}

/// The runtime objects a Verilated makefile links (VM_GLOBAL_FAST and VM_GLOBAL_SLOW of
/// <prefix>_classes.mk, each name + ".o"); empty when the file does not list them.
std::vector<std::string> runtime_objects(const std::string& classes_mk) {
  std::ifstream f(classes_mk);
  std::vector<std::string> out;
  std::string line;
  bool in_global = false;
  while (std::getline(f, line)) {
    if (line.rfind("VM_GLOBAL_FAST", 0) == 0 || line.rfind("VM_GLOBAL_SLOW", 0) == 0) {
      in_global = true;
      continue;
    }
    if (!in_global) continue;
    std::string name;
    for (char ch : line)
      if (ch != ' ' && ch != '\t' && ch != '\\') name += ch;
    if (name.empty()) {
      in_global = false;
      continue;
    }
    out.push_back(name + ".o");
  }
  return out;
}

/// `verilator --version` (its output), or "" when verilator does not run.
std::string verilator_version() {
  std::string out;
  FILE* p = ::popen((verilator_cmd() + " --version 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  return ::pclose(p) == 0 ? out : std::string();
}

/// What the runtime objects depend on: the Verilator (its --version output), the compiler and
/// flags from the environment, matcore's Verilator flags and the trace mode.
std::string runtime_key(const std::string& version, const std::string& flags, bool trace) {
  std::string id = flags + (trace ? " --trace" : "") + version;
  for (const char* v : {"CXX", "CXXFLAGS", "CPPFLAGS", "OBJCACHE"})
    if (const char* e = std::getenv(v)) id += std::string(" ") + v + "=" + e;
  char key[17];
  std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(fnv1a(id)));
  return std::string(key) + (trace ? "-trace" : "");
}

void copy_file(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
  if (!in || !out.flush()) throw InputError(to + ": cannot copy from " + from + " (" + std::strerror(errno) + ")");
}

/// Keeps a build's runtime objects as rt_dir (written to a temporary directory, renamed when
/// complete; a second process that got there first wins). Failing to keep them costs only time.
void keep_runtime(const std::string& obj, const std::vector<std::string>& runtime, const std::string& rt_dir) {
  std::string tmpl = rt_dir + ".tmp-XXXXXX";
  if (!::mkdtemp(&tmpl[0])) return;
  try {
    for (const std::string& o : runtime) copy_file(obj + "/" + o, tmpl + "/" + o);
    if (::rename(tmpl.c_str(), rt_dir.c_str()) == 0) return;
  } catch (const InputError&) {
  }
  run_tool("rm -rf " + shell_quote(tmpl), 600, "rm");
}

}  // namespace

std::string rtl_simulator(const Datapath& dp, bool trace) {
  // one simulator per distinct top: presets with the same parameters (mi300a and mi300x, ...)
  // share it, the text naming no preset
  const RtlTop t = rtl_top(dp, kSimTop);
  const std::string dir = rtl_model_dir();
  const std::string harness = dir + "/harness/harness.cpp";
  uint64_t h = fnv1a(t.text);
  for (const std::string& s : t.sources) h = fnv1a(slurp(dir + "/" + s), h);
  h = fnv1a(slurp(harness), h);
  const std::string flags = " -O3 --x-assign fast --x-initial fast -CFLAGS -O3";  // part of the cache key
  h = fnv1a(flags + (trace ? " --trace" : ""), h);
  char key[17];
  std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(h));
  const std::string root = cache_root();
  const std::string final_dir = root + "/top-" + key + (trace ? "-trace" : "");
  const std::string exe = final_dir + "/sim";
  if (is_file(exe)) return exe;

  mkdirs(root);
  // one build per key at a time (parallel test processes want the same simulators)
  struct Lock {
    int fd;
    explicit Lock(const std::string& p) : fd(::open(p.c_str(), O_CREAT | O_RDWR, 0666)) {
      if (fd >= 0) ::flock(fd, LOCK_EX);
    }
    ~Lock() {
      if (fd >= 0) ::close(fd);
    }
  } lock(final_dir + ".lock");
  if (is_file(exe)) return exe;
  const std::string version = verilator_version();
  if (version.empty())
    throw InputError("the RTL engine needs verilator (Debian package verilator; scripts/install-deps.sh installs it)");
  std::string tmpl = root + "/.build-" + rtl_module_name(dp) + "-XXXXXX";
  if (!::mkdtemp(&tmpl[0])) throw InputError(root + ": cannot create a build directory (" + std::strerror(errno) + ")");
  const std::string tmp = tmpl;
  // a signal removes the unfinished build; a failed one stays for its log (see build.log)
  struct Slot {
    int s;
    ~Slot() { unregister_temp(s); }
  } slot{register_temp(tmp, true)};
  {
    std::ofstream f(tmp + "/top.sv");
    f << t.text;
    if (!f.flush()) throw InputError(tmp + "/top.sv: write failed");
  }
  // Verilate, then make. The Verilator runtime objects the makefile lists (verilated.o,
  // verilated_threads.o, verilated_vcd_c.o with --trace) are the same for every top and are
  // 5 of the 8 CPU-seconds of a build: they are compiled once per Verilator, compiler and
  // trace mode, kept in the cache and copied into each build (newer than the makefile, so
  // make takes them as they are).
  const std::string obj = tmp + "/obj";
  std::string cmd = verilator_cmd() + " --cc --exe -Wno-fatal --prefix Vtop --top-module " + t.module + flags +
                    " --Mdir " + shell_quote(obj) + " -o " + shell_quote(tmp + "/sim") + (trace ? " --trace" : "");
  for (const std::string& s : t.sources) cmd += " " + shell_quote(dir + "/" + s);
  cmd += " " + shell_quote(tmp + "/top.sv") + " " + shell_quote(harness) + " > " + shell_quote(tmp + "/build.log") + " 2>&1";
  if (run_tool(cmd, tool_timeout(900), "verilator (the RTL build of " + dp.name() + ")") != 0)
    throw InputError("RTL build of " + t.module + " (" + dp.name() + ") failed; see " + tmp + "/build.log");
  const std::vector<std::string> runtime = runtime_objects(obj + "/Vtop_classes.mk");
  const std::string rt_dir = root + "/runtime-" + runtime_key(version, flags, trace);
  bool rt_cached = !runtime.empty();
  for (const std::string& o : runtime) rt_cached = rt_cached && is_file(rt_dir + "/" + o);
  if (rt_cached)
    for (const std::string& o : runtime) copy_file(rt_dir + "/" + o, obj + "/" + o);
  const std::string make = "make -C " + shell_quote(obj) + " -f Vtop.mk -j 2 >> " + shell_quote(tmp + "/build.log") + " 2>&1";
  if (run_tool(make, tool_timeout(900), "make (the RTL build of " + dp.name() + ")") != 0 || !is_file(tmp + "/sim"))
    throw InputError("RTL build of " + t.module + " (" + dp.name() + ") failed; see " + tmp + "/build.log");
  if (!rt_cached && !runtime.empty()) keep_runtime(obj, runtime, rt_dir);
  run_tool("rm -rf " + shell_quote(tmp + "/obj"), 600, "rm");  // keep the executable, the top and the log
  if (::rename(tmp.c_str(), final_dir.c_str()) != 0) {
    // another process built the same simulator first: use that one
    run_tool("rm -rf " + shell_quote(tmp), 600, "rm");
    if (!is_file(exe)) throw InputError(final_dir + ": cannot install the RTL simulator (" + std::strerror(errno) + ")");
  }
  return exe;
}

namespace {

/// A scope of a VCD header: its own declarations (each "$var ... $end" as text) and its scopes.
struct VcdScope {
  std::string kind, name;
  std::vector<std::string> vars;
  std::vector<VcdScope> scopes;
};

/// The declarations of a VCD file, read by one reader for both rewrites below: the scope tree,
/// the other declarations ($date, $version, $timescale, $comment) as their text, in order.
struct VcdHeader {
  VcdScope root;
  std::vector<std::string> other;
};

/// Reads the declarations up to and including "$enddefinitions $end"; `in` is left just after
/// it. A file that is not a VCD (a declaration without $end, an $upscope too many, no
/// $enddefinitions) is an InputError naming the path.
VcdHeader read_vcd_header(std::istream& in, const std::string& path) {
  VcdHeader h;
  std::vector<VcdScope*> open{&h.root};
  std::string w;
  auto until_end = [&](std::string text) {
    while (in >> w) {
      text += " " + w;
      if (w == "$end") return text;
    }
    throw InputError(path + ": not a VCD (a declaration without $end)");
  };
  while (in >> w) {
    if (w == "$scope") {
      VcdScope s;
      if (!(in >> s.kind >> s.name)) break;
      until_end("");
      open.back()->scopes.push_back(s);
      open.push_back(&open.back()->scopes.back());
    } else if (w == "$upscope") {
      until_end("");
      if (open.size() < 2) throw InputError(path + ": not a VCD ($upscope without $scope)");
      open.pop_back();
    } else if (w == "$var") {
      open.back()->vars.push_back(until_end("$var"));
    } else if (w == "$enddefinitions") {
      until_end("");
      return h;
    } else if (!w.empty() && w[0] == '$') {
      h.other.push_back(until_end(w));
    }
  }
  throw InputError(path + ": not a VCD (no $enddefinitions)");
}

/// The tokens of a "$var TYPE WIDTH ID NAME [RANGE] $end" declaration.
std::vector<std::string> var_tokens(const std::string& decl) {
  std::istringstream ls(decl);
  std::vector<std::string> t;
  for (std::string w; ls >> w;) t.push_back(w);
  return t;
}

void put_scope(std::string& o, const VcdScope& s, const std::string& name, bool with_scopes) {
  o += "$scope " + s.kind + " " + name + " $end\n";
  for (const std::string& v : s.vars) o += v + "\n";
  if (with_scopes)
    for (const VcdScope& c : s.scopes) put_scope(o, c, c.name, true);
  o += "$upscope $end\n";
}

const VcdScope* child(const VcdScope& s, const std::string& name) {
  for (const VcdScope& c : s.scopes)
    if (c.name == name) return &c;
  return nullptr;
}

void collect_ids(const VcdScope& s, std::set<std::string>& ids) {
  for (const std::string& v : s.vars) {
    const std::vector<std::string> t = var_tokens(v);
    if (t.size() > 3) ids.insert(t[3]);
  }
  for (const VcdScope& c : s.scopes) collect_ids(c, ids);
}

}  // namespace

void vcd_as_systemc(const std::string& in_path, const std::string& out_path, const std::string& module) {
  std::ifstream in(in_path, std::ios::binary);
  if (!in) throw InputError(in_path + ": " + std::strerror(errno));
  const VcdHeader h = read_vcd_header(in, in_path);
  const VcdScope* top = h.root.scopes.size() == 1 ? &h.root.scopes[0] : nullptr;
  const VcdScope* mod = top ? child(*top, module) : nullptr;
  if (!mod) throw InputError(in_path + ": not the RTL simulator's VCD (no scope " + module + ")");
  // the simulator's $date, $version and $timescale are replaced: SystemC's 1 ns
  std::string head = "$version matcore RTL engine (Verilator) $end\n$timescale 1 ns $end\n";
  put_scope(head, *mod, "SystemC", true);
  put_scope(head, *top, "harness", false);
  head += "$enddefinitions $end";
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  out << head;
  if (in.peek() != std::char_traits<char>::eof()) out << in.rdbuf();
  out.flush();
  if (!out) throw InputError(out_path + ": write failed (" + std::strerror(errno) + ")");
}

void vcd_add_check(const std::string& in_path, const std::string& stage, int width,
                   const std::map<uint32_t, VcdCheck>& obs) {
  const std::string out_path = in_path + ".check";
  struct Slot {
    std::string p;
    int s;
    ~Slot() {
      unregister_temp(s);
      ::unlink(p.c_str());  // gone after the rename
    }
  } slot{out_path, register_temp(out_path)};
  std::ifstream in(in_path, std::ios::binary);
  if (!in) throw InputError(in_path + ": " + std::strerror(errno));
  // the header: the ids of stage.valid and stage.tag under SystemC, and every id in use
  const VcdHeader h = read_vcd_header(in, in_path);
  std::string valid_id, tag_id;
  const VcdScope* sc = child(h.root, "SystemC");
  if (const VcdScope* st = sc ? child(*sc, stage) : nullptr)
    for (const std::string& v : st->vars) {
      const std::vector<std::string> t = var_tokens(v);
      if (t.size() > 4 && t[4] == "valid") valid_id = t[3];
      if (t.size() > 4 && t[4] == "tag") tag_id = t[3];
    }
  if (valid_id.empty() || tag_id.empty())
    throw InputError(in_path + ": no signals SystemC." + stage + ".valid and .tag to place the observed d");
  std::set<std::string> ids;
  collect_ids(h.root, ids);
  std::string did = "mcD", mid = "mcM";
  while (ids.count(did) || ids.count(mid)) did += "_", mid += "_";
  std::string head;
  for (const std::string& o : h.other) head += o + "\n";
  for (const VcdScope& s : h.root.scopes) put_scope(head, s, s.name, true);
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  out << head << "$scope module check $end\n$var wire " << width << " " << did << " d_hw [" << width - 1
      << ":0] $end\n$var wire 1 " << mid << " mismatch $end\n$upscope $end\n$enddefinitions $end\n";
  std::string line;
  std::getline(in, line);  // the rest of the $enddefinitions line
  // the body: after each time's changes, the check signals of the sample the stage holds
  std::string valid = "0", tag = "0";
  bool started = false, emitted = false;
  VcdCheck shown;
  auto flush = [&] {
    VcdCheck now;
    if (valid == "1") {
      const auto it = obs.find(static_cast<uint32_t>(std::stoull(tag, nullptr, 2)));
      if (it != obs.end()) now = it->second;
    }
    if (emitted && now.d_hw == shown.d_hw && now.mismatch == shown.mismatch) return;
    std::string bits;
    for (int i = width - 1; i >= 0; --i) bits += ((now.d_hw >> i) & 1) ? '1' : '0';
    out << "b" << bits << " " << did << "\n" << (now.mismatch ? '1' : '0') << mid << "\n";
    shown = now;
    emitted = true;
  };
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '#') {
      if (started) flush();
      started = true;
    } else if (!line.empty() && (line[0] == 'b' || line[0] == 'B')) {
      const size_t sp = line.find(' ');
      if (sp != std::string::npos) {
        const std::string id = line.substr(sp + 1), v = line.substr(1, sp - 1);
        if (id == valid_id) valid = v.find('1') != std::string::npos ? "1" : "0";
        if (id == tag_id) tag = v.find_first_not_of("01") == std::string::npos ? v : "0";
      }
    } else if (line.size() > 1 && (line[0] == '0' || line[0] == '1')) {
      if (line.substr(1) == valid_id) valid = line.substr(0, 1);
    }
    out << line << "\n";
  }
  if (started) flush();
  out.close();
  if (!out) throw InputError(out_path + ": write failed (" + std::strerror(errno) + ")");
  if (::rename(out_path.c_str(), in_path.c_str()) != 0)
    throw InputError(in_path + ": cannot replace (" + std::strerror(errno) + ")");
}

std::vector<uint64_t> rtl_run(const Datapath& dp, const std::vector<RtlSample>& samples, const std::string& vcd,
                              const std::vector<uint32_t>& tags) {
  if (!tags.empty() && tags.size() != samples.size())
    throw std::invalid_argument("rtl_run: one tag per sample");
  if (!tags.empty()) {
    std::vector<uint32_t> sorted(tags);
    std::sort(sorted.begin(), sorted.end());
    const auto twice = std::adjacent_find(sorted.begin(), sorted.end());
    if (twice != sorted.end()) throw InputError("sample " + std::to_string(*twice) + " is given twice");
  }
  const std::string exe = rtl_simulator(dp, !vcd.empty());
  const TempDir work(tmp_base() + "/matcore-rtl-run-XXXXXX");
  const std::string in = work.path + "/in.txt", out = work.path + "/d.txt", sim_vcd = work.path + "/sim.vcd";
  {
    std::string text;
    char buf[160];
    std::snprintf(buf, sizeof buf, "matcore-rtl n_fma=%d aw=%d bw=%d ow=%d pair_interleave=%d c_final=%d", dp.n_fma,
                  dp.a_fmt.width(), dp.b_fmt.width(), dp.out_fmt.width(), dp.pair_interleave ? 1 : 0, dp.c_final_add ? 1 : 0);
    text = buf + (dp.scaled() ? " scale_block=" + std::to_string(dp.scale_block) : std::string()) + "\n";
    FILE* f = std::fopen(in.c_str(), "w");
    if (!f) throw InputError(in + ": " + std::strerror(errno));
    bool ok = std::fputs(text.c_str(), f) >= 0;
    for (size_t i = 0; i < samples.size(); ++i) {
      const RtlSample& s = samples[i];
      if (s.a.size() != s.b.size()) {
        std::fclose(f);
        throw InputError("rtl_run: a and b of a sample differ in length");
      }
      const unsigned long tag = tags.empty() ? static_cast<unsigned long>(i) : tags[i];
      ok = ok && std::fprintf(f, "%lx %zx %llx", tag, s.a.size(), static_cast<unsigned long long>(s.c)) > 0;
      for (uint64_t v : s.a) ok = ok && std::fprintf(f, " %llx", static_cast<unsigned long long>(v)) > 0;
      for (uint64_t v : s.b) ok = ok && std::fprintf(f, " %llx", static_cast<unsigned long long>(v)) > 0;
      if (dp.scaled()) {  // the blocks' scales, unit where none are given
        const size_t ns = (s.a.size() + dp.scale_block - 1) / dp.scale_block;
        for (const std::vector<uint64_t>* v : {&s.sa, &s.sb}) {
          if (!v->empty() && v->size() != ns) {
            std::fclose(f);
            throw InputError("rtl_run: a sample of K = " + std::to_string(s.a.size()) + " needs " + std::to_string(ns) +
                             " scales of a and of b");
          }
          for (size_t j = 0; j < ns; ++j)
            ok = ok && std::fprintf(f, " %llx", static_cast<unsigned long long>(v->empty() ? unit_scale_bits(dp.scale_fmt) : (*v)[j])) > 0;
        }
      }
      ok = ok && std::fputc('\n', f) != EOF;
    }
    if (std::fclose(f) != 0 || !ok) throw InputError(in + ": write failed (" + std::strerror(errno) + ")");
  }
  std::string cmd = shell_quote(exe) + " " + shell_quote(in) + " " + shell_quote(out);
  if (!vcd.empty()) cmd += " --vcd " + shell_quote(sim_vcd);
  if (std::getenv("MATCORE_RTL_STATS")) cmd += " --stats";  // simulation speed on stderr (docs/performance.md)
  cmd += " 2> " + shell_quote(work.path + "/sim.log");
  const size_t values = [&] {
    size_t v = 0;
    for (const RtlSample& s : samples) v += s.a.size() + 1;
    return v;
  }();
  // a minute, and a second for every 10^5 values (the simulator runs about 10^6 a second)
  const int limit = tool_timeout(60 + static_cast<int>(std::min<size_t>(values / 100000, 86000)));
  const int st = run_tool(cmd, limit, "the RTL simulation of " + dp.name());
  if (std::getenv("MATCORE_RTL_STATS")) std::fputs(log_tail(work.path + "/sim.log", 20).c_str(), stderr);
  if (st != 0)
    throw InputError("the RTL simulation of " + dp.name() + " failed (" + exe + ")" + log_tail(work.path + "/sim.log"));
  std::vector<uint64_t> d;
  d.reserve(samples.size());
  FILE* f = std::fopen(out.c_str(), "r");
  if (!f) throw InputError(out + ": " + std::strerror(errno));
  unsigned long long v;
  while (std::fscanf(f, "%llx", &v) == 1) d.push_back(v);
  std::fclose(f);
  if (d.size() != samples.size())
    throw InputError("the RTL simulation of " + dp.name() + " returned " + std::to_string(d.size()) + " results for " +
                     std::to_string(samples.size()) + " samples");
  if (!vcd.empty()) vcd_as_systemc(sim_vcd, vcd, kSimTop);
  return d;
}

}  // namespace mc
