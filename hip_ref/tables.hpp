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

/// mma.sync: A/B/C images are the 32 lanes' fragments (lane-major, elements low to high).
inline Instr make_mma(const char* name, const char* ptx, nv::Frag f, Ty a, Ty b, Ty out,
                      int min_arch) {
  Instr in;
  in.name = name;
  in.impl = ptx;
  in.note = "sm_" + std::to_string(min_arch / 10) + "+";
  in.a = a;
  in.b = b;
  in.out = out;
  const bool quads = f == nv::Frag::M8N8K4;  // 4 independent 8x8x4 products
  in.m = quads || f == nv::Frag::M8N8K4_F64 ? 8 : 16;
  in.n = 8;
  in.blocks = quads ? 4 : 1;
  // k: the A fragment holds m*k elements over 32 lanes.
  in.k = 32 * nv::mma_a_regs(f) * 4 / bytes_of(a) / in.m / in.blocks;
  const int ea = nv::mma_a_regs(f) * 4 / bytes_of(a), eb = nv::mma_b_regs(f) * 4 / bytes_of(b);
  const int ec = nv::mma_cd_elems(f);
  const bool f16 = out == Ty::fp16;
  in.A = {static_cast<size_t>(32 * ea), bytes_of(a), [f, ea](int bl, int i, int kk) {
            int lane, e;
            nv::mma_a_pos(f, bl, i, kk, &lane, &e);
            return static_cast<size_t>(lane) * ea + e;
          }};
  in.B = {static_cast<size_t>(32 * eb), bytes_of(b), [f, eb](int bl, int kk, int j) {
            int lane, e;
            nv::mma_b_pos(f, bl, kk, j, &lane, &e);
            return static_cast<size_t>(lane) * eb + e;
          }};
  in.C = {static_cast<size_t>(32 * ec), bytes_of(out), [f, f16, ec](int bl, int i, int j) {
            int lane, e;
            nv::mma_cd_pos(f, f16, bl, i, j, &lane, &e);
            return static_cast<size_t>(lane) * ec + e;
          }};
  return in;
}

/// A and B of wgmma / tcgen05: shared-memory images in the canonical K-major layout.
inline Operand smem_operand(int rows, int k, Ty t, bool b_operand) {
  const nv::SmemKMajor L{rows, k, bytes_of(t)};
  const int eb = bytes_of(t);
  if (b_operand)  // B[k][j] is row j, column k of the N x K ("column-major") operand
    return {L.bytes() / eb, eb, [L, eb](int, int kk, int j) { return L.offset(j, kk) / eb; }};
  return {L.bytes() / eb, eb, [L, eb](int, int i, int kk) { return L.offset(i, kk) / eb; }};
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
inline Instr make_tc05(const char* name, const char* kind, int n, int k, Ty a, Ty b) {
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
  in.A = smem_operand(128, k, a, false);
  in.B = smem_operand(n, k, b, true);
  in.C = {static_cast<size_t>(128 * n), 4,
          [n](int, int i, int j) { return static_cast<size_t>(i) * n + j; }};
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
#include "nv_instructions.def"
  return v;
}

}  // namespace mcc
