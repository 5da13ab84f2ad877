// matcore hardware collectors: the instruction tables, built from the X-macro tables
// core/mfma_instructions.def (AMD) and hip_ref/nv_instructions.def (NVIDIA), with the operand
// images of mfma_layout.hpp / nv_layout.hpp. Host C++ only; shared by the device programs and
// the unit tests.
#pragma once
#include <string>
#include <vector>

#include "collect_common.hpp"
#include "mfma_layout.hpp"
#include "nv_layout.hpp"

namespace mcc {

/// One MFMA instruction: A/B images are the 64 lanes' packed operands (lane-major), C/D the 64
/// lanes' accumulator registers (lane-major).
inline Instr make_mfma(const char* name, const char* builtin, const char* archs, Ty a, Ty b, Ty out,
                       int m, int n, int k, int blocks) {
  Instr in;
  in.name = name;
  in.impl = builtin;
  in.note = archs;
  in.a = a;
  in.b = b;
  in.out = out;
  in.m = m;
  in.n = n;
  in.k = k;
  in.blocks = blocks;
  MfmaShape s{m, n, k, blocks, out == Ty::fp64 ? 64 : 32};
  s.check();
  const int E = s.e(), R = s.c_regs();
  in.A = {static_cast<size_t>(64 * E), bytes_of(a), [s, E](int bl, int i, int kk) {
            int lane, e;
            mfma_ab_pos(s, bl, i, kk, &lane, &e);
            return static_cast<size_t>(lane) * E + e;
          }};
  in.B = {static_cast<size_t>(64 * E), bytes_of(b), [s, E](int bl, int kk, int j) {
            int lane, e;
            mfma_ab_pos(s, bl, j, kk, &lane, &e);
            return static_cast<size_t>(lane) * E + e;
          }};
  in.C = {static_cast<size_t>(64 * R), s.out_bits / 8, [s, R](int bl, int i, int j) {
            int reg, lane;
            mfma_cd_pos(s, bl, i, j, &reg, &lane);
            return static_cast<size_t>(lane) * R + reg;
          }};
  return in;
}

inline std::vector<Instr> mfma_table() {
  std::vector<Instr> v;
#define MFMA(nm, archs, at, bt, M, N, K, B, ot, bi) \
  v.push_back(make_mfma("v_" #nm, #bi, archs, Ty::at, Ty::bt, Ty::ot, M, N, K, B));
#include "../core/mfma_instructions.def"
  return v;
}

/// Bits an element takes in an mma.sync fragment: packed e2m1 of the m16n8k64 shapes 4, else
/// its container (fp6/fp4 of kind::f8f6f4: 8).
inline int frag_bits(nv::Frag f, Ty t) { return f == nv::Frag::M16N8K64_4 ? 4 : 8 * bytes_of(t); }

/// A or B of mma.sync: the 32 lanes' fragment registers (lane-major, elements low to high). In
/// the 8-bit containers of kind::f8f6f4, e2m1 sits in bits 5:2, e3m2 and e2m3 in bits 5:0 (PTX
/// ISA 9.7.14: "resides in central 4 bits of the 8-bit container").
inline Operand mma_operand(nv::Frag f, Ty t, bool b_operand) {
  const int bits = frag_bits(f, t);
  const int per = (b_operand ? nv::mma_b_regs(f) : nv::mma_a_regs(f)) * 32 / bits;
  Operand op;
  op.elems = static_cast<size_t>(32 * per);
  op.elem_bytes = bytes_of(t);
  if (bits == 4) op.elem_bits = 4;
  if (bits == 8 && t == Ty::e2m1) op.shift = 2;
  if (b_operand)
    op.index = [f, per](int bl, int kk, int j) {
      int lane, e;
      nv::mma_b_pos(f, bl, kk, j, &lane, &e);
      return static_cast<size_t>(lane) * per + e;
    };
  else
    op.index = [f, per](int bl, int i, int kk) {
      int lane, e;
      nv::mma_a_pos(f, bl, i, kk, &lane, &e);
      return static_cast<size_t>(lane) * per + e;
    };
  return op;
}

/// mma.sync: A/B/C images are the 32 lanes' fragments (lane-major, elements low to high).
/// min_arch 1200: the kind:: forms of sm_120a.
inline Instr make_mma(const char* name, const char* ptx, nv::Frag f, Ty a, Ty b, Ty out,
                      int min_arch) {
  Instr in;
  in.name = name;
  in.impl = ptx;
  in.note = "sm_" + std::to_string(min_arch / 10) + (min_arch >= 1200 ? "a" : "+");
  in.a = a;
  in.b = b;
  in.out = out;
  const bool quads = f == nv::Frag::M8N8K4;  // 4 independent 8x8x4 products
  in.m = quads || f == nv::Frag::M8N8K4_F64 ? 8 : 16;
  in.n = 8;
  in.blocks = quads ? 4 : 1;
  // k: the A fragment holds m*k elements over 32 lanes.
  in.k = 32 * nv::mma_a_regs(f) * 32 / frag_bits(f, a) / in.m / in.blocks;
  in.A = mma_operand(f, a, false);
  in.B = mma_operand(f, b, true);
  const int ec = nv::mma_cd_elems(f);
  const bool f16 = out == Ty::fp16;
  in.C = {static_cast<size_t>(32 * ec), bytes_of(out), [f, f16, ec](int bl, int i, int j) {
            int lane, e;
            nv::mma_cd_pos(f, f16, bl, i, j, &lane, &e);
            return static_cast<size_t>(lane) * ec + e;
          }};
  return in;
}

/// Block-scaled mma.sync (sm_120a): as make_mma, plus one scale word a lane for A and for B
/// (nv::mma_sfa_pos); `vec` scales per row (scale_vec::1X, 2X, 4X).
inline Instr make_mma_bs(const char* name, const char* ptx, nv::Frag f, Ty a, Ty b, Ty scale, int vec) {
  Instr in = make_mma(name, ptx, f, a, b, Ty::fp32, 1200);
  in.scale = scale;
  in.scale_block = in.k / vec;
  in.SA = {128, 1, [](int, int i, int kb) { return nv::mma_sfa_pos(i, kb); }};
  in.SB = {128, 1, [](int, int kb, int j) { return nv::mma_sfb_pos(kb, j); }};
  return in;
}

/// A and B of wgmma / tcgen05: shared-memory images in the canonical K-major layout. fp6/fp4
/// (`packed` false: kind::f8f6f4, kind::mxf8f6f4) take the layout of 8-bit elements, each 16
/// of them packed into the first 8 (fp4) or 12 (fp6) bytes of their 16 ("b4x16_p64",
/// "b6x16_p32": PTX ISA 9.7.16.10.4); `packed` (kind::mxf4, mxf4nvf4): two e2m1 a byte.
inline Operand smem_operand(int rows, int k, Ty t, bool b_operand, bool packed = false) {
  const int eb = bytes_of(t);
  const nv::SmemKMajor L{rows, packed ? k / 2 : k, eb};
  Operand op;
  op.elem_bytes = eb;
  op.elems = packed ? 2 * L.bytes() : L.bytes() / eb;
  const int w = format_of(t).width();
  if (packed) {
    op.elem_bits = 4;
    op.index = [L, b_operand](int, int r, int c) {
      const int row = b_operand ? c : r, kk = b_operand ? r : c;
      return 2 * L.offset(row, kk / 2) + kk % 2;
    };
    return op;
  }
  if (w < 8) {
    op.elem_bits = w;
    op.group = 16;
  }
  if (b_operand)  // B[k][j] is row j, column k of the N x K ("column-major") operand
    op.index = [L, eb](int, int kk, int j) { return L.offset(j, kk) / eb; };
  else
    op.index = [L, eb](int, int i, int kk) { return L.offset(i, kk) / eb; };
  return op;
}

/// wgmma m64nNk*: D image = the 128 threads' accumulator fragments (thread-major).
inline Instr make_wgmma(const char* name, const char* ptx, int n, int k, Ty a, Ty b, Ty out) {
  Instr in;
  in.name = name;
  in.impl = ptx;
  in.note = "sm_90a";
  in.a = a;
  in.b = b;
  in.out = out;
  in.m = 64;
  in.n = n;
  in.k = k;
  in.A = smem_operand(64, k, a, false);
  in.B = smem_operand(n, k, b, true);
  const int per = n / 2;
  in.C = {static_cast<size_t>(128 * per), out == Ty::fp16 ? 2 : 4, [per](int, int i, int j) {
            int t, e;
            nv::wgmma_d_pos(i, j, &t, &e);
            return static_cast<size_t>(t) * per + e;
          }};
  return in;
}

/// tcgen05.mma cta_group::1, M = 128: D in Tensor Memory, row i = lane i, column j; thread i
/// of the CTA reads lane i (tcgen05.ld .32x32b), so the D image is row-major.
inline Instr make_tc05(const char* name, const char* kind, int n, int k, Ty a, Ty b, bool packed = false) {
  Instr in;
  in.name = name;
  in.impl = std::string("tcgen05.mma.cta_group::1.") + kind;
  in.note = "sm_100a";
  in.a = a;
  in.b = b;
  in.out = Ty::fp32;
  in.m = 128;
  in.n = n;
  in.k = k;
  in.A = smem_operand(128, k, a, false, packed);
  in.B = smem_operand(n, k, b, true, packed);
  in.C = {static_cast<size_t>(128 * n), 4,
          [n](int, int i, int j) { return static_cast<size_t>(i) * n + j; }};
  return in;
}

/// Block-scaled tcgen05.mma: as make_tc05, plus one scale word per row of A (128) and column
/// of B (n), byte kb = K block kb (nv::tc05_sf_pos); `vec` scales per row.
inline Instr make_tc05_bs(const char* name, const char* kind, int n, int k, Ty a, Ty b, Ty scale, int vec) {
  const bool packed = std::string(kind).find("kind::mxf4") != std::string::npos;
  Instr in = make_tc05(name, kind, n, k, a, b, packed);
  in.scale = scale;
  in.scale_block = k / vec;
  in.SA = {static_cast<size_t>(4 * 128), 1, [](int, int i, int kb) { return nv::tc05_sf_pos(i, kb); }};
  in.SB = {static_cast<size_t>(4 * n), 1, [](int, int kb, int j) { return nv::tc05_sf_pos(j, kb); }};
  return in;
}

inline std::vector<Instr> nv_table() {
  std::vector<Instr> v;
#define NV_MMA(id, name, frag, a, b, out, min_arch, ptx) \
  v.push_back(make_mma(name, ptx, nv::Frag::frag, Ty::a, Ty::b, Ty::out, min_arch));
#define NV_WGMMA(id, name, n, k, a, b, out, ptx, imm) \
  v.push_back(make_wgmma(name, ptx, n, k, Ty::a, Ty::b, Ty::out));
#define NV_TC05(id, name, n, k, a, b, kind, a_code, b_code) \
  v.push_back(make_tc05(name, kind, n, k, Ty::a, Ty::b));
#define NV_MMA_BS(id, name, frag, a, b, scale, vec, ptx) \
  v.push_back(make_mma_bs(name, ptx, nv::Frag::frag, Ty::a, Ty::b, Ty::scale, vec));
#define NV_TC05_BS(id, name, n, k, a, b, scale, vec, kind, a_code, b_code) \
  v.push_back(make_tc05_bs(name, kind, n, k, Ty::a, Ty::b, Ty::scale, vec));
#include "nv_instructions.def"
  return v;
}

}  // namespace mcc
