// Instruction level: every MFMA shape, multi-block instructions, GEMM tiling and k chaining.
#include <gtest/gtest.h>

#include <random>

#include "matcore/instructions.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/vectors.hpp"

using namespace mc;

namespace {
Matrix random_matrix(int r, int c, const Format& f, std::mt19937& rng, int emin, int emax) {
  Matrix m{r, c, std::vector<uint64_t>(static_cast<size_t>(r) * c)};
  for (auto& x : m.v) {
    const int e = emin + static_cast<int>(rng() % (emax - emin + 1));
    const uint64_t mant = rng() & ((uint64_t{1} << f.mbits) - 1);
    x = (static_cast<uint64_t>(rng() & 1) << (f.width() - 1)) |
        (static_cast<uint64_t>(e + f.bias) << f.mbits) | mant;
  }
  return m;
}
}  // namespace

TEST(Instructions, TableCoversTheFamilies) {
  int amd = 0, nv = 0;
  for (const Instruction& i : all_instructions()) (i.vendor == "amd" ? amd : nv)++;
  EXPECT_EQ(amd, 32);
  EXPECT_GT(nv, 10);
  EXPECT_EQ(find_instruction("v_mfma_f32_4x4x4f16").blocks, 16);
  EXPECT_EQ(find_instruction("mfma_f32_32x32x4bf16_1k").k, 4);
  EXPECT_EQ(find_instruction("v_mfma_f32_16x16x32_fp8_bf8").b_type, "e5m2fnuz");
  EXPECT_THROW(find_instruction("v_mfma_f32_64x64x64f16"), std::invalid_argument);
  // every AMD instruction resolves to a preset on every family that has it
  for (const char* arch : {"mi100", "mi210", "mi300x"})
    for (const Instruction* in : instructions_for(arch)) {
      if (in->vendor != "amd") continue;
      EXPECT_NO_THROW(instruction_datapath(arch, *in)) << arch << " " << in->name;
    }
  EXPECT_EQ(instructions_for("mi100").size(), 15u);  // fp32, fp16, bf16 x 5 shapes
  EXPECT_THROW(instruction_datapath("mi100", find_instruction("v_mfma_f64_16x16x4f64")),
               std::invalid_argument);
}

TEST(Instructions, MultiBlockMfmaIsIndependentDots) {
  const Instruction& in = find_instruction("v_mfma_f32_4x4x4f16");
  const Datapath dp = instruction_datapath("mi300x", in);
  std::mt19937 rng(1);
  const Matrix A = random_matrix(16 * 4, 4, kBinary16, rng, -5, 5);
  const Matrix B = random_matrix(16 * 4, 4, kBinary16, rng, -5, 5);
  const Matrix C = random_matrix(16 * 4, 4, kBinary32, rng, -3, 3);
  const Matrix D = mfma(dp, in, A, B, C);
  for (int blk = 0; blk < 16; ++blk)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        uint64_t a[4], b[4];
        for (int k = 0; k < 4; ++k) {
          a[k] = A.at(blk * 4 + i, k);
          b[k] = B.at(blk * 4 + k, j);
        }
        ASSERT_EQ(D.at(blk * 4 + i, j), dot(dp, a, b, 4, C.at(blk * 4 + i, j)));
      }
}

TEST(Gemm, ChainingFollowsTheInstructionK) {
  // H100 fp16: one k=16 instruction aligns 16 products together; two k=8 instructions round
  // in between. c = 1, p1 = 2^-24 (k=0), p9 = 2^-24 (k=8): fused: 1 + 2^-23 exactly;
  // chained: fl_rtz(1 + 2^-24) = 1, then again 1.
  const Datapath dp = find_preset("h100", "fp16");
  Matrix A{1, 16, std::vector<uint64_t>(16, 0)}, B{16, 1, std::vector<uint64_t>(16, 0)};
  A.at(0, 0) = A.at(0, 8) = parse_operand(kBinary16, "2^-12");
  B.at(0, 0) = B.at(8, 0) = parse_operand(kBinary16, "2^-12");
  const Matrix C{1, 1, {0x3F800000}};
  EXPECT_EQ(gemm(dp, 16, A, B, C).at(0, 0), 0x3F800001u);
  const Datapath d8 = instruction_datapath("h100", find_instruction("mma.m16n8k8.f32.f16"));
  EXPECT_EQ(d8.n_fma, 8);
  EXPECT_EQ(gemm(d8, 8, A, B, C).at(0, 0), 0x3F800000u);
}

TEST(Gemm, LargeKEqualsChainedDotsAndIsThreadIndependent) {
  const Datapath dp = find_preset("mi300x", "bf16");
  std::mt19937 rng(2);
  const int M = 7, N = 5, K = 70;  // K not a multiple of 16: zero padded
  const Matrix A = random_matrix(M, K, kBfloat16, rng, -20, 20);
  const Matrix B = random_matrix(K, N, kBfloat16, rng, -20, 20);
  const Matrix C = random_matrix(M, N, kBinary32, rng, -10, 10);
  const Matrix D1 = gemm(dp, 16, A, B, C, 1);
  const Matrix D2 = gemm(dp, 16, A, B, C, 2);
  const Matrix D3 = gemm(dp, 16, A, B, C, 5);
  EXPECT_EQ(D1.v, D2.v);
  EXPECT_EQ(D1.v, D3.v);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      std::vector<uint64_t> a(80, 0), b(80, 0);
      for (int k = 0; k < K; ++k) {
        a[k] = A.at(i, k);
        b[k] = B.at(k, j);
      }
      ASSERT_EQ(D1.at(i, j), dot(dp, a.data(), b.data(), 80, C.at(i, j)));
    }
}

TEST(Gemm, ShapeErrors) {
  const Datapath dp = find_preset("mi300x", "fp16");
  const Matrix A{2, 3, std::vector<uint64_t>(6, 0)}, B{2, 2, std::vector<uint64_t>(4, 0)};
  const Matrix C{2, 2, std::vector<uint64_t>(4, 0)};
  EXPECT_THROW(gemm(dp, 16, A, B, C), std::invalid_argument);
}
