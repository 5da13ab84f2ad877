// matcore command-line interface (CLI11). Exit status: 0 success, 1 mismatches, 2 bad input or
// usage (docs/cli.md). Every subcommand takes --help. cli/main.cpp runs it; the fuzz target
// fuzz/fuzz_cli.cpp drives the same commands with arbitrary words.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <memory>
#include <vector>

#include "commands.hpp"
#include "matcore/cli.hpp"
#include "matcore/exact.hpp"
#include "matcore/dist.hpp"
#include "matcore/explain.hpp"
#include "matcore/fast.hpp"
#include "matcore/explore.hpp"
#include "matcore/datapath_file.hpp"
#include "matcore/features.hpp"
#include "matcore/fields.hpp"
#include "matcore/instructions.hpp"
#include "matcore/model.hpp"
#include "matcore/output.hpp"
#include "matcore/plan.hpp"
#include "matcore/presets.hpp"
#include "matcore/rtl_driver.hpp"
#include "matcore/sample.hpp"
#include "matcore/stats.hpp"
#include "matcore/svg.hpp"
#include "matcore/table.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"

using namespace mc;
using cli::DatapathArgs;
using cli::Program;
using cli::stored_out;
using cli::threads_option;

namespace {

std::string hex(const Format& f, uint64_t v) { return to_hex_bits(f, v); }

// ------------------------------------------------------------------------------------- list
struct ListCmd {
  std::string topic = "all", arch;
  int run() const {
    std::vector<std::string> archs = arch_names();
    if (!arch.empty()) {
      if (std::find(archs.begin(), archs.end(), arch) == archs.end())
        throw UsageError("unknown architecture '" + excerpt(arch) + "'");
      archs = {arch};
    }
    const std::string& what = topic;
    if (what == "formats" || what == "all") {
      std::printf("formats (name: exponent bits, mantissa bits, bias, encoding, largest finite):\n");
      for (const std::string& n : format_names()) {
        const Format& f = format_by_name(n);
        if (f.name != n) continue;  // an alias (fp32, bfloat16, ...)
        std::printf("  %-9s e=%-2d m=%-2d bias=%-4d %-6s %s\n", n.c_str(), f.ebits, f.mbits, f.bias, to_string(f.enc),
                    to_decimal(f, f.max_finite_bits()).c_str());
      }
      std::printf("block-scale formats (scale_fmt of the block-scaled types; docs/blockscaled.md):\n");
      for (const std::string& n : scale_format_names()) {
        const Format& f = *find_format(n);
        if (f.name != n) continue;  // ue8m0 = e8m0
        std::printf("  %-9s e=%-2d m=%-2d bias=%-4d %-6s %s .. %s, %s\n", n.c_str(), f.ebits, f.mbits, f.bias,
                    to_string(f.enc), to_decimal(f, f.enc == Encoding::Pow2 ? 0 : 1).c_str(),
                    to_decimal(f, f.max_finite_bits()).c_str(),
                    f.sign == Sign::None ? "no sign, no zero" : "sign bit ignored, zero and subnormals");
      }
    }
    if (what == "archs" || what == "types" || what == "all") {
      std::printf("architectures and input types:\n");
      for (const std::string& ar : archs) {
        std::string fam;
        for (const Datapath& d : all_presets())
          if (d.arch == ar) fam = d.family;
        std::printf("  %-11s (%s): ", ar.c_str(), fam.c_str());
        const auto ts = types_of(ar);
        for (size_t i = 0; i < ts.size(); ++i) std::printf("%s%s", i ? " " : "", ts[i].c_str());
        std::printf("\n");
      }
    }
    if (what == "presets") {
      // every preset with its element formats, scales, K and adder
      std::printf("presets (arch, type, variant: a x b elements, scale format/block [G: products per scaled group],\n"
                  "         K, products per group, adder, output; hypothesis: not published, `show` names its open fields):\n");
      for (const std::string& ar : archs)
        for (const Datapath& d : all_presets()) {
          if (d.arch != ar) continue;
          const std::string sc = !d.scaled() ? "none"
                                 : d.scale_fmt.name + "/" + std::to_string(d.scale_block) +
                                       (d.group_size ? " G=" + std::to_string(d.group_size) : "");
          std::printf("  %-11s %-10s %-9s %-8s x %-8s scale %-13s K=%-3d n_fma=%-2d %-8s -> %s%s%s\n", d.arch.c_str(),
                      d.type.c_str(), d.variant.empty() ? "-" : d.variant.c_str(), d.a_fmt.name.c_str(),
                      d.b_fmt.name.c_str(), sc.c_str(), d.k_default, d.n_fma, get_field(d, "adder").c_str(), d.out_fmt.name.c_str(),
                      d.half_out ? " (binary16 too: --out fp16)" : "", d.hypothesis.empty() ? "" : " hypothesis");
        }
    }
    if (what == "instructions" || what == "all") {
      std::printf("instructions (name: type, m x n x k, blocks):\n");
      for (const std::string& ar : archs) {
        std::printf("  %s:\n", ar.c_str());
        for (const Instruction* in : instructions_for(ar))
          std::printf("    %-36s %-20s %dx%dx%d%s\n", in->name.c_str(), in->type().c_str(), in->m, in->n,
                      in->k, in->blocks > 1 ? (" x" + std::to_string(in->blocks) + " blocks").c_str() : "");
      }
    }
    return 0;
  }
};

// -------------------------------------------------------------------------------------- dot
struct DotCmd {
  DatapathArgs dpa;
  std::vector<std::string> dps;  // --dp: a second (or first and second) datapath to compare
  std::string a, b, c = "0", svg, sa, sb;
  bool trace = false;

  /// The datapaths: --arch/--type/--datapath, then each --dp; --arch A,B with one --type names two.
  std::vector<Datapath> datapaths() const {
    std::vector<Datapath> v;
    if (dpa.arch.find(',') != std::string::npos) {
      for (const std::string& x : split_commas(dpa.arch)) {
        DatapathArgs one = dpa;
        one.arch = x;
        v.push_back(one.resolve());
      }
    } else if (dpa.given()) {
      v.push_back(dpa.resolve());
    } else if (dpa.set_given()) {
      throw UsageError("--set changes the datapath of --arch/--type or --datapath; for a --dp datapath "
                       "write it with `matcore show --set ... > FILE` and give --dp FILE");
    }
    for (const std::string& x : dps) {
      try {
        v.push_back(datapath_by_name(x));
      } catch (const std::invalid_argument& e) {
        throw UsageError("--dp " + x + ": " + e.what());
      }
    }
    if (v.empty()) throw UsageError("a datapath is needed: --arch A --type T, --datapath FILE or --dp arch/type");
    if (v.size() > 2) throw UsageError("at most two datapaths side by side");
    if (v.size() == 2 && (!(v[0].a_fmt == v[1].a_fmt) || !(v[0].b_fmt == v[1].b_fmt)))
      throw UsageError("the two datapaths take different input formats (" + v[0].name() + ": " + v[0].a_fmt.name + " x " +
                       v[0].b_fmt.name + ", " + v[1].name() + ": " + v[1].a_fmt.name + " x " + v[1].b_fmt.name + ")");
    return v;
  }

  int run() const {
    const std::vector<Datapath> dv = datapaths();
    std::vector<Trace> traces(dv.size());
    std::vector<uint64_t> ds;
    for (size_t i = 0; i < dv.size(); ++i) {
      const Datapath& dp = dv[i];
      const TextOperands op = parse_text_operands(dp, a, b, c);
      if (i == 0)
        for (const std::string& n : op.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
      const int K = static_cast<int>(op.a.size());
      if (!dp.scaled() && (!sa.empty() || !sb.empty()))
        throw UsageError("--sa/--sb: datapath " + dp.name() + " has no block scales");
      // block scales: unit scales where --sa / --sb are not given
      const std::vector<uint64_t> xa = dp.scaled() && !sa.empty() ? parse_scale_list(dp, sa, K, "--sa") : std::vector<uint64_t>{};
      const std::vector<uint64_t> xb = dp.scaled() && !sb.empty() ? parse_scale_list(dp, sb, K, "--sb") : std::vector<uint64_t>{};
      const ScaleRefs sr = scale_refs(xa, xb);
      ds.push_back(dot(dp, op.a.data(), op.b.data(), K, op.c, sr, trace || dv.size() == 2 || !svg.empty() ? &traces[i] : nullptr));
      if (dv.size() == 1 && trace)
        std::printf("preset %s: n_fma=%d, %zu products\npipeline: %s\n", dp.name().c_str(), dp.n_fma, op.a.size(),
                    plan_diagram(dp).c_str());
    }
    if (!svg.empty()) {
      std::vector<SvgPanel> panels;
      for (size_t i = 0; i < dv.size(); ++i) panels.push_back(SvgPanel{dv[i], traces[i], ds[i]});
      OutputFile f(svg);
      f.write(trace_svg(panels));
      f.commit();
      std::fprintf(stderr, "wrote %s\n", svg.c_str());
    }
    if (dv.size() == 1) {
      if (trace)
        std::fputs(traces[0].text().c_str(), stdout);
      std::printf("d = 0x%s  %s\n", hex(dv[0].out_fmt, ds[0]).c_str(), to_decimal(dv[0].out_fmt, ds[0]).c_str());
      return 0;
    }
    print_side_by_side(dv, traces, ds);
    return 0;
  }

  /// The two traces row by row, matched by signal name (a row only one datapath has is shown
  /// against '-'); the first row whose values differ is marked.
  static void print_side_by_side(const std::vector<Datapath>& dv, const std::vector<Trace>& t,
                                 const std::vector<uint64_t>& ds) {
    const std::string n0 = dv[0].name() + (dv[0].variant.empty() ? "" : "+" + dv[0].variant);
    const std::string n1 = dv[1].name() + (dv[1].variant.empty() ? "" : "+" + dv[1].variant);
    std::printf("pipelines:\n  %s: %s\n  %s: %s\n\n", n0.c_str(), plan_diagram(dv[0]).c_str(), n1.c_str(),
                plan_diagram(dv[1]).c_str());
    std::printf("  %-24s %-40s %s\n", "signal", n0.c_str(), n1.c_str());
    // rows matched by (group, signal name); each group: the first trace's rows in order, then
    // the rows only the second has
    struct Row {
      int g;
      std::string name, value;
    };
    auto rows_of = [](const Trace& tr) {
      std::vector<Row> r;
      int g = 0;
      bool seen = false;
      for (const auto& x : tr.rows) {
        if (x.name == "group") {
          g = seen ? g + 1 : 0;
          seen = true;
          continue;
        }
        r.push_back(Row{g, x.name, x.value});
      }
      return r;
    };
    const std::vector<Row> r0 = rows_of(t[0]), r1 = rows_of(t[1]);
    int groups = 0;
    for (const Row& r : r0) groups = std::max(groups, r.g + 1);
    for (const Row& r : r1) groups = std::max(groups, r.g + 1);
    std::vector<bool> used(r1.size(), false);
    bool marked = false;
    auto row = [&](const std::string& name, const std::string& x, const std::string& y) {
      const bool differ = x != y;
      std::printf("  %-24s %-40s %s%s\n", name.c_str(), x.c_str(), y.c_str(),
                  differ && !marked ? "   <-- first difference" : "");
      if (differ) marked = true;
    };
    for (int g = 0; g < groups; ++g) {
      if (groups > 1) std::printf("  -- group %d (products %d.. of %s, %d.. of %s)\n", g, g * dv[0].n_fma, n0.c_str(),
                                  g * dv[1].n_fma, n1.c_str());
      for (const Row& r : r0) {
        if (r.g != g) continue;
        std::string other = "-";
        for (size_t j = 0; j < r1.size(); ++j)
          if (!used[j] && r1[j].g == g && r1[j].name == r.name) {
            used[j] = true;
            other = r1[j].value;
            break;
          }
        row(r.name, r.value, other);
      }
      for (size_t j = 0; j < r1.size(); ++j)
        if (!used[j] && r1[j].g == g) {
          used[j] = true;
          row(r1[j].name, "-", r1[j].value);
        }
    }
    std::printf("\nd = 0x%s  %s   (%s)\nd = 0x%s  %s   (%s)\n%s\n", hex(dv[0].out_fmt, ds[0]).c_str(),
                to_decimal(dv[0].out_fmt, ds[0]).c_str(), n0.c_str(), hex(dv[1].out_fmt, ds[1]).c_str(),
                to_decimal(dv[1].out_fmt, ds[1]).c_str(), n1.c_str(),
                ds[0] == ds[1] && dv[0].out_fmt == dv[1].out_fmt ? "same d" : "d differs");
  }
};

// ---------------------------------------------------------------------------- validate / run

/// The options of the commands that stream a/b/c(/d) files through a preset.
struct FileArgs {
  DatapathArgs dpa;
  std::string a, b, c, d;
  ScaleFiles scales;
  int k = 0;
  unsigned threads = 0;
  bool zero_c = false;
  /// inputs_required false: --a/--b/--c may be left out (validate --regen draws them again).
  void add(CLI::App* cmd, const std::string& d_help, bool inputs_required = true) {
    dpa.add(cmd);
    for (auto [name, var] : {std::pair<const char*, std::string*>{"--a", &a}, {"--b", &b}, {"--c", &c}}) {
      CLI::Option* o = Program::text(cmd, name, *var, std::string(name + 2) + " file (text, or .npy: docs/vector-format.md)");
      if (inputs_required) o->required();
    }
    Program::text(cmd, "--d", d, d_help)->required();
    Program::text(cmd, "--sa", scales.a, "block scales of a, one line per sample (block-scaled types; default: sa.txt beside the a file)");
    Program::text(cmd, "--sb", scales.b, "block scales of b (default: sb.txt beside the a file)");
    cmd->add_option("--k", k, "the K every a/b line must hold")->check(cli::int_range(1, kMaxK));
    cmd->add_flag("--zero-c", zero_c, "take c = 0 whatever the c file holds");
    threads_option(cmd, threads);
  }
};

struct ValidateCmd : FileArgs {
  int show = 10;
  double eps = 1e-6;
  std::string engine = "model";
  /// --engine rtl: the samples run through the Verilated RTL top of the preset (rtl_model/).
  StreamResult run_rtl(const Datapath& dp) const {
    const SampleSet s = load_sample_set(dp, a, b, c, d, k);
    const ScaleFiles sf = resolve_scale_files(dp, a, scales);  // block scales: sa.txt, sb.txt
    const int ns = scales_per_sample(dp, static_cast<int>(s.K));
    const ScaleFile xa = ns ? read_scale_file(sf.a, ns, dp.scale_fmt) : ScaleFile{}, xb = ns ? read_scale_file(sf.b, ns, dp.scale_fmt) : ScaleFile{};
    for (const auto* x : {&xa, &xb})
      if (ns && x->samples() != s.n)
        throw InputError((x == &xa ? sf.a : sf.b) + ": " + std::to_string(x->samples()) + " samples, the a file has " + std::to_string(s.n));
    std::vector<RtlSample> in(s.n);
    for (size_t i = 0; i < s.n; ++i) {
      in[i].a.assign(s.a.begin() + i * s.K, s.a.begin() + (i + 1) * s.K);
      in[i].b.assign(s.b.begin() + i * s.K, s.b.begin() + (i + 1) * s.K);
      in[i].c = zero_c ? 0 : s.c[i];
      if (ns) in[i].sa.assign(xa.v.begin() + i * ns, xa.v.begin() + (i + 1) * ns), in[i].sb.assign(xb.v.begin() + i * ns, xb.v.begin() + (i + 1) * ns);
    }
    const std::vector<uint64_t> got = rtl_run(dp, in);
    StreamResult r;
    r.n = s.n;
    r.K = s.K;
    r.c_rounded = s.c_rounded;
    for (size_t i = 0; i < s.n; ++i) {
      if (got[i] == s.d[i]) continue;
      ++r.mismatches;
      if (r.first.size() < static_cast<size_t>(show)) {
        StreamMismatch m;
        m.index = i;
        m.line = m.d_line = i + 1;
        m.got = got[i];
        m.want = s.d[i];
        m.a = in[i].a;
        m.b = in[i].b;
        m.c = in[i].c;
        m.sa = in[i].sa;
        m.sb = in[i].sb;
        r.first.push_back(m);
      }
    }
    return r;
  }
  std::string regen, strategy = "expmant";
  bool subnormal = false;
  /// --regen SEED: the inputs of `matcore sample --seed SEED` drawn again, only d read.
  StreamResult run_regen(const Datapath& dp) const {
    if (!a.empty() || !b.empty() || !c.empty() || !scales.a.empty() || !scales.b.empty())
      throw UsageError("--regen draws a, b and c again: give no --a, --b, --c, --sa or --sb");
    if (engine == "rtl") throw UsageError("--regen runs the model engine (--engine rtl reads files)");
    if (dist::size() > 1) throw UsageError("--regen runs in one process (it draws the one stream of the set); use its threads");
    SampleSpec s = sample_spec_for(dp, subnormal);
    if (k) s.K = k;
    s.seed = static_cast<uint32_t>(cli::to_int("--regen", regen, 0, 2147483647));
    s.strategy = strategy == "bits" ? Strategy::Bits : Strategy::ExpMant;
    return validate_regen(dp, s, d, zero_c, threads, static_cast<size_t>(show));
  }
  int run() const {
    const Datapath dp = dpa.resolve();
    if (!regen.empty()) return report(dp, run_regen(dp));
    if (a.empty() || b.empty() || c.empty()) throw UsageError("--a, --b and --c are required (or --regen SEED)");
    if (engine == "rtl") return report(dp, run_rtl(dp));
    return report(dp, validate_files(dp, a, b, c, d, k, zero_c, threads, show, true, scales));
  }
  int report(const Datapath& dp, const StreamResult& r) const {
    if (r.c_rounded.count && dist::rank() == 0)
      std::fprintf(stderr, "note: %s\n", r.c_rounded.note(regen.empty() ? c : "the regenerated c.txt", dp).c_str());
    const Format& df = stored_out(dp);
    for (const StreamMismatch& m : r.first) {
      // (explain --mismatches reads the model engine's lines: keep "model ... hardware")
      std::printf(engine == "rtl" ? "mismatch sample %llu (a line %llu, d line %llu): rtl 0x%s (%s) d file 0x%s (%s)\n"
                                  : "mismatch sample %llu (a line %llu, d line %llu): model 0x%s (%s) hardware 0x%s (%s)\n",
                  static_cast<unsigned long long>(m.index), static_cast<unsigned long long>(m.line),
                  static_cast<unsigned long long>(m.d_line), hex(df, m.got).c_str(),
                  to_decimal(df, m.got).c_str(), hex(df, m.want).c_str(), to_decimal(df, m.want).c_str());
      std::printf("  a:");
      for (uint64_t v : m.a) std::printf(" %s", hex(dp.a_fmt, v).c_str());
      std::printf("\n  b:");
      for (uint64_t v : m.b) std::printf(" %s", hex(dp.b_fmt, v).c_str());
      std::printf("\n  c: %s\n", hex(dp.out_fmt, m.c).c_str());
      if (!m.sa.empty()) {
        std::printf("  sa:");
        for (uint64_t v : m.sa) std::printf(" %s", hex(dp.scale_fmt, v).c_str());
        std::printf("\n  sb:");
        for (uint64_t v : m.sb) std::printf(" %s", hex(dp.scale_fmt, v).c_str());
        std::printf("\n");
      }
    }
    std::printf("samples=%llu mismatches=%llu p_upper=%.3g\n", static_cast<unsigned long long>(r.n),
                static_cast<unsigned long long>(r.mismatches), mismatch_upper_bound(r.n, r.mismatches, eps));
    return r.mismatches ? 1 : 0;
  }
};

// -------------------------------------------------------------------------------------- run
// The model as a stand-in device: d for every sample of a/b/c files.
struct RunCmd : FileArgs {
  int run() const {
    check_not_input(d, "--d", {a, b, c});
    const Datapath dp = dpa.resolve();
    const StreamResult r = stream_files(dp, a, b, c, "", d, k, zero_c, threads, 0, true, scales);
    if (dist::rank() != 0) return 0;  // under mpirun rank 0 reports
    if (r.c_rounded.count) std::fprintf(stderr, "note: %s\n", r.c_rounded.note(c, dp).c_str());
    std::fprintf(stderr, "wrote d of %llu samples (%s) to %s\n", static_cast<unsigned long long>(r.n),
                 dp.name().c_str(), d.c_str());
    return 0;
  }
};

// ----------------------------------------------------------------------------------- sample
struct SampleCmd {
  std::string arch, type, strategy = "expmant", out, ea, eb, ec, es;
  int k = 0;
  unsigned long long n = 0;
  unsigned seed = 0, threads = 0;
  bool subnormal = false, widen = false, npy = false;
  int run() const {
    SampleSpec s;
    if (!arch.empty()) {
      DatapathArgs d;
      d.arch = arch;
      d.type = type;
      s = sample_spec_for(d.resolve());  // the preset's formats (and its k unless --k is given)
    } else {
      const auto ts = split_commas(type);
      if (ts.size() > 2) throw UsageError("--type takes one type or a pair TA,TB");
      try {
        s.a_fmt = format_by_name(ts[0]);
        s.b_fmt = format_by_name(ts.size() == 2 ? ts[1] : ts[0]);
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
      s.c_fmt = s.a_fmt == kBinary64 ? kBinary64 : kBinary32;
    }
    if (k) s.K = k;
    else if (arch.empty()) throw UsageError("give --k (or --arch to use its k)");
    s.N = n;
    s.strategy = strategy == "bits" ? Strategy::Bits : Strategy::ExpMant;
    s.seed = seed;
    default_ranges(s, subnormal);
    auto range = [&](const char* key, const std::string& v, int& lo, int& hi) {
      if (v.empty()) return;
      const auto p = split_commas(v);
      if (p.size() != 2) throw UsageError(std::string("--") + key + " takes LO,HI (got '" + excerpt(v) + "')");
      lo = static_cast<int>(cli::to_int(std::string("--") + key, p[0], -20000, 20000));
      hi = static_cast<int>(cli::to_int(std::string("--") + key, p[1], -20000, 20000));
      if (lo > hi) throw UsageError(std::string("--") + key + ": LO > HI");
    };
    range("ea", ea, s.ea_lo, s.ea_hi);
    range("eb", eb, s.eb_lo, s.eb_hi);
    range("ec", ec, s.ec_lo, s.ec_hi);
    if (!es.empty() && s.scale_block == 0) throw UsageError("--es: the type has no block scales");
    range("es", es, s.es_lo, s.es_hi);
    if (s.scale_block && (s.es_lo < s.scale_fmt.emin() - (s.scale_fmt.enc == Encoding::Pow2 ? 1 : 0) ||
                          s.es_hi > s.scale_fmt.emax()))
      throw UsageError("--es: the exponents of " + s.scale_fmt.name + " are " +
                       std::to_string(s.scale_fmt.emin() - (s.scale_fmt.enc == Encoding::Pow2 ? 1 : 0)) + ".." +
                       std::to_string(s.scale_fmt.emax()));
    s.native = !widen;
    if (npy) {
      if (widen) throw UsageError("--npy writes the formats' own patterns: no --widen");
      write_samples_npy(s, out, threads);
      std::printf("wrote %llu samples (k=%d, %s) to %s/{a,b,c%s}.npy\n", n, s.K, strategy.c_str(), out.c_str(),
                  s.scale_block ? ",sa,sb" : "");
      return 0;
    }
    write_samples(s, out, threads, true);
    std::printf("wrote %llu samples (k=%d, %s) to %s/{a,b,c%s}.txt\n", n, s.K, strategy.c_str(), out.c_str(),
                s.scale_block ? ",sa,sb" : "");
    return 0;
  }
};


// -------------------------------------------------------------------------- trace
// The SystemC model is a separate program (it elaborates once per process): matcore-sc.
/// matcore trace --svg FILE: the picture of svg.hpp for the samples (one panel per datapath and
/// sample; one or two datapaths, at most 8 samples), from the fast model's trace.
int svg_trace(const std::vector<std::string>& rest) {
  CLI::App app("matcore trace --svg", "trace");
  DotCmd dc;
  std::string file, samples = "0";
  dc.dpa.add(&app, true);
  app.add_option("--dp", dc.dps)->check(cli::kNotAnOption);
  Program::text(&app, "--a", dc.a, "a values V,V,...");
  Program::text(&app, "--b", dc.b, "b values");
  Program::text(&app, "--c", dc.c, "c (default 0)");
  Program::text(&app, "--sa", dc.sa, "block scales of a (block-scaled types; --file: DIR/sa.txt)");
  Program::text(&app, "--sb", dc.sb, "block scales of b");
  Program::text(&app, "--file", file, "directory with a.txt b.txt c.txt [d.txt]");
  Program::text(&app, "--samples", samples, "0-based sample indices I,J,... of --file (default 0)");
  Program::text(&app, "--svg", dc.svg, "the SVG file")->required();
  if (!cli::parse_sub_app(app, rest, "trace --svg")) return 0;
  const std::vector<Datapath> dv = dc.datapaths();
  std::vector<SvgPanel> panels;
  for (const Datapath& dp : dv) {
    const std::vector<ExplainSample> xs = command_line_samples(dp, file, samples, false, dc.a, dc.b, dc.c, dc.sa, dc.sb);
    if (xs.size() > 8) throw UsageError("--svg draws at most 8 samples");
    for (const ExplainSample& x : xs) {
      SvgPanel p{dp, {}, 0};
      const ScaleRefs sr = scale_refs(x.sa, x.sb);
      p.d = dot(dp, x.a.data(), x.b.data(), static_cast<int>(x.a.size()), x.c, sr, &p.trace);
      panels.push_back(p);
    }
  }
  OutputFile f(dc.svg);
  f.write(trace_svg(panels));
  f.commit();
  std::printf("wrote %s (%zu panels)\n", dc.svg.c_str(), panels.size());
  return 0;
}

int exec_trace(const char* self, const std::vector<std::string>& rest) {
  for (const std::string& w : rest)
    if (w == "--svg" || w.rfind("--svg=", 0) == 0) return svg_trace(rest);
  for (size_t i = 0; i < rest.size(); ++i)
    if ((rest[i] == "--engine" && i + 1 < rest.size() && rest[i + 1] == "rtl") || rest[i] == "--engine=rtl")
      return rtl_trace(rest);
  for (const std::string& w : rest)
    if (w == "-h" || w == "--help")  // the SystemC model's options follow (matcore-sc trace --help)
      std::printf("matcore trace: one sample set, three views under the same signal names\n"
                  "  (default)     the SystemC model: stage text, VCD/FST, GTKWave layout (options below)\n"
                  "  --engine rtl  the Verilated RTL top: a VCD in the same form (matcore trace --engine rtl --help)\n"
                  "  --svg FILE    a picture of the bits at every stage, one or two datapaths (matcore trace --svg F --help)\n\n");
  std::string me(self);
  const size_t slash = me.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : me.substr(0, slash);
  for (const std::string& cand : {dir + "/matcore-sc", dir + "/sc/matcore-sc"}) {
    if (::access(cand.c_str(), X_OK) != 0) continue;
    std::vector<std::string> words{cand, "trace"};
    words.insert(words.end(), rest.begin(), rest.end());
    std::vector<char*> args;
    for (std::string& w : words) args.push_back(&w[0]);
    args.push_back(nullptr);
    std::fflush(stdout);
    ::execv(cand.c_str(), args.data());
    throw InputError("cannot run " + cand + " (" + std::strerror(errno) + ")");
  }
  throw InputError("the SystemC model (matcore-sc) was not built: install libsystemc-dev "
                   "(scripts/install-deps.sh) and rebuild; 'matcore dot --trace' prints the stage "
                   "values without SystemC");
}

// ------------------------------------------------------------------------------------- show
/// A datapath (preset, file, --set changes) as a datapath file; --fields: the field table.
struct ShowCmd {
  DatapathArgs dpa;
  bool fields = false;
  int run() const {
    if (fields) {
      if (dpa.given()) throw UsageError("--fields lists the fields of every datapath; give it alone");
      std::printf("%s", fields_markdown().c_str());
      return 0;
    }
    if (!dpa.given()) throw UsageError("give --arch A --type T or --datapath FILE (or --fields)");
    std::printf("%s", datapath_to_toml(dpa.resolve()).c_str());
    return 0;
  }
};

}  // namespace

/// validate: its options, the command's state in val (alive while p runs).
static void add_validate_command(Program& p, ValidateCmd& val) {
  CLI::App* c = p.command("validate", "run a preset over recorded samples and count those whose d differs bit for bit",
                "  matcore validate --arch a100 --type fp16 --a a.txt --b b.txt --c c.txt --d d.txt\n"
                "  (last line: samples=N mismatches=M p_upper=P; exit 1 when M > 0)",
                [&] { return val.run(); });
  val.add(c, "d file (the hardware's results)", false);
  Program::text(c, "--regen", val.regen,
                "SEED: draw the inputs of `matcore sample --seed SEED` again instead of reading a/b/c (same --k, "
                "--strategy, --subnormal and the default exponent ranges; n from the d file)");
  c->add_option("--strategy", val.strategy, "with --regen: expmant (default) or bits")->check(CLI::IsMember({"expmant", "bits"}));
  c->add_flag("--subnormal", val.subnormal, "with --regen: the subnormal exponent ranges of sample --subnormal");
  c->add_option("--show", val.show, "print the first N mismatches (default 10)")->check(cli::int_range(0, 1000000));
  c->add_option("--eps", val.eps, "mismatch rate for the bound p_upper (default 1e-6)")
      ->check(CLI::Range(1e-300, 0.999999));
  c->add_option("--engine", val.engine,
                "model (the fast C++ model, default) or rtl (the Verilated RTL top, built with verilator on first use)")
      ->check(CLI::IsMember({"model", "rtl"}));
}

/// sample: its options, the command's state in sm (alive while p runs).
static void add_sample_command(Program& p, SampleCmd& sm) {
  CLI::App* c = p.command("sample", "random a/b/c files (Algorithm 3 of the paper, mt19937)",
                "  matcore sample --arch mi300x --type fp16 --n 1000000 --out run1\n"
                "  matcore sample --type e4m3,e5m2 --k 32 --n 1000 --subnormal --out run2",
                [&] { return sm.run(); });
  Program::text(c, "--arch", sm.arch, "take the formats and k of this preset");
  Program::text(c, "--type", sm.type, "input type TA or pair TA,TB")->required();
  c->add_option("--k", sm.k, "values per sample")->check(cli::int_range(1, 1 << 16));
  c->add_option("--n", sm.n, "number of samples")->required()->check(cli::int_range(1, 1000000000000LL));
  Program::text(c, "--out", sm.out, "output directory (a.txt, b.txt, c.txt)")->required();
  c->add_option("--strategy", sm.strategy, "expmant (default) or bits")->check(CLI::IsMember({"expmant", "bits"}));
  c->add_flag("--subnormal", sm.subnormal, "exponent ranges that include the subnormals");
  c->add_option("--seed", sm.seed, "mt19937 seed (default 0)")->check(cli::int_range(0, 2147483647));
  Program::text(c, "--ea", sm.ea, "exponent range LO,HI of a");
  Program::text(c, "--eb", sm.eb, "exponent range LO,HI of b");
  Program::text(c, "--ec", sm.ec, "exponent range LO,HI of c");
  Program::text(c, "--es", sm.es, "exponent range LO,HI of the block scales (block-scaled types; default -8,8)");
  c->add_flag("--widen", sm.widen, "write fp8/fp16/bf16 values widened to binary32 (the hwdata form)");
  c->add_flag("--npy", sm.npy, "write the binary form: a.npy, b.npy, c.npy (NumPy arrays of bit patterns; run/validate read them)");
  threads_option(c, sm.threads);
}

int matcore_main(int argc, char** argv) {
  Program p("matcore", "matcore: bit-exact models of GPU matrix-multiply units (AMD CDNA 1/2/3, NVIDIA).\n"
                       "Vector files (a/b/c/d) use the format of docs/vector-format.md; see docs/cli.md.\n"
                       "Exit status: 0 success, 1 mismatches, 2 bad input or usage.");

  ListCmd list;
  CLI::App* c = p.command("list", "architectures, input types, instructions, formats",
                          "  matcore list types --arch mi300x", [&] { return list.run(); });
  c->add_option("topic", list.topic, "what to list")->check(CLI::IsMember({"all", "archs", "types", "instructions", "formats", "presets"}));
  Program::text(c, "--arch", list.arch, "only this architecture");

  ShowCmd show;
  c = p.command("show", "a datapath (preset or file, with --set changes) written as a datapath file",
                "  matcore show --arch mi300x --type fp16 > my.toml   (edit it, then: matcore dot --datapath my.toml ...)\n"
                "  matcore show --arch mi300x --type fp16 --set frac_bits=27,prod_align=rne\n"
                "  matcore show --fields   (every field: values and meaning)",
                [&] { return show.run(); });
  show.dpa.add(c, true);
  c->add_flag("--fields", show.fields, "list the fields of a datapath file (markdown table)");

  add_explore_command(p);

  DotCmd dotc;
  c = p.command("dot", "one dot product d = a.b + c through a preset, optionally with every stage",
                "  matcore dot --arch mi300x --type fp16 --a 2^-12,2^-12 --b 2^-12,2^-12 --c 1 --trace\n"
                "  matcore dot --arch a100,h100 --type fp16 --a 1,2^-24 --b 1,1   (two datapaths side by side)\n"
                "  matcore dot --arch b200 --type nvfp4 --a 6,0.5 --b 4,1 --sa 2^-3 --sb 1.5 --trace   (block scales)\n"
                "  (values: hex bit patterns of the input format, 0x3c00, or exact values: 1.5, 2^-24+2^-25, -inf;\n"
                "   c: a pattern of the accumulator format, 0x3c00 with --out fp16, or an exact value)",
                [&] { return dotc.run(); });
  dotc.dpa.add(c, true);
  c->add_option("--dp", dotc.dps, "a datapath to run beside it, side by side: arch/type or FILE (repeatable; also --arch A,B)")
      ->check(cli::kNotAnOption);
  Program::text(c, "--a", dotc.a, "a values V,V,... (K of them)")->required();
  Program::text(c, "--b", dotc.b, "b values V,V,... (as many as a)")->required();
  c->add_option("--c", dotc.c, "c (default 0); use --c=-inf for values that start with '-' and a letter");
  Program::text(c, "--sa", dotc.sa, "block scales of a (block-scaled types: one per scale_block elements, e.g. 0x7f,2^-3; default 1)");
  Program::text(c, "--sb", dotc.sb, "block scales of b (as --sa)");
  c->add_flag("--trace", dotc.trace, "print the value at every stage");
  Program::text(c, "--svg", dotc.svg, "draw the dot product's bits at every stage (SVG; two datapaths: one above the other)");

  ValidateCmd val;
  add_validate_command(p, val);

  add_matrix_commands(p);

  RunCmd rn;
  c = p.command("run", "the model as a stand-in device: writes d for every sample of a/b/c files",
                "  matcore run --arch mi300x --type fp16 --a r/a.txt --b r/b.txt --c r/c.txt --d r/d.txt",
                [&] { return rn.run(); });
  rn.add(c, "output d file (written complete or not at all)");

  SampleCmd sm;
  add_sample_command(p, sm);

  add_features_command(p);
  add_explain_command(p);

  CLI::App* trace_cmd = nullptr;
  c = p.command("trace", "the SystemC model: stage trace and VCD of samples (runs matcore-sc trace)",
                "  matcore trace --arch mi300x --type fp16 --file run1 --samples 17   (see matcore-sc trace --help)\n"
                "  matcore trace --arch a100 --type fp16 --dp h100/fp16 --a 1,2^-24 --b 1,1 --svg ab.svg   (a picture)",
                [&] { return exec_trace(argv[0], trace_cmd->remaining()); });
  trace_cmd = c;
  c->prefix_command();
  c->set_help_flag();
  c->allow_extras();

  add_hardware_commands(p);
  return p.run(argc, argv);
}
