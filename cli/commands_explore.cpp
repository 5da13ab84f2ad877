// matcore explore: the accuracy of datapaths on a workload against the exact sum (docs/explore.md).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "matcore/format.hpp"
#include "matcore/model.hpp"
#include "matcore/validate.hpp"
#include "matcore/fast.hpp"
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

// ------------------------------------------------------------------------------------ explore
/// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break
/// ("e4m3fnuz,e5m2fnuz" is one label, not two fields).
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string r = "\"";
  for (char ch : s) r += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return r + "\"";
}

/// The accuracy of one or more datapaths (with up to two swept fields) on a workload, against
/// the exact sum rounded once (explore.hpp); a table, CSV and PNG plots.
struct ExploreCmd {
  DatapathArgs dpa;
  std::vector<std::string> dps, sweeps;
  std::string dist = "normal", ks = "16,256,4096", csv, png;
  unsigned long long n = 10000;
  unsigned seed = 1, threads = 0;
  bool no_mono = false, cost = false, bound_line = false;
  std::vector<std::string> worst;  // --worst N DIR

  struct Config {
    std::string label, s1, s2;  // datapath label, "field=value" of each sweep
    Datapath dp;
    double nand2 = -1;                      // matcore cost (--cost): NAND2-equivalents,
    long flops = -1, latency = -1, depth = -1;  // flip-flops, cycles, gate levels of the deepest stage
  };

  std::vector<Config> configs() const {
    std::vector<Datapath> base;
    if (dpa.given()) base.push_back(dpa.resolve());
    for (const std::string& x : dps) {
      Datapath d;
      try {
        d = datapath_by_name(x);
      } catch (const InputError&) {
        throw;
      } catch (const std::invalid_argument& e) {
        throw UsageError("--dp " + x + ": " + e.what());
      }
      dpa.apply_set(d);
      cli::warn_widths(d, d.name());  // a preset is consistent; a file or --set may not be
      base.push_back(d);
    }
    if (base.empty()) throw UsageError("give the datapaths: --dp arch/type or --dp FILE (repeatable), or --arch/--type, --datapath");
    if (sweeps.size() > 2) throw UsageError("at most two --sweep fields");
    if (sweeps.size() == 2)
      for (const std::string& f0 : split_commas(sweeps[0].substr(0, sweeps[0].find('='))))
        for (const std::string& f1 : split_commas(sweeps[1].substr(0, sweeps[1].find('='))))
          if (f0 == f1)
            throw UsageError("two --sweep of the same field '" + excerpt(f0) +
                             "' (the rows would be mislabelled): give its values in one --sweep");
    std::vector<Config> out;
    for (const Datapath& d : base) {
      const std::string label = d.name() + (d.variant.empty() ? "" : "+" + d.variant);
      std::vector<std::pair<std::string, std::vector<std::string>>> sw;
      try {
        for (const std::string& s : sweeps) sw.push_back(parse_sweep(s, d));
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
      const std::vector<std::string> none = {""};
      const auto& v1 = sw.size() > 0 ? sw[0].second : none;
      const auto& v2 = sw.size() > 1 ? sw[1].second : none;
      for (const std::string& x1 : v1)
        for (const std::string& x2 : v2) {
          Config c{label, "", "", d};
          try {
            // a linked sweep (frac_bits,c_frac=24..32) sets every field it names to the value
            if (!x1.empty()) { for (const std::string& f : split_commas(sw[0].first)) set_field(c.dp, f, x1); c.s1 = sw[0].first + "=" + x1; }
            if (!x2.empty()) { for (const std::string& f : split_commas(sw[1].first)) set_field(c.dp, f, x2); c.s2 = sw[1].first + "=" + x2; }
            validate_datapath(c.dp);
          } catch (const std::invalid_argument& e) {
            throw UsageError(label + " " + c.s1 + " " + c.s2 + ": " + e.what());
          }
          if (!c.s1.empty() || !c.s2.empty())  // (the unswept designs were checked as they were read)
            cli::warn_widths(c.dp, label + (c.s1.empty() ? "" : " " + c.s1) + (c.s2.empty() ? "" : " " + c.s2));
          out.push_back(c);
        }
    }
    return out;
  }

  /// --worst N DIR: the worst samples of one row as a vector set (DIR/<row>/a.txt b.txt c.txt,
  /// sa.txt sb.txt for block scales, d.txt = the exact sum rounded once, worst.txt: the errors)
  /// that `trace --file`, `explain --file` and `validate` replay.
  void write_worst(const Config& c, int k, const ErrorStats& e) const {
    Workload w;
    parse_workload(dist, w);
    std::string row = c.label + (c.s1.empty() ? "" : "_" + c.s1) + (c.s2.empty() ? "" : "_" + c.s2) + "_k" + std::to_string(k);
    for (char& ch : row)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-') ch = '_';
    const std::string dir = worst[1] + "/" + row;
    const int ns = scales_per_sample(c.dp, k);
    const bool native_a = native_digits(c.dp.a_fmt) > 0, native_b = native_digits(c.dp.b_fmt) > 0;
    AbFile A{k, stored_width(c.dp.a_fmt), native_a ? native_digits(c.dp.a_fmt) * 4 : 0, {}, {}},
        B{k, stored_width(c.dp.b_fmt), native_b ? native_digits(c.dp.b_fmt) * 4 : 0, {}, {}};
    std::vector<uint64_t> sa_all, sb_all, cz, ref;
    std::string list = "# matcore explore --worst: the samples of largest normwise error, largest first\n"
                       "# sample (index in the workload)  normwise error (u sum|a b|)  design d  reference d\n";
    const FastDot fd(c.dp);
    for (const auto& bad : e.worst) {
      std::vector<uint64_t> a(k), b(k), sa(std::max(ns, 1)), sb(std::max(ns, 1));
      if (c.dp.scaled()) workload_scaled_inputs(w, c.dp, k, seed, bad.second, a.data(), b.data(), sa.data(), sb.data());
      else workload_inputs(w, c.dp.a_fmt, c.dp.b_fmt, k, seed, bad.second, a.data(), b.data());
      const auto widen = [](const Format& f, bool native, uint64_t v) {  // binary32, or binary64 itself
        return native || f == kBinary64 ? v : convert(f, v, kBinary32, Rounding::RNE);
      };
      for (int j = 0; j < k; ++j) A.v.push_back(widen(c.dp.a_fmt, native_a, a[j])), B.v.push_back(widen(c.dp.b_fmt, native_b, b[j]));
      for (int j = 0; j < ns; ++j) sa_all.push_back(sa[j]), sb_all.push_back(sb[j]);
      const uint64_t zero = zero_bits(c.dp.out_fmt, false);
      cz.push_back(widen_result(c.dp, zero));
      const uint64_t r = explore_reference(c.dp, a.data(), b.data(), k, ns ? sa.data() : nullptr, ns ? sb.data() : nullptr);
      ref.push_back(widen_result(c.dp, r));
      const uint64_t d = fd(a.data(), b.data(), k, zero, ScaleRefs{sa.data(), sb.data()});
      char buf[160];
      std::snprintf(buf, sizeof buf, "%llu %.6g 0x%s 0x%s\n", static_cast<unsigned long long>(bad.second), bad.first,
                    to_hex_bits(c.dp.out_fmt, d).c_str(), to_hex_bits(c.dp.out_fmt, r).c_str());
      list += buf;
    }
    const std::string head = " k=" + std::to_string(k) + " workload=" + dist + " seed=" + std::to_string(seed) + " design=" + c.label +
                             (c.s1.empty() ? "" : " " + c.s1) + (c.s2.empty() ? "" : " " + c.s2) + "\n";
    OutputDir od(dir, "--worst");
    const int ow = stored_width(c.dp.out_fmt);
    std::vector<std::unique_ptr<OutputFile>> files;
    auto add = [&](const std::string& name, const std::string& text) {
      files.push_back(std::make_unique<OutputFile>(dir + "/" + name));
      files.back()->write(text);
    };
    add("a.txt", ab_file_text(A, "# matcore explore worst a=" + c.dp.a_fmt.name + head));
    add("b.txt", ab_file_text(B, "# matcore explore worst b=" + c.dp.b_fmt.name + head));
    add("c.txt", cd_file_text(cz, ow, "# matcore explore worst c=" + c.dp.out_fmt.name + head));
    add("d.txt", cd_file_text(ref, ow, "# matcore explore worst: d = the exact sum rounded once (the reference)" + head));
    if (ns) {
      add("sa.txt", scale_file_text(sa_all, ns, "# matcore explore worst sa=" + c.dp.scale_fmt.name + head));
      add("sb.txt", scale_file_text(sb_all, ns, "# matcore explore worst sb=" + c.dp.scale_fmt.name + head));
    }
    add("worst.txt", list);
    std::vector<OutputFile*> all;
    for (auto& f : files) all.push_back(f.get());
    commit_all(all);
    od.keep();
    std::printf("wrote %s (%zu samples: trace --file %s --samples 0)\n", dir.c_str(), e.worst.size(), dir.c_str());
  }

  /// The --k values, checked (at least 1 each, at most kMaxKValues of them).
  std::vector<int> k_values() const {
    std::vector<int> kv;
    for (const std::string& x : split_commas(ks)) kv.push_back(static_cast<int>(cli::to_int("--k", x, 1, 1 << 20)));
    if (kv.size() > static_cast<size_t>(kMaxKValues))
      throw UsageError("--k: more than " + std::to_string(kMaxKValues) + " values (docs/cli.md, \"Limits\")");
    return kv;
  }

  /// --png: the plots' names must be neither inputs nor the CSV, their directory must exist and
  /// be writable (checked before any work; nk: the number of --k values).
  void check_plots(size_t nk) const {
    std::vector<std::string> plots;
    if (nk > 1) plots = {png + "-k.png", png + "-bias.png"};
    if (!sweeps.empty()) plots.push_back(png + "-sweep.png");
    if (cost) plots.push_back(png + "-cost.png");
    if (plots.empty())
      throw UsageError("--png: nothing to plot with one k and no --sweep or --cost (give two or more --k values)");
    for (const std::string& p : plots) {
      check_output_target(p, "--png");
      const std::string d = p.find('/') == std::string::npos ? "." : p.substr(0, p.rfind('/'));
      struct stat st{};
      if (::stat(d.empty() ? "/" : d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw InputError("--png " + p + ": the directory " + d + " does not exist");
      if (::access(d.empty() ? "/" : d.c_str(), W_OK) != 0)
        throw InputError("--png " + p + ": the directory " + d + " is not writable");
    }
  }

  /// --cost: each configuration's cost (under mpirun: rank 0 runs yosys, the others take its figure).
  static void add_costs(std::vector<Config>& cf) {
    for (Config& c : cf) {
      std::string fig;
      if (dist::rank() == 0) {
        std::fprintf(stderr, "cost of %s %s %s (yosys) ...\n", c.label.c_str(), c.s1.c_str(), c.s2.c_str());
        const RtlCost r = rtl_cost(c.dp);
        fig = std::to_string(r.nand2) + " " + std::to_string(r.flops) + " " + std::to_string(r.latency) + " " +
              std::to_string(r.depth);
      }
      std::istringstream in(dist::broadcast(fig));
      in >> c.nand2 >> c.flops >> c.latency >> c.depth;
    }
  }

  /// The table's preamble and column heads on stdout.
  void print_heads() const {
    std::printf("workload %s, %llu samples per row, seed %u; reference: the exact sum rounded once (RNE)\n"
                "(rel = (d - ref) / ref, ulp = (d - ref) / ulp(ref) * sign(ref), nw = (d - exact) * sign(exact) / (u sum|a_i b_i|):\n"
                " negative = toward zero; correct: d == ref; bound: max |d - exact| / (k u sum|a_i b_i|))\n",
                dist.c_str(), n, seed);
    std::printf("%-22s %-26s %6s %10s %10s %11s %9s %9s %9s %8s %8s %7s%s\n", "datapath", "sweep", "k", "rms_rel", "max_rel",
                "mean_rel", "mean_ulp", "rms_nw", "mean_nw", "correct", "monoton", "bound", cost ? "    nand2 depth" : "");
  }

  /// One row of the table (configuration c at dot length k) on stdout.
  void print_row(const Config& c, int k, const ErrorStats& e) const {
    const double cf_ = e.correct_frac(), mf = e.mono_frac();
    const std::string sw = c.s1 + (c.s2.empty() ? "" : " " + c.s2);
    std::printf("%-22s %-26s %6d %10.3e %10.3e %11.3e %9.3f %9.3f %9.3f %8.4f %8.4f %7.3f", c.label.c_str(), sw.c_str(), k,
                e.rms_rel, e.max_rel, e.mean_rel, e.mean_ulp, e.rms_nw, e.mean_nw, cf_, mf, e.max_bound);
    if (cost) std::printf(" %8.0f %5ld", c.nand2, c.depth);
    std::printf("%s\n", e.finite < e.n ? (" (" + std::to_string(e.n - e.finite) + " overflowed)").c_str() : "");
    std::fflush(stdout);
  }

  /// One CSV row (configuration c at dot length k), appended to rows.
  void csv_row(const Config& c, int k, const ErrorStats& e, std::string& rows) const {
    const double ku = e.k_u, cf_ = e.correct_frac(), mf = e.mono_frac();
    char buf[800];
    rows += csv_field(c.label) + "," + csv_field(c.s1) + "," + csv_field(c.s2) + ",";
    std::snprintf(buf, sizeof buf, "%d,%s,%llu,%llu,%.6e,%.6e,%.6e,%.6f,%.6f,%.3f,%.6f,%.6f,%.6f,%.6e,%.6f,%.6f,%.0f,%.1f,%ld,%ld,%ld,",
                  k, dist.c_str(), static_cast<unsigned long long>(e.n),
                  static_cast<unsigned long long>(e.finite), e.rms_rel, e.max_rel, e.mean_rel, e.mean_ulp,
                  e.mean_abs_ulp, e.max_abs_ulp, cf_, mf, e.max_bound, ku, e.rms_nw, e.mean_nw, c.nand2,
                  c.nand2 > 0 ? c.nand2 / c.dp.n_fma : -1.0, c.flops, c.latency, c.depth);
    rows += buf;
    std::snprintf(buf, sizeof buf, "%.6e,%.6e,%.6f,%.6f,%.6f,%.6f,%d,%d,%d,", e.se_rms_rel, e.se_mean_rel, e.se_mean_ulp,
                  e.se_rms_nw, e.se_mean_nw, e.se_correct, e.ulp_quantile(0.05), e.ulp_quantile(0.5), e.ulp_quantile(0.95));
    rows += buf;
    for (int i = 0; i < kUlpBins; ++i) rows += (i ? ";" : "") + std::to_string(e.ulp_hist[i]);
    rows += "\n";
  }

  /// --png: runs the plot script on the CSV (rank 0, after the CSV is written).
  void draw_plots() const {
    const std::string script = std::string(MATCORE_SOURCE_DIR) + "/scripts/explore_plot.py";
    // the Debian python3 (python3-matplotlib lives there), unless $MATCORE_PYTHON names another
    const char* py = std::getenv("MATCORE_PYTHON");
    const std::string python = py ? py : ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    const std::string cmd = shell_quote(python) + " " + shell_quote(script) + " " + shell_quote(csv) + " " + shell_quote(png) +
                            (bound_line ? " --bound" : "");
    const int rc = run_tool(cmd, tool_timeout(600), "the plot script");
    if (rc == 3) throw InputError("the plots need matplotlib for " + python + " (python3-matplotlib: scripts/install-deps.sh)");
    if (rc != 0)
      throw InputError("the plot script failed (exit " + std::to_string(rc) + ", its message is above): " + cmd);
  }

  int run() const {
    Workload w;
    if (!parse_workload(dist, w)) throw UsageError("--dist must be one of uniform01, uniform11, normal, loguniform, cancel");
    const std::vector<int> kv = k_values();
    if (!png.empty() && csv.empty()) throw UsageError("--png needs --csv (the plots are drawn from it)");
    std::vector<Config> cf = configs();
    size_t n_worst = 0;
    std::unique_ptr<OutputDir> worst_dir;  // created now (removed again if the run fails)
    if (!worst.empty()) {
      n_worst = static_cast<size_t>(cli::to_int("--worst", worst[0], 1, 1000));
      if (dist::rank() == 0) worst_dir = std::make_unique<OutputDir>(worst[1], "--worst");
    }
    // every output checked before any work: the CSV is created now (its temporary removed on
    // any failure), the plots' names must be neither inputs nor the CSV, their directory must exist
    std::unique_ptr<OutputFile> csv_out(csv.empty() || dist::rank() != 0 ? nullptr : new OutputFile(csv));
    if (!png.empty()) check_plots(kv.size());
    ExploreSpec spec;
    spec.workload = w;
    spec.n = n;
    spec.seed = seed;
    spec.threads = threads;
    spec.monotonic = !no_mono;
    spec.worst = n_worst;
    if (cost) add_costs(cf);
    const bool tty = ::isatty(2) && dist::rank() == 0;
    const uint64_t total = static_cast<uint64_t>(n) * kv.size() * cf.size();
    uint64_t before = 0;
    std::string rows = "datapath,sweep1,sweep2,k,workload,n,finite,rms_rel,max_rel,mean_rel,mean_ulp,mean_abs_ulp,"
                       "max_abs_ulp,correct_frac,mono_frac,max_bound_ratio,k_u,rms_nw_u,mean_nw_u,nand2,"
                       "nand2_per_product,flops,latency,depth,se_rms_rel,se_mean_rel,se_mean_ulp,se_rms_nw_u,se_mean_nw_u,"
                       "se_correct_frac,ulp_q05,ulp_q50,ulp_q95,ulp_hist\n";
    print_heads();
    for (const Config& c : cf)
      for (int k : kv) {
        auto bar = [&](uint64_t done) {
          if (!tty) return;
          const uint64_t all = before + done;
          std::fprintf(stderr, "\r[%-30s] %3d%% ", std::string(static_cast<size_t>(30.0 * all / total), '#').c_str(),
                       static_cast<int>(100.0 * all / total));
        };
        const ErrorStats e = measure_error(c.dp, k, spec, bar);
        if (n_worst && dist::rank() == 0) write_worst(c, k, e);
        before += n;
        if (tty) std::fprintf(stderr, "\r%50s\r", "");
        print_row(c, k, e);
        csv_row(c, k, e, rows);
      }
    if (worst_dir) worst_dir->keep();
    if (dist::rank() != 0) return 0;  // rank 0 writes the files (every rank holds the same rows)
    if (csv_out) {
      csv_out->write(rows);
      csv_out->commit();
      std::printf("wrote %s\n", csv.c_str());
    }
    if (!png.empty()) draw_plots();
    return 0;
  }
};

}  // namespace

void add_explore_command(Program& p) {
  auto ex = std::make_shared<ExploreCmd>();
  CLI::App* c = p.command("explore", "accuracy of datapaths (presets, files, swept fields) on a workload against the exact sum",
                "  matcore explore --dp mi300x/fp16 --dp h100/fp16 --k 16,256,4096 --n 10000 --csv e.csv --png e\n"
                "  matcore explore --dp mi300x/fp16 --sweep frac_bits=20..32:2 --k 16,4096 --cost --csv f.csv --png f\n"
                "  (workloads: --dist uniform01, uniform11, normal, loguniform, cancel; docs/explore.md)",
                [ex] { return ex->run(); });
  ex->dpa.add(c, true);
  c->add_option("--dp", ex->dps, "a datapath: preset arch/type[/out][+variant] or a datapath file (repeatable)")->check(cli::kNotAnOption);
  c->add_option("--sweep", ex->sweeps,
                "a swept field: field=LO..HI[:STEP] or field=V,V,...; linked fields take the same values: "
                "frac_bits,c_frac=24..32:2 (at most two --sweep: a grid)")->check(cli::kNotAnOption);
  Program::text(c, "--dist", ex->dist, "input distribution: uniform01, uniform11, normal (default), loguniform, cancel");
  Program::text(c, "--k", ex->ks, "dot lengths K,K,... (default 16,256,4096; chained through c in groups of n_fma)");
  c->add_option("--n", ex->n, "samples per row (default 10000)")->check(cli::int_range(1, 1000000000000LL));
  c->add_option("--seed", ex->seed, "seed of the inputs (default 1)")->check(cli::int_range(0, 2147483647));
  c->add_flag("--no-monotonic", ex->no_mono, "skip the monotonicity check (it runs a second dot per sample)");
  c->add_flag("--cost", ex->cost, "add each configuration's cost (matcore cost: yosys NAND2-equivalents)");
  Program::text(c, "--csv", ex->csv, "write the rows as CSV (complete or not at all)");
  Program::text(c, "--png", ex->png, "plots PREFIX-k.png, PREFIX-bias.png (and PREFIX-sweep.png, PREFIX-cost.png) from the CSV");
  c->add_flag("--bound", ex->bound_line, "draw the classical bound k on the normwise-error plot (PREFIX-k.png)");
  c->add_option("--worst", ex->worst, "N DIR: the N samples of largest normwise error of each row, as vector sets "
                                      "DIR/<row>/ (a, b, c, d = the exact sum rounded once) that trace --file replays")
      ->expected(2)
      ->allow_extra_args(false);
  threads_option(c, ex->threads);
}
