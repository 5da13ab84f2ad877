// matcore command-line interface. Exit status: 0 success, 1 mismatches, 2 bad input/usage.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "matcore/exact.hpp"
#include "matcore/explain.hpp"
#include "matcore/features.hpp"
#include "matcore/instructions.hpp"
#include "matcore/model.hpp"
#include "matcore/options.hpp"
#include "matcore/presets.hpp"
#include "matcore/sample.hpp"
#include "matcore/stats.hpp"
#include "matcore/table.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"

using namespace mc;

namespace {

const char* kUsage =
    "matcore: bit-exact models of GPU matrix-multiply units (AMD CDNA 1/2/3, NVIDIA)\n"
    "\n"
    "usage:\n"
    "  matcore list [archs|types|instructions|formats] [--arch NAME]\n"
    "  matcore dot --arch NAME --type TA[,TB] [--out fp32|fp16] [--variant V] --a V,V,... --b V,V,... [--c V] [--trace]\n"
    "        V: hex bit pattern of the input format (0x3c00) or an exact value (1.5, 2^-24+2^-25, -inf)\n"
    "  matcore validate --arch NAME --type TA[,TB] [--out fp32|fp16] [--variant V] [--k K] [--zero-c]\n"
    "        --a FILE --b FILE --c FILE --d FILE [--show N] [--threads T] [--eps E]\n"
    "        V (variant): NVIDIA instruction class where it matters: mma.sync, wgmma, tcgen05\n"
    "  matcore gemm --arch NAME (--instr INSTR | --type T [--k K]) --A FILE --B FILE [--C FILE]\n"
    "        [--out fp32|fp16] [--D FILE] [--threads T]\n"
    "  matcore mfma --arch NAME --instr INSTR --A FILE --B FILE [--C FILE] [--D FILE]\n"
    "  matcore sample (--type TA[,TB] --k K | --arch NAME --type T [--k K]) --n N --out DIR\n"
    "        [--strategy expmant|bits] [--subnormal] [--seed S] [--ea LO,HI] [--eb LO,HI] [--ec LO,HI]\n"
    "        [--widen]  (fp8/fp16/bf16 values are written in their own format; --widen: as binary32)\n"
    "  matcore run --arch NAME --type T [--out fp32|fp16] [--zero-c] --a FILE --b FILE --c FILE --d OUT\n"
    "        the model as a stand-in device: writes d for every sample\n"
    "  matcore features --arch NAME --type T [--out fp32|fp16] [--variant V] [--k K]\n"
    "  matcore features --type TA[,TB] --k K [--out fp32|fp16] (--emit DIR | --results D_FILE [--compare ARCH])\n"
    "        feature detection (section 4) on a preset, or on a device's results for emitted vectors\n"
    "  matcore explain --arch NAME --type T ... (see 'matcore explain --help')\n"
    "        which single-parameter change of the preset reproduces an observed d\n"
    "  matcore trace --arch NAME --type T ... (the SystemC model: stage trace and VCD)\n"
    "  matcore check-table FILE...     run paper test-vector tables (tb/vectors/*.pvt)\n"
    "\n"
    "Vector files (a/b/c/d) use the format of shared/hwdata/nvidia/README.md; matrix files hold\n"
    "one row per line of binary32 hex patterns (binary64 for fp64). See docs/cli.md.\n";

using Args = Options;

/// The options of `matcore CMD ...`; errors start with "CMD: ".
Args parse_args(int argc, char** argv, const std::vector<std::string>& flags,
                const std::vector<std::string>& valued) {
  return parse_options(argc, argv, flags, valued, true, std::string(argv[1]) + ": ");
}

int parse_int(const std::string& what, const std::string& s, int lo, int hi) {
  return parse_int_option(what, s, lo, hi);
}

std::string hex(const Format& f, uint64_t v) { return to_hex_bits(f, v); }

// ------------------------------------------------------------------------------------- list
int cmd_list(int argc, char** argv) {
  Args a = parse_args(argc, argv, {}, {"arch"});
  const std::string what = a.pos.empty() ? "all" : a.pos[0];
  if (what != "all" && what != "archs" && what != "types" && what != "instructions" && what != "formats")
    throw UsageError("list: unknown topic '" + what + "' (archs, types, instructions, formats)");
  std::vector<std::string> archs = arch_names();
  if (a.has("arch")) {
    find_preset(a.get("arch"), types_of(a.get("arch")).empty() ? "" : types_of(a.get("arch"))[0]);
    archs = {a.get("arch")};
  }
  if (what == "formats" || what == "all") {
    std::printf("formats (name: exponent bits, mantissa bits, bias, encoding):\n");
    for (const char* n : {"binary64", "binary32", "tf32", "binary16", "bf16", "e4m3", "e5m2",
                                  "e4m3fnuz", "e5m2fnuz"}) {
      const Format& f = format_by_name(n);
      std::printf("  %-9s e=%-2d m=%-2d bias=%-4d %s\n", n, f.ebits, f.mbits, f.bias,
                  to_string(f.enc));
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
  if (what == "instructions" || what == "all") {
    std::printf("instructions (name: type, m x n x k, blocks):\n");
    for (const std::string& ar : archs) {
      std::printf("  %s:\n", ar.c_str());
      for (const Instruction* in : instructions_for(ar))
        std::printf("    %-36s %-20s %dx%dx%d%s\n", in->name.c_str(), in->type().c_str(), in->m,
                    in->n, in->k, in->blocks > 1 ? (" x" + std::to_string(in->blocks) + " blocks").c_str() : "");
    }
  }
  return 0;
}

// -------------------------------------------------------------------------------------- dot
int cmd_dot(int argc, char** argv) {
  Args a = parse_args(argc, argv, {"trace"}, {"arch", "type", "out", "variant", "a", "b", "c"});
  const Datapath dp = find_preset(a.need("arch"), a.need("type"), a.get("out"), a.get("variant"));
  const auto as = split_commas(a.need("a")), bs = split_commas(a.need("b"));
  if (as.size() != bs.size())
    throw UsageError("dot: --a has " + std::to_string(as.size()) + " values but --b has " +
                     std::to_string(bs.size()));
  std::vector<uint64_t> av, bv;
  auto operand = [&](const Format& f, const std::string& t, const std::string& what) {
    bool inexact = false;
    uint64_t v;
    try {
      const bool ab = what[0] == 'a' || what[0] == 'b';
      v = ab ? parse_input_operand(f, dp.ingest, t, &inexact) : parse_operand(f, t, &inexact);
    } catch (const std::exception& e) {
      throw InputError(what + ": " + e.what());
    }
    if (inexact)
      std::fprintf(stderr, "note: %s = %s rounded (%s) to %s: 0x%s\n", what.c_str(), t.c_str(),
                   (what[0] == 'a' || what[0] == 'b') && dp.ingest != Rounding::RNE ? to_string(dp.ingest) : "rne",
                   f.name.c_str(), to_hex_bits(f, v).c_str());
    return v;
  };
  for (size_t i = 0; i < as.size(); ++i) {
    av.push_back(operand(dp.a_fmt, as[i], "a" + std::to_string(i + 1)));
    bv.push_back(operand(dp.b_fmt, bs[i], "b" + std::to_string(i + 1)));
  }
  const Format& cf = dp.out_fmt == kBinary64 ? kBinary64 : kBinary32;
  uint64_t c = operand(cf, a.get("c", "0"), "c");
  if (dp.out_fmt == kBinary64) {
  } else {
    c = c_from_binary32(dp, c);
  }
  Trace t;
  const uint64_t d = dot(dp, av.data(), bv.data(), static_cast<int>(av.size()), c,
                         a.has("trace") ? &t : nullptr);
  if (a.has("trace")) {
    std::printf("preset %s: n_fma=%d, %zu products\n", dp.name().c_str(), dp.n_fma, av.size());
    for (const auto& r : t.rows) std::printf("  %-24s %s\n", r.first.c_str(), r.second.c_str());
  }
  std::printf("d = 0x%s  %s\n", hex(dp.out_fmt, d).c_str(), to_decimal(dp.out_fmt, d).c_str());
  return 0;
}

// --------------------------------------------------------------------------------- validate

int cmd_validate(int argc, char** argv) {
  Args a = parse_args(argc, argv, {"zero-c"},
                      {"arch", "type", "out", "variant", "k", "a", "b", "c", "d", "show", "threads", "eps"});
  const Datapath dp = find_preset(a.need("arch"), a.need("type"), a.get("out"), a.get("variant"));
  const int expect_k = a.has("k") ? parse_int("k", a.get("k"), 1, 1 << 20) : 0;
  const int show = a.has("show") ? parse_int("show", a.get("show"), 0, 1000000) : 10;
  const unsigned threads = a.has("threads") ? parse_int("threads", a.get("threads"), 1, 1024) : 0;
  double eps = 1e-6;
  if (a.has("eps")) {
    char* end = nullptr;
    eps = std::strtod(a.get("eps").c_str(), &end);
    if (*end || !(eps > 0 && eps < 1)) throw UsageError("validate: --eps must be in (0,1)");
  }
  const StreamResult r = validate_files(dp, a.need("a"), a.need("b"), a.need("c"), a.need("d"),
                                        expect_k, a.has("zero-c"), threads, show, true);
  const Format& df = dp.out_fmt == kBinary64 ? kBinary64 : kBinary32;
  for (const StreamMismatch& m : r.first) {
    std::printf("mismatch sample %llu (line %llu): model 0x%s (%s) hardware 0x%s (%s)\n",
                static_cast<unsigned long long>(m.index), static_cast<unsigned long long>(m.line),
                hex(df, m.got).c_str(), to_decimal(df, m.got).c_str(), hex(df, m.want).c_str(),
                to_decimal(df, m.want).c_str());
    std::printf("  a:");
    for (uint64_t v : m.a) std::printf(" %s", hex(dp.a_fmt, v).c_str());
    std::printf("\n  b:");
    for (uint64_t v : m.b) std::printf(" %s", hex(dp.b_fmt, v).c_str());
    std::printf("\n  c: %s\n", hex(dp.out_fmt, m.c).c_str());
  }
  std::printf("samples=%llu mismatches=%llu p_upper=%.3g\n", static_cast<unsigned long long>(r.n),
              static_cast<unsigned long long>(r.mismatches), mismatch_upper_bound(r.n, r.mismatches, eps));
  return r.mismatches ? 1 : 0;
}

// ---------------------------------------------------------------------------- gemm / mfma
/// A matrix file is an a/b vector file with one row per line (widened or native values).
Matrix read_matrix(const std::string& path, const Format& f, Rounding ingest) {
  const AbFile file = read_ab_file(path, 0, f);
  Matrix M;
  M.rows = static_cast<int>(file.samples());
  M.cols = file.K;
  M.v.resize(file.v.size());
  for (size_t i = 0; i < file.v.size(); ++i)
    M.v[i] = ab_operand(f, ingest, file, i,
                        path + ":" + std::to_string(i / file.K + 1) + ": column " + std::to_string(i % file.K + 1));
  return M;
}

void write_matrix(const std::string& path, const Matrix& M, const Datapath& dp) {
  std::FILE* fp = path.empty() ? stdout : std::fopen(path.c_str(), "w");
  if (!fp) throw InputError(path + ": cannot open file for writing");
  const Format& f = dp.out_fmt == kBinary64 ? kBinary64 : kBinary32;
  std::fprintf(fp, "# matcore %s D (%d x %d), %s bit patterns\n", dp.name().c_str(), M.rows, M.cols,
               f.name.c_str());
  for (int r = 0; r < M.rows; ++r) {
    for (int c = 0; c < M.cols; ++c)
      std::fprintf(fp, "%s%s", c ? " " : "", to_hex_bits(f, widen_result(dp, M.at(r, c))).c_str());
    std::fputc('\n', fp);
  }
  if (fp != stdout) std::fclose(fp);
}

Matrix read_c(const Args& a, const Datapath& dp, int rows, int cols) {
  const int w = stored_width(dp.out_fmt);
  if (!a.has("C")) return Matrix{rows, cols, std::vector<uint64_t>(static_cast<size_t>(rows) * cols, 0)};
  Matrix C = read_matrix(a.get("C"), w == 64 ? kBinary64 : kBinary32, Rounding::RNE);
  if (w == 32)
    for (auto& x : C.v) x = c_from_binary32(dp, x);
  return C;
}

int cmd_gemm(int argc, char** argv, bool single) {
  Args a = parse_args(argc, argv, {}, {"arch", "type", "instr", "k", "out", "variant", "A", "B", "C", "D", "threads"});
  const std::string arch = a.need("arch");
  Datapath dp;
  int instr_k;
  const Instruction* in = nullptr;
  if (a.has("instr") || single) {
    in = &find_instruction(a.need("instr"));
    dp = instruction_datapath(arch, *in, a.get("out"));
    instr_k = in->k;
  } else {
    dp = find_preset(arch, a.need("type"), a.get("out"), a.get("variant"));
    instr_k = a.has("k") ? parse_int("k", a.get("k"), 1, 1 << 16) : dp.k_default;
  }
  const Matrix A = read_matrix(a.need("A"), dp.a_fmt, dp.ingest);
  const Matrix B = read_matrix(a.need("B"), dp.b_fmt, dp.ingest);
  if (single) {
    const Matrix C = read_c(a, dp, in->blocks * in->m, in->n);
    write_matrix(a.get("D"), mfma(dp, *in, A, B, C), dp);
    return 0;
  }
  if (A.cols != B.rows)
    throw InputError(a.get("A") + ": A has " + std::to_string(A.cols) + " columns but " + a.get("B") +
                     " has " + std::to_string(B.rows) + " rows");
  const Matrix C = read_c(a, dp, A.rows, B.cols);
  if (C.rows != A.rows || C.cols != B.cols)
    throw InputError(a.get("C") + ": C must be " + std::to_string(A.rows) + " x " + std::to_string(B.cols));
  const unsigned th = a.has("threads") ? parse_int("threads", a.get("threads"), 1, 1024) : 0;
  write_matrix(a.get("D"), gemm(dp, instr_k, A, B, C, th), dp);
  return 0;
}

// -------------------------------------------------------------------------------------- run
// The model as a stand-in device: d for every sample of a/b/c files.
int cmd_run(int argc, char** argv) {
  Args a = parse_args(argc, argv, {"zero-c"}, {"arch", "type", "out", "variant", "k", "a", "b", "c", "d", "threads"});
  const Datapath dp = find_preset(a.need("arch"), a.need("type"), a.get("out"), a.get("variant"));
  const int expect_k = a.has("k") ? parse_int("k", a.get("k"), 1, 1 << 20) : 0;
  const unsigned threads = a.has("threads") ? parse_int("threads", a.get("threads"), 1, 1024) : 0;
  const StreamResult r = stream_files(dp, a.need("a"), a.need("b"), a.need("c"), "", a.need("d"),
                                      expect_k, a.has("zero-c"), threads, 0, true);
  std::fprintf(stderr, "wrote d of %llu samples (%s) to %s\n", static_cast<unsigned long long>(r.n),
               dp.name().c_str(), a.get("d").c_str());
  return 0;
}

// ----------------------------------------------------------------------------------- sample
int cmd_sample(int argc, char** argv) {
  Args a = parse_args(argc, argv, {"subnormal", "widen"},
                      {"type", "arch", "k", "n", "strategy", "seed", "out", "ea", "eb", "ec", "threads"});
  SampleSpec s;
  std::string type = a.need("type");
  if (a.has("arch")) {
    // the preset's formats (and its k unless --k is given)
    s = sample_spec_for(find_preset(a.get("arch"), type));
  } else {
    const auto ts = split_commas(type);
    if (ts.size() > 2) throw UsageError("sample: --type takes one type or a pair TA,TB");
    s.a_fmt = format_by_name(ts[0]);
    s.b_fmt = format_by_name(ts.size() == 2 ? ts[1] : ts[0]);
    s.c_fmt = s.a_fmt == kBinary64 ? kBinary64 : kBinary32;
  }
  if (a.has("k")) s.K = parse_int("k", a.get("k"), 1, 1 << 16);
  else if (!a.has("arch")) throw UsageError("sample: give --k (or --arch to use its k)");
  const std::string nstr = a.need("n");
  char* end = nullptr;
  const unsigned long long n = std::strtoull(nstr.c_str(), &end, 10);
  if (*end || n == 0 || n > 1000000000000ULL) throw UsageError("sample: --n must be a positive integer");
  s.N = n;
  const std::string st = a.get("strategy", "expmant");
  if (st == "expmant") s.strategy = Strategy::ExpMant;
  else if (st == "bits") s.strategy = Strategy::Bits;
  else throw UsageError("sample: --strategy must be expmant or bits");
  s.seed = a.has("seed") ? static_cast<uint32_t>(parse_int("seed", a.get("seed"), 0, 2147483647)) : 0;
  default_ranges(s, a.has("subnormal"));
  auto range = [&](const char* key, int& lo, int& hi) {
    if (!a.has(key)) return;
    const auto v = split_commas(a.get(key));
    if (v.size() != 2) throw UsageError(std::string("sample: --") + key + " takes LO,HI");
    lo = parse_int(key, v[0], -20000, 20000);
    hi = parse_int(key, v[1], -20000, 20000);
    if (lo > hi) throw UsageError(std::string("sample: --") + key + ": LO > HI");
  };
  range("ea", s.ea_lo, s.ea_hi);
  range("eb", s.eb_lo, s.eb_hi);
  range("ec", s.ec_lo, s.ec_hi);
  const unsigned th = a.has("threads") ? parse_int("threads", a.get("threads"), 1, 1024) : 0;
  s.native = !a.has("widen");
  const std::string dir = a.need("out");
  write_samples(s, dir, th, true);
  std::printf("wrote %llu samples (k=%d, %s) to %s/{a,b,c}.txt\n", n, s.K, st.c_str(), dir.c_str());
  return 0;
}

// --------------------------------------------------------------------------------- features
// Model mode: --arch A --type T; hardware mode: --type T --k K --emit DIR, then
// --type T --k K --results D_FILE (the device's d for DIR/a.txt, b.txt, c.txt).
int cmd_features(int argc, char** argv) {
  Args a = parse_args(argc, argv, {}, {"arch", "type", "out", "variant", "k", "emit", "results", "compare"});
  const std::string type = a.need("type");
  const std::string out = a.get("out", "fp32");
  if (out != "fp32" && out != "fp16" && out != "fp64")
    throw UsageError("features: --out must be fp32, fp16 or fp64");
  if (a.has("arch") && !a.has("emit") && !a.has("results")) {
    const Datapath dp = find_preset(a.get("arch"), type, a.has("out") ? out : "", a.get("variant"));
    const int K = a.has("k") ? parse_int("k", a.get("k"), 2, 4096) : dp.k_default;
    const DetectedFeatures det = detect_features(dp, K);
    std::printf("features of %s (k = %d), detected from %zu probe vectors:\n%s", dp.name().c_str(), K,
                det.samples, format_feature_table(det).c_str());
    const std::string diff = compare_features(dp, det.dp);
    std::printf("%s\n", diff.empty() ? "detected parameters = preset parameters"
                                      : ("differences from the preset:\n" + diff).c_str());
    return diff.empty() ? 0 : 1;
  }
  const auto ts = split_commas(type);
  if (ts.size() > 2) throw UsageError("features: --type takes one type or a pair TA,TB");
  const Format& fa = format_by_name(ts[0] == "xf32" ? "tf32" : ts[0]);
  const Format& fb = format_by_name(ts.size() == 2 ? ts[1] : ts[0] == "xf32" ? "tf32" : ts[0]);
  const Format& fo = out == "fp16" ? kBinary16 : out == "fp64" ? kBinary64 : kBinary32;
  const int K = parse_int("k", a.need("k"), 2, 4096);
  const FeatureVectors v = feature_vectors(fa, fb, fo, K, type);
  if (a.has("emit")) {
    const std::string dir = a.get("emit");
    ::mkdir(dir.c_str(), 0777);
    emit_feature_vectors(v, dir);
    std::printf("wrote %zu probe vectors (k = %d) to %s/{a,b,c,manifest}.txt: run them on the device, "
                "then 'matcore features --type %s --k %d --out %s --results D_FILE'\n",
                v.size(), K, dir.c_str(), type.c_str(), K, out.c_str());
    return 0;
  }
  if (!a.has("results")) throw UsageError("features: give --arch (model), --emit DIR or --results FILE");
  const DetectedFeatures det = decide_features(v, read_feature_results(v, a.get("results")));
  std::printf("features detected from %s (%zu probe vectors, %zu reproduced by the detected "
              "datapath):\n%s", a.get("results").c_str(), det.samples, det.reproduced,
              format_feature_table(det).c_str());
  if (a.has("compare")) {
    const Datapath dp = find_preset(a.get("compare"), type, a.has("out") ? out : "", a.get("variant"));
    const std::string diff = compare_features(dp, det.dp);
    std::printf("%s\n", diff.empty() ? ("same as preset " + dp.name()).c_str()
                                      : ("differences from preset " + dp.name() + ":\n" + diff).c_str());
    return diff.empty() ? 0 : 1;
  }
  return 0;
}

// -------------------------------------------------------------------------- trace / explain
int cmd_trace(int argc, char** argv) {
  // The SystemC model is a separate program (it elaborates once per process): matcore-sc.
  std::string self(argv[0]);
  const size_t slash = self.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : self.substr(0, slash);
  for (const std::string& cand : {dir + "/matcore-sc", dir + "/sc/matcore-sc"}) {
    if (::access(cand.c_str(), X_OK) == 0) {
      std::vector<char*> args;
      args.push_back(const_cast<char*>(cand.c_str()));
      for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
      args.push_back(nullptr);
      ::execv(cand.c_str(), args.data());
      throw InputError("trace: cannot run " + cand);
    }
  }
  throw InputError("trace: the SystemC model (matcore-sc) was not built: install libsystemc-dev "
                   "(scripts/install-deps.sh) and rebuild; 'matcore dot --trace' prints the stage "
                   "values without SystemC");
}

// ----------------------------------------------------------------------------- check-table
int cmd_check_table(int argc, char** argv) {
  Args a = parse_args(argc, argv, {"verbose"}, {});
  if (a.pos.empty()) throw UsageError("check-table: no table file given");
  size_t pass = 0, fail = 0, amb_fail = 0;
  for (const std::string& f : a.pos) {
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
        if (r.pass) { ++pass; continue; }
        if (tc.ambiguous) ++amb_fail;
        else ++fail;
        std::printf("%s%s\n", tc.ambiguous ? "[ambiguous] " : "", r.detail.c_str());
      }
    }
  }
  if (amb_fail)
    std::printf("(%zu of the failures are in AMBIGUOUS blocks: see docs/decisions.md)\n", amb_fail);
  std::printf("%zu passed, %zu failed\n", pass, fail + amb_fail);
  return fail + amb_fail ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "list") return cmd_list(argc, argv);
    if (cmd == "dot") return cmd_dot(argc, argv);
    if (cmd == "validate") return cmd_validate(argc, argv);
    if (cmd == "gemm") return cmd_gemm(argc, argv, false);
    if (cmd == "mfma") return cmd_gemm(argc, argv, true);
    if (cmd == "check-table") return cmd_check_table(argc, argv);
    if (cmd == "sample") return cmd_sample(argc, argv);
    if (cmd == "run") return cmd_run(argc, argv);
    if (cmd == "features") return cmd_features(argc, argv);
    if (cmd == "explain") return explain_main(argc, argv);
    if (cmd == "trace") return cmd_trace(argc, argv);
    std::fprintf(stderr, "matcore: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const UsageError& e) {
    const std::string m = e.what();  // parse_args errors start with "CMD: ", value errors do not
    std::fprintf(stderr, "matcore %s%s\n(run 'matcore --help' for usage)\n",
                 m.rfind(cmd + ": ", 0) == 0 ? "" : (cmd + ": ").c_str(), m.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matcore %s: error: %s\n", cmd.c_str(), e.what());
    return 2;
  }
}
