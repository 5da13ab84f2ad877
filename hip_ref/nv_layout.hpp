// matcore hardware collectors: where NVIDIA tensor-core instructions keep each matrix element,
// as plain host C++ (unit-tested in hip_ref/test_layouts.cpp, used by hip_ref/nv_collect.cu).
//
// Every function maps a matrix element to a position in the per-instruction "image" that the
// kernel copies verbatim: for register fragments, image index = thread * per_thread + e, where
// e is the element's index in the thread's fragment ("Elements (low to high)" in the PTX ISA,
// packed from the low bits of the first register up); for shared-memory operands, image index
// = byte offset / element size in the canonical layout.
//
// Sources: PTX ISA 9.x, section 9.7.14.5 "Matrix fragments for mma.m*n*k*" (the row/col
// formulas quoted at each function, groupID = %laneid >> 2, threadID_in_group = %laneid % 4),
// section 9.7.15.5.1 (wgmma register fragments and shared-memory matrix layout, matrix
// descriptor) and section 9.7.16 (tcgen05 shared-memory descriptor, Tensor Memory, data-path
// layout for M = 128 with cta_group::1).
#pragma once
#include <cstddef>
#include <cstdint>

// Host and device (the descriptors are built in the kernels).
#if defined(__CUDACC__)
#define MCC_HD __host__ __device__
#else
#define MCC_HD
#endif

namespace mcc {
namespace nv {

/// Fragment layout families of the warp-level mma.sync shapes.
enum class Frag {
  M8N8K4,       ///< mma.m8n8k4 .f16 (4 independent 8x8x4 products per warp, one per quad pair)
  M16N8K8_16,   ///< mma.m16n8k8 .f16/.bf16
  M16N8K16_16,  ///< mma.m16n8k16 .f16/.bf16
  M16N8K4_TF32, ///< mma.m16n8k4 .tf32
  M16N8K8_TF32, ///< mma.m16n8k8 .tf32
  M16N8K32_8,   ///< mma.m16n8k32 .e4m3/.e5m2 (same as .s8/.u8), and .kind::f8f6f4 (8-bit containers)
  M8N8K4_F64,   ///< mma.m8n8k4 .f64 (DMMA: one f64 of A and B, two of C/D per thread)
  M16N8K64_4,   ///< mma.m16n8k64 .e2m1 (kind::mxf4 / mxf4nvf4: eight packed e2m1 a register)
};

/// mma.sync A[i][k] (block b = quad pair for m8n8k4, else 0) -> lane, element index.
inline void mma_a_pos(Frag f, int b, int i, int k, int* lane, int* e) {
  const int g = i % 8;  // groupID for the m16n8 shapes
  *lane = *e = 0;
  switch (f) {
    case Frag::M8N8K4:
      // .row A: row = %laneid % 4 (lanes < 16) or %laneid % 4 + 4; col = i for ai, i = 0..3.
      // Quad pair b owns lanes 4b..4b+3 (low group) and 16+4b..16+4b+3 (high group).
      *lane = (i < 4 ? 0 : 16) + 4 * b + i % 4;
      *e = k;
      return;
    case Frag::M16N8K8_16:
      // row = groupID (a0,a1) / groupID+8 (a2,a3); col = threadID_in_group*2 + (i & 1).
      *lane = 4 * g + k / 2;
      *e = 2 * (i / 8) + k % 2;
      return;
    case Frag::M16N8K16_16:
      // row = groupID for a0,a1,a4,a5, else groupID+8;
      // col = threadID_in_group*2 + (i & 1) (+8 for i >= 4).
      *lane = 4 * g + (k % 8) / 2;
      *e = 4 * (k / 8) + 2 * (i / 8) + k % 2;
      return;
    case Frag::M16N8K4_TF32:
      // row = groupID (a0) / groupID+8 (a1); col = threadID_in_group.
      *lane = 4 * g + k;
      *e = i / 8;
      return;
    case Frag::M16N8K8_TF32:
      // row = groupID (a0,a2) / groupID+8 (a1,a3); col = threadID_in_group (a0,a1) / +4 (a2,a3).
      *lane = 4 * g + k % 4;
      *e = 2 * (k / 4) + i / 8;
      return;
    case Frag::M16N8K32_8:
      // row = groupID for 0<=i<4 || 8<=i<12, else groupID+8;
      // col = threadID_in_group*4 + (i & 3) (+16 for i >= 8).
      *lane = 4 * g + (k % 16) / 4;
      *e = 8 * (k / 16) + 4 * (i / 8) + k % 4;
      return;
    case Frag::M8N8K4_F64:
      // .f64 A: row = %laneid >> 2 (groupID); col = %laneid % 4 (threadID_in_group).
      *lane = 4 * i + k;
      *e = 0;
      return;
    case Frag::M16N8K64_4:
      // row = groupID for 0<=i<8 || 16<=i<24, else groupID+8;
      // col = threadID_in_group*8 + (i & 7) (+32 for i >= 16).
      *lane = 4 * g + (k % 32) / 8;
      *e = 16 * (k / 32) + 8 * (i / 8) + k % 8;
      return;
  }
}

/// mma.sync B[k][j] -> lane, element index.
inline void mma_b_pos(Frag f, int b, int k, int j, int* lane, int* e) {
  *lane = *e = 0;
  switch (f) {
    case Frag::M8N8K4:
      // .col B: row = i for bi; col = %laneid % 4 (lanes < 16) or %laneid % 4 + 4.
      *lane = (j < 4 ? 0 : 16) + 4 * b + j % 4;
      *e = k;
      return;
    case Frag::M16N8K8_16:
      // row = threadID_in_group*2 + i (b0,b1); col = groupID.
      *lane = 4 * j + k / 2;
      *e = k % 2;
      return;
    case Frag::M16N8K16_16:
      // row = threadID_in_group*2 + (i & 1) (+8 for i >= 2); col = groupID.
      *lane = 4 * j + (k % 8) / 2;
      *e = 2 * (k / 8) + k % 2;
      return;
    case Frag::M16N8K4_TF32:
      // row = threadID_in_group; col = groupID.
      *lane = 4 * j + k;
      *e = 0;
      return;
    case Frag::M16N8K8_TF32:
      // row = threadID_in_group (b0) / +4 (b1); col = groupID.
      *lane = 4 * j + k % 4;
      *e = k / 4;
      return;
    case Frag::M16N8K32_8:
      // row = threadID_in_group*4 + (i & 3) (+16 for i >= 4); col = groupID.
      *lane = 4 * j + (k % 16) / 4;
      *e = 4 * (k / 16) + k % 4;
      return;
    case Frag::M8N8K4_F64:
      // .f64 B: row = %laneid % 4 (threadID_in_group); col = %laneid >> 2 (groupID).
      *lane = 4 * j + k;
      *e = 0;
      return;
    case Frag::M16N8K64_4:
      // row = threadID_in_group*8 + (i & 7) (+32 for i >= 8); col = groupID.
      *lane = 4 * j + (k % 32) / 8;
      *e = 8 * (k / 32) + k % 8;
      return;
  }
}

/// mma.sync C/D[i][j] -> lane, element index (f32: register e; f16: half e of the .f16x2 list).
inline void mma_cd_pos(Frag f, bool f16, int b, int i, int j, int* lane, int* e) {
  if (f == Frag::M8N8K4) {
    const int base = (i < 4 ? 0 : 16) + 4 * b;
    const int r = i % 4;
    if (f16) {
      // .f16: row = %laneid % 4 (+4 high group); col = i for ci, i = 0..7.
      *lane = base + r;
      *e = j;
    } else {
      // .f32: row = X (+4 high group), X = (%laneid & 0b1) + (i & 0b10);
      //       col = (i & 0b100) + (%laneid & 0b10) + (i & 0b1).
      *lane = base + ((r & 1) | (j & 2));
      *e = (r & 2) | (j & 4) | (j & 1);
    }
    return;
  }
  if (f == Frag::M8N8K4_F64) {
    // .f64 C/D: row = groupID; col = threadID_in_group * 2 + i for ci, i = 0, 1.
    *lane = 4 * i + j / 2;
    *e = j % 2;
    return;
  }
  // All m16n8 shapes: row = groupID (c0,c1) / groupID+8 (c2,c3);
  // col = threadID_in_group*2 + (i & 1).
  *lane = 4 * (i % 8) + j / 2;
  *e = 2 * (i / 8) + j % 2;
}

/// 32-bit registers per thread (an f64 counts two): A, B and C/D of an mma.sync fragment family.
MCC_HD constexpr int mma_a_regs(Frag f) {
  switch (f) {
    case Frag::M8N8K4: return 2;
    case Frag::M16N8K8_16: return 2;
    case Frag::M16N8K16_16: return 4;
    case Frag::M16N8K4_TF32: return 2;
    case Frag::M16N8K8_TF32: return 4;
    case Frag::M16N8K32_8: return 4;
    case Frag::M8N8K4_F64: return 2;  // one f64
    case Frag::M16N8K64_4: return 4;
  }
  return 0;
}
MCC_HD constexpr int mma_b_regs(Frag f) {
  switch (f) {
    case Frag::M8N8K4: return 2;
    case Frag::M16N8K8_16: return 1;
    case Frag::M16N8K16_16: return 2;
    case Frag::M16N8K4_TF32: return 1;
    case Frag::M16N8K8_TF32: return 2;
    case Frag::M16N8K32_8: return 2;
    case Frag::M8N8K4_F64: return 2;  // one f64
    case Frag::M16N8K64_4: return 2;
  }
  return 0;
}
/// C/D elements per thread (f32: registers; f16: halves, two per .f16x2 register; f64: two
/// register pairs).
MCC_HD constexpr int mma_cd_elems(Frag f) {
  return f == Frag::M8N8K4 ? 8 : f == Frag::M8N8K4_F64 ? 2 : 4;
}

/// Block-scaled mma.sync (sm_120a; PTX ISA 9.7.14.3 "Block Scaling for mma.sync"), with
/// thread-id-a = thread-id-b = 0 and byte-id-a = byte-id-b = 0: each lane passes one 32-bit
/// scale word for A and one for B. Row i of A: lane 4*(i % 8) + i / 8 (the thread pair
/// %laneid % 4 == 0, 1 of each quad; the lower thread carries rows 0-7), column j of B: lane
/// 4*j; scale kb of the row (K block kb: 1X one, 2X two, 4X four) in byte kb of the word.
/// Returns the byte index in the 32 lanes' words (lane-major, 4 bytes a lane).
inline size_t mma_sfa_pos(int i, int kb) { return 4 * static_cast<size_t>(4 * (i % 8) + i / 8) + kb; }
inline size_t mma_sfb_pos(int kb, int j) { return 4 * static_cast<size_t>(4 * j) + kb; }

/// wgmma.m64nNk* (any N) accumulator D[i][j] -> thread of the warpgroup (0..127), element
/// index d_e of its fragment (f32: register e; f16: half e, two per .f16x2 register).
/// PTX ISA Figures "WGMMA .m64nNk16/k8/k32 register fragment layout for accumulator matrix D":
/// warp w of the warpgroup holds rows 16w..16w+15 as an m16n8 accumulator per 8 columns,
///   row = 16*w + groupID + 8*((e/2) % 2),  col = 8*(e/4) + threadID_in_group*2 + (e & 1).
inline void wgmma_d_pos(int i, int j, int* thread, int* e) {
  const int w = i / 16, r = i % 16;
  *thread = 32 * w + 4 * (r % 8) + (j % 8) / 2;
  *e = 4 * (j / 8) + 2 * (r / 8) + j % 2;
}

/// Canonical K-major shared-memory layout without swizzling (wgmma and tcgen05 matrix
/// descriptors, swizzle mode 0): the operand (A: M x K, or B stored as N x K, "column-major")
/// is cut into core matrices of 8 rows x 16 bytes, each stored as 8 contiguous 16-byte rows.
/// Core matrices adjacent in K are LBO bytes apart ("leading dimension byte offset: the
/// distance between two adjacent core matrices in the K dimension"), those adjacent in M/N are
/// SBO bytes apart ("stride dimension byte offset: ... in the M or N dimension"). We use
/// LBO = 128 (the K core matrices of one 8-row group are adjacent) and SBO = 128 * (K bytes / 16).
struct SmemKMajor {
  int rows = 0;        ///< M (A) or N (B)
  int k = 0;           ///< K elements per row
  int elem_bytes = 2;  ///< 1 (fp8), 2 (f16/bf16), 4 (tf32)
  MCC_HD int k_cores() const { return k * elem_bytes / 16; }
  MCC_HD uint32_t lbo() const { return 128; }
  MCC_HD uint32_t sbo() const { return 128u * static_cast<uint32_t>(k_cores()); }
  MCC_HD size_t bytes() const { return static_cast<size_t>(rows) * k * elem_bytes; }
  /// Byte offset of element (row r, k index kk).
  MCC_HD size_t offset(int r, int kk) const {
    const int kb = kk * elem_bytes;
    return static_cast<size_t>(r / 8) * sbo() + static_cast<size_t>(kb / 16) * lbo() +
           static_cast<size_t>(r % 8) * 16 + static_cast<size_t>(kb % 16);
  }
};

/// 64-bit wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format"): bits 0-13 start
/// address, 16-29 LBO, 32-45 SBO (each encoded as (x & 0x3FFFF) >> 4), 49-51 base offset (0),
/// 62-63 swizzle mode (0 = none).
MCC_HD inline uint64_t desc_encode(uint64_t x) { return (x & 0x3FFFF) >> 4; }
MCC_HD inline uint64_t wgmma_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo) {
  return desc_encode(smem_addr) | (desc_encode(lbo) << 16) | (desc_encode(sbo) << 32);
}

/// 64-bit tcgen05 shared-memory descriptor (PTX ISA 9.7.16.4.1): as wgmma's, plus the fixed
/// constant 0b001 in bits 46-48; bit 52 = 0 (LBO relative), bits 61-63 swizzle = 0 (none).
MCC_HD inline uint64_t tcgen05_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo) {
  return wgmma_desc(smem_addr, lbo, sbo) | (uint64_t{1} << 46);
}

/// tcgen05 instruction descriptor for .kind::tf32 / ::f16 / ::f8f6f4 (PTX ISA Table
/// "Instruction descriptor format"): dense, D type in bits 4-5 (F16 = 0, F32 = 1), A type in
/// 7-9, B type in 10-12, no negation, no transpose (K-major), N >> 3 in 17-22, M >> 4 in 24-28.
/// Type codes: kind::f16 F16 = 0, BF16 = 1; kind::tf32 TF32 = 2; kind::f8f6f4 E4M3 = 0, E5M2 = 1.
MCC_HD constexpr uint32_t tcgen05_idesc(int m, int n, int d_f32, int a_code, int b_code) {
  return (static_cast<uint32_t>(d_f32) << 4) | (static_cast<uint32_t>(a_code) << 7) |
         (static_cast<uint32_t>(b_code) << 10) | (static_cast<uint32_t>(n >> 3) << 17) |
         (static_cast<uint32_t>(m >> 4) << 24);
}

/// tcgen05 instruction descriptor for .kind::mxf8f6f4 / ::mxf4 / ::mxf4nvf4 with block_scale
/// (PTX ISA Tables "Instruction descriptor format for .kind::mxf8f6f4" and "... .kind::mxf4 and
/// .kind::mxf4nvf4"): B scale-factor id (bits 4-5) and A scale-factor id (29-30) 0, A type in
/// 7-9, B type in 10-12 (mxf8f6f4: E4M3 = 0, E5M2 = 1, E2M3 = 3, E3M2 = 4, E2M1 = 5; mxf4
/// kinds: E2M1 = 1), N >> 3 in 17-22, scale type in 23 (UE8M0 = 1, UE4M3 = 0), M >> 7 in 27-28.
/// No D type field: D is f32.
MCC_HD constexpr uint32_t tcgen05_idesc_bs(int m, int n, int a_code, int b_code, int ue8m0) {
  return (static_cast<uint32_t>(a_code) << 7) | (static_cast<uint32_t>(b_code) << 10) |
         (static_cast<uint32_t>(n >> 3) << 17) | (static_cast<uint32_t>(ue8m0) << 23) |
         (static_cast<uint32_t>(m >> 7) << 27);
}

/// Scale factors of a block-scaled tcgen05.mma in Tensor Memory (PTX ISA 9.7.16.10.7; the
/// layout of CUTLASS's Sm1xxBlockScaledBasicChunk and MMA-Sim's tcgen05 kernels): row r of A
/// in TMEM lane r % 32 of each of the four 32-lane sub-partitions ("duplicated to all 32 lane
/// partitions"), column r / 32 from the scale base; column j of B likewise; K block kb in byte
/// kb of the 32-bit cell (scale-factor id 0). The images hold one 32-bit word per row (A) or
/// column (B): word r, byte kb; thread lane l of each warp stores words 32*c + l, c = 0, 1, ..
/// (tcgen05.st .32x32b.xC) at its warp's lane quarter.
inline size_t tc05_sf_pos(int row, int kb) { return 4 * static_cast<size_t>(row) + kb; }

}  // namespace nv
}  // namespace mcc
