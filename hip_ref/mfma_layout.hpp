// matcore hardware collectors: register layouts of AMD CDNA MFMA instructions (wave64, no
// CBSZ/ABID/BLGP modifiers), as plain host C++ so that they are unit-tested on any machine
// (hip_ref/test_layouts.cpp) and the device kernels stay trivial.
//
// The rules are the ones written down in core/mfma_instructions.def ("REGISTER LAYOUTS",
// transcribed from ROCm/amd_matrix_instruction_calculator InstCalcGfx9), quoted here:
//
//   Inputs A and B (for B replace i by j and M by N):
//     E    = K / (64 / (M*blocks))        elements of one row held by one lane
//     elem = k % E                        index inside the lane's packed operand
//     lane = i + M*b + (M*blocks)*(k / E)
//     elem -> bits: 32-bit types: VGPR elem; 16-bit: VGPR elem/2, bits [16*(elem%2)+15:16*(elem%2)];
//                   8-bit: VGPR elem/4, bits [8*(elem%4)+7:8*(elem%4)]; 64-bit: pair 0 (E == 1)
//   Output C/D, 32-bit:
//     R = 64/N; P = ceil(64 / (M*N/4))
//     VGPR = b*(M*N/64) + 4*(i / (4*R)) + (i % 4)
//     lane = (b % P)*N + ((i/4) % R)*P*N + j
//   Output C/D, 64-bit (fp64): pair = b*(M*N/64) + (i / R), lane = (b % P)*N + (i % R)*P*N + j,
//     P = ceil(64/(M*N))
//
// Element e of a lane's operand therefore sits at byte e*elem_bytes of that lane's packed
// operand (little endian, element 0 in the low bits), which is how the builtins' vector
// operands (V4h, V2s, V4s, V2f, i64, float, double) are laid out.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

namespace mcc {

struct MfmaShape {
  int m = 0, n = 0, k = 0, blocks = 1;
  int out_bits = 32;  ///< 32 (fp32 C/D) or 64 (fp64 C/D)

  /// Elements of one A (or B) row held by one lane: the builtin's input vector length.
  int e() const { return k / (64 / (m * blocks)); }
  /// C/D registers (32-bit VGPRs, or 64-bit pairs for fp64) per lane.
  int c_regs() const { return m * n * blocks / 64; }

  void check() const {
    if (m <= 0 || m != n || k <= 0 || blocks <= 0 || 64 % (m * blocks) != 0 ||
        k % (64 / (m * blocks)) != 0 || (m * n * blocks) % 64 != 0)
      throw std::invalid_argument("MfmaShape: not a wave64 MFMA shape");
  }
};

/// A[i][k] of block b: the lane and the element index inside the lane's packed operand.
/// B[k][j] of block b: the same rule with i replaced by j and M by N (every MFMA has M == N,
/// which check() asserts), i.e. mfma_ab_pos(s, b, j, k, ...).
inline void mfma_ab_pos(const MfmaShape& s, int b, int i, int k, int* lane, int* elem) {
  const int E = s.e();
  *elem = k % E;
  *lane = i + s.m * b + (s.m * s.blocks) * (k / E);
}

/// C/D[i][j] of block b: the register (32-bit VGPR, or 64-bit pair for fp64) and the lane.
inline void mfma_cd_pos(const MfmaShape& s, int b, int i, int j, int* reg, int* lane) {
  const int R = 64 / s.n;
  if (s.out_bits == 64) {
    const int P = (64 + s.m * s.n - 1) / (s.m * s.n);
    *reg = b * (s.m * s.n / 64) + i / R;
    *lane = (b % P) * s.n + (i % R) * P * s.n + j;
  } else {
    const int P = (64 + s.m * s.n / 4 - 1) / (s.m * s.n / 4);
    *reg = b * (s.m * s.n / 64) + 4 * (i / (4 * R)) + (i % 4);
    *lane = (b % P) * s.n + ((i / 4) % R) * P * s.n + j;
  }
}

}  // namespace mcc
