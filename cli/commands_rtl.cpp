// matcore trace --engine rtl (cli/commands.cpp dispatches to it).
#include <sys/stat.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "commands.hpp"
#include "matcore/cli.hpp"
#include "matcore/explain.hpp"
#include "matcore/fast.hpp"
#include "matcore/model.hpp"
#include "matcore/output.hpp"
#include "matcore/plan.hpp"
#include "matcore/rtl_driver.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"

using namespace mc;
using cli::DatapathArgs;
using cli::Program;

/// matcore trace --engine rtl: the samples through the Verilated RTL top (built with --trace),
/// a VCD of the run whose signals carry the field table's names in the SystemC VCD's scope
/// (SystemC.aligner.e_max, ...; rtl_run), d checked against the fast model.
int rtl_trace(const std::vector<std::string>& rest) {
  CLI::App app("matcore trace --engine rtl", "trace");
  DatapathArgs dpa;
  std::string engine, a, b, c = "0", file, samples = "0", vcd, sa, sb;
  dpa.add(&app);
  app.add_option("--engine", engine)->check(CLI::IsMember({"rtl"}));
  Program::text(&app, "--a", a, "a values V,V,...");
  Program::text(&app, "--b", b, "b values");
  Program::text(&app, "--c", c, "c (default 0)");
  Program::text(&app, "--file", file, "directory with a.txt b.txt c.txt [d.txt]");
  Program::text(&app, "--samples", samples, "0-based sample indices I,J,... of --file (default 0)");
  Program::text(&app, "--vcd", vcd, "the VCD file (default run/trace-rtl-ARCH-TYPE.vcd)");
  Program::text(&app, "--sa", sa, "block scales of a (block-scaled datapaths; --file: DIR/sa.txt)");
  Program::text(&app, "--sb", sb, "block scales of b");
  if (!cli::parse_sub_app(app, rest, "trace --engine rtl")) return 0;
  const Datapath dp = dpa.resolve();
  const std::vector<ExplainSample> xs = command_line_samples(dp, file, samples, false, a, b, c, sa, sb);
  if (vcd.empty()) {
    ::mkdir("run", 0777);
    std::string t = dp.type;
    for (char& ch : t)
      if (ch == ',') ch = '_';
    vcd = "run/trace-rtl-" + dp.arch + "-" + t + ".vcd";
  }
  std::vector<RtlSample> in;
  std::vector<uint32_t> tags;  // the VCD's issue.tag: the sample's number in --file, as in the SystemC VCD
  for (const ExplainSample& x : xs) {
    in.push_back(RtlSample{x.a, x.b, x.c, x.sa, x.sb});
    if (x.index > 0xffffffffu) throw UsageError("--samples: " + std::to_string(x.index) + " is past the 32-bit tag");
    tags.push_back(static_cast<uint32_t>(x.index));
  }
  OutputFile out(vcd);  // written as a temporary beside it; renamed when complete
  if (out.temp_path().empty()) throw UsageError("--vcd: " + vcd + " is not a regular file path (the simulator writes the VCD)");
  const std::vector<uint64_t> d = rtl_run(dp, in, out.temp_path(), tags);
  std::map<uint32_t, VcdCheck> obs;  // d.txt of --file: check.d_hw and check.mismatch in the VCD
  for (size_t i = 0; i < xs.size(); ++i)
    if (xs[i].has_observed) obs[tags[i]] = VcdCheck{xs[i].observed, xs[i].observed != d[i]};
  if (!obs.empty()) vcd_add_check(out.temp_path(), plan(dp).back().name, stored_width(dp.out_fmt), obs);
  out.commit();
  int bad = 0;
  const FastDot fd(dp);
  for (size_t i = 0; i < xs.size(); ++i) {
    const int K = static_cast<int>(xs[i].a.size());
    const uint64_t m = widen_result(dp, dp.scaled() ? dot(dp, xs[i].a.data(), xs[i].b.data(), K, xs[i].c, scale_refs(xs[i].sa, xs[i].sb))
                                                    : fd(xs[i].a.data(), xs[i].b.data(), K, xs[i].c));
    std::printf("sample %llu: rtl d = 0x%s, model d = 0x%s%s\n", static_cast<unsigned long long>(xs[i].index),
                to_hex(d[i]).c_str(), to_hex(m).c_str(), d[i] == m ? "" : "  MISMATCH");
    if (xs[i].has_observed)
      std::printf("          observed d = 0x%s %s\n", to_hex(xs[i].observed).c_str(),
                  xs[i].observed == d[i] ? "(rtl matches)" : "(rtl differs: check.mismatch in the VCD)");
    bad += d[i] != m;
  }
  std::printf("vcd: %s (signals SystemC.<stage>.<signal>, 1 ns, a 10 ns clock: the names, scope and time unit of the "
              "SystemC VCD)\n",
              vcd.c_str());
  if (!dp.layout.empty()) std::printf("view: gtkwave %s waves/%s.gtkw\n", vcd.c_str(), dp.layout.c_str());
  return bad ? 1 : 0;
}
