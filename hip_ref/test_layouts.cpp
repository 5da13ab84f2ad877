// The host half of the hardware collectors, tested without a GPU:
//  * every register / shared-memory layout is a bijection, agrees with the examples quoted in
//    core/mfma_instructions.def and with the PTX ISA's fragment formulas (transcribed here in
//    their forward form: lane, element -> row, column);
//  * the instruction tables name exactly matcore's instructions, with the same shapes and types;
//  * read -> place -> run -> extract is bit-exact: with matcore's model as the "device" (D of
//    every tile element computed from the images), run_samples gives what matcore run gives,
//    and the self-test passes; a device with a wrong layout fails the self-test.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "collect_common.hpp"
#include "matcore/instructions.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/sample.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"
#include "tables.hpp"

using namespace mcc;

namespace {

const Instr& by_name(const std::vector<Instr>& v, const std::string& name) {
  for (const Instr& in : v)
    if (in.name == name) return in;
  throw std::invalid_argument("no instruction " + name);
}

}  // namespace

TEST(Layouts, EveryOperandImageIsABijection) {
  for (const Instr& in : mfma_table()) EXPECT_NO_THROW(check_operands(in)) << in.name;
  for (const Instr& in : nv_table()) EXPECT_NO_THROW(check_operands(in)) << in.name;
  EXPECT_EQ(mfma_table().size(), 32u);
}

TEST(Layouts, MfmaExamplesFromTheDefFile) {
  const auto t = mfma_table();
  int lane, e, reg;
  // [CALC] README: 4x4x4f16  A[1][2].B4 = v1{17}.[15:0]  (elem 2 = VGPR 1, low half)
  MfmaShape s44{4, 4, 4, 16, 32};
  mfma_ab_pos(s44, 4, 1, 2, &lane, &e);
  EXPECT_EQ(lane, 17);
  EXPECT_EQ(e, 2);
  //                D[3][2].B1 = v3{6}
  mfma_cd_pos(s44, 1, 3, 2, &reg, &lane);
  EXPECT_EQ(reg, 3);
  EXPECT_EQ(lane, 6);
  // 4x4x4f64: D[1][0].B0 = v[1:0]{16}, D[0][0].B1 = v[1:0]{4}
  MfmaShape s64{4, 4, 4, 4, 64};
  mfma_cd_pos(s64, 0, 1, 0, &reg, &lane);
  EXPECT_EQ(reg, 0);
  EXPECT_EQ(lane, 16);
  mfma_cd_pos(s64, 1, 0, 0, &reg, &lane);
  EXPECT_EQ(reg, 0);
  EXPECT_EQ(lane, 4);
  // 16x16x32 fp8: A[i][k] -> v((k/4)%2) lane 16*(k/8)+i bits [8*(k%4)+7:8*(k%4)]
  MfmaShape s8{16, 16, 32, 1, 32};
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 32; ++k) {
      mfma_ab_pos(s8, 0, i, k, &lane, &e);
      EXPECT_EQ(lane, 16 * (k / 8) + i);
      EXPECT_EQ(e / 4, (k / 4) % 2);  // VGPR
      EXPECT_EQ(e % 4, k % 4);        // byte
    }
  // 32x32x8f16: lane l, VGPR r holds D[8*(r/4) + 4*(l/32) + (r%4)][l%32]
  MfmaShape s32{32, 32, 8, 1, 32};
  for (int l = 0; l < 64; ++l)
    for (int r = 0; r < 16; ++r) {
      mfma_cd_pos(s32, 0, 8 * (r / 4) + 4 * (l / 32) + r % 4, l % 32, &reg, &lane);
      EXPECT_EQ(reg, r);
      EXPECT_EQ(lane, l);
    }
  // 16x16 blocks 1: lane l, VGPR r holds D[4*(l/16) + r][l%16]; 16x16x4f64: D[i][j] -> pair i/4,
  // lane 16*(i%4)+j
  MfmaShape s16{16, 16, 16, 1, 32}, s16d{16, 16, 4, 1, 64};
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      mfma_cd_pos(s16, 0, i, j, &reg, &lane);
      EXPECT_EQ(reg, i % 4);
      EXPECT_EQ(lane, 16 * (i / 4) + j);
      mfma_cd_pos(s16d, 0, i, j, &reg, &lane);
      EXPECT_EQ(reg, i / 4);
      EXPECT_EQ(lane, 16 * (i % 4) + j);
    }
  // The builtin's vector length equals E: fp16 V4h, bf16 V2s, bf16_1k V4s, xf32 V2f, fp8 i64.
  for (const Instr& in : t) {
    const int per_lane = static_cast<int>(in.A.elems / 64) * in.A.elem_bytes;
    const int want = in.a == Ty::fp16 || in.a == Ty::bf16_1k || in.a == Ty::xf32 ||
                             in.a == Ty::e4m3fnuz || in.a == Ty::e5m2fnuz || in.a == Ty::fp64
                         ? 8
                         : 4;
    EXPECT_EQ(per_lane, want) << in.name;
  }
}

// PTX ISA forward formulas: (lane, fragment element) -> (row, col).
namespace ptx {
int gid(int lane) { return lane >> 2; }
int tig(int lane) { return lane % 4; }
void a(nv::Frag f, int lane, int i, int* row, int* col) {
  const int g = gid(lane), t = tig(lane);
  switch (f) {
    case nv::Frag::M8N8K4: *row = lane < 16 ? lane % 4 : lane % 4 + 4; *col = i; return;
    case nv::Frag::M16N8K8_16: *row = i < 2 ? g : g + 8; *col = t * 2 + (i & 1); return;
    case nv::Frag::M16N8K16_16:
      *row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
      *col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      return;
    case nv::Frag::M16N8K4_TF32: *row = i == 0 ? g : g + 8; *col = t; return;
    case nv::Frag::M16N8K8_TF32: *row = (i == 0 || i == 2) ? g : g + 8; *col = i < 2 ? t : t + 4; return;
    case nv::Frag::M16N8K32_8:
      *row = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
      *col = t * 4 + (i & 3) + (i >= 8 ? 16 : 0);
      return;
    case nv::Frag::M8N8K4_F64: *row = g; *col = t; return;
    case nv::Frag::M16N8K64_4:
      *row = (i < 8 || (i >= 16 && i < 24)) ? g : g + 8;
      *col = t * 8 + (i & 7) + (i >= 16 ? 32 : 0);
      return;
  }
}
void b(nv::Frag f, int lane, int i, int* row, int* col) {
  const int g = gid(lane), t = tig(lane);
  switch (f) {
    case nv::Frag::M8N8K4: *row = i; *col = lane < 16 ? lane % 4 : lane % 4 + 4; return;
    case nv::Frag::M16N8K8_16: *row = t * 2 + i; *col = g; return;
    case nv::Frag::M16N8K16_16: *row = t * 2 + (i & 1) + (i >= 2 ? 8 : 0); *col = g; return;
    case nv::Frag::M16N8K4_TF32: *row = t; *col = g; return;
    case nv::Frag::M16N8K8_TF32: *row = i == 0 ? t : t + 4; *col = g; return;
    case nv::Frag::M16N8K32_8: *row = t * 4 + (i & 3) + (i >= 4 ? 16 : 0); *col = g; return;
    case nv::Frag::M8N8K4_F64: *row = t; *col = g; return;
    case nv::Frag::M16N8K64_4: *row = t * 8 + (i & 7) + (i >= 8 ? 32 : 0); *col = g; return;
  }
}
void c(nv::Frag f, bool f16, int lane, int i, int* row, int* col) {
  if (f == nv::Frag::M8N8K4) {
    if (f16) {
      *row = lane < 16 ? lane % 4 : lane % 4 + 4;
      *col = i;
    } else {
      const int X = (lane & 1) + (i & 2);
      *row = lane < 16 ? X : X + 4;
      *col = (i & 4) + (lane & 2) + (i & 1);
    }
    return;
  }
  if (f == nv::Frag::M8N8K4_F64) {  // .f64: row = groupID, col = threadID_in_group * 2 + i
    *row = gid(lane);
    *col = tig(lane) * 2 + i;
    return;
  }
  *row = i < 2 ? gid(lane) : gid(lane) + 8;
  *col = tig(lane) * 2 + (i & 1);
}
// m8n8k4: lane -> quad pair (the MMA computation it takes part in).
int quad_pair(int lane) { return (lane % 16) / 4; }
}  // namespace ptx

TEST(Layouts, MmaSyncAgreesWithThePtxFormulas) {
  const nv::Frag all[] = {nv::Frag::M8N8K4,      nv::Frag::M16N8K8_16,  nv::Frag::M16N8K16_16,
                          nv::Frag::M16N8K4_TF32, nv::Frag::M16N8K8_TF32, nv::Frag::M16N8K32_8,
                          nv::Frag::M8N8K4_F64,  nv::Frag::M16N8K64_4};
  const int bits[] = {16, 16, 16, 32, 32, 8, 64, 4};  // of an element of A and B
  for (int fi = 0; fi < 8; ++fi) {
    const nv::Frag f = all[fi];
    const int na = nv::mma_a_regs(f) * 32 / bits[fi], nb = nv::mma_b_regs(f) * 32 / bits[fi];
    for (int lane = 0; lane < 32; ++lane) {
      const int blk = f == nv::Frag::M8N8K4 ? ptx::quad_pair(lane) : 0;
      for (int i = 0; i < na; ++i) {
        int r, c, l2, e2;
        ptx::a(f, lane, i, &r, &c);
        nv::mma_a_pos(f, blk, r, c, &l2, &e2);
        EXPECT_EQ(l2, lane) << "A frag " << fi << " lane " << lane << " a" << i;
        EXPECT_EQ(e2, i) << "A frag " << fi << " lane " << lane << " a" << i;
      }
      for (int i = 0; i < nb; ++i) {
        int r, c, l2, e2;
        ptx::b(f, lane, i, &r, &c);
        nv::mma_b_pos(f, blk, r, c, &l2, &e2);
        EXPECT_EQ(l2, lane) << "B frag " << fi << " lane " << lane << " b" << i;
        EXPECT_EQ(e2, i) << "B frag " << fi << " lane " << lane << " b" << i;
      }
      for (int f16 = 0; f16 < 2; ++f16)
        for (int i = 0; i < nv::mma_cd_elems(f); ++i) {
          int r, c, l2, e2;
          ptx::c(f, f16, lane, i, &r, &c);
          nv::mma_cd_pos(f, f16, blk, r, c, &l2, &e2);
          EXPECT_EQ(l2, lane) << "C frag " << fi << " f16 " << f16 << " lane " << lane << " c" << i;
          EXPECT_EQ(e2, i) << "C frag " << fi << " f16 " << f16 << " lane " << lane << " c" << i;
        }
    }
  }
}

TEST(Layouts, SubByteContainersAndBlockScales) {
  // kind::f8f6f4 in mma.sync: "The matrix element of type .e2m1 resides in central 4 bits of
  // the 8-bit container ... .e3m2 or .e2m3 ... in the lower 6 bits" (PTX ISA 9.7.14).
  const auto t = nv_table();
  const Instr& m4 = by_name(t, "mma.m16n8k32.kind::f8f6f4.f32.e2m1.e3m2");
  Bytes img(m4.A.image_bytes(m4.A.elems), 0);
  put_elem(img, m4.A, 5, 0xF);   // e2m1 -6.0
  EXPECT_EQ(img[5], 0x3C);
  Bytes imb(m4.B.image_bytes(m4.B.elems), 0);
  put_elem(imb, m4.B, 3, 0x3F);  // e3m2 -28.0
  EXPECT_EQ(imb[3], 0x3F);
  EXPECT_EQ(get_elem(img, m4.A, 5), 0xFu);
  // m16n8k64: eight e2m1 a register, element j in nibble j (low first).
  const Instr& x4 = by_name(t, "mma.m16n8k64.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.ue8m0");
  EXPECT_EQ(x4.k, 64);
  EXPECT_EQ(x4.scale_block, 32);
  Bytes p4(x4.A.image_bytes(x4.A.elems), 0);
  EXPECT_EQ(p4.size(), 32u * 16);      // 4 registers a lane
  put_elem(p4, x4.A, x4.A.index(0, 9, 40), 0x7);  // row 9 = g 1 + 8, k 40: lane 4 + 1, a3, nibble 0
  EXPECT_EQ(p4[5 * 16 + 12], 0x07);
  put_elem(p4, x4.A, x4.A.index(0, 9, 41), 0x2);  // nibble 1 of the same byte
  EXPECT_EQ(p4[5 * 16 + 12], 0x27);
  // tcgen05 kind::f8f6f4 fp4 in shared memory: 16 elements in 8 bytes, then 8 bytes of padding
  // (b4x16_p64); fp6: 16 in 12 bytes, then 4 (b6x16_p32).
  const Instr& tc = by_name(t, "tcgen05.mma.kind::f8f6f4.k32.e2m3.e2m1");
  EXPECT_EQ(tc.A.image_bytes(tc.A.elems), 128u * 32);
  Bytes sa(tc.A.image_bytes(tc.A.elems), 0), sb(tc.B.image_bytes(tc.B.elems), 0);
  for (int k = 0; k < 16; ++k) put_elem(sb, tc.B, tc.B.index(0, k, 0), 0xF);  // column 0, k 0..15
  for (int x = 0; x < 16; ++x) EXPECT_EQ(sb[x], x < 8 ? 0xFF : 0x00) << x;
  for (int k = 0; k < 16; ++k) put_elem(sa, tc.A, tc.A.index(0, 0, k), 0x3F);
  for (int x = 0; x < 16; ++x) EXPECT_EQ(sa[x], x < 12 ? 0xFF : 0x00) << x;
  // Packed e2m1 of the mxf4 kinds in shared memory: two a byte, 32 per 16-byte core-matrix row.
  const Instr& tx = by_name(t, "tcgen05.mma.kind::mxf4.block_scale.block32.e2m1.ue8m0");
  EXPECT_EQ(tx.A.image_bytes(tx.A.elems), 128u * 32);
  EXPECT_EQ(tx.A.index(0, 0, 33), 2 * 128u + 1);  // k 33: second core matrix (LBO 128), high nibble
  // Block scales of mma.sync (thread-id 0, byte-id 0): row r of A from lane 4*(r % 8) + r / 8,
  // column n of B from lane 4n, K block kb in byte kb.
  for (int r = 0; r < 16; ++r) EXPECT_EQ(x4.SA.index(0, r, 1), 4u * (r < 8 ? 4 * r : 4 * (r - 8) + 1) + 1);
  for (int n = 0; n < 8; ++n) EXPECT_EQ(x4.SB.index(0, 1, n), 16u * n + 1);
  // tcgen05: one word a row / column, byte kb; the block-scaled descriptor's fields.
  EXPECT_EQ(tx.SA.index(0, 70, 1), 4u * 70 + 1);
  EXPECT_EQ(tx.SB.elems, 4u * 256);
  EXPECT_EQ(nv::tcgen05_idesc_bs(128, 256, 1, 1, 1), (1u << 7) | (1u << 10) | (32u << 17) | (1u << 23) | (1u << 27));
  // unit scales where no sample's scale goes (e8m0 0x7f, ue4m3 0x38)
  EXPECT_EQ(blank_images(x4, 1).SA[2], 0x7F);
  EXPECT_EQ(blank_images(by_name(t, "tcgen05.mma.kind::mxf4nvf4.block_scale.block16.e2m1.ue4m3"), 1).SB[7], 0x38);
}

TEST(Layouts, WgmmaAccumulatorAndSharedMemory) {
  // D: row = 16*warp + groupID + 8*((e/2)%2), col = 8*(e/4) + threadID_in_group*2 + (e & 1)
  for (int t = 0; t < 128; ++t)
    for (int e = 0; e < 128; ++e) {
      const int lane = t % 32, row = 16 * (t / 32) + lane / 4 + 8 * ((e / 2) % 2);
      const int col = 8 * (e / 4) + 2 * (lane % 4) + (e & 1);
      int t2, e2;
      nv::wgmma_d_pos(row, col, &t2, &e2);
      EXPECT_EQ(t2, t);
      EXPECT_EQ(e2, e);
    }
  // The shared-memory layout of the hardware-tested m64n8k16 f16 kernel of MMA-Sim
  // (microsoft/MMA-Sim tests/nv/cuda/mma_sm90.cu): element (row, k) of A at f16 index
  // 128*(row/8) + 64*(k/8) + 8*(row%8) + k%8, descriptor LBO = 128, SBO = 256.
  const nv::SmemKMajor L{64, 16, 2};
  EXPECT_EQ(L.lbo(), 128u);
  EXPECT_EQ(L.sbo(), 256u);
  for (int r = 0; r < 64; ++r)
    for (int k = 0; k < 16; ++k)
      EXPECT_EQ(L.offset(r, k) / 2, static_cast<size_t>(128 * (r / 8) + 64 * (k / 8) + 8 * (r % 8) + k % 8));
  // Descriptors: fields at bits 0, 16, 32 (>> 4); tcgen05 adds 0b001 at bit 46.
  EXPECT_EQ(nv::wgmma_desc(0x400, 128, 256), (0x40ull) | (8ull << 16) | (16ull << 32));
  EXPECT_EQ(nv::tcgen05_desc(0x400, 128, 256), nv::wgmma_desc(0x400, 128, 256) | (1ull << 46));
  // kind::f16, f32 D, bf16 A and B, M = 128, N = 256
  EXPECT_EQ(nv::tcgen05_idesc(128, 256, 1, 1, 1), (1u << 4) | (1u << 7) | (1u << 10) | (32u << 17) | (8u << 24));
}

TEST(Tables, NameExactlyMatcoresInstructions) {
  std::vector<Instr> all = mfma_table();
  for (const Instr& in : nv_table()) all.push_back(in);
  std::set<std::string> mine;
  for (const Instr& in : all) {
    EXPECT_TRUE(mine.insert(in.name).second) << "duplicate " << in.name;
    if (in.name.find(".f16.") != std::string::npos) {  // f16-accumulator variant of ".f32."
      std::string base = in.name;
      base.replace(base.find(".f16."), 5, ".f32.");
      const Instr& f32 = by_name(all, base);
      EXPECT_EQ(in.out, Ty::fp16);
      EXPECT_EQ(f32.a, in.a);
      EXPECT_EQ(f32.k, in.k);
      continue;
    }
    const mc::Instruction& m = mc::find_instruction(in.name);
    EXPECT_EQ(m.m, in.m) << in.name;
    EXPECT_EQ(m.n, in.n) << in.name;
    EXPECT_EQ(m.k, in.k) << in.name;
    if (m.vendor == "amd") {
      EXPECT_EQ(m.blocks, in.blocks) << in.name;
    }
    EXPECT_EQ(m.out_type, to_string(in.out)) << in.name;
    if (!in.scale_block) {
      EXPECT_EQ(m.a_type, to_string(in.a)) << in.name;
      EXPECT_EQ(m.b_type, to_string(in.b)) << in.name;
      continue;
    }
    // Block-scaled: matcore's type names the kind; its datapath has the formats and blocks.
    const mc::Datapath dp = mc::instruction_datapath(in.note == "sm_120a" ? "rtxpro6000" : "b200", m);
    EXPECT_TRUE(dp.a_fmt == format_of(in.a)) << in.name;
    EXPECT_TRUE(dp.b_fmt == format_of(in.b)) << in.name;
    EXPECT_TRUE(dp.scale_fmt == format_of(in.scale)) << in.name;
    EXPECT_EQ(dp.scale_block, in.scale_block) << in.name;
  }
  // Instructions whose collector is still to be written: CDNA4's new MFMAs (the build
  // machine's hipcc cannot target gfx950). Named by rule and counted, so that every other
  // instruction must have its collector and a new collector must leave the list.
  auto pending = [](const mc::Instruction& m) {
    return m.vendor == "amd" && m.families == "cdna4";  // gfx950's new MFMAs: clang-19 has no gfx950
  };
  int n_pending = 0;
  for (const mc::Instruction& m : mc::all_instructions()) {
    if (pending(m)) {
      EXPECT_FALSE(mine.count(m.name)) << "collector written: take it off the pending rule: " << m.name;
      ++n_pending;
      continue;
    }
    EXPECT_TRUE(mine.count(m.name)) << "matcore instruction without a collector: " << m.name;
  }
  // CDNA4: f16 and bf16 2 each, f8f6f4 and scale f8f6f4 2 shapes x 25 mixes each
  EXPECT_EQ(n_pending, 4 + 100);
}

// ------------------------------------------------------------------ model as the device
namespace {

struct Case {
  std::string arch, instr;
};

// A fresh directory per test (ctest runs the tests of every binary in parallel), removed after.
struct TmpDir {
  std::string path = ::testing::TempDir() + "/hip_ref_XXXXXX";
  TmpDir() {
    if (!mkdtemp(path.data())) throw std::runtime_error("mkdtemp failed");
  }
  ~TmpDir() { std::filesystem::remove_all(path); }
};

// The preset a hardware run of `in` is validated against (what hip_ref/collect passes).
mc::Datapath datapath_for(const std::string& arch, const Instr& in) {
  std::string name = in.name;
  const bool f16 = in.out == Ty::fp16;
  if (f16) name.replace(name.find(".f16."), 5, ".f32.");
  const mc::Instruction& m = mc::find_instruction(name);
  if (!f16) return mc::instruction_datapath(arch, m);
  const std::string cls = m.name.substr(0, m.name.find('.'));
  const bool fp8 = m.a_type[0] == 'e';
  return mc::find_preset(arch, m.type(), "fp16", fp8 ? (cls == "mma" ? "mma.sync" : cls) : "");
}

// A "device" that computes every D element of every tile with matcore's model (with the block
// scales of the scale images).
// break_layout: D[0][1] and D[1][0] of block 0 swapped; break_scales: A's scales of rows 0
// and 1 swapped.
Launch model_device(const Instr& in, const mc::Datapath& dp, bool break_layout = false, bool break_scales = false) {
  return [&in, dp, break_layout, break_scales](size_t groups, const Images& im, Bytes& D) {
    D.assign(im.C.size(), 0);
    const int ns = in.scales_per_row();
    std::vector<uint64_t> a(in.k), b(in.k), sa(ns), sb(ns);
    auto load = [&](Ty t, uint64_t bits) {  // what the hardware reads from a container
      if (t == Ty::fp32 || t == Ty::xf32 || t == Ty::tf32 || t == Ty::fp64)
        return mc::ingest_value(dp.a_fmt, dp.ingest, bits, t == Ty::fp64 ? 64 : 32, "image");
      return bits;
    };
    for (size_t g = 0; g < groups; ++g)
      for (int bl = 0; bl < in.blocks; ++bl)
        for (int i = 0; i < in.m; ++i)
          for (int j = 0; j < in.n; ++j) {
            for (int k = 0; k < in.k; ++k) {
              a[k] = load(in.a, get_elem(im.A, in.A, g * in.A.elems + in.A.index(bl, i, k)));
              b[k] = load(in.b, get_elem(im.B, in.B, g * in.B.elems + in.B.index(bl, k, j)));
            }
            for (int kb = 0; kb < ns; ++kb) {
              const int ri = break_scales && i < 2 ? 1 - i : i;
              sa[kb] = im.SA[g * in.SA.elems + in.SA.index(bl, ri, kb)];
              sb[kb] = im.SB[g * in.SB.elems + in.SB.index(bl, kb, j)];
            }
            const size_t ci = g * in.C.elems + in.C.index(bl, i, j);
            const uint64_t c = get_elem(im.C, in.C, ci);
            const uint64_t d = ns ? mc::dot(dp, a.data(), b.data(), in.k, c, mc::scale_refs(sa, sb))
                                  : mc::dot(dp, a.data(), b.data(), in.k, c);
            size_t di = ci;
            if (break_layout && bl == 0 && i == 1 && j == 0) di = g * in.C.elems + in.C.index(0, 0, 1);
            if (break_layout && bl == 0 && i == 0 && j == 1) di = g * in.C.elems + in.C.index(0, 1, 0);
            put_elem(D, in.C, di, d);
          }
  };
}

}  // namespace

TEST(Pipeline, ModelAsDeviceMatchesMatcoreRun) {
  const auto amd = mfma_table(), nvt = nv_table();
  const Case cases[] = {
      {"mi300x", "v_mfma_f32_16x16x32_fp8_bf8"},  // fp8 FNUZ, one block
      {"mi300x", "v_mfma_f32_32x32x4xf32"},       // xf32 containers
      {"mi250", "v_mfma_f64_4x4x4f64"},           // fp64, 4 blocks
      {"mi100", "v_mfma_f32_4x4x4f16"},           // 16 blocks
      {"mi210", "v_mfma_f32_32x32x4bf16_1k"},     // 2 blocks
      {"v100", "mma.m8n8k4.f32.f16"},             // 4 quad pairs
      {"a100", "mma.m16n8k16.f16.f16"},           // f16 accumulators: c rounded, d widened
      {"a100", "mma.m16n8k4.f32.tf32"},
      {"h100", "mma.m16n8k32.f16.e5m2.e4m3"},
      {"h100", "wgmma.m64n256k32.f32.e4m3.e5m2"},
      {"b200", "tcgen05.mma.kind::f16.k16.bf16"},
      {"a100", "mma.m8n8k4.f64"},                 // DMMA: binary64 in and out
      // fp6/fp4: 8-bit containers (e2m1 in bits 5:2), padded shared memory (b4x16_p64, b6x16_p32)
      {"rtxpro6000", "mma.m16n8k32.kind::f8f6f4.f32.e2m1.e3m2"},
      {"b200", "tcgen05.mma.kind::f8f6f4.k32.e2m3.e2m1"},
      // block scales: in registers (sm_120a) and in Tensor Memory (tcgen05); packed fp4
      {"rtxpro6000", "mma.m16n8k32.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e5m2.e2m1.ue8m0"},
      {"rtxpro6000", "mma.m16n8k64.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue4m3"},
      {"rtxpro6000", "mma.m16n8k64.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.ue8m0"},
      {"b200", "tcgen05.mma.kind::mxf8f6f4.block_scale.block32.e3m2.e4m3.ue8m0"},
      {"b200", "tcgen05.mma.kind::mxf4nvf4.block_scale.block16.e2m1.ue4m3"},
      {"b200", "tcgen05.mma.kind::mxf4.block_scale.block32.e2m1.ue8m0"},
  };
  const TmpDir tmp;
  const std::string& dir = tmp.path;
  for (const Case& cs : cases) {
    const bool is_amd = cs.instr.rfind("v_", 0) == 0;
    const Instr& in = by_name(is_amd ? amd : nvt, cs.instr);
    const mc::Datapath dp = datapath_for(cs.arch, in);
    mc::SampleSpec sp = mc::sample_spec_for(dp);
    sp.K = in.k;
    sp.N = 300;  // several instructions, the last one partly filled
    sp.seed = 7;
    mc::write_samples(sp, dir, 1);
    const bool scaled = in.scale_block > 0;
    const Samples s = read_samples(in, dir + "/a.txt", dir + "/b.txt", dir + "/c.txt", scaled ? dir + "/sa.txt" : "",
                                   scaled ? dir + "/sb.txt" : "");
    ASSERT_EQ(s.sa.size(), s.n * in.scales_per_row()) << cs.instr;
    const std::vector<uint64_t> d = run_samples(in, s, model_device(in, dp));
    // matcore run (the stand-in device) on the same files
    const std::string want = dir + "/want.txt";
    mc::stream_files(dp, dir + "/a.txt", dir + "/b.txt", dir + "/c.txt", "", want, in.k, false, 1, 0, false);
    const std::vector<uint64_t> w = mc::read_cd_file(want, dp.out_fmt == mc::kBinary64 ? 64 : 32);
    ASSERT_EQ(d.size(), w.size()) << cs.instr;
    // Equal bit for bit, except binary16 NaNs: the collectors keep their payload (0x7fff ->
    // 0x7fffe000, d_to_file) where matcore run widens the model's NaN to the default binary32
    // NaN (widen_result); both must be NaNs of the same sign then.
    auto nan32 = [](uint64_t v) { return (v & 0x7f800000) == 0x7f800000 && (v & 0x7fffff); };
    size_t diff = 0;
    for (size_t i = 0; i < d.size(); ++i)
      diff += d[i] != w[i] && !(in.out == Ty::fp16 && nan32(d[i]) && nan32(w[i]) && (d[i] >> 31) == (w[i] >> 31));
    EXPECT_EQ(diff, 0u) << cs.arch << " " << cs.instr;
    std::string rep;
    EXPECT_EQ(self_test(in, model_device(in, dp), &rep), 0u) << cs.instr << "\n" << rep;
    EXPECT_EQ(self_test(in, model_device(in, dp, true), &rep), 2u) << cs.instr;
    if (scaled) {
      EXPECT_GT(self_test(in, model_device(in, dp, false, true), &rep), 0u) << cs.instr;
    }
  }
}

TEST(Pipeline, SelfTestValuesAreExactEverywhere) {
  // Every instruction's self-test passes on its own preset's model (the integers are exact
  // whatever the accumulation order and rounding).
  const std::map<std::string, std::string> amd_arch = {{"cdna1", "mi100"}, {"cdna2", "mi250"}, {"cdna3", "mi300x"}};
  for (const Instr& in : mfma_table()) {
    const std::string fam = in.note.substr(0, in.note.find(','));
    std::string rep;
    EXPECT_EQ(self_test(in, model_device(in, datapath_for(amd_arch.at(fam), in)), &rep), 0u) << in.name << rep;
  }
  for (const Instr& in : nv_table()) {
    const std::string arch = in.note == "sm_120a"                     ? "rtxpro6000"
                             : in.out == Ty::fp64                      ? "a100"
                             : in.name.rfind("mma.m8n8k4", 0) == 0 ? "v100"
                             : in.name.rfind("wgmma", 0) == 0     ? "h100"
                             : in.name.rfind("tcgen05", 0) == 0   ? "b200"
                                                                  : "h100";
    std::string rep;
    EXPECT_EQ(self_test(in, model_device(in, datapath_for(arch, in)), &rep), 0u) << in.name << rep;
  }
}

TEST(Pipeline, Binary16ResultsAreWidenedLosslessly) {
  EXPECT_EQ(d_to_file(Ty::fp16, 0x3c00), 0x3f800000u);
  EXPECT_EQ(d_to_file(Ty::fp16, 0x0001), 0x33800000u);  // 2^-24
  EXPECT_EQ(d_to_file(Ty::fp16, 0xfc00), 0xff800000u);  // -inf
  EXPECT_EQ(d_to_file(Ty::fp16, 0x7fff), 0x7fffe000u);  // NVIDIA's canonical NaN, payload kept
  EXPECT_EQ(d_to_file(Ty::fp16, 0xfe00), 0xffc00000u);
  EXPECT_EQ(d_to_file(Ty::fp32, 0x7fffffff), 0x7fffffffu);
}

TEST(Pipeline, InputErrorsNameTheFileAndSample) {
  const Instr& in = by_name(mfma_table(), "v_mfma_f32_16x16x16f16");
  const TmpDir tmp;
  const std::string& dir = tmp.path;
  auto put = [&](const std::string& f, const std::string& text) {
    std::FILE* fp = std::fopen((dir + "/" + f).c_str(), "w");
    std::fputs(text.c_str(), fp);
    std::fclose(fp);
    return dir + "/" + f;
  };
  std::string line16, bad16;
  for (int k = 0; k < 16; ++k) line16 += std::string(k ? " " : "") + "3f800000";
  bad16 = line16;
  bad16.replace(9 * 3, 8, "3f800001");  // 1 + 2^-23: not an fp16 value
  const std::string a = put("ea.txt", "# header\n" + line16 + "\n" + bad16 + "\n");
  const std::string b = put("eb.txt", line16 + "\n" + line16 + "\n");
  const std::string c = put("ec.txt", "3f800000\n00000000\n");
  try {
    read_samples(in, a, b, c);
    FAIL() << "no error";
  } catch (const mc::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ea.txt: sample 2: value 4"), std::string::npos) << e.what();
  }
  const std::string a8 = put("ea8.txt", "3f800000 3f800000 3f800000 3f800000\n");
  EXPECT_THROW(read_samples(in, a8, b, c), UsageError);  // K = 4 for a k = 16 instruction
}
