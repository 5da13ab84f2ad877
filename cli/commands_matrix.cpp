// matcore gemm and mfma: matrices through a preset or one instruction (cli/commands.cpp
// registers them with add_matrix_commands).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "matcore/cli.hpp"
#include "matcore/instructions.hpp"
#include "matcore/output.hpp"
#include "matcore/presets.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"

using namespace mc;
using cli::DatapathArgs;
using cli::Program;
using cli::stored_out;
using cli::threads_option;

namespace {

/// A matrix file is an a/b vector file with one row per line (widened or native values).
Matrix read_matrix(const std::string& path, const Format& f, Rounding ingest) {
  const AbFile file = read_ab_file(path, 0, f);
  Matrix M;
  M.rows = static_cast<int>(file.samples());
  M.cols = file.K;
  M.v.resize(file.v.size());
  for (size_t i = 0; i < file.v.size(); ++i)
    M.v[i] = ab_operand(f, ingest, file, i,
                        path + ":" + std::to_string(file.line_of(i / file.K)) + ": value " +
                            std::to_string(i % file.K + 1));
  return M;
}

/// D as text, one row per line: to the --D file (complete or not at all), or to stdout.
void write_matrix(const std::string& path, const Matrix& M, const Datapath& dp) {
  const Format& f = stored_out(dp);
  std::string text = "# matcore " + dp.name() + " D (" + std::to_string(M.rows) + " x " +
                     std::to_string(M.cols) + "), " + f.name + " bit patterns\n";
  for (int r = 0; r < M.rows; ++r) {
    for (int c = 0; c < M.cols; ++c) {
      if (c) text += ' ';
      text += to_hex_bits(f, widen_result(dp, M.at(r, c)));
    }
    text += '\n';
  }
  if (path.empty()) {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      throw InputError(std::string("standard output: write failed (") + std::strerror(errno) + ")");
    return;
  }
  OutputFile out(path);
  out.write(text);
  out.commit();
}


struct GemmCmd {
  bool single = false;  // mfma: one instruction
  DatapathArgs dpa;
  std::string instr, A, B, C, D, SA, SB;
  int k = 0;
  unsigned threads = 0;

  Matrix read_c(const Datapath& dp, int rows, int cols) const {
    if (C.empty()) return Matrix{rows, cols, std::vector<uint64_t>(static_cast<size_t>(rows) * cols, 0)};
    const AbFile file = read_ab_file(C, 0, stored_out(dp));
    Matrix M{static_cast<int>(file.samples()), file.K, std::vector<uint64_t>(file.v.size())};
    RoundedC rounded;
    for (size_t i = 0; i < file.v.size(); ++i) {
      bool r = false;
      M.v[i] = c_operand(dp, file.v[i], file.width, &r);
      if (r && !rounded.count++) rounded.first_line = file.line_of(i / file.K);
    }
    if (rounded.count) std::fprintf(stderr, "note: %s\n", rounded.note(C, dp).c_str());
    return M;
  }
  /// A scale matrix file (--SA, --SB): one line per row of A / column of B, `per_row` scales each,
  /// in the form of sa.txt (docs/vector-format.md); empty path: none (unit scales).
  static std::unique_ptr<Matrix> read_scales(const std::string& path, const Datapath& dp, int per_row, const char* opt) {
    if (path.empty()) return nullptr;
    if (!dp.scaled()) throw UsageError(std::string(opt) + ": " + dp.name() + " has no block scales");
    const ScaleFile f = read_scale_file(path, per_row, dp.scale_fmt);
    return std::make_unique<Matrix>(Matrix{static_cast<int>(f.samples()), per_row, f.v});
  }
  /// The scale matrices of a block-scaled run: rows_a rows of A's, rows_b of B's, for dot length K.
  void check_scales(const Datapath& dp, const std::unique_ptr<Matrix>& sa, const std::unique_ptr<Matrix>& sb, int rows_a,
                    int rows_b) const {
    if (sa && rows_a >= 0 && sa->rows != rows_a)
      throw InputError(SA + ": " + std::to_string(sa->rows) + " lines, but A has " + std::to_string(rows_a) + " rows");
    if (sb && rows_b >= 0 && sb->rows != rows_b)
      throw InputError(SB + ": " + std::to_string(sb->rows) + " lines, but B has " + std::to_string(rows_b) + " columns");
    if (dp.scaled() && (!sa || !sb))
      std::fprintf(stderr, "note: %s is block-scaled; %s taken as 1 (give --SA and --SB)\n", dp.name().c_str(),
                   !sa && !sb ? "its scales are" : !sa ? "A's scales are" : "B's scales are");
  }
  int run() const {
    if (!D.empty()) check_not_input(D, "--D", {A, B, C, SA, SB});
    Datapath dp;
    int instr_k;
    const Instruction* in = nullptr;
    if (!instr.empty()) {
      if (!dpa.type.empty() || !dpa.file.empty()) throw UsageError("give --instr or --type/--datapath, not both");
      if (dpa.arch.empty()) throw UsageError("--instr needs --arch");
      try {
        in = &find_instruction(instr);
        dp = instruction_datapath(dpa.arch, *in, dpa.out);
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
      dpa.apply_set(dp);  // --set changes the instruction's datapath
      instr_k = in->k;
      if (k) throw UsageError("--k is the instruction's own with --instr");
    } else {
      if (!dpa.given()) throw UsageError("give --instr INSTR, --type T or --datapath FILE");
      dp = dpa.resolve();
      instr_k = k ? k : dp.k_default;
    }
    const Matrix Am = read_matrix(A, dp.a_fmt, dp.ingest);
    const Matrix Bm = read_matrix(B, dp.b_fmt, dp.ingest);
    const int per_row = dp.scaled() ? (Am.cols + dp.scale_block - 1) / dp.scale_block : 0;
    const std::unique_ptr<Matrix> sa = read_scales(SA, dp, per_row, "--SA"), sb = read_scales(SB, dp, per_row, "--SB");
    if (single) {
      const Matrix Cm = read_c(dp, in->blocks * in->m, in->n);
      check_scales(dp, sa, sb, -1, -1);  // mfma checks every shape against the instruction's
      try {
        write_matrix(D, mfma(dp, *in, Am, Bm, Cm, sa.get(), sb.get()), dp);
      } catch (const std::invalid_argument& e) {
        throw InputError(e.what());
      }
      return 0;
    }
    if (Am.cols != Bm.rows)
      throw InputError(A + ": A has " + std::to_string(Am.cols) + " columns but " + B + " has " +
                       std::to_string(Bm.rows) + " rows");
    const Matrix Cm = read_c(dp, Am.rows, Bm.cols);
    if (Cm.rows != Am.rows || Cm.cols != Bm.cols)
      throw InputError(C + ": C is " + std::to_string(Cm.rows) + " x " + std::to_string(Cm.cols) +
                       " but must be " + std::to_string(Am.rows) + " x " + std::to_string(Bm.cols));
    check_scales(dp, sa, sb, Am.rows, Bm.cols);
    try {
      write_matrix(D, gemm(dp, instr_k, Am, Bm, Cm, threads, sa.get(), sb.get()), dp);
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
    return 0;
  }
};

}  // namespace

void add_matrix_commands(Program& p) {
  auto gm = std::make_shared<GemmCmd>(), mf = std::make_shared<GemmCmd>();
  mf->single = true;
  for (const std::shared_ptr<GemmCmd>& g : {gm, mf}) {
    CLI::App* c;
    c = g->single ? p.command("mfma", "one matrix instruction D = A*B + C (all its blocks)",
                              "  matcore mfma --arch mi300x --instr v_mfma_f32_4x4x4f16 --A A.txt --B B.txt --D D.txt",
                              [g] { return g->run(); })
                  : p.command("gemm", "a GEMM D = A*B + C through a preset, k chained as the hardware does",
                              "  matcore gemm --arch mi250 --type bf16_1k --A A.txt --B B.txt --C C.txt --D D.txt",
                              [g] { return g->run(); });
    g->dpa.add(c, true, !g->single);  // mfma: the instruction names the type (no --type, --datapath)
    if (g->single) c->get_option("--arch")->required();
    Program::text(c, "--instr", g->instr, "instruction name (matcore list instructions)");
    if (g->single) c->get_option("--instr")->required();
    else c->add_option("--k", g->k, "k of one instruction (default: the preset's)")->check(cli::int_range(1, 1 << 16));
    Program::text(c, "--A", g->A, "A matrix file, one row per line")->required();
    Program::text(c, "--B", g->B, "B matrix file")->required();
    Program::text(c, "--C", g->C, "C matrix file (default 0)");
    Program::text(c, "--D", g->D, "output file for D (default: standard output)");
    Program::text(c, "--SA", g->SA, "block-scaled types: A's scales, one line per row of A, ceil(k / scale_block) each (as sa.txt)");
    Program::text(c, "--SB", g->SB, "block-scaled types: B's scales, one line per column of B (as sb.txt)");
    if (!g->single) threads_option(c, g->threads);
  }
}
