// The lane kernels' entry points of one instruction set (fast_lanes.hpp MC_LANES_DECLARE):
// transpose, c_final and block(), which runs the kernel that the lowering chose from the strategy
// table (fast_lower.cpp kLaneStrategies, LaneParams::kernel) through this set's table of entry
// points.
#include "kernels.hpp"
#include "terms.hpp"

namespace mc::lanes::MC_LANES_NS {

namespace {
/// Rows r0 .. r0 + 7 of the block: out already points at column r0. T: the rows' words
/// (uint32_t: widened to 64 bits on the way).
template <class T>
void transpose8(const T* rows, size_t stride, int K, uint64_t* out) {
  int k0 = 0;
#if defined(__AVX512F__)
  // 8 x 8 tiles: three rounds of two-register shuffles (vpermt2q)
  for (; k0 + 8 <= K; k0 += 8) {
    VUN r[8], t[8], u[8];
    for (int i = 0; i < 8; ++i) r[i] = ldn(rows + i * stride + k0);
    for (int i = 0; i < 8; i += 2) {
      t[i] = MC_SHUF(r[i], r[i + 1], 0, 8, 2, 10, 4, 12, 6, 14);
      t[i + 1] = MC_SHUF(r[i], r[i + 1], 1, 9, 3, 11, 5, 13, 7, 15);
    }
    for (int i : {0, 1, 4, 5}) {
      u[i] = MC_SHUF(t[i], t[i + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2] = MC_SHUF(t[i], t[i + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
    for (int i = 0; i < 4; ++i) {
      const VUN lo = MC_SHUF(u[i], u[i + 4], 0, 1, 2, 3, 8, 9, 10, 11);
      const VUN hi = MC_SHUF(u[i], u[i + 4], 4, 5, 6, 7, 12, 13, 14, 15);
      std::memcpy(out + (k0 + i) * L, &lo, sizeof lo);
      std::memcpy(out + (k0 + i + 4) * L, &hi, sizeof hi);
    }
  }
  // 8 x 4: two rows a register
  if (k0 + 4 <= K) {
    VUN w[4];
    for (int j = 0; j < 4; ++j) {  // (two 32-byte stores read back as one 64-byte load stall)
      const __m256i lo = ld4(rows + 2 * j * stride + k0);
      const __m256i hi = ld4(rows + (2 * j + 1) * stride + k0);
      w[j] = reinterpret_cast<VUN>(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
    }
    const VUN p0 = MC_SHUF(w[0], w[1], 0, 4, 8, 12, 1, 5, 9, 13);
    const VUN p1 = MC_SHUF(w[0], w[1], 2, 6, 10, 14, 3, 7, 11, 15);
    const VUN q0 = MC_SHUF(w[2], w[3], 0, 4, 8, 12, 1, 5, 9, 13);
    const VUN q1 = MC_SHUF(w[2], w[3], 2, 6, 10, 14, 3, 7, 11, 15);
    const VUN col[4] = {MC_SHUF(p0, q0, 0, 1, 2, 3, 8, 9, 10, 11),
                       MC_SHUF(p0, q0, 4, 5, 6, 7, 12, 13, 14, 15),
                       MC_SHUF(p1, q1, 0, 1, 2, 3, 8, 9, 10, 11),
                       MC_SHUF(p1, q1, 4, 5, 6, 7, 12, 13, 14, 15)};
    for (int i = 0; i < 4; ++i) std::memcpy(out + (k0 + i) * L, &col[i], sizeof col[i]);
    k0 += 4;
  }
#elif defined(__AVX2__)
  // 4 x 4 tiles, two per 8 rows
  for (; k0 + 4 <= K; k0 += 4) {
    for (int hh = 0; hh < 8; hh += 4) {
      VUN r[4];
      for (int i = 0; i < 4; ++i) r[i] = ldn(rows + (hh + i) * stride + k0);
      const VUN t0 = MC_SHUF(r[0], r[1], 0, 4, 2, 6), t1 = MC_SHUF(r[0], r[1], 1, 5, 3, 7);
      const VUN t2 = MC_SHUF(r[2], r[3], 0, 4, 2, 6), t3 = MC_SHUF(r[2], r[3], 1, 5, 3, 7);
      const VUN col[4] = {MC_SHUF(t0, t2, 0, 1, 4, 5), MC_SHUF(t1, t3, 0, 1, 4, 5),
                         MC_SHUF(t0, t2, 2, 3, 6, 7), MC_SHUF(t1, t3, 2, 3, 6, 7)};
      for (int i = 0; i < 4; ++i) std::memcpy(out + (k0 + i) * L + hh, &col[i], sizeof col[i]);
    }
  }
#endif
  for (; k0 < K; ++k0)
    for (int l = 0; l < 8; ++l) out[k0 * L + l] = rows[l * stride + k0];
}

template <class T>
void transpose_rows(const T* rows, size_t stride, int K, uint64_t* out) {
  static_assert(L % 8 == 0, "rows in eights");
  for (int r0 = 0; r0 < L; r0 += 8) transpose8(rows + r0 * stride, stride, K, out + r0);
}
}  // namespace

void transpose(const uint64_t* rows, size_t stride, int K, uint64_t* out) { transpose_rows(rows, stride, K, out); }
void transpose32(const uint32_t* rows, size_t stride, int K, uint64_t* out) {
  transpose_rows(rows, stride, K, out);
}

void c_final(const LaneParams& P, const uint64_t* acc, const uint64_t* C, LaneOut& o) {
  const int mb = static_cast<int>(P.c.mbits);
  for (int h = 0; h < L; h += VL) {
    const Dec a = dec(P.acc, ld(acc + h)), c = dec(P.c, ld(C + h));
    VI fb{};
    VU r{};
    VI slow = bc(-1);
    if (P.fast_cfinal) r = add_rne_ftz<true>(P.Rc, ld(acc + h), ld(C + h), slow = VI{});
    if (any(slow)) r = slow ? add2(P.Rc, term(a, mb), term(c, mb), fb) : r;
    const VI bad = a.special | c.special | (slow & fb);
    for (int l = 0; l < VL; ++l) {
      o.d[h + l] = r[l];
      o.bad[h + l] = static_cast<uint8_t>(bad[l] != 0);
    }
  }
}

namespace {
/// This set's entry point of each LaneKernel, in the enum's order.
constexpr KernelFn* kRun[] = {
    fma_b32,          fma_narrow,       fma_sum2,          fma_b64,          fma_wide,
    pairwise_bits,    pairwise_terms,   exact_wide,        exact_sorted_terms, exact_any,
    fused_trunc_early, fused_trunc_late, fused_trunc_late_inter2,
    fused_rd_early,   fused_rd_late,    fused_rd_late_inter2};
static_assert(sizeof(kRun) / sizeof(kRun[0]) == kLaneKernels, "one entry point per LaneKernel");
}  // namespace

void block(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
           const uint64_t* C, LaneOut& o) {
  kRun[static_cast<int>(P.kernel)](P, At, Bt, order, K, C, o);
}

void block_scaled(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int64_t* Et, const int* order,
                  int K, const uint64_t* C, LaneOut& o) {
  fused_scaled(P, At, Bt, Et, order, K, C, o);
}

}  // namespace mc::lanes::MC_LANES_NS
