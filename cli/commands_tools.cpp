// matcore features, rtl, cost and check-table: the commands that read a device's results or
// build hardware from a datapath (docs/features.md, docs/rtl.md, docs/paper-vector-table.md).
#include <algorithm>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "matcore/cli.hpp"
#include "matcore/datapath_file.hpp"
#include "matcore/dist.hpp"
#include "matcore/explore.hpp"
#include "matcore/features.hpp"
#include "matcore/fields.hpp"
#include "matcore/output.hpp"
#include "matcore/plan.hpp"
#include "matcore/presets.hpp"
#include "matcore/rtl_driver.hpp"
#include "matcore/table.hpp"
#include "matcore/vectors.hpp"

using namespace mc;
using cli::DatapathArgs;
using cli::Program;
using cli::threads_option;

namespace {

// --------------------------------------------------------------------------------- features
// Model mode: --arch A --type T; hardware mode: --type T --k K --emit DIR, then
// --type T --k K --results D_FILE (the device's d for DIR/a.txt, b.txt, c.txt).
struct FeaturesCmd {
  DatapathArgs dpa;
  std::string emit, results, compare;
  int k = 0;

  /// The fitted scale fields of `det` against `want`'s: "" when equal.
  static std::string scale_diff(const Datapath& want, const Datapath& det) {
    std::string diff;
    for (const char* name : {"group_size", "group_align", "frac_bits"}) {
      const Field& f = *find_field(name);
      if (f.get(want) != f.get(det)) diff += std::string("  ") + name + ": " + f.get(want) + " -> " + f.get(det) + "\n";
    }
    return diff;
  }

  /// A block-scaled preset (--arch/--type or --datapath): model mode runs its scale probes (and,
  /// for 8-bit or wider elements, the general probes first, whose result is then the base of the
  /// scale fit); with --emit/--results the preset is the base of a device's scale fit.
  int run_scaled(const Datapath& dp) const {
    const int K = k ? k : std::min(dp.k_default, 64);
    if (!compare.empty()) throw UsageError("--compare: a block-scaled type's fit is printed against its base preset (--arch)");
    const ScaleProbes p = scale_feature_vectors(dp, K);
    if (!emit.empty()) {
      OutputDir emit_dir(emit, "--emit");
      emit_scale_probes(p, emit);
      emit_dir.keep();
      std::printf("wrote %zu scale probes (k = %d) to %s/{a,b,c,sa,sb,manifest}.txt: run them on the device, "
                  "then 'matcore features %s --k %d --results D_FILE' (with the same --variant/--set)\n", p.v.size(), K,
                  emit.c_str(), dpa.file.empty() ? ("--arch " + dpa.arch + " --type " + dpa.type).c_str() : ("--datapath " + dpa.file).c_str(), K);
      return 0;
    }
    Datapath base = dp;
    int status = 0;
    const bool wide = dp.a_fmt.width() >= 8 && dp.b_fmt.width() >= 8;
    if (results.empty() && wide) {  // the general probes (unit scales) decide the other fields
      const DetectedFeatures det = detect_features(dp, K);
      std::printf("features of %s (k = %d), detected from %zu probe vectors (unit scales):\n%s", dp.name().c_str(), K,
                  det.samples, format_feature_table(det).c_str());
      const std::string diff = compare_features(dp, det.dp);
      std::printf("%s\n", diff.empty() ? "detected parameters = preset parameters" : ("differences from the preset:\n" + diff).c_str());
      status = diff.empty() ? 0 : 1;
      base = det.dp;
      base.scale_fmt = dp.scale_fmt;
      base.scale_block = dp.scale_block;
    }
    const std::vector<uint64_t> d = results.empty() ? run_scale_probes(dp, p) : read_feature_results(p.v, results);
    const DetectedFeatures sc = decide_scale_features(scale_fit_base(base), p, d);
    std::printf("block scales of %s (k = %d), fitted to %zu scale probes%s:\n%s", dp.name().c_str(), K, sc.samples,
                results.empty() ? "" : (" (the device's d: " + results + ")").c_str(), format_feature_table(sc).c_str());
    if (!results.empty()) return 0;
    if (sc.fits > 1) {  // the preset's own values reproduce its results: one of the candidates
      std::printf("the scale probes do not decide this datapath's scale fields (%zu candidates fit, the preset's among them)\n",
                  sc.fits);
      return status;
    }
    const std::string diff = scale_diff(dp, sc.dp);
    std::printf("%s\n", diff.empty() ? "fitted scale fields = preset's" : ("differences from the preset:\n" + diff).c_str());
    return diff.empty() ? status : 1;
  }

  int run() const {
    const std::string out = dpa.out.empty() ? "fp32" : dpa.out;
    if (out != "fp32" && out != "fp16" && out != "fp64") throw UsageError("--out must be fp32, fp16 or fp64");
    if (!dpa.arch.empty() || !dpa.file.empty()) {
      const Datapath dp = dpa.resolve();
      if (dp.scaled()) return run_scaled(dp);
      if (!emit.empty() || !results.empty())
        throw UsageError("--arch detects the features of a preset; --emit/--results are for a device "
                         "(use --compare ARCH to compare device results with a preset)");
      const int K = k ? k : std::min(dp.k_default, 64);  // the probes cover k = 2..64
      const DetectedFeatures det = detect_features(dp, K);
      std::printf("features of %s (k = %d%s), detected from %zu probe vectors:\n%s", dp.name().c_str(), K,
                  K < dp.k_default ? (" of the instruction's " + std::to_string(dp.k_default)).c_str() : "", det.samples,
                  format_feature_table(det).c_str());
      const std::string diff = compare_features(dp, det.dp);
      std::printf("%s\n", diff.empty() ? "detected parameters = preset parameters"
                                        : ("differences from the preset:\n" + diff).c_str());
      return diff.empty() ? 0 : 1;
    }
    if (dpa.type.empty()) throw UsageError("give --arch A --type T, --datapath FILE, or --type T with --emit/--results");
    if (dpa.set_given())
      throw UsageError("--set changes a model's datapath (--arch/--datapath); the probes of --emit/--results "
                       "depend only on the formats and k");
    const auto ts = split_commas(dpa.type);
    if (ts.size() > 2) throw UsageError("--type takes one type or a pair TA,TB");
    Format fa, fb;
    try {
      fa = format_by_name(ts[0] == "xf32" ? "tf32" : ts[0]);
      fb = format_by_name(ts.size() == 2 ? ts[1] : ts[0] == "xf32" ? "tf32" : ts[0]);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    const Format& fo = out == "fp16" ? kBinary16 : out == "fp64" ? kBinary64 : kBinary32;
    if (!k) throw UsageError("give --k (the device instruction's k) with --emit/--results");
    const FeatureVectors v = feature_vectors(fa, fb, fo, k, dpa.type);
    if (!emit.empty()) {
      OutputDir emit_dir(emit, "--emit");
      emit_feature_vectors(v, emit);
      emit_dir.keep();
      std::printf("wrote %zu probe vectors (k = %d) to %s/{a,b,c,manifest}.txt: run them on the device, "
                  "then 'matcore features --type %s --k %d --out %s --results D_FILE'\n",
                  v.size(), k, emit.c_str(), dpa.type.c_str(), k, out.c_str());
      return 0;
    }
    if (results.empty()) throw UsageError("give --arch (model), --emit DIR or --results FILE");
    const DetectedFeatures det = decide_features(v, read_feature_results(v, results));
    std::printf("features detected from %s (%zu probe vectors, %zu reproduced by the detected "
                "datapath):\n%s", results.c_str(), det.samples, det.reproduced, format_feature_table(det).c_str());
    if (!compare.empty()) {
      DatapathArgs c = dpa;
      c.arch = compare;
      const Datapath dp = c.resolve();
      const std::string diff = compare_features(dp, det.dp);
      std::printf("%s\n", diff.empty() ? ("same as preset " + dp.name()).c_str()
                                        : ("differences from preset " + dp.name() + ":\n" + diff).c_str());
      return diff.empty() ? 0 : 1;
    }
    return 0;
  }
};

// ------------------------------------------------------------------------------------- rtl
/// The whole text of a file (InputError naming it when it cannot be read).
static std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw InputError(path + ": cannot read (" + std::strerror(errno) + ")");
  if (!in.is_open()) throw InputError(path + ": cannot open (" + std::strerror(errno) + ")");
  return text;
}

/// matcore rtl: the Verilog top of a datapath (core/src/tools/rtl.cpp). With --dir, a folder that
/// stands alone: the top, a copy of each stage module of rtl_model/ it instantiates and a file
/// list of them relative to the folder (verilator -F DIR/TOP.f, from any directory).
struct RtlCmd {
  DatapathArgs dpa;
  std::string dir;
  int run() const {
    const Datapath dp = dpa.resolve();
    const RtlTop t = rtl_top(dp);
    if (dir.empty()) {
      if (std::fwrite(t.text.data(), 1, t.text.size(), stdout) != t.text.size() || std::fflush(stdout) != 0)
        throw InputError(std::string("standard output: write failed (") + std::strerror(errno) + ")");
      return 0;
    }
    OutputDir out_dir(dir, "--dir");  // created when missing; removed again if the files fail
    const std::string top = dir + "/" + t.module + ".sv";
    std::string list;
    std::vector<std::unique_ptr<OutputFile>> files;
    for (const std::string& s : t.sources) {  // the stage modules (inputs: never written over)
      const std::string src = rtl_model_dir() + "/" + s;
      note_input(src);
      files.push_back(std::make_unique<OutputFile>(dir + "/" + s));
      files.back()->write(read_text_file(src));
      list += s + "\n";
    }
    list += t.module + ".sv\n";
    files.push_back(std::make_unique<OutputFile>(top));
    files.back()->write(t.text);
    files.push_back(std::make_unique<OutputFile>(dir + "/" + t.module + ".f"));
    files.back()->write(list);
    std::vector<OutputFile*> all;
    for (auto& f : files) all.push_back(f.get());
    commit_all(all);
    out_dir.keep();
    std::printf("%s: %s (latency %d cycles), file list %s.f\n", dp.name().c_str(), top.c_str(), t.latency,
                (dir + "/" + t.module).c_str());
    return 0;
  }
};

/// matcore cost: yosys synthesis of the preset's top; cells and NAND2-equivalents per stage.
struct CostCmd {
  DatapathArgs dpa;
  double gate_ps = 10;  ///< nominal delay of one generic gate level (--gate-ps)
  int run() const {
    const Datapath dp = dpa.resolve();
    const RtlCost c = rtl_cost(dp);
    std::printf("%s%s: %s\n", dp.name().c_str(), dp.variant.empty() ? "" : (" " + dp.variant).c_str(), plan_diagram(dp).c_str());
    std::printf("top %s: latency %d cycles after the issue register\n\n", c.module.c_str(), c.latency);
    std::printf("%-12s %-34s %10s %12s %7s %6s %9s\n", "stage", "modules", "cells", "NAND2-eq", "adder", "depth", "delay ps");
    for (const StageCost& s : c.stages)
      std::printf("%-12s %-34s %10ld %12.0f %7s %6d %9.0f\n", s.stage.c_str(), s.modules.c_str(), s.cells, s.nand2,
                  s.adder_bits ? std::to_string(s.adder_bits).c_str() : "-", s.depth, s.depth * gate_ps);
    std::printf("%-12s %-34s %10ld %12.0f\n", "registers", (std::to_string(c.flops) + " flip-flops, glue").c_str(),
                c.reg_cells, c.reg_nand2);
    std::printf("%-12s %-34s %10ld %12.0f\n", "total", "", c.cells, c.nand2);
    std::printf("\nper product: %.0f NAND2-eq (%d products); %ld flip-flops; latency %d cycles\n", c.nand2 / dp.n_fma, dp.n_fma,
                c.flops, c.latency);
    std::printf("widest adder: %s, %d bits; deepest stage: %d gate levels\n", c.widest_stage.c_str(), c.widest_adder, c.depth);
    // A clock period holds the deepest stage plus a register's clock-to-q and setup (about 3 levels).
    const double period = (c.depth + 3) * gate_ps;
    std::printf("delay estimate: %.0f ps a gate level (--gate-ps): deepest stage %.0f ps, clock >= %.0f ps (%.2f GHz "
                "with 3 levels of register overhead)\n", gate_ps, c.depth * gate_ps, period, 1000.0 / period);
    std::printf("method: yosys synth (generic gates, hierarchy kept), stat -tech cmos transistors / 4, ltp -noff gate levels\n"
                "(no timing library: the delays are levels times a nominal gate delay, for comparing designs, not a\n"
                "timing sign-off; docs/rtl.md); %.1f s%s\n",
                c.seconds, c.cached ? " when first run (this one from the RTL cache)" : "");
    return 0;
  }
};

// ----------------------------------------------------------------------------- check-table
struct CheckTableCmd {
  std::vector<std::string> files;
  bool verbose = false;
  int run() const {
    size_t pass = 0, fail = 0, amb_fail = 0;
    for (const std::string& f : files) {
      for (const TableCase& tc : read_table(f)) {
        std::vector<CaseResult> rs;
        try {
          rs = run_case(tc);
        } catch (const InputError& e) {
          ++(tc.ambiguous ? amb_fail : fail);
          std::printf("%s%s\n", tc.ambiguous ? "[ambiguous] " : "", e.what());
          continue;
        }
        for (const CaseResult& r : rs) {
          if (r.pass) {
            ++pass;
            if (verbose) std::printf("pass %s:%d %s\n", tc.file.c_str(), tc.line, r.preset.c_str());
            continue;
          }
          if (tc.ambiguous) ++amb_fail;
          else ++fail;
          std::printf("%s%s\n", tc.ambiguous ? "[ambiguous] " : "", r.detail.c_str());
        }
      }
    }
    if (amb_fail) std::printf("(%zu of the failures are in AMBIGUOUS blocks: see docs/decisions.md)\n", amb_fail);
    std::printf("%zu passed, %zu failed\n", pass, fail + amb_fail);
    return fail + amb_fail ? 1 : 0;
  }
};

}  // namespace

void add_features_command(Program& p) {
  auto ft = std::make_shared<FeaturesCmd>();
  CLI::App* c = p.command("features", "feature detection (section 4 of the paper) on a preset, or on a device's results",
                "  matcore features --arch h100 --type fp16\n"
                "  matcore features --type fp16 --k 16 --emit probes    (run probes/ on the device, then:)\n"
                "  matcore features --type fp16 --k 16 --results d.txt --compare h100\n"
                "  matcore features --arch b200 --type nvfp4                (block scales: fitted)\n"
                "  matcore features --arch b200 --type nvfp4 --emit probes  (then --results d.txt: fitted on the preset's other fields)",
                [ft] { return ft->run(); });
  ft->dpa.add(c, true);
  c->add_option("--k", ft->k, "k of the instruction (the probes cover 2..64)")->check(cli::int_range(2, 64));
  CLI::Option* em = Program::text(c, "--emit", ft->emit, "write the probe vectors to DIR");
  CLI::Option* rs = Program::text(c, "--results", ft->results, "the device's d for the emitted vectors");
  em->excludes(rs);
  Program::text(c, "--compare", ft->compare, "compare the detected datapath with this preset")->needs(rs);
}

void add_hardware_commands(Program& p) {
  CLI::App* c = nullptr;
  auto rtl = std::make_shared<RtlCmd>();
  c = p.command("rtl", "the Verilog top of a preset's pipeline (its stages from rtl_model/), for Verilator and yosys",
                "  matcore rtl --arch mi300x --type fp16 --dir build/rtl   (writes mc_mi300x_fp16.sv and .f)",
                [rtl] { return rtl->run(); });
  rtl->dpa.add(c);
  Program::text(c, "--dir", rtl->dir, "directory for TOP.sv, the stage modules it uses and their list TOP.f (paths relative to DIR: verilator -F DIR/TOP.f); default: the top on standard output");

  auto cost = std::make_shared<CostCmd>();
  c = p.command("cost", "hardware cost of a preset's RTL top: yosys cells and NAND2-equivalents per stage, latency, widest adder",
                "  matcore cost --arch mi300x --type fp16", [cost] { return cost->run(); });
  cost->dpa.add(c);
  c->add_option("--gate-ps", cost->gate_ps, "nominal delay of one generic gate level for the delay estimate (default 10 ps, "
                "about a fan-out-of-4 inverter at 7 nm)")->check(CLI::Range(0.1, 1000.0));

  auto ct = std::make_shared<CheckTableCmd>();
  c = p.command("check-table", "run paper test-vector tables (tb/vectors/*.pvt)",
                "  matcore check-table tb/vectors/paper_cdna3.pvt", [ct] { return ct->run(); });
  c->add_option("files", ct->files, "table files")->required()->check(CLI::ExistingFile);
  c->add_flag("--verbose", ct->verbose, "also list the passing cases");
}
