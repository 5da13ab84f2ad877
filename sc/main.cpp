// matcore-sc: the SystemC cycle/bit model of the matcore datapaths (CLI11; --help on every
// subcommand).
//
//   matcore-sc trace --arch NAME --type T [--out fp32|fp16] [--variant V]
//       (--a V,V,... --b V,V,... [--c V] | --file DIR [--samples 3,17])
//       [--vcd PATH.vcd] [--no-text] [--no-fst]
//   matcore-sc pipeline [--arch NAME] [--type T]      stages and latency of the presets
//   matcore-sc layout ...                             GTKWave layouts
//   matcore-sc explain ...                            as `matcore explain` (core engine)
//
// Exit status: 0 success, 1 the SystemC model and the fast model disagree, 2 bad input.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "matcore/cli.hpp"
#include "matcore/explain.hpp"
#include "matcore/model.hpp"
#include "matcore/output.hpp"
#include "matcore/plan.hpp"
#include "matcore/presets.hpp"
#include "matcore/rtl_driver.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"
#include "matcore_sc/top.hpp"

using namespace mc;

namespace {

/// The committed GTKWave layout for a datapath: its preset's `layout` field; a custom design
/// (datapath file, no layout) gets the layout of the preset family with the same structure.
std::string layout_of(const Datapath& dp) {
  if (!dp.layout.empty()) return dp.layout;
  for (const Datapath& p : all_presets())
    if (plan_diagram(p) == plan_diagram(dp)) return p.layout;
  return "nvidia";
}

std::string sanitize(std::string s) {
  for (char& ch : s)
    if (!isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') ch = '_';
  return s;
}

bool has_program(const char* name) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string p = path, dir;
  for (size_t i = 0; i <= p.size(); ++i) {
    if (i == p.size() || p[i] == ':') {
      if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return true;
      dir.clear();
    } else {
      dir += p[i];
    }
  }
  return false;
}

void mkdirs(const std::string& path) {
  for (size_t i = 1; i < path.size(); ++i)
    if (path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0777);
}

/// The VCD of a trace, written complete or not at all: SystemC's VCD writer does not report
/// failed writes, so it writes into a pipe and a reader thread copies the text into an
/// OutputFile, whose writes are checked (full disk, /dev/full).
/// Refuses to replace `path` (written beside `vcd` without being named) unless it is missing or
/// starts with `mark`, the first bytes of what matcore writes there.
void check_own_file(const std::string& path, const std::string& mark, const std::string& vcd) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;
  std::string head(mark.size(), '\x01');
  if (std::FILE* f = S_ISREG(st.st_mode) ? std::fopen(path.c_str(), "rb") : nullptr) {
    head.resize(std::fread(&head[0], 1, head.size(), f));
    std::fclose(f);
  }
  if (head != mark)
    throw InputError(path + ": exists and is not what `trace --vcd " + vcd +
                     "` writes there (a file of your own is never replaced): choose another --vcd, or move it" +
                     (path.size() > 4 && path.compare(path.size() - 4, 4, ".fst") == 0 ? " (or give --no-fst)" : ""));
}

class VcdSink {
 public:
  explicit VcdSink(const std::string& vcd) : out_(vcd) {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/matcore-vcd-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) throw InputError(vcd + ": cannot create a temporary directory (" + std::strerror(errno) + ")");
    dir_ = buf.data();
    int p[2];
    if (::pipe(p) != 0) throw InputError(vcd + ": cannot create a pipe (" + std::strerror(errno) + ")");
    rd_ = p[0];
    wr_ = p[1];
    ::fcntl(rd_, F_SETFD, FD_CLOEXEC);
    ::fcntl(wr_, F_SETFD, FD_CLOEXEC);
    link_ = dir_ + "/trace.vcd";
    if (::symlink(("/proc/self/fd/" + std::to_string(wr_)).c_str(), link_.c_str()) != 0)
      throw InputError(vcd + ": cannot link the trace pipe (" + std::strerror(errno) + ")");
    reader_ = std::thread([this] {
      char b[1 << 16];
      for (;;) {
        const ssize_t n = ::read(rd_, b, sizeof b);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (!err_) {
          try {
            out_.write(b, static_cast<size_t>(n));
          } catch (...) {
            err_ = std::current_exception();  // keep draining: SystemC must not block
          }
        }
      }
    });
  }
  ~VcdSink() {
    close_pipe();
    if (!link_.empty()) ::unlink(link_.c_str());
    if (!dir_.empty()) ::rmdir(dir_.c_str());
    if (rd_ >= 0) ::close(rd_);
  }
  /// The name to give sc_create_vcd_trace_file (it appends ".vcd").
  std::string systemc_name() const { return dir_ + "/trace"; }
  /// After sc_close_vcd_trace_file: waits for the copy (the VCD is then complete in
  /// file().temp_path(); file().commit() puts it in place).
  void finish() {
    close_pipe();
    if (err_) std::rethrow_exception(err_);
  }
  OutputFile& file() { return out_; }

 private:
  void close_pipe() {
    if (wr_ >= 0) ::close(wr_);
    wr_ = -1;
    if (reader_.joinable()) reader_.join();
  }
  OutputFile out_;
  std::string dir_, link_;
  int rd_ = -1, wr_ = -1;
  std::thread reader_;
  std::exception_ptr err_;
};

struct TraceCmd {
  cli::DatapathArgs dpa;
  std::string a, b, c = "0", file, samples = "0", vcd, sa, sb;
  bool no_text = false, no_fst = false;
  int run() const;
};

int TraceCmd::run() const {
  const Datapath dp = dpa.resolve();
  const Format& cf = dp.out_fmt == kBinary64 ? kBinary64 : kBinary32;
  if (!file.empty() && (!a.empty() || !b.empty())) throw UsageError("give --file or --a/--b/--c, not both");
  if (file.empty() && (a.empty() || b.empty())) throw UsageError("give --a and --b (or --file DIR)");
  // observed d: from DIR/d.txt when it exists
  const std::vector<ExplainSample> samples = command_line_samples(dp, file, this->samples, false, a, b, c, sa, sb);

  const std::string vcd = !this->vcd.empty() ? this->vcd
                                              : "run/trace-" + sanitize(dp.arch) + "-" + sanitize(dp.type) + ".vcd";
  if (vcd.size() < 5 || vcd.substr(vcd.size() - 4) != ".vcd")
    throw UsageError("--vcd: '" + excerpt(vcd) + "' does not end in .vcd (the layout and the FST are "
                     "written beside it as NAME.gtkw and NAME.fst)");
  const std::string base = vcd.substr(0, vcd.size() - 4);
  if (this->vcd.empty()) mkdirs(vcd);
  // NAME.gtkw and NAME.fst are written beside the VCD though not named: they replace only what
  // an earlier trace to the same VCD wrote, never a layout or waveform of the user's own
  const std::string gtkw = base + ".gtkw", fst_path = base + ".fst";
  const std::string gtkw_mark = "[*] matcore trace layout of " + vcd.substr(vcd.rfind('/') + 1) + "\n";
  check_own_file(gtkw, gtkw_mark, vcd);
  const bool want_fst = !no_fst && has_program("vcd2fst");
  if (want_fst) check_own_file(fst_path, std::string(1, '\0'), vcd);
  VcdSink sink(vcd);
  OutputFile gtkw_out(gtkw);
  std::unique_ptr<OutputFile> fst(want_fst ? new OutputFile(fst_path) : nullptr);
  sc_core::sc_trace_file* tf = sc_core::sc_create_vcd_trace_file(sink.systemc_name().c_str());
  if (!tf) throw InputError(vcd + ": cannot create the VCD file");
  tf->set_time_unit(1, sc_core::SC_NS);
  mcsc::TopOptions opt;
  opt.vcd = tf;
  opt.text = !no_text;
  mcsc::DatapathTop top("dp", dp, opt);

  std::printf("preset %s: %s, n_fma=%d\n", dp.name().c_str(), dp.family.c_str(), dp.n_fma);
  std::printf("pipeline: %s\n", top.diagram().c_str());
  std::printf("latency %d cycles (operand register to d), groups of one sample every %d cycles\n\n",
              top.latency(), top.recurrence());
  for (size_t i = 0; i < samples.size(); ++i) {
    mcsc::Job j;
    j.tag = samples[i].index;
    j.a = samples[i].a;
    j.b = samples[i].b;
    j.c = samples[i].c;
    j.sa = samples[i].sa;
    j.sb = samples[i].sb;
    top.push(j);
  }
  top.run();
  const std::vector<mcsc::Done> done = top.take();
  std::fputs(top.take_text().c_str(), stdout);
  sc_core::sc_close_vcd_trace_file(tf);
  sink.finish();
  std::map<uint32_t, VcdCheck> obs;  // d.txt of --file: check.d_hw and check.mismatch in the VCD
  for (const ExplainSample& s : samples) {
    if (!s.has_observed) continue;
    const mcsc::Done* r = nullptr;
    for (const mcsc::Done& x : done)
      if (x.tag == s.index) r = &x;
    obs[static_cast<uint32_t>(s.index)] = VcdCheck{s.observed, !r || r->d32 != s.observed};
  }
  if (!obs.empty()) vcd_add_check(sink.file().temp_path(), plan(dp).back().name, stored_width(dp.out_fmt), obs);
  if (fst) {  // from the finished VCD, before anything is put in place: all three files or none
    const std::string cmd = "vcd2fst " + shell_quote(sink.file().temp_path()) + " " + shell_quote(fst->temp_path()) +
                            " >/dev/null 2>&1";
    if (run_tool(cmd, tool_timeout(300), "vcd2fst (the FST copy of " + vcd + ")") != 0)
      throw InputError(fst_path + ": vcd2fst failed (give --no-fst to write the VCD alone)");
  }
  gtkw_out.write(gtkw_mark + mcsc::gtkw_layout(top.signals(), dp.name() + (dp.variant.empty() ? "" : " (" + dp.variant + ")") +
                                                                  ", " + dp.out_fmt.name + " output"));
  std::vector<OutputFile*> outs{&sink.file(), &gtkw_out};
  if (fst) outs.push_back(fst.get());
  commit_all(outs);

  int rc = 0;
  std::printf("\n");
  for (const ExplainSample& s : samples) {
    const mcsc::Done* r = nullptr;
    for (const mcsc::Done& d : done)
      if (d.tag == s.index) r = &d;
    if (!r) { std::printf("sample %llu: no result\n", static_cast<unsigned long long>(s.index)); rc = 1; continue; }
    const uint64_t fast = dot(dp, s.a.data(), s.b.data(), static_cast<int>(s.a.size()), s.c,
                              scale_refs(s.sa, s.sb));
    std::printf("sample %llu: d = 0x%s %s (cycle %llu)   fast model: 0x%s %s\n", static_cast<unsigned long long>(s.index),
                to_hex_bits(dp.out_fmt, r->d).c_str(), to_decimal(dp.out_fmt, r->d).c_str(),
                static_cast<unsigned long long>(r->cycle), to_hex_bits(dp.out_fmt, fast).c_str(),
                fast == r->d ? "(equal)" : "(DIFFERENT)");
    if (fast != r->d) rc = 1;
    if (s.has_observed)
      std::printf("          observed d = 0x%s %s\n", to_hex_bits(cf, s.observed).c_str(),
                  s.observed == r->d32 ? "(model matches)" : "(model differs: try matcore explain)");
  }
  std::printf("\nVCD: %s\n", vcd.c_str());
  if (fst) std::printf("FST: %s\n", fst_path.c_str());
  std::printf("view: gtkwave %s waves/%s.gtkw   (or this preset's own layout: %s)\n", vcd.c_str(),
              layout_of(dp).c_str(), gtkw.c_str());
  return rc;
}

/// Layout family of a preset (its field `layout`: cdna1, cdna2, cdna3, cdna4, nvidia).
std::string family_of(const Datapath& dp) { return dp.layout; }

struct LayoutCmd {
  std::string family;
  cli::DatapathArgs dpa;
  int run() const;
};

int LayoutCmd::run() const {
  std::vector<Datapath> dps;
  std::string title;
  if (!family.empty()) {
    if (!dpa.arch.empty() || !dpa.type.empty() || !dpa.file.empty() || dpa.set_given()) throw UsageError("give --family or --arch/--type (--datapath, --set), not both");
    const std::string& fam = family;
    for (const Datapath& dp : all_presets()) {
      if (family_of(dp) != fam) continue;
      dps.push_back(dp);
      if (dp.half_out) {
        try {
          dps.push_back(find_preset(dp.arch, dp.type, "fp16", dp.variant));
        } catch (const std::invalid_argument&) {
        }
      }
    }
    if (dps.empty()) throw UsageError("unknown family '" + excerpt(fam) + "' (cdna1, cdna2, cdna3, cdna4, nvidia)");
    title = "family " + fam + " (every preset; GTKWave shows the signals a trace has)";
  } else {
    if (dpa.arch.empty() || dpa.type.empty()) throw UsageError("give --family F or --arch A --type T");
    dps.push_back(dpa.resolve());
    title = dps[0].name();
  }
  std::vector<std::unique_ptr<mcsc::DatapathTop>> tops;
  std::vector<mcsc::SignalInfo> all;
  mcsc::TopOptions opt;
  opt.catalog = true;
  int i = 0;
  for (const Datapath& dp : dps) {
    tops.emplace_back(new mcsc::DatapathTop(("t" + std::to_string(i++)).c_str(), dp, opt));
    const auto& s = tops.back()->signals();
    all.insert(all.end(), s.begin(), s.end());
  }
  std::fputs(mcsc::gtkw_layout(all, title).c_str(), stdout);
  return 0;
}

struct PipelineCmd {
  std::string arch, type;
  int run() const;
};

int PipelineCmd::run() const {
  // One elaboration per process: build every top first, then print (nothing is simulated).
  std::vector<std::unique_ptr<mcsc::DatapathTop>> tops;
  int i = 0;
  for (const Datapath& dp : all_presets()) {
    if (!arch.empty() && dp.arch != arch) continue;
    if (!type.empty() && dp.type != type) continue;
    tops.emplace_back(new mcsc::DatapathTop(("t" + std::to_string(i++)).c_str(), dp));
  }
  if (tops.empty()) throw UsageError("no preset is " + excerpt(arch) + (type.empty() ? "" : "/" + excerpt(type)));
  for (const auto& t : tops) {
    const Datapath& dp = t->datapath();
    std::printf("%-28s %-10s latency %2d, recurrence %2d, k=%2d -> %d group(s): %s\n",
                (dp.name() + (dp.variant.empty() ? "" : " (" + dp.variant + ")")).c_str(),
                dp.family.c_str(), t->latency(), t->recurrence(), dp.k_default,
                (dp.k_default + dp.n_fma - 1) / dp.n_fma, t->diagram().c_str());
  }
  return 0;
}

}  // namespace

int sc_main(int argc, char** argv) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);  // "I703 timescale"
  cli::Program p("matcore-sc", "matcore-sc: SystemC cycle/bit model of the matcore datapaths.\n"
                               "Exit status: 0 success, 1 the SystemC and fast models disagree, 2 bad input.");
  TraceCmd tr;
  CLI::App* c = p.command(
      "trace", "run samples through the pipelined SystemC model: stage trace, VCD/FST, GTKWave layout",
      "  matcore-sc trace --arch mi300x --type fp16 --a 2^-12,2^-12 --b 2^-12,2^-12 --c 1\n"
      "  matcore-sc trace --arch h100 --type fp16 --file run1 --samples 3,17 --vcd out/t.vcd\n"
      "  Prints every stage of every group (binary, '.' = binary point, '|' = where the stage cuts),\n"
      "  writes the waveform (default run/trace-ARCH-TYPE.vcd, plus .fst when vcd2fst is installed,\n"
      "  and the layout NAME.gtkw) and checks d against the fast model. --file DIR reads DIR/a.txt,\n"
      "  b.txt, c.txt and d.txt if present (the observed d); --samples are 0-based indices.\n"
      "  Open: gtkwave run/trace-ARCH-TYPE.vcd waves/<layout>.gtkw (the layout is printed).",
      [&] { return tr.run(); });
  tr.dpa.add(c);
  cli::Program::text(c, "--a", tr.a, "a values V,V,...");
  cli::Program::text(c, "--b", tr.b, "b values");
  c->add_option("--c", tr.c, "c (default 0)");
  cli::Program::text(c, "--sa", tr.sa, "block scales of a (block-scaled types; --file: DIR/sa.txt)");
  cli::Program::text(c, "--sb", tr.sb, "block scales of b (--file: DIR/sb.txt)");
  CLI::Option* f = cli::Program::text(c, "--file", tr.file, "directory with a.txt b.txt c.txt [d.txt]");
  cli::Program::text(c, "--samples", tr.samples, "0-based sample indices I,J,... of --file (default 0)")->needs(f);
  cli::Program::text(c, "--vcd", tr.vcd, "the VCD file (NAME.vcd; NAME.gtkw and NAME.fst beside it)");
  c->add_flag("--no-text", tr.no_text, "no stage text");
  c->add_flag("--no-fst", tr.no_fst, "no FST copy");

  PipelineCmd pl;
  c = p.command("pipeline", "stages and latency of each preset", "  matcore-sc pipeline --arch mi300x",
                [&] { return pl.run(); });
  cli::Program::text(c, "--arch", pl.arch, "only this architecture");
  cli::Program::text(c, "--type", pl.type, "only this input type");

  LayoutCmd ly;
  c = p.command("layout", "print a GTKWave layout (.gtkw) for a family's presets or one preset",
                "  matcore-sc layout --family cdna3 > waves/cdna3.gtkw", [&] { return ly.run(); });
  cli::Program::text(c, "--family", ly.family, "cdna1, cdna2, cdna3, cdna4 or nvidia");
  ly.dpa.add(c, true);

  add_explain_command(p);
  return p.run(argc, argv);
}

// Our own main (it takes precedence over the one in libsystemc.so): silence the banner, then
// the usual SystemC start-up, which calls sc_main.
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
