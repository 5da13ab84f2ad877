// matcore-sc: the SystemC cycle/bit model of the matcore datapaths.
//
//   matcore-sc trace --arch NAME --type T [--out fp32|fp16] [--variant V]
//       (--a V,V,... --b V,V,... [--c V] | --file DIR [--samples 3,17])
//       [--vcd PATH] [--no-text] [--no-fst]
//   matcore-sc pipeline [--arch NAME] [--type T]      stages and latency of the presets
//   matcore-sc explain ...                            as `matcore explain` (core engine)
//
// Exit status: 0 success, 1 the SystemC model and the fast model disagree, 2 bad input.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "matcore/explain.hpp"
#include "matcore/model.hpp"
#include "matcore/options.hpp"
#include "matcore/presets.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"
#include "matcore_sc/top.hpp"

using namespace mc;

namespace {

const char* kUsage =
    "matcore-sc: SystemC cycle/bit model of the matcore datapaths\n"
    "\n"
    "usage:\n"
    "  matcore-sc trace --arch NAME --type TA[,TB] [--out fp32|fp16] [--variant V]\n"
    "        (--a V,V,... --b V,V,... [--c V] | --file DIR [--samples I,J,...])\n"
    "        [--vcd PATH] [--no-text] [--no-fst]\n"
    "      runs the samples through the pipelined SystemC model, prints every stage of every\n"
    "      group (binary, '.' = binary point, '|' = where the stage cuts, bits after it dropped),\n"
    "      writes the waveform to PATH (default run/trace-ARCH-TYPE.vcd, plus .fst when vcd2fst\n"
    "      is installed) and checks d against the fast model.\n"
    "      --file DIR reads DIR/a.txt, b.txt, c.txt (and d.txt if present: the observed d);\n"
    "      --samples are 0-based sample indices, as `matcore validate` prints them (default 0).\n"
    "  matcore-sc pipeline [--arch NAME] [--type T]   stages and latency of each preset\n"
    "  matcore-sc layout (--family cdna1|cdna2|cdna3|nvidia | --arch NAME --type T [--out O] [--variant V])\n"
    "      prints a GTKWave layout (.gtkw) for the family's presets (waves/*.gtkw are these)\n"
    "  matcore-sc explain ...                         see `matcore-sc explain --help`\n"
    "\n"
    "Open a trace: gtkwave run/trace-ARCH-TYPE.vcd waves/<layout>.gtkw (the layout is printed).\n";

using Usage = UsageError;

Options parse(int argc, char** argv, const std::vector<std::string>& flags,
              const std::vector<std::string>& valued) {
  return parse_options(argc, argv, flags, valued);
}
std::string need(const Options& o, const std::string& k) { return o.need(k); }
std::string get(const Options& o, const std::string& k, const std::string& d = "") { return o.get(k, d); }

/// The committed GTKWave layout for a datapath (by structure, so that e.g. the CDNA3 fp32
/// SFMA uses the exact-adder layout).
std::string layout_of(const Datapath& dp) {
  switch (dp.adder) {
    case AdderKind::Exact: return "cdna1";
    case AdderKind::Pairwise: return "cdna2";
    default: return dp.late_c ? "cdna3" : "nvidia";
  }
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

struct Sample {
  uint32_t index = 0;
  std::vector<uint64_t> a, b;
  uint64_t c = 0;
  bool has_d = false;
  uint64_t d = 0;  ///< stored width
};

int cmd_trace(int argc, char** argv) {
  auto o = parse(argc, argv, {"no-text", "no-fst"},
                 {"arch", "type", "out", "variant", "a", "b", "c", "file", "samples", "vcd"});
  const Datapath dp = find_preset(need(o, "arch"), need(o, "type"), get(o, "out"), get(o, "variant"));
  const Format& cf = dp.out_fmt == kBinary64 ? kBinary64 : kBinary32;
  const int w = stored_width(dp.a_fmt);
  std::vector<Sample> samples;
  if (o.has("file")) {
    if (o.has("a") || o.has("b") || o.has("c")) throw Usage("trace: give --file or --a/--b/--c, not both");
    const std::string dir = need(o, "file");
    const AbFile A = read_ab_file(dir + "/a.txt", 0, dp.a_fmt);
    const AbFile B = read_ab_file(dir + "/b.txt", A.K, dp.b_fmt);
    const std::vector<uint64_t> C = read_cd_file(dir + "/c.txt", w);
    std::vector<uint64_t> D;
    if (::access((dir + "/d.txt").c_str(), R_OK) == 0) D = read_cd_file(dir + "/d.txt", cf.width());
    std::vector<std::string> idx = split_commas(get(o, "samples", "0"));
    for (const std::string& s : idx) {
      char* end = nullptr;
      const unsigned long i = std::strtoul(s.c_str(), &end, 10);
      if (s.empty() || *end) throw Usage("trace: --samples takes 0-based indices separated by commas");
      if (i >= A.samples() || i >= B.samples() || i >= C.size())
        throw InputError(dir + ": sample " + s + " does not exist (" + std::to_string(A.samples()) + " samples)");
      Sample sm;
      sm.index = static_cast<uint32_t>(i);
      for (int k = 0; k < A.K; ++k) {
        const std::string where = dir + "/a.txt:" + std::to_string(i + 1);
        sm.a.push_back(ab_operand(dp.a_fmt, dp.ingest, A, i * A.K + k, where));
        sm.b.push_back(ab_operand(dp.b_fmt, dp.ingest, B, i * A.K + k, dir + "/b.txt:" + std::to_string(i + 1)));
      }
      sm.c = w == 64 ? C[i] : c_from_binary32(dp, C[i]);
      if (i < D.size()) { sm.has_d = true; sm.d = D[i]; }
      samples.push_back(sm);
    }
  } else {
    const auto as = split_commas(need(o, "a")), bs = split_commas(need(o, "b"));
    if (as.size() != bs.size())
      throw Usage("trace: --a has " + std::to_string(as.size()) + " values but --b has " + std::to_string(bs.size()));
    Sample sm;
    for (size_t i = 0; i < as.size(); ++i) {
      sm.a.push_back(parse_input_operand(dp.a_fmt, dp.ingest, as[i]));
      sm.b.push_back(parse_input_operand(dp.b_fmt, dp.ingest, bs[i]));
    }
    sm.c = parse_operand(cf, get(o, "c", "0"));
    if (w != 64) sm.c = c_from_binary32(dp, sm.c);
    samples.push_back(sm);
  }

  std::string vcd = get(o, "vcd", "run/trace-" + sanitize(dp.arch) + "-" + sanitize(dp.type) + ".vcd");
  if (vcd.size() < 4 || vcd.substr(vcd.size() - 4) != ".vcd") vcd += ".vcd";
  mkdirs(vcd);
  sc_core::sc_trace_file* tf = sc_core::sc_create_vcd_trace_file(vcd.substr(0, vcd.size() - 4).c_str());
  if (!tf) throw InputError(vcd + ": cannot create the VCD file");
  tf->set_time_unit(1, sc_core::SC_NS);
  mcsc::TopOptions opt;
  opt.vcd = tf;
  opt.text = !o.has("no-text");
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
    top.push(j);
  }
  top.run();
  const std::vector<mcsc::Done> done = top.take();
  std::fputs(top.take_text().c_str(), stdout);
  sc_core::sc_close_vcd_trace_file(tf);

  int rc = 0;
  std::printf("\n");
  for (const Sample& s : samples) {
    const mcsc::Done* r = nullptr;
    for (const mcsc::Done& d : done)
      if (d.tag == s.index) r = &d;
    if (!r) { std::printf("sample %u: no result\n", s.index); rc = 1; continue; }
    const uint64_t fast = dot(dp, s.a.data(), s.b.data(), static_cast<int>(s.a.size()), s.c);
    std::printf("sample %u: d = 0x%s %s (cycle %llu)   fast model: 0x%s %s\n", s.index,
                to_hex_bits(dp.out_fmt, r->d).c_str(), to_decimal(dp.out_fmt, r->d).c_str(),
                static_cast<unsigned long long>(r->cycle), to_hex_bits(dp.out_fmt, fast).c_str(),
                fast == r->d ? "(equal)" : "(DIFFERENT)");
    if (fast != r->d) rc = 1;
    if (s.has_d)
      std::printf("          observed d = 0x%s %s\n", to_hex_bits(cf, s.d).c_str(),
                  s.d == r->d32 ? "(model matches)" : "(model differs: try matcore explain)");
  }
  std::printf("\nVCD: %s\n", vcd.c_str());
  if (!o.has("no-fst") && has_program("vcd2fst")) {
    const std::string fst = vcd.substr(0, vcd.size() - 4) + ".fst";
    const std::string cmd = "vcd2fst '" + vcd + "' '" + fst + "' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) std::printf("FST: %s\n", fst.c_str());
  }
  const std::string gtkw = vcd.substr(0, vcd.size() - 4) + ".gtkw";
  {
    std::ofstream g(gtkw);
    g << mcsc::gtkw_layout(top.signals(), dp.name() + (dp.variant.empty() ? "" : " (" + dp.variant + ")") +
                                              ", " + dp.out_fmt.name + " output");
  }
  std::printf("view: gtkwave %s waves/%s.gtkw   (or this preset's own layout: %s)\n", vcd.c_str(),
              layout_of(dp).c_str(), gtkw.c_str());
  return rc;
}

/// Layout family of a preset: its AMD family, or "nvidia".
std::string family_of(const Datapath& dp) { return dp.family.rfind("cdna", 0) == 0 ? dp.family : "nvidia"; }

int cmd_layout(int argc, char** argv) {
  auto o = parse(argc, argv, {}, {"family", "arch", "type", "out", "variant"});
  std::vector<Datapath> dps;
  std::string title;
  if (o.has("family")) {
    const std::string fam = o.get("family");
    for (const Datapath& dp : all_presets()) {
      if (family_of(dp) != fam) continue;
      dps.push_back(dp);
      if (fam == "nvidia") {
        try {
          dps.push_back(find_preset(dp.arch, dp.type, "fp16", dp.variant));
        } catch (const std::invalid_argument&) {
        }
      }
    }
    if (dps.empty()) throw Usage("layout: unknown family '" + fam + "' (cdna1, cdna2, cdna3, nvidia)");
    title = "family " + fam + " (every preset; GTKWave shows the signals a trace has)";
  } else {
    dps.push_back(find_preset(need(o, "arch"), need(o, "type"), get(o, "out"), get(o, "variant")));
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

int cmd_pipeline(int argc, char** argv) {
  auto o = parse(argc, argv, {}, {"arch", "type"});
  // One elaboration per process: build every top first, then print (nothing is simulated).
  std::vector<std::unique_ptr<mcsc::DatapathTop>> tops;
  int i = 0;
  for (const Datapath& dp : all_presets()) {
    if (o.has("arch") && dp.arch != o.get("arch")) continue;
    if (o.has("type") && dp.type != o.get("type")) continue;
    tops.emplace_back(new mcsc::DatapathTop(("t" + std::to_string(i++)).c_str(), dp));
  }
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
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);  // "I703 timescale"
  try {
    if (cmd == "trace") return cmd_trace(argc, argv);
    if (cmd == "pipeline") return cmd_pipeline(argc, argv);
    if (cmd == "layout") return cmd_layout(argc, argv);
    if (cmd == "explain") return explain_main(argc, argv);
    std::fprintf(stderr, "matcore-sc: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const Usage& e) {
    std::fprintf(stderr, "matcore-sc %s: %s\n(run 'matcore-sc --help' for usage)\n", cmd.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matcore-sc %s: error: %s\n", cmd.c_str(), e.what());
    return 2;
  }
}

// Our own main (it takes precedence over the one in libsystemc.so): silence the banner, then
// the usual SystemC start-up, which calls sc_main.
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
