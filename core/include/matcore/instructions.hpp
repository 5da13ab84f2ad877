// matcore: matrix-multiply instructions (AMD MFMA, NVIDIA mma/wgmma/tcgen05) and the tile-level
// model D = A*B + C built on the dot-product datapath.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "matcore/datapath.hpp"

namespace mc {

struct Instruction {
  std::string name;      ///< e.g. "v_mfma_f32_32x32x8f16", "mma.m16n8k16.f32.f16"
  std::string vendor;    ///< "amd" or "nvidia"
  std::string families;  ///< comma list: "cdna1,cdna2,cdna3", "ampere,ada,hopper,..." (or
                         ///< architectures: "rtxpro6000" for its sm_120a-only forms)
  std::string a_type, b_type, out_type;
  int m = 0, n = 0, k = 0, blocks = 1;
  std::string builtin;   ///< AMD clang builtin / NVIDIA PTX mnemonic
  std::string type() const { return a_type == b_type ? a_type : a_type + "," + b_type; }
};

const std::vector<Instruction>& all_instructions();
/// Accepts the name with or without the "v_" prefix; throws std::invalid_argument.
const Instruction& find_instruction(const std::string& name);
/// Instructions that run on an architecture preset (by the preset's family).
std::vector<const Instruction*> instructions_for(const std::string& arch);
/// The datapath of `instr` on `arch` (its family must have the instruction).
Datapath instruction_datapath(const std::string& arch, const Instruction& instr,
                              const std::string& out = "");

/// Matrices as plain row-major arrays of bit patterns.
struct Matrix {
  int rows = 0, cols = 0;
  std::vector<uint64_t> v;
  uint64_t& at(int r, int c) { return v[static_cast<size_t>(r) * cols + c]; }
  uint64_t at(int r, int c) const { return v[static_cast<size_t>(r) * cols + c]; }
};

/// One instruction: for each block b, D_b = A_b * B_b + C_b. A is (blocks*m) x k (block b in
/// rows b*m..), B is (blocks*k) x n, C and D are (blocks*m) x n. A, B hold a_fmt/b_fmt
/// patterns; C and D out_fmt patterns.
/// Block-scaled instructions (dp.scaled()) take the scales: SA one row per row of A, SB one row
/// per column of B (of each block), ceil(k / scale_block) scale_fmt patterns each: the scales of
/// the k-blocks, as sa.txt / sb.txt hold them per sample (docs/vector-format.md).
Matrix mfma(const Datapath& dp, const Instruction& instr, const Matrix& A, const Matrix& B,
            const Matrix& C, const Matrix* SA = nullptr, const Matrix* SB = nullptr);

/// GEMM D = A*B + C of any size (A: M x K, B: K x N, C: M x N) on the datapath, k chained in
/// steps of instr_k (the instruction's k; the partial result is carried in out_fmt as the next
/// c, exactly as a sequence of instructions does). threads = 0: all hardware threads. The
/// result does not depend on the thread count.
/// Block-scaled datapaths: SA (M x ceil(K / scale_block)) and SB (N x ceil(K / scale_block)) as
/// for mfma (nullptr: unit scales); instr_k must be a multiple of scale_block.
Matrix gemm(const Datapath& dp, int instr_k, const Matrix& A, const Matrix& B, const Matrix& C,
            unsigned threads = 0, const Matrix* SA = nullptr, const Matrix* SB = nullptr);

}  // namespace mc
