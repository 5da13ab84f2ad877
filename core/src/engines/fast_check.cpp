// check_fast (fast.hpp): FastDot against the reference dot() on random samples.
#include <algorithm>
#include <random>
#include <sstream>
#include <vector>

#include "matcore/fast.hpp"
#include "matcore/model.hpp"
#include "matcore/sample.hpp"

namespace mc {

namespace {

std::vector<uint64_t> specials(const Format& f) {
  std::vector<uint64_t> v = {zero_bits(f, false), zero_bits(f, true), f.max_finite_bits(),
                             f.max_finite_bits() | (uint64_t{1} << (f.width() - 1)),
                             1, (uint64_t{1} << (f.width() - 1)) | 1};
  if (f.has_nan()) v.push_back(f.qnan_bits(false));
  if (f.has_inf()) {
    v.push_back(f.inf_bits(false));
    v.push_back(f.inf_bits(true));
  }
  return v;
}

struct Drawer {
  std::mt19937_64 g;
  explicit Drawer(uint32_t seed) : g(seed) {}
  uint64_t bits(const Format& f) {
    const uint64_t m = f.width() >= 64 ? ~uint64_t{0} : (uint64_t{1} << f.width()) - 1;
    return g() & m;
  }
  uint64_t expmant(const Format& f, int lo, int hi) {
    lo = std::max(lo, f.emin() - f.mbits - 2);
    hi = std::min(hi, f.emax());
    if (hi < lo) hi = lo;
    const int e = lo + static_cast<int>(g() % static_cast<uint64_t>(hi - lo + 1));
    const int ub = f.mbits + 1 > 24 ? 53 : 32;
    const uint64_t u = g() & ((uint64_t{1} << ub) - 1);
    return draw_expmant(f, e, u, ub);
  }
};

/// A block scale: one in 16 any pattern of the scale format (NaN, zero, the extreme exponents
/// among them), else a normal one within 2^-20 .. 2^20 (E8M0: 0x6b .. 0x93).
uint64_t draw_scale(Drawer& D, const Format& f) {
  if (D.g() % 16 == 0) return D.bits(f);
  const int e = f.bias + static_cast<int>(D.g() % 41) - 20;
  const int emax_field = (1 << f.ebits) - 2;  // the largest exponent field of a normal pattern
  const uint64_t E = static_cast<uint64_t>(std::clamp(e, 1, emax_field));
  return (E << f.mbits) | (D.g() & ((uint64_t{1} << f.mbits) - 1));
}

}  // namespace

FastCheck check_fast(const Datapath& dp, uint64_t n, uint32_t seed, int K) {
  if (K <= 0) K = dp.k_default;
  const FastDot fd(dp);
  Drawer D(seed);
  SampleSpec sn = sample_spec_for(dp, false), ss = sample_spec_for(dp, true);
  const auto sa = specials(dp.a_fmt), sb = specials(dp.b_fmt), sc = specials(dp.out_fmt);
  std::vector<uint64_t> a(static_cast<size_t>(K)), b(a.size());
  FastCheck r;
  // samples are checked in chunks: one by one (operator()) and as a batch (the lane kernels)
  constexpr size_t kChunk = 1024;
  std::vector<uint64_t> A, B, Cs, Dout(kChunk);
  // block-scaled: each sample's scales (per a sample), drawn by draw_scale
  const int per = dp.scaled() ? (K + dp.scale_block - 1) / dp.scale_block : 0;
  std::vector<uint64_t> SA, SB;
  uint64_t first_index = 0;
  auto flush = [&] {
    const size_t m = Cs.size();
    if (per) fd.batch(A.data(), B.data(), Cs.data(), Dout.data(), m, K, SA.data(), SB.data());
    else fd.batch(A.data(), B.data(), Cs.data(), Dout.data(), m, K);
    for (size_t j = 0; j < m; ++j) {
      const uint64_t* pa = &A[j * static_cast<size_t>(K)];
      const uint64_t* pb = &B[j * static_cast<size_t>(K)];
      const ScaleRefs sr = per ? ScaleRefs{&SA[j * per], &SB[j * per]} : ScaleRefs{};
      const uint64_t want = dot(dp, pa, pb, K, Cs[j], sr);
      const uint64_t got = fd(pa, pb, K, Cs[j], sr);
      ++r.samples;
      if (got == want && Dout[j] == want) continue;
      if (r.mismatches++ == 0) {
        std::ostringstream o;
        o << dp.name() << (dp.variant.empty() ? "" : " " + dp.variant) << " (" << fd.strategy()
          << ", lanes " << fd.lanes() << ") sample " << first_index + j << ": fast d = 0x"
          << to_hex_bits(dp.out_fmt, got) << ", batch d = 0x" << to_hex_bits(dp.out_fmt, Dout[j])
          << ", reference d = 0x" << to_hex_bits(dp.out_fmt, want) << "\n  a =";
        for (int k = 0; k < K; ++k) o << ' ' << to_hex_bits(dp.a_fmt, pa[k]);
        o << "\n  b =";
        for (int k = 0; k < K; ++k) o << ' ' << to_hex_bits(dp.b_fmt, pb[k]);
        o << "\n  c = " << to_hex_bits(dp.out_fmt, Cs[j]);
        for (int q = 0; q < per; ++q)
          o << (q ? " " : "\n  sa/sb = ") << to_hex_bits(dp.scale_fmt, sr.a[q]) << "/" << to_hex_bits(dp.scale_fmt, sr.b[q]);
        o << "\n  reference stages:\n";
        Trace t;
        dot(dp, pa, pb, K, Cs[j], sr, &t);
        o << t.text("    ");
        r.first = o.str();
      }
    }
    first_index += m;
    A.clear();
    B.clear();
    Cs.clear();
    SA.clear();
    SB.clear();
  };
  for (uint64_t i = 0; i < n; ++i) {
    const int kind = static_cast<int>(i % 4);
    const SampleSpec& sp = kind == 1 ? ss : sn;
    uint64_t c;
    if (kind == 2) {
      for (int k = 0; k < K; ++k) { a[k] = D.bits(dp.a_fmt); b[k] = D.bits(dp.b_fmt); }
      c = D.bits(dp.out_fmt);
    } else {
      // subnormal strategy: one sample in two has b and c from the normal ranges (products of
      // a subnormal and a large factor, near c)
      const SampleSpec& bs = kind == 1 && (D.g() & 1) ? sn : sp;
      for (int k = 0; k < K; ++k) {
        a[k] = D.expmant(dp.a_fmt, sp.ea_lo, sp.ea_hi);
        b[k] = D.expmant(dp.b_fmt, bs.eb_lo, bs.eb_hi);
      }
      c = D.expmant(dp.out_fmt, bs.ec_lo, bs.ec_hi);
      if (kind == 3) {
        // cancellation: neighbouring products of nearly equal magnitude and opposite sign
        for (int k = 0; k + 1 < K; k += 2) {
          a[k + 1] = a[k] ^ (D.g() & 1);
          b[k + 1] = b[k] ^ (uint64_t{1} << (dp.b_fmt.width() - 1));
        }
      }
    }
    if (D.g() % 8 == 0) {  // one sample in 8: specials injected, one operand in 16
      for (int k = 0; k < K; ++k) {
        if (D.g() % 16 == 0) a[k] = sa[D.g() % sa.size()];
        if (D.g() % 16 == 0) b[k] = sb[D.g() % sb.size()];
      }
      if (D.g() % 16 == 0) c = sc[D.g() % sc.size()];
    }
    bool special = !decode(dp.out_fmt, c).is_finite();
    for (int k = 0; k < K; ++k)
      special |= !decode(dp.a_fmt, a[k]).is_finite() || !decode(dp.b_fmt, b[k]).is_finite();
    r.specials += special;
    for (int q = 0; q < per; ++q) {
      SA.push_back(draw_scale(D, dp.scale_fmt));
      SB.push_back(draw_scale(D, dp.scale_fmt));
    }
    A.insert(A.end(), a.begin(), a.end());
    B.insert(B.end(), b.begin(), b.end());
    Cs.push_back(c);
    if (Cs.size() == kChunk || i + 1 == n) flush();
  }
  return r;
}

}  // namespace mc
