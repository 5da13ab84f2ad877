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
                          nv::Frag::M8N8K4_F64};
  const int a_bytes[] = {2, 2, 2, 4, 4, 1, 8}, b_bytes[] = {2, 2, 2, 4, 4, 1, 8};
  for (int fi = 0; fi < 7; ++fi) {
    const nv::Frag f = all[fi];
    const int na = nv::mma_a_regs(f) * 4 / a_bytes[fi], nb = nv::mma_b_regs(f) * 4 / b_bytes[fi];
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
    EXPECT_EQ(m.a_type, to_string(in.a)) << in.name;
    EXPECT_EQ(m.b_type, to_string(in.b)) << in.name;
    EXPECT_EQ(m.out_type, to_string(in.out)) << in.name;
  }
  // Instructions whose collector is still to be written (issue 27, item 5): the fp6/fp4 forms of kind::f8f6f4, the block_scale kinds and CDNA4's new MFMAs. Named by rule and counted, so
  // that every other instruction must have its collector and a new collector must leave the list.
  auto pending = [](const mc::Instruction& m) {
    auto narrow = [](const std::string& t) { return t == "e3m2" || t == "e2m3" || t == "e2m1"; };
    if (m.vendor == "amd") return m.families == "cdna4";  // gfx950's new MFMAs: clang-19 has no gfx950
    return m.vendor == "nvidia" && (m.name.find("block_scale") != std::string::npos ||
                                    narrow(m.a_type) || narrow(m.b_type));
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
  // fp6/fp4 kind::f8f6f4 21 on tcgen05 and 21 on sm_120a, mxf8f6f4 25 on each, the fp4 kinds 3 on each;
  // CDNA4: f16 and bf16 2 each, f8f6f4 and scale f8f6f4 2 shapes x 25 mixes each
  EXPECT_EQ(n_pending, 21 + 21 + 25 + 25 + 3 + 3 + 4 + 100);
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

// A "device" that computes every D element of every tile with matcore's model.
Launch model_device(const Instr& in, const mc::Datapath& dp, bool break_layout = false) {
  return [&in, dp, break_layout](size_t groups, const Bytes& A, const Bytes& B, const Bytes& C, Bytes& D) {
    D.assign(C.size(), 0);
    std::vector<uint64_t> a(in.k), b(in.k);
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
              a[k] = load(in.a, get_elem(A, g * in.A.elems + in.A.index(bl, i, k), in.A.elem_bytes));
              b[k] = load(in.b, get_elem(B, g * in.B.elems + in.B.index(bl, k, j), in.B.elem_bytes));
            }
            const size_t ci = g * in.C.elems + in.C.index(bl, i, j);
            const uint64_t d = mc::dot(dp, a.data(), b.data(), in.k, get_elem(C, ci, in.C.elem_bytes));
            size_t di = ci;
            if (break_layout && bl == 0 && i == 1 && j == 0) di = g * in.C.elems + in.C.index(0, 0, 1);
            if (break_layout && bl == 0 && i == 0 && j == 1) di = g * in.C.elems + in.C.index(0, 1, 0);
            put_elem(D, di, in.C.elem_bytes, d);
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
    const Samples s = read_samples(in, dir + "/a.txt", dir + "/b.txt", dir + "/c.txt");
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
    const std::string arch = in.out == Ty::fp64                      ? "a100"
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
