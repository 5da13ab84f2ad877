// nv_collect: runs samples in matcore's vector format through one NVIDIA tensor-core
// instruction (inline PTX: mma.sync, wgmma.mma_async, tcgen05.mma) and writes the hardware's d.
// One source for every instruction of hip_ref/nv_instructions.def (X-macro). The fragment and
// shared-memory layouts, sample placement, files and self-test are host C++ (nv_layout.hpp,
// tables.hpp, collect_common.cpp): each kernel copies its thread's registers (and the shared
// memory operands) from the images, runs the instruction and copies D back.
//
// Build (see hip_ref/README.md): CMake with nvcc, CUDA_ARCHITECTURES from MATCORE_CUDA_ARCHS.
// Exit status: see collect_common.hpp (3 = no NVIDIA GPU / driver).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "collect_common.hpp"
#include "tables.hpp"

namespace {

using mcc::Ty;
namespace nv = mcc::nv;

// ------------------------------------------------------------ what this compilation pass has
#if defined(__CUDA_ARCH__)
constexpr int kArch = __CUDA_ARCH__;
#else
constexpr int kArch = 0;  // host pass
#endif
// wgmma: sm_90a only ("arch-specific" features; plain sm_90 rejects it).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
constexpr bool kWgmma = true;
#else
constexpr bool kWgmma = false;
#endif
// tcgen05: sm_100a / sm_103a and their families (sm_100f, sm_103f).
#if defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM103_ALL) || \
    (defined(__CUDA_ARCH_FAMILY_SPECIFIC__) &&                                     \
     (__CUDA_ARCH_FAMILY_SPECIFIC__ == 1000 || __CUDA_ARCH_FAMILY_SPECIFIC__ == 1030))
constexpr bool kTcgen05 = true;
#else
constexpr bool kTcgen05 = false;
#endif

// kind:: forms of mma.sync (fp6/fp4, block scales): sm_120a / sm_121a only.
#if defined(__CUDA_ARCH_FEAT_SM120_ALL) || defined(__CUDA_ARCH_FEAT_SM121_ALL)
constexpr bool kSm120a = true;
#else
constexpr bool kSm120a = false;
#endif

// PTX ISA 9.1 (CUDA 13.1) added kind::mxf4nvf4 with .ue8m0 scales per 16 (scale_vec::4X) to
// mma.sync; older ptxas rejects it.
#if defined(__CUDACC_VER_MAJOR__) && (__CUDACC_VER_MAJOR__ > 13 || (__CUDACC_VER_MAJOR__ == 13 && __CUDACC_VER_MINOR__ >= 1))
constexpr bool kPtx91 = true;
#else
constexpr bool kPtx91 = false;
#endif

constexpr int ty_bytes(Ty t) {
  return t == Ty::tf32 ? 4 : (t == Ty::fp16 || t == Ty::bf16) ? 2 : 1;
}

// Accumulators: f32 in float registers ("+f"), f16 as .f16x2 pairs in 32-bit registers ("+r").
template <bool F16> using AccT = std::conditional_t<F16, uint32_t, float>;
__device__ inline float acc_from(uint32_t v, float*) { return __uint_as_float(v); }
__device__ inline uint32_t acc_from(uint32_t v, uint32_t*) { return v; }
__device__ inline uint32_t acc_bits(float v) { return __float_as_uint(v); }
__device__ inline uint32_t acc_bits(uint32_t v) { return v; }

template <class T>  // a template: no "never referenced" warning on targets without wgmma/tcgen05
__device__ uint32_t smem_u32(const T* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ------------------------------------------------ operand lists for the long inline-asm forms
#define MC_S10(p) "%" #p "0, %" #p "1, %" #p "2, %" #p "3, %" #p "4, %" #p "5, %" #p "6, %" #p "7, %" #p "8, %" #p "9"
#define MC_R32 "{" MC_S10() ", " MC_S10(1) ", " MC_S10(2) ", %30, %31}"
#define MC_R64 "{" MC_S10() ", " MC_S10(1) ", " MC_S10(2) ", " MC_S10(3) ", " MC_S10(4) ", " MC_S10(5) ", %60, %61, %62, %63}"
#define MC_R128                                                                                 \
  "{" MC_S10() ", " MC_S10(1) ", " MC_S10(2) ", " MC_S10(3) ", " MC_S10(4) ", " MC_S10(5) ", " \
      MC_S10(6) ", " MC_S10(7) ", " MC_S10(8) ", " MC_S10(9) ", " MC_S10(10) ", " MC_S10(11)   \
      ", %120, %121, %122, %123, %124, %125, %126, %127}"
#define MC_O8(k, v, o) k(v[(o)]), k(v[(o) + 1]), k(v[(o) + 2]), k(v[(o) + 3]), k(v[(o) + 4]), k(v[(o) + 5]), k(v[(o) + 6]), k(v[(o) + 7])
#define MC_O32(k, v, o) MC_O8(k, v, (o)), MC_O8(k, v, (o) + 8), MC_O8(k, v, (o) + 16), MC_O8(k, v, (o) + 24)
#define MC_O64(k, v, o) MC_O32(k, v, (o)), MC_O32(k, v, (o) + 32)
#define MC_O128(k, v) MC_O64(k, v, 0), MC_O64(k, v, 64)

// ============================================================================ mma.sync
// D = A*B + C in place on c. Register counts per PTX ISA 9.7.14.5 (nv_layout.hpp).
#define MMA_A2B2C8F(PTX)                                                                      \
  asm volatile(PTX " {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%0,%1,%2,%3,%4,%5,%6,%7};\n" \
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]), "+f"(c[4]), "+f"(c[5]),      \
                 "+f"(c[6]), "+f"(c[7])                                                       \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]))
#define MMA_A2B2C4R(PTX)                                                         \
  asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%0,%1,%2,%3};\n"          \
               : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])                  \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]))
#define MMA_A2B1C4F(PTX)                                                         \
  asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"             \
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                  \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]))
#define MMA_A2B1C2R(PTX)                                                         \
  asm volatile(PTX " {%0,%1}, {%2,%3}, {%4}, {%0,%1};\n"                         \
               : "+r"(c[0]), "+r"(c[1])                                          \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]))
#define MMA_A4B2C4F(PTX)                                                         \
  asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"    \
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                  \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#define MMA_A4B2C2R(PTX)                                                         \
  asm volatile(PTX " {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};\n"                \
               : "+r"(c[0]), "+r"(c[1])                                          \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
// Per fragment family and accumulator type.
#define MMA_ASM_M8N8K4_fp32 MMA_A2B2C8F
#define MMA_ASM_M8N8K4_fp16 MMA_A2B2C4R
#define MMA_ASM_M16N8K8_16_fp32 MMA_A2B1C4F
#define MMA_ASM_M16N8K8_16_fp16 MMA_A2B1C2R
#define MMA_ASM_M16N8K16_16_fp32 MMA_A4B2C4F
#define MMA_ASM_M16N8K16_16_fp16 MMA_A4B2C2R
#define MMA_ASM_M16N8K4_TF32_fp32 MMA_A2B1C4F
#define MMA_ASM_M16N8K8_TF32_fp32 MMA_A4B2C4F
#define MMA_ASM_M16N8K32_8_fp32 MMA_A4B2C4F
#define MMA_ASM_M16N8K32_8_fp16 MMA_A4B2C2R
// DMMA: each f64 operand is a pair of 32-bit words of the image (low word first).
#define MMA_ASM_M8N8K4_F64_fp64(PTX)                                                     \
  do {                                                                                   \
    double c0 = __hiloint2double(c[1], c[0]), c1 = __hiloint2double(c[3], c[2]);         \
    asm volatile(PTX " {%0,%1}, {%2}, {%3}, {%0,%1};\n"                                   \
                 : "+d"(c0), "+d"(c1)                                                    \
                 : "d"(__hiloint2double(a[1], a[0])), "d"(__hiloint2double(b[1], b[0]))); \
    c[0] = __double2loint(c0); c[1] = __double2hiint(c0);                                \
    c[2] = __double2loint(c1); c[3] = __double2hiint(c1);                                \
  } while (0)

// run() is a member template: its asm is emitted only where the kernel's `if constexpr` keeps it.
#define NV_MMA(id, name, frag, at, bt, out, min_arch, ptx)                              \
  struct id {                                                                           \
    static constexpr nv::Frag kFrag = nv::Frag::frag;                                   \
    static constexpr bool kF16 = Ty::out == Ty::fp16, kF64 = Ty::out == Ty::fp64;       \
    using Acc = AccT<kF16 || kF64>; /* f16 pairs and f64 halves: 32-bit words */         \
    static constexpr int NA = nv::mma_a_regs(kFrag), NB = nv::mma_b_regs(kFrag);        \
    static constexpr int NC = kF16 ? nv::mma_cd_elems(kFrag) / 2                        \
                              : kF64 ? 2 * nv::mma_cd_elems(kFrag) : nv::mma_cd_elems(kFrag); \
    static constexpr bool here = kArch >= (min_arch) && ((min_arch) < 1200 || kSm120a);  \
    template <class T>                                                                  \
    __device__ static void run(const uint32_t* a, const uint32_t* b, T* c) {            \
      MMA_ASM_##frag##_##out(ptx);                                                      \
    }                                                                                   \
  };
#include "nv_instructions.def"

// Block-scaled mma.sync: scale-a-data, {byte-id-a, thread-id-a}, scale-b-data, {byte-id-b,
// thread-id-b}; all four ids 0 (nv_layout.hpp mma_sfa_pos / mma_sfb_pos).
#define NV_MMA_BS(id, name, frag, at, bt, scale, vec, ptx)                                  \
  struct id {                                                                               \
    static constexpr nv::Frag kFrag = nv::Frag::frag;                                       \
    using Acc = float;                                                                      \
    static constexpr int NA = nv::mma_a_regs(kFrag), NB = nv::mma_b_regs(kFrag), NC = 4;    \
    static constexpr bool here = kSm120a && (Ty::scale != Ty::ue8m0 || (vec) != 4 || kPtx91); \
    __device__ static void run(const uint32_t* a, const uint32_t* b, float* c, uint32_t sa, \
                               uint32_t sb) {                                               \
      const uint16_t z = 0;                                                                 \
      asm volatile(ptx " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3}, "            \
                       "%10, {%12, %12}, %11, {%12, %12};\n"                                \
                   : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                         \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),      \
                     "r"(sa), "r"(sb), "h"(z));                                             \
    }                                                                                       \
  };
#include "nv_instructions.def"

/// One warp per block-scaled mma.sync: as k_mma, plus lane t's scale words for A and B.
template <class I>
__global__ void __launch_bounds__(32) k_mma_bs(const uint32_t* A, const uint32_t* B, const uint32_t* C,
                                               const uint32_t* SA, const uint32_t* SB, uint32_t* D,
                                               int* status) {
  const size_t t = static_cast<size_t>(blockIdx.x) * 32 + threadIdx.x;
  uint32_t a[I::NA], b[I::NB];
  float c[I::NC];
  for (int r = 0; r < I::NA; ++r) a[r] = A[t * I::NA + r];
  for (int r = 0; r < I::NB; ++r) b[r] = B[t * I::NB + r];
  for (int r = 0; r < I::NC; ++r) c[r] = __uint_as_float(C[t * I::NC + r]);
  if constexpr (I::here) {
    I::run(a, b, c, SA[t], SB[t]);
  } else {
    if (threadIdx.x == 0) *status = 1;
  }
  for (int r = 0; r < I::NC; ++r) D[t * I::NC + r] = __float_as_uint(c[r]);
}

/// One warp per instruction: thread t of group g copies its A, B and C registers from the
/// images, runs mma.sync, stores its D registers.
template <class I>
__global__ void __launch_bounds__(32) k_mma(const uint32_t* A, const uint32_t* B, const uint32_t* C,
                                            uint32_t* D, int* status) {
  const size_t t = static_cast<size_t>(blockIdx.x) * 32 + threadIdx.x;
  uint32_t a[I::NA], b[I::NB];
  typename I::Acc c[I::NC];
  for (int r = 0; r < I::NA; ++r) a[r] = A[t * I::NA + r];
  for (int r = 0; r < I::NB; ++r) b[r] = B[t * I::NB + r];
  for (int r = 0; r < I::NC; ++r) c[r] = acc_from(C[t * I::NC + r], c);
  if constexpr (I::here) {
    I::run(a, b, c);
  } else {
    if (threadIdx.x == 0) *status = 1;
  }
  for (int r = 0; r < I::NC; ++r) D[t * I::NC + r] = acc_bits(c[r]);
}

// ===================================================================== wgmma.mma_async
// fence + mma + commit + wait in one statement, so that no accumulator register is read while
// the asynchronous operation owns it. scale-d = 1: D = A*B + D, D holding C.
#define WGMMA_ASM_256_fp32(PTX, IMM)                                                          \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\nwgmma.fence.sync.aligned;\n" PTX   \
               " " MC_R128 ", %128, %129, p, " IMM ";\n"                                      \
               "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n}\n"     \
               : MC_O128("+f", c)                                                             \
               : "l"(da), "l"(db), "r"(1)                                                    \
               : "memory")
#define WGMMA_ASM_256_fp16(PTX, IMM)                                                          \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\nwgmma.fence.sync.aligned;\n" PTX    \
               " " MC_R64 ", %64, %65, p, " IMM ";\n"                                         \
               "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n}\n"     \
               : MC_O64("+r", c, 0)                                                           \
               : "l"(da), "l"(db), "r"(1)                                                    \
               : "memory")

#define NV_WGMMA(id, name, n, k, at, bt, out, ptx, imm)                                 \
  struct id {                                                                           \
    static constexpr int N = n, K = k;                                                  \
    static constexpr int EA = ty_bytes(Ty::at), EB = ty_bytes(Ty::bt);                  \
    static constexpr bool kF16 = Ty::out == Ty::fp16;                                   \
    using Acc = AccT<kF16>;                                                              \
    static constexpr int NC = kF16 ? N / 4 : N / 2;                                     \
    static constexpr int A_BYTES = 64 * K * EA, B_BYTES = N * K * EB;                   \
    static constexpr bool here = kWgmma;                                                \
    template <class T>                                                                  \
    __device__ static void run(uint64_t da, uint64_t db, T* c) {                        \
      WGMMA_ASM_##n##_##out(ptx, imm);                                                  \
    }                                                                                   \
  };
#include "nv_instructions.def"

/// Copies `bytes` (a multiple of 16) from global to shared memory with the whole block.
__device__ inline void copy16(uint8_t* dst, const uint8_t* src, int bytes) {
  for (int i = threadIdx.x; i < bytes / 16; i += blockDim.x)
    reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
}

template <class I, class T>
__device__ void wgmma_body(const uint8_t* sa, const uint8_t* sb, T* c) {
  // Shared memory written by ordinary stores, read by the tensor core (async proxy).
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const nv::SmemKMajor la{64, I::K, I::EA}, lb{I::N, I::K, I::EB};
  const uint64_t da = nv::wgmma_desc(smem_u32(sa), la.lbo(), la.sbo());
  const uint64_t db = nv::wgmma_desc(smem_u32(sb), lb.lbo(), lb.sbo());
  I::run(da, db, c);
}

/// One warpgroup (128 threads) per instruction: A (64 x K) and B (N x K) in shared memory in
/// the canonical K-major layout (copied verbatim from the images), D in registers.
template <class I>
__global__ void __launch_bounds__(128) k_wgmma(const uint8_t* A, const uint8_t* B, const uint32_t* C,
                                               uint32_t* D, int* status) {
  __shared__ alignas(128) uint8_t sa[I::A_BYTES];
  __shared__ alignas(128) uint8_t sb[I::B_BYTES];
  const size_t g = blockIdx.x, t = g * 128 + threadIdx.x;
  copy16(sa, A + g * I::A_BYTES, I::A_BYTES);
  copy16(sb, B + g * I::B_BYTES, I::B_BYTES);
  typename I::Acc c[I::NC];
  for (int r = 0; r < I::NC; ++r) c[r] = acc_from(C[t * I::NC + r], c);
  if constexpr (I::here) {
    wgmma_body<I>(sa, sb, c);
  } else {
    if (threadIdx.x == 0) *status = 1;
  }
  for (int r = 0; r < I::NC; ++r) D[t * I::NC + r] = acc_bits(c[r]);
}

// ========================================================================= tcgen05.mma
// KA, KB: bytes of one row of A / B in shared memory (fp6/fp4 of kind::f8f6f4: one byte an
// element, padding included; the packed e2m1 of the mxf4 kinds: half a byte).
#define NV_TC05(id, name, n, k, at, bt, kind, a_code, b_code)                            \
  struct id {                                                                            \
    static constexpr int N = n, K = k, COLS = n, SFA_COL = 0, SFB_COL = 0;               \
    static constexpr bool kScaled = false;                                               \
    static constexpr int KA = K * ty_bytes(Ty::at), KB = K * ty_bytes(Ty::bt);           \
    static constexpr int A_BYTES = 128 * KA, B_BYTES = N * KB;                           \
    static constexpr uint32_t kIdesc = nv::tcgen05_idesc(128, N, 1, a_code, b_code);     \
    static constexpr bool here = kTcgen05;                                               \
    template <class T>                                                                   \
    __device__ static void run(T tmem_d, uint64_t da, uint64_t db, T, T) {               \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                           \
                   "tcgen05.mma.cta_group::1." kind " [%0], %1, %2, %3, p;\n}\n"        \
                   :: "r"(tmem_d), "l"(da), "l"(db), "r"(kIdesc), "r"(1) : "memory");   \
    }                                                                                    \
  };
#include "nv_instructions.def"

// Block-scaled: D in columns 0..N-1, the scales of A at column SFA_COL (128 rows: 4 columns),
// of B at SFB_COL (N / 32 columns); 512 columns allocated (a power of two >= N + 32 + N/32).
#define NV_TC05_BS(id, name, n, k, at, bt, scale, vec, kind, a_code, b_code)             \
  struct id {                                                                            \
    static constexpr int N = n, K = k, COLS = 512, SFA_COL = n, SFB_COL = n + 32;        \
    static constexpr bool kScaled = true;                                                \
    static constexpr bool kPacked = Ty::at == Ty::e2m1 && (k) == 64;                     \
    static constexpr int KA = kPacked ? K / 2 : K, KB = KA;                              \
    static constexpr int A_BYTES = 128 * KA, B_BYTES = N * KB;                           \
    static constexpr uint32_t kIdesc =                                                   \
        nv::tcgen05_idesc_bs(128, N, a_code, b_code, Ty::scale == Ty::ue8m0);            \
    static constexpr bool here = kTcgen05;                                               \
    static_assert(N == 256, "the scale stores assume N = 256");                          \
    template <class T>                                                                   \
    __device__ static void run(T tmem_d, uint64_t da, uint64_t db, T tsa, T tsb) {       \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"                           \
                   "tcgen05.mma.cta_group::1." kind " [%0], %1, %2, %3, [%4], [%5], p;\n}\n" \
                   :: "r"(tmem_d), "l"(da), "l"(db), "r"(kIdesc), "r"(tsa), "r"(tsb),    \
                      "r"(1) : "memory");                                                \
    }                                                                                    \
  };
#include "nv_instructions.def"

/// The tcgen05 sequence (PTX ISA 9.7.16): allocate N Tensor Memory columns, store C there
/// (thread t = row t = TMEM lane t, 32x32b shape), one thread issues the MMA (enable-input-d:
/// D = A*B + C), commit to an mbarrier, wait, load D back, free the columns.
template <class I>
__device__ void tc05_body(const uint8_t* sa, const uint8_t* sb, const uint32_t* c, uint32_t* d,
                          const uint32_t* sfa, const uint32_t* sfb) {
  __shared__ alignas(8) uint64_t bar;
  __shared__ uint32_t tmem_base;
  const int warp = threadIdx.x / 32;
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n"
                 "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n"
                 :: "r"(smem_u32(&tmem_base)), "r"(I::COLS) : "memory");
  }
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n"
                 "fence.mbarrier_init.release.cluster;\n" :: "r"(smem_u32(&bar)) : "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;\n"
               "tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  const uint32_t tm = tmem_base;
  const uint32_t row = tm + (static_cast<uint32_t>(32 * warp) << 16);  // lane field: bits 31-16
  for (int col = 0; col < I::N; col += 32) {
    const uint32_t* v = c + col;
    asm volatile("tcgen05.st.sync.aligned.32x32b.x32.b32 [%32], " MC_R32 ";\n"
                 :: MC_O32("r", v, 0), "r"(row + col) : "memory");
  }
  if constexpr (I::kScaled) {
    // Every warp stores the same words into its lane quarter (the scales are duplicated to
    // the four 32-lane sub-partitions): lane l holds rows / columns 32*c + l.
    const int l = threadIdx.x % 32;
    uint32_t va[4], vb[8];
    for (int q = 0; q < 4; ++q) va[q] = sfa[32 * q + l];
    for (int q = 0; q < 8; ++q) vb[q] = sfb[32 * q + l];
    asm volatile("tcgen05.st.sync.aligned.32x32b.x4.b32 [%4], {%0, %1, %2, %3};\n"
                 :: "r"(va[0]), "r"(va[1]), "r"(va[2]), "r"(va[3]), "r"(row + I::SFA_COL) : "memory");
    asm volatile("tcgen05.st.sync.aligned.32x32b.x8.b32 [%8], {%0, %1, %2, %3, %4, %5, %6, %7};\n"
                 :: "r"(vb[0]), "r"(vb[1]), "r"(vb[2]), "r"(vb[3]), "r"(vb[4]), "r"(vb[5]),
                    "r"(vb[6]), "r"(vb[7]), "r"(row + I::SFB_COL) : "memory");
  }
  asm volatile("tcgen05.wait::st.sync.aligned;\n"
               "tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  if (threadIdx.x == 0) {
    const nv::SmemKMajor la{128, I::KA, 1}, lb{I::N, I::KB, 1};
    I::run(tm, nv::tcgen05_desc(smem_u32(sa), la.lbo(), la.sbo()),
           nv::tcgen05_desc(smem_u32(sb), lb.lbo(), lb.sbo()), tm + I::SFA_COL * I::kScaled,
           tm + I::SFB_COL * I::kScaled);
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n"
                 :: "r"(smem_u32(&bar)) : "memory");
  }
  asm volatile("{\n.reg .pred done;\nWAIT:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
               "@!done bra WAIT;\n}\n" :: "r"(smem_u32(&bar)) : "memory");
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  for (int col = 0; col < I::N; col += 32) {
    uint32_t* v = d + col;
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 " MC_R32 ", [%32];\n"
                 "tcgen05.wait::ld.sync.aligned;\n"
                 : MC_O32("=r", v, 0) : "r"(row + col) : "memory");
  }
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  if (warp == 0) {
    asm volatile("tcgen05.fence::after_thread_sync;\n"
                 "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n"
                 :: "r"(tm), "r"(I::COLS) : "memory");
  }
}

/// One CTA of 128 threads per instruction: A (128 x K) and B (N x K) in shared memory
/// (canonical K-major layout), C and D as rows of Tensor Memory; thread t moves row t.
template <class I>
__global__ void __launch_bounds__(128) k_tc05(const uint8_t* A, const uint8_t* B, const uint32_t* C,
                                              const uint32_t* SA, const uint32_t* SB, uint32_t* D,
                                              int* status) {
  __shared__ alignas(128) uint8_t sa[I::A_BYTES];
  __shared__ alignas(128) uint8_t sb[I::B_BYTES];
  const size_t g = blockIdx.x, t = g * 128 + threadIdx.x;
  copy16(sa, A + g * I::A_BYTES, I::A_BYTES);
  copy16(sb, B + g * I::B_BYTES, I::B_BYTES);
  if constexpr (I::here) {
    tc05_body<I>(sa, sb, C + t * I::N, D + t * I::N, SA + g * 128 * I::kScaled,
                 SB + g * I::N * I::kScaled);
  } else {
    if (threadIdx.x == 0) *status = 1;
  }
}

// =============================================================================== host side
std::string cuda_error(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

#define CUDA_CHECK(call)                                                    \
  do {                                                                      \
    const cudaError_t e_ = (call);                                          \
    if (e_ != cudaSuccess) throw mcc::RuntimeFailure(cuda_error(#call, e_)); \
  } while (0)

/// Device memory, freed on scope exit (a failing cudaFree is reported, not thrown).
struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(size_t bytes) { CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1)); }
  ~DevBuf() {
    if (p) {
      const cudaError_t e = cudaFree(p);
      if (e != cudaSuccess) std::fprintf(stderr, "nv_collect: %s\n", cuda_error("cudaFree", e).c_str());
    }
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

enum class Kind { mma, wgmma, tc05 };

using LaunchFn = void (*)(size_t groups, const void* a, const void* b, const void* c, const void* sa,
                          const void* sb, void* d, int* status);

struct Entry {
  Kind kind;
  int min_arch;  // mma.sync: lowest __CUDA_ARCH__ (1200: sm_120a only)
  LaunchFn launch;
};

template <class T>
const T* as(const void* p) { return static_cast<const T*>(p); }

template <class I>
void launch_mma(size_t groups, const void* a, const void* b, const void* c, const void*, const void*,
                void* d, int* s) {
  k_mma<I><<<static_cast<unsigned>(groups), 32>>>(as<uint32_t>(a), as<uint32_t>(b), as<uint32_t>(c),
                                                 static_cast<uint32_t*>(d), s);
}
template <class I>
void launch_mma_bs(size_t groups, const void* a, const void* b, const void* c, const void* sa,
                   const void* sb, void* d, int* s) {
  k_mma_bs<I><<<static_cast<unsigned>(groups), 32>>>(as<uint32_t>(a), as<uint32_t>(b), as<uint32_t>(c),
                                                    as<uint32_t>(sa), as<uint32_t>(sb),
                                                    static_cast<uint32_t*>(d), s);
}
template <class I>
void launch_wgmma(size_t groups, const void* a, const void* b, const void* c, const void*, const void*,
                  void* d, int* s) {
  k_wgmma<I><<<static_cast<unsigned>(groups), 128>>>(as<uint8_t>(a), as<uint8_t>(b), as<uint32_t>(c),
                                                     static_cast<uint32_t*>(d), s);
}
template <class I>
void launch_tc05(size_t groups, const void* a, const void* b, const void* c, const void* sa,
                 const void* sb, void* d, int* s) {
  k_tc05<I><<<static_cast<unsigned>(groups), 128>>>(as<uint8_t>(a), as<uint8_t>(b), as<uint32_t>(c),
                                                    as<uint32_t>(sa), as<uint32_t>(sb),
                                                    static_cast<uint32_t*>(d), s);
}

class CudaBackend : public mcc::Backend {
 public:
  const char* program() const override { return "nv_collect"; }
  const char* vendor() const override { return "NVIDIA"; }
  const std::vector<mcc::Instr>& instructions() const override { return table_; }

  mcc::DeviceInfo open(int device) override {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
      throw mcc::NoDevice(cuda_error("cudaGetDeviceCount", e) +
                          "; this program needs an NVIDIA GPU with its driver loaded");
    if (n == 0) throw mcc::NoDevice("cudaGetDeviceCount found no device");
    if (device >= n)
      throw mcc::UsageError("--device " + std::to_string(device) + ": only " + std::to_string(n) +
                            " device(s)");
    CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    int rt = 0, drv = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    cc_ = p.major * 10 + p.minor;
    arch_ = "sm_" + std::to_string(cc_);
    return {p.name, arch_, std::to_string(rt), std::to_string(drv)};
  }

  void check(const mcc::Instr& in) override {
    const Entry& e = entries_[index(in)];
    bool ok = false;
    std::string where;
    switch (e.kind) {
      case Kind::mma:
        ok = e.min_arch >= 1200 ? cc_ == 120 || cc_ == 121 : cc_ * 10 >= e.min_arch;
        where = e.min_arch >= 1200 ? "sm_120a/sm_121a (RTX PRO 6000, RTX 50xx, DGX Spark) only"
                                   : "sm_" + std::to_string(e.min_arch / 10) + " or later";
        break;
      case Kind::wgmma:
        ok = cc_ == 90;
        where = "sm_90 (Hopper: H100, H200) only";
        break;
      case Kind::tc05:
        ok = cc_ == 100 || cc_ == 103;
        where = "sm_100/sm_103 (B200, B300) only";
        break;
    }
    if (!ok) throw mcc::Unsupported(in.name + " needs " + where + "; this GPU is " + arch_);
  }

  void launch(const mcc::Instr& in, size_t groups, const mcc::Images& im, mcc::Bytes& D) override {
    DevBuf da(im.A.size()), db(im.B.size()), dc(im.C.size()), dsa(im.SA.size()), dsb(im.SB.size()),
        dd(im.C.size()), ds(sizeof(int));
    const int zero = 0;
    auto put = [](DevBuf& dst, const mcc::Bytes& src) {
      if (!src.empty()) CUDA_CHECK(cudaMemcpy(dst.p, src.data(), src.size(), cudaMemcpyHostToDevice));
    };
    put(da, im.A);
    put(db, im.B);
    put(dc, im.C);
    put(dsa, im.SA);
    put(dsb, im.SB);
    CUDA_CHECK(cudaMemcpy(ds.p, &zero, sizeof zero, cudaMemcpyHostToDevice));
    entries_[index(in)].launch(groups, da.p, db.p, dc.p, dsa.p, dsb.p, dd.p, static_cast<int*>(ds.p));
    const cudaError_t le = cudaGetLastError();
    if (le == cudaErrorNoKernelImageForDevice || le == cudaErrorInvalidDeviceFunction)
      throw mcc::Unsupported(cuda_error("kernel launch", le) + ": this binary has no code for " +
                             arch_ + "; rebuild with MATCORE_CUDA_ARCHS including it (README.md)");
    if (le != cudaSuccess) throw mcc::RuntimeFailure(cuda_error("kernel launch", le));
    CUDA_CHECK(cudaDeviceSynchronize());
    int status = 0;
    CUDA_CHECK(cudaMemcpy(&status, ds.p, sizeof status, cudaMemcpyDeviceToHost));
    if (status)
      throw mcc::Unsupported("the " + arch_ + " code of this binary lacks " + in.name +
                             " (wgmma needs sm_90a code, tcgen05 sm_100a, the kind:: forms of "
                             "mma.sync sm_120a: see MATCORE_CUDA_ARCHS)");
    D.resize(im.C.size());
    CUDA_CHECK(cudaMemcpy(D.data(), dd.p, D.size(), cudaMemcpyDeviceToHost));
  }

 private:
  size_t index(const mcc::Instr& in) const { return static_cast<size_t>(&in - table_.data()); }

  std::vector<mcc::Instr> table_ = mcc::nv_table();
  std::vector<Entry> entries_ = {
#define NV_MMA(id, name, frag, at, bt, out, min_arch, ptx) {Kind::mma, min_arch, &launch_mma<id>},
#define NV_WGMMA(id, name, n, k, at, bt, out, ptx, imm) {Kind::wgmma, 900, &launch_wgmma<id>},
#define NV_TC05(id, name, n, k, at, bt, kind, a_code, b_code) {Kind::tc05, 1000, &launch_tc05<id>},
#define NV_MMA_BS(id, name, frag, at, bt, scale, vec, ptx) {Kind::mma, 1200, &launch_mma_bs<id>},
#define NV_TC05_BS(id, name, n, k, at, bt, scale, vec, kind, a_code, b_code) {Kind::tc05, 1000, &launch_tc05<id>},
#include "nv_instructions.def"
  };
  int cc_ = 0;
  std::string arch_;
};

}  // namespace

int main(int argc, char** argv) {
  CudaBackend be;
  return mcc::collector_main(be, argc, argv);
}
