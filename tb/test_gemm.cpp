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
  EXPECT_EQ(amd, 32 + 104);  // CDNA1-3; CDNA4's new f16/bf16 (4), f8f6f4 and scale f8f6f4 (2 x 2 shapes x 25 mixes)
  EXPECT_GT(nv, 10);
  EXPECT_EQ(find_instruction("v_mfma_f32_4x4x4f16").blocks, 16);
  EXPECT_EQ(find_instruction("mfma_f32_32x32x4bf16_1k").k, 4);
  EXPECT_EQ(find_instruction("v_mfma_f32_16x16x32_fp8_bf8").b_type, "e5m2fnuz");
  EXPECT_THROW(find_instruction("v_mfma_f32_64x64x64f16"), std::invalid_argument);
  // every AMD instruction resolves to a preset on every family that has it
  for (const char* arch : {"mi100", "mi210", "mi300x", "mi355x"})
    for (const Instruction* in : instructions_for(arch)) {
      if (in->vendor != "amd") continue;
      EXPECT_NO_THROW(instruction_datapath(arch, *in)) << arch << " " << in->name;
    }
  EXPECT_EQ(instructions_for("mi100").size(), 15u);  // fp32, fp16, bf16 x 5 shapes
  // gfx950: the CDNA3 fp32, fp16, bf16_1k and fp64 MFMAs (17), the new f16/bf16 (4), f8f6f4 and
  // scale f8f6f4 (100); not the xf32 ones (removed) nor the FNUZ fp8 ones
  EXPECT_EQ(instructions_for("mi355x").size(), 17u + 4u + 100u);
  EXPECT_EQ(instruction_datapath("mi355x", find_instruction("v_mfma_f32_32x32x64_f8f6f4.e2m1.e4m3")).type, "e2m1,e4m3");
  EXPECT_EQ(instruction_datapath("mi355x", find_instruction("v_mfma_scale_f32_16x16x128_f8f6f4.e2m1.e4m3")).scale_block, 32);
  EXPECT_THROW(instruction_datapath("mi355x", find_instruction("v_mfma_f32_16x16x8xf32")), std::invalid_argument);
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

// gemm runs the lane kernels a row at a time (B packed per instruction step, the row of A
// repeated): every kernel family, the 32- and 64-bit paths, a width N that is not a multiple of
// the 16 lanes, a K that is not a multiple of the instruction's, and NaN/Inf/zero operands (the
// samples the kernels hand to the reference) give the chained reference dots' bits.
TEST(Gemm, BatchedRowsEqualChainedReferenceDots) {
  struct Case { const char* arch; const char* type; const char* out; };
  for (const Case& cs : {Case{"h100", "fp16", "fp32"}, Case{"mi300x", "fp16", "fp32"}, Case{"mi250", "fp16", "fp32"},
                         Case{"mi100", "bf16", "fp32"}, Case{"mi250", "fp64", "fp64"}, Case{"h100", "fp64", "fp64"},
                         Case{"h100", "e4m3", "fp16"}}) {
    const Datapath dp = find_preset(cs.arch, cs.type, cs.out);
    std::mt19937 rng(7);
    const int ik = dp.k_default, M = 3, N = 37, K = 2 * ik + 3, steps = (K + ik - 1) / ik, Kp = steps * ik;
    Matrix A = random_matrix(M, K, dp.a_fmt, rng, -4, 4), B = random_matrix(K, N, dp.b_fmt, rng, -4, 4);
    Matrix C = random_matrix(M, N, dp.out_fmt, rng, -3, 3);
    const uint64_t inf = uint64_t{(1u << dp.a_fmt.ebits) - 1} << dp.a_fmt.mbits;
    A.at(1, 3) = inf | (uint64_t{1} << (dp.a_fmt.mbits - 1));  // a NaN (an Inf in the formats without NaN is fine too)
    B.at(5, 7) = inf;                                           // Inf (NaN where the format has no Inf)
    A.at(2, 0) = 0;
    const Matrix D = gemm(dp, ik, A, B, C, 2);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        std::vector<uint64_t> a(Kp, 0), b(Kp, 0);
        for (int k = 0; k < K; ++k) a[k] = A.at(i, k), b[k] = B.at(k, j);
        uint64_t acc = C.at(i, j);
        for (int s = 0; s < steps; ++s) acc = dot(dp, &a[s * ik], &b[s * ik], ik, acc);
        ASSERT_EQ(D.at(i, j), acc) << cs.arch << " " << cs.type << " row " << i << " column " << j;
      }
  }
}

TEST(Gemm, ShapeErrors) {
  const Datapath dp = find_preset("mi300x", "fp16");
  const Matrix A{2, 3, std::vector<uint64_t>(6, 0)}, B{2, 2, std::vector<uint64_t>(4, 0)};
  const Matrix C{2, 2, std::vector<uint64_t>(4, 0)};
  EXPECT_THROW(gemm(dp, 16, A, B, C), std::invalid_argument);
}

// Block-scaled GEMM (b200 tcgen05 kind::mxf8f6f4, sm_120a mma.sync block_scale): with unit
// scales it is the unscaled kind::f8f6f4 GEMM of the same types (which runs the lane kernels;
// the scaled path runs the reference stages), and one scale 2^u for every block of row i of A
// and 2^v for column j of B gives 2^(u+v) times that D (with C scaled alike): every alignment
// and rounding of the datapath is relative. mfma of one instruction is the GEMM of its shape.
TEST(Gemm, BlockScaledGemmAndMfma) {
  const Datapath mx = find_preset("b200", "mxf8f6f4.e4m3.e2m1");
  const Datapath f8 = find_preset("b200", "e4m3,e2m1", "", "tcgen05");
  std::mt19937 rng(27);
  const int M = 6, N = 5, K = 96, S = K / 32;  // three instructions of 32, chained through c
  const Matrix A = random_matrix(M, K, kE4M3, rng, -4, 6), B = random_matrix(K, N, kE2M1, rng, 0, 2);
  const Matrix C = random_matrix(M, N, kBinary32, rng, -3, 3);
  const Matrix plain = gemm(f8, 32, A, B, C, 2);
  EXPECT_EQ(gemm(mx, 32, A, B, C, 2).v, plain.v);  // no scales given: unit scales
  std::vector<int> u(M), v(N);
  Matrix SA{M, S, std::vector<uint64_t>(M * S)}, SB{N, S, std::vector<uint64_t>(N * S)}, Cs = C;
  for (int i = 0; i < M; ++i) {
    u[i] = static_cast<int>(rng() % 9) - 4;
    for (int j = 0; j < S; ++j) SA.at(i, j) = static_cast<uint64_t>(127 + u[i]);
  }
  for (int j = 0; j < N; ++j) {
    v[j] = static_cast<int>(rng() % 9) - 4;
    for (int s = 0; s < S; ++s) SB.at(j, s) = static_cast<uint64_t>(127 + v[j]);
  }
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) Cs.at(i, j) = C.at(i, j) + static_cast<uint64_t>(static_cast<int64_t>(u[i] + v[j]) * (int64_t{1} << 23));
  const Matrix D = gemm(mx, 32, A, B, Cs, 1, &SA, &SB);
  EXPECT_EQ(gemm(mx, 32, A, B, Cs, 3, &SA, &SB).v, D.v);  // thread count
  int checked = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const uint64_t d0 = plain.at(i, j), e0 = (d0 >> 23) & 0xFF;
      if (e0 < 20 || e0 > 230) continue;  // zero, tiny or huge: outside the relation
      EXPECT_EQ(D.at(i, j), d0 + static_cast<uint64_t>(static_cast<int64_t>(u[i] + v[j]) * (int64_t{1} << 23))) << i << "," << j;
      ++checked;
    }
  EXPECT_GT(checked, 20);
  // one sm_120a instruction (16 x 8 x 32): the GEMM of its shape, scales per row / column
  const Instruction& in = find_instruction("mma.m16n8k32.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e2m1.ue8m0");
  const Datapath r = instruction_datapath("rtxpro6000", in);
  const Matrix A1 = random_matrix(16, 32, kE4M3, rng, -4, 6), B1 = random_matrix(32, 8, kE2M1, rng, 0, 2);
  const Matrix C1 = random_matrix(16, 8, kBinary32, rng, -3, 3);
  Matrix SA1{16, 1, std::vector<uint64_t>(16)}, SB1{8, 1, std::vector<uint64_t>(8)};
  for (auto& x : SA1.v) x = 120 + rng() % 15;
  for (auto& x : SB1.v) x = 120 + rng() % 15;
  const Matrix D1 = mfma(r, in, A1, B1, C1, &SA1, &SB1);
  EXPECT_EQ(D1.v, gemm(r, 32, A1, B1, C1, 1, &SA1, &SB1).v);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      std::vector<uint64_t> a(32), b(32);
      for (int k = 0; k < 32; ++k) a[k] = A1.at(i, k), b[k] = B1.at(k, j);
      ASSERT_EQ(D1.at(i, j), dot(r, a.data(), b.data(), 32, C1.at(i, j), ScaleRefs{&SA1.v[i], &SB1.v[j]}));
    }
  // shapes and kinds: scales of the wrong shape, an instruction k that splits a block, scales
  // for an unscaled type
  const Matrix bad{M, S + 1, std::vector<uint64_t>(M * (S + 1), 127)};
  EXPECT_THROW(gemm(mx, 32, A, B, C, 1, &bad, &SB), std::invalid_argument);
  EXPECT_THROW(gemm(mx, 48, A, B, C, 1), std::invalid_argument);
  EXPECT_THROW(gemm(f8, 32, A, B, C, 1, &SA, &SB), std::invalid_argument);
  Matrix wide = SA;
  wide.v[0] = 0x1FF;
  EXPECT_THROW(gemm(mx, 32, A, B, C, 1, &wide, &SB), std::invalid_argument);
}

// gemm of block-scaled types through the lane kernels with each sample's scales (ST-FDPA:
// mxf8f6f4 on B200, scale.* on MI355X) and the grouper's kernel (GST-FDPA: nvfp4), with a
// different scale for every row, column and block (a NaN and a zero scale among them), N over
// one block of 16 lanes and K not a multiple of the instruction's (the last step zero-padded
// with unit scales): each element = the reference dot() chained through c, step by step.
TEST(Gemm, BlockScaledGemmEqualsChainedReferenceDots) {
  std::mt19937 rng(99);
  for (const auto& [arch, type] : {std::pair{"b200", "mxf8f6f4.e2m3.e4m3"}, std::pair{"mi355x", "scale.e4m3.e2m1"},
                                   std::pair{"b200", "nvfp4"}, std::pair{"rtxpro6000", "mxf4"}}) {
    const Datapath dp = find_preset(arch, type);
    const int ik = dp.k_default, M = 5, N = 21, K = 2 * ik + dp.scale_block + 3;
    const int S = (K + dp.scale_block - 1) / dp.scale_block, Kp = (K + ik - 1) / ik * ik;
    const Matrix A = random_matrix(M, K, dp.a_fmt, rng, -2, 2), B = random_matrix(K, N, dp.b_fmt, rng, -2, 2);
    const Matrix C = random_matrix(M, N, kBinary32, rng, -3, 3);
    Matrix SA{M, S, std::vector<uint64_t>(M * S)}, SB{N, S, std::vector<uint64_t>(N * S)};
    const uint64_t one = unit_scale_bits(dp.scale_fmt);
    for (Matrix* X : {&SA, &SB})
      for (auto& x : X->v) x = one + ((rng() % 7) << dp.scale_fmt.mbits) - (3 << dp.scale_fmt.mbits);
    SA.at(1, 0) = dp.scale_fmt.mbits ? 0x7F : 0xFF;  // NaN
    SB.at(2, 1) = dp.scale_fmt.mbits ? 0x00 : 0x7F;  // ue4m3: zero; e8m0: 2^0
    const Matrix D = gemm(dp, ik, A, B, C, 2, &SA, &SB);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        std::vector<uint64_t> a(Kp, 0), b(Kp, 0), sa(Kp / dp.scale_block, one), sb(sa.size(), one);
        for (int k = 0; k < K; ++k) a[k] = A.at(i, k), b[k] = B.at(k, j);
        for (int q = 0; q < S; ++q) sa[q] = SA.at(i, q), sb[q] = SB.at(j, q);
        uint64_t acc = C.at(i, j);
        for (int k0 = 0; k0 < Kp; k0 += ik)
          acc = dot(dp, &a[k0], &b[k0], ik, acc, ScaleRefs{&sa[k0 / dp.scale_block], &sb[k0 / dp.scale_block]});
        ASSERT_EQ(D.at(i, j), acc) << dp.name() << " " << i << "," << j;
      }
  }
}
