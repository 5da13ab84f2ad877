// The exact adder's lane kernels (CDNA1 fp16/bf16, SFMA; fast_lanes.hpp): the exact sum of a
// group's products and c, rounded once: two-limb sums (exact_run) or, for n_fma + 1 terms of
// narrow significands, the terms sorted by exponent (exact_sorted).
#include "kernels.hpp"
#include "wide.hpp"

namespace mc::lanes::MC_LANES_NS {

namespace {

/// The exact adder (CDNA1 fp16/bf16 and the binary64 FMA chains, fast.cpp exact_group): the
/// products and c summed exactly, one rounding by R. Wide: significands of up to 53 bits,
/// 106-bit products; else products of up to 24 x 24 bits.
///
/// Every term (the products, c) is an integer times 2^lsb, below 2^(top + 1). The terms whose
/// last bit lies at or above G = (the highest top) - 118 are summed exactly in 128 bits (two
/// 64-bit limbs a lane, with carries) on that grid. The others, far below the top term, are
/// summed exactly on a grid of their own (G2 = their highest top - 118; terms below G2 on
/// further grids, low_levels), and that sum joins the first shifted right to G, its bits below
/// G kept as a sticky: the exact sum then lies strictly between two neighbours on the grid,
/// which rounds as the exact sum does whenever the rounding position lies at least two bits
/// above the grid. A lane with a sum too small for that, or with terms beyond the last grid,
/// is bad (the scalar kernel of fast.cpp takes it).
template <bool Wide>
VU exact_run(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* cols, VU cbits,
             int n, int h, VI& bad_out) {
  W2 sig[65];
  VU ng[65];
  VI lsb[65], top[65];
  VI bad{}, all_top = bc(kNoExp);
  VU anz{}, aneg = VU{} + 1;
  for (int k = 0; k < n; ++k) {
    const size_t col = static_cast<size_t>(cols[k]) * L + h;
    const Dec x = dec(P.a, ld(At + col)), y = dec(P.b, ld(Bt + col));
    const W2 s = Wide ? mul53(x.sig, y.sig) : W2{mul32(x.sig, y.sig), VU{}};
    const VI xe = x.exp + y.exp, nz = (s.lo | s.hi) != 0;
    bad |= x.special | y.special;
    top[k] = nz ? xe + 1 : bc(kNoExp);  // a product < 2^(xe + 2)
    all_top = vmax(all_top, top[k]);
    anz |= U(nz);
    sig[k] = s;
    lsb[k] = xe - P.raw_frac;
    ng[k] = x.sign ^ y.sign;
    aneg &= ng[k];
  }
  if (P.ovf_on) {  // as in run(): the exact test only near the limit
    const VI near = all_top >= P.ovf;
    if (any(near))
      for (int l = 0; l < VL; ++l) {
        if (!near[l]) continue;
        for (int k = 0; k < n; ++k) {
          const uint64_t hi = sig[k].hi[l], lo = sig[k].lo[l];
          const int msb = hi ? 127 - __builtin_clzll(hi) : lo ? 63 - __builtin_clzll(lo) : -1;
          if (msb >= 0 && msb + lsb[k][l] >= P.ovf) bad[l] = -1;
        }
      }
  }
  const int cmb = static_cast<int>(P.c.mbits);
  const Dec c = dec(P.c, cbits);
  bad |= c.special;
  const VI cnz = c.sig != 0;
  anz |= U(cnz);
  aneg &= c.sign;
  sig[n] = W2{c.sig, VU{}};
  lsb[n] = c.exp - cmb;
  top[n] = cnz ? c.exp : bc(kNoExp);
  ng[n] = c.sign;
  all_top = vmax(all_top, top[n]);
  const VI G = all_top - 118;
  // the terms on G (a term below it shifts to 0 there); the terms below G
  W2 sum{VU{}, VU{}};
  VI low_top = bc(kNoExp);
  VI lows[65];
  for (int k = 0; k <= n; ++k) {
    const VI off = lsb[k] - G;
    const W2 t = term_at<Wide>(sig, k, n, off);
    sum = w_sel(ng[k] != 0, w_sub(sum, t), w_add(sum, t));
    lows[k] = (top[k] != kNoExp) & (off < 0);
    low_top = lows[k] ? vmax(low_top, top[k]) : low_top;
  }
  const VI has_low = low_top != kNoExp;
  VI st{};
  if (any(has_low)) {  // (rare for the presets but CDNA1 bf16: products far apart, c far below)
    const VI G2 = has_low ? low_top - 118 : G;
    const Level lv = level_sum<Wide>(sig, lsb, top, ng, lows, n, G2);
    W2 low = lv.sum;
    const VI rest_top = lv.rest_top;
    VI st_below{};  // bits dropped below G2
    if (any(rest_top != kNoExp)) {
      const LowSum lo = low_levels<Wide>(sig, lsb, top, ng, lows, n, G2, rest_top);
      low = w_add(low, lo.sum);
      st_below = lo.st;
      bad |= lo.bad;
    }
    const W2 f = w_sra(low, G - G2, st);
    st |= st_below;
    sum = w_add(sum, f);
  }
  // the magnitude: sum >= 0: sum (+ sticky); sum < 0: -sum - 1 + sticky, or -sum without
  const VI neg = S(sum.hi) < 0;
  const W2 nm = w_sub(w_sub(W2{VU{}, VU{}}, sum), W2{U(st) & 1, VU{}});
  const W2 mag = w_sel(neg, nm, sum);
  const VI m = w_msb(mag);
  bad |= st & (m < P.R.p + 2);  // the rounding position must lie above the grid's last bit
  // the top 62 bits of the magnitude and a sticky for the rest
  const VI sh = vmax(m - 61, VI{});
  VI st2;
  const W2 top62 = w_sra(mag, sh, st2);  // mag >= 0: a logical shift
  const VI zero = ~st & (sum.lo == 0) & (sum.hi == 0);
  const VU zs = anz != 0 ? VU{} + (P.zs_rd ? 1 : 0) : aneg;
  const VU r = round_mag(P.R, U(neg) & 1, top62.lo, G + sh, U(st | st2) & 1);
  bad_out |= bad;
  return zero ? (zs != 0 ? VU{} + P.R.z_n : VU{} + P.R.z_p) : r;
}

/// exact_run for products of at most 24 x 24 bits and c of at most 53 bits, N terms in all
/// (N - 1 = n_fma products; a short last group's missing ones are zeros), N <= 8, by sorted
/// accumulation in 64 bits. Each term is normalised, its leading one at bit 58 of a signed
/// 64-bit value v: (-1)^sign v 2^(t - 58), t its top. The terms are sorted by t, lowest first
/// (a network of compare-exchanges), and summed in that order: the sum so far is shifted right
/// to the next term's frame, its bits shifted out jammed into its last bit, and the term added:
///
///   bit   63 62  58                      0
///         |s |   |v: the term, <= 58 bits |    frame of the term's top t: last bit 2^(t - 58)
///         |  S >> (t - t_prev), jammed    |    (< 7 x 2^59: fits)
///
/// The term is exact on the frame with its last bit even (its width is at most 53 bits), so the
/// jammed sum stays the odd one of the two integers around the exact sum; it rounds as the
/// exact sum does where the rounding position lies at least two bits above the frame's last
/// bit. A lane with a jam and a sum too small for that is bad (the scalar kernel), as in
/// exact_run.
template <int N>
VU exact_sorted(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* cols, VU cbits,
                int n, int h, VI& bad_out) {
  static_assert(N >= 2 && N <= 8, "sums of at most 8 terms fit");
  VI t[N], v[N];
  VI bad{};
  VU anz{}, aneg = VU{} + 1;
  auto put = [&](int k, VU sig, VI lsb, VU sign) {
    const VI lz = clz(sig), nz = sig != 0;
    t[k] = nz ? lsb + 63 - lz : bc(kNoExp);
    const VI m = S(sll(sig, lz - 5));
    v[k] = sign != 0 ? -m : m;
    anz |= U(nz);
    aneg &= sign;
  };
  for (int k = 0; k + 1 < N; ++k) {
    if (k >= n) {  // a short last group
      t[k] = bc(kNoExp);
      v[k] = VI{};
      continue;
    }
    const size_t col = static_cast<size_t>(cols[k]) * L + h;
    const Dec x = dec(P.a, ld(At + col)), y = dec(P.b, ld(Bt + col));
    bad |= x.special | y.special;
    put(k, mul32(x.sig, y.sig), x.exp + y.exp - P.raw_frac, x.sign ^ y.sign);
    if (P.ovf_on) bad |= t[k] >= P.ovf;  // as exact_run: the product's top bit at ovf or above
  }
  const Dec c = dec(P.c, cbits);
  bad |= c.special;
  put(N - 1, c.sig, c.exp - static_cast<int>(P.c.mbits), c.sign);
  for (int i = 0; i + 1 < N; ++i)
    for (int k = 0; k + 1 < N - i; ++k) {
      const VI sw = t[k] > t[k + 1];
      const VI tk = t[k], vk = v[k];
      t[k] = sw ? t[k + 1] : tk;
      v[k] = sw ? v[k + 1] : vk;
      t[k + 1] = sw ? tk : t[k + 1];
      v[k + 1] = sw ? vk : v[k + 1];
    }
  VI s = v[0], top = t[0], jam{};
  for (int k = 1; k < N; ++k) {
    const VI d = vmin(t[k] - top, bc(63));  // >= 0; 63: floor and sticky as any larger count
    const VI lost = sll(U(s), 64 - d) != 0;
    s = S(U(sra(s, d)) | (U(lost) & 1)) + v[k];
    jam |= lost;
    top = t[k];
  }
  const VI neg = s < 0;
  const VU mag = U(neg ? -s : s);
  bad |= jam & (63 - clz(mag) < P.R.p + 2);
  const VU zs = anz != 0 ? VU{} + (P.zs_rd ? 1 : 0) : aneg;
  const VU r = round_mag(P.R, U(neg) & 1, mag, top - 58);
  bad_out |= bad;
  return s == 0 ? (zs != 0 ? VU{} + P.R.z_n : VU{} + P.R.z_p) : r;
}

/// Every group of the block, each one's d the next one's c.

}  // namespace

void exact_wide(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { chain(P, At, Bt, order, K, C, o, exact_run<true>); }
void exact_sorted_terms(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) {
  // exact_sorted of n_fma + 1 terms (LaneKernel::ExactSorted: 1 <= n_fma <= 7)
  static constexpr decltype(&exact_sorted<2>) kSorted[] = {exact_sorted<2>, exact_sorted<3>, exact_sorted<4>,
                                                           exact_sorted<5>, exact_sorted<6>, exact_sorted<7>,
                                                           exact_sorted<8>};
  chain(P, At, Bt, order, K, C, o, kSorted[P.n_fma - 1]);
}
void exact_any(const LaneParams& P, const uint64_t* At, const uint64_t* Bt, const int* order, int K,
    const uint64_t* C, LaneOut& o) { chain(P, At, Bt, order, K, C, o, exact_run<false>); }

}  // namespace mc::lanes::MC_LANES_NS
