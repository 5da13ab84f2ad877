// The accuracy of a datapath, measured: see explore.hpp.
#include "matcore/explore.hpp"

#include <algorithm>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <cerrno>
#include <sstream>
#include <type_traits>

#include "matcore/dist.hpp"
#include "matcore/fast.hpp"
#include "matcore/fields.hpp"
#include "matcore/model.hpp"
#include "matcore/stages.hpp"
#include "matcore/threads.hpp"
#include "matcore/vectors.hpp"

namespace mc {

namespace {

/// SplitMix64: a counter-based stream, so that sample i's inputs do not depend on how the
/// samples are shared among threads.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

uint64_t to_format(double x, const Format& f) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  return convert(kBinary64, u, f, Rounding::RNE);
}

/// The next value above x in f (toward +inf), or false when there is none that is finite.
bool next_up(const Format& f, uint64_t x, uint64_t& out) {
  const Unpacked u = decode(f, x);
  if (!u.is_finite()) return false;
  const uint64_t sign = uint64_t{1} << (f.width() - 1);
  if (!u.sign && x == f.max_finite_bits()) return false;  // formats without Inf (fp6/fp4): no wrap to -0
  if (u.cls == Class::Zero) out = 1;  // the smallest positive subnormal
  else if (!u.sign) out = x + 1;
  else out = x - 1;
  if (out == sign) out = 0;  // -(smallest subnormal) + ulp = 0 (FNUZ: 0x80 is NaN)
  return decode(f, out).is_finite();
}

/// Exponent window of loguniform values: the format's normal range without its top binade (a
/// value there may round to Inf), clipped so that a product stays far inside binary32 and a sum
/// of 10^5 of them does not overflow.
void log_range(const Format& f, int& lo, int& hi) {
  lo = std::max(f.emin(), -56);
  hi = std::min(f.emax() - 1, 56);
}

double draw(Workload w, const Format& f, Rng& g) {
  switch (w) {
    case Workload::Uniform01: return g.uniform();
    case Workload::Uniform11: return 2.0 * g.uniform() - 1.0;
    case Workload::LogUniform: {
      int lo, hi;
      log_range(f, lo, hi);
      const int e = lo + static_cast<int>(g.next() % static_cast<uint64_t>(hi - lo + 1));
      const double m = 1.0 + g.uniform();
      return (g.next() & 1 ? -1.0 : 1.0) * std::ldexp(m, e);
    }
    default: return g.normal();
  }
}

/// x rounded (RNE) into f, saturating at f's largest finite (OCP MX's saturating conversion).
uint64_t to_format_sat(double x, const Format& f) {
  const double mx = to_host_double(f, f.max_finite_bits());
  return to_format(std::max(-mx, std::min(mx, x)), f);
}

/// One operand's blocks quantised the way the OCP MX spec chooses scales (v1.0, 6.3): per block
/// of scale_block values, E8M0 scale 2^(floor(log2 amax) - emax_elem) (clamped to 2^-127..2^127;
/// an all-zero block: 1); UE4M3 (NVFP4) scale amax / max_elem rounded to UE4M3, then each value
/// / scale rounded, saturating, into the element format. Host doubles: they make the inputs.
void quantise_blocks(const Datapath& dp, const Format& f, const double* x, int k, uint64_t* q, uint64_t* s) {
  const Format& sf = dp.scale_fmt;
  const double max_elem = to_host_double(f, f.max_finite_bits());
  for (int j = 0, blk = 0; j < k; j += dp.scale_block, ++blk) {
    const int end = std::min(k, j + dp.scale_block);
    double amax = 0;
    for (int i = j; i < end; ++i) amax = std::max(amax, std::fabs(x[i]));
    uint64_t sb = unit_scale_bits(sf);
    if (amax > 0 && sf.enc == Encoding::Pow2) {
      const int e = std::max(-127, std::min(127, std::ilogb(amax) - f.emax()));
      sb = static_cast<uint64_t>(e + 127);
    } else if (amax > 0) {
      sb = to_format_sat(amax / max_elem, sf);  // ue4m3: sign bit clear for a positive value
    }
    s[blk] = sb;
    const double sv = to_host_double(sf, sb);
    for (int i = j; i < end; ++i) q[i] = sv == 0 ? zero_bits(f, false) : to_format_sat(x[i] / sv, f);
  }
}

struct Partial {
  uint64_t n = 0, finite = 0, nonzero = 0, correct = 0, mono_checked = 0, mono_ok = 0;
  double rel2 = 0, rel = 0, max_rel = 0, ulp = 0, abs_ulp = 0, max_abs_ulp = 0, max_bound = 0, nw2 = 0, nw = 0;
  double rel4 = 0, nw4 = 0, ulp2 = 0;  // for the standard errors
  uint64_t nw_n = 0;
  std::array<uint64_t, kUlpBins> hist{};
};

constexpr uint64_t kChunk = 128;

}  // namespace

const char* to_string(Workload w) {
  switch (w) {
    case Workload::Uniform01: return "uniform01";
    case Workload::Uniform11: return "uniform11";
    case Workload::Normal: return "normal";
    case Workload::LogUniform: return "loguniform";
    case Workload::Cancel: return "cancel";
  }
  return "?";
}

bool parse_workload(const std::string& s, Workload& w) {
  for (Workload x : {Workload::Uniform01, Workload::Uniform11, Workload::Normal, Workload::LogUniform, Workload::Cancel})
    if (s == to_string(x)) {
      w = x;
      return true;
    }
  return false;
}

void workload_scaled_inputs(Workload w, const Datapath& dp, int k, uint64_t seed, uint64_t index, uint64_t* a,
                            uint64_t* b, uint64_t* sa, uint64_t* sb) {
  Rng g{seed * 0xD1B54A32D192ED03ull ^ (index + 1) * 0x9E3779B97F4A7C15ull};
  g.next();
  std::vector<double> x(k), y(k);
  for (int i = 0; i < k; ++i) {
    x[i] = draw(w, kBinary32, g);
    y[i] = draw(w, kBinary32, g);
    if (w == Workload::Cancel && (i & 1)) {
      x[i] = x[i - 1];
      y[i] = -y[i - 1] * (1.0 + 0x1.0p-8 * g.normal());
    }
  }
  quantise_blocks(dp, dp.a_fmt, x.data(), k, a, sa);
  quantise_blocks(dp, dp.b_fmt, y.data(), k, b, sb);
}

void workload_inputs(Workload w, const Format& fa, const Format& fb, int k, uint64_t seed, uint64_t index,
                     uint64_t* a, uint64_t* b) {
  Rng g{seed * 0xD1B54A32D192ED03ull ^ (index + 1) * 0x9E3779B97F4A7C15ull};
  g.next();
  if (w == Workload::Cancel) {
    for (int i = 0; i < k; i += 2) {
      a[i] = to_format(g.normal(), fa);
      b[i] = to_format(g.normal(), fb);
      if (i + 1 < k) {
        a[i + 1] = a[i];
        b[i + 1] = to_format(-to_host_double(fb, b[i]) * (1.0 + 0x1.0p-8 * g.normal()), fb);
      }
    }
    return;
  }
  for (int i = 0; i < k; ++i) {
    a[i] = to_format(draw(w, fa, g), fa);
    b[i] = to_format(draw(w, fb, g), fb);
  }
}

namespace {
/// The exact products of a sample into prods[0..k) (scaled by their blocks' scales where dp has
/// them; sa, sb null: unit scales): the reference's terms, for explore and exact_result.
void exact_products(const Datapath& dp, const uint64_t* a, const uint64_t* b, int k, const uint64_t* sa,
                    const uint64_t* sb, Product* prods) {
  const uint64_t one = dp.scaled() ? unit_scale_bits(dp.scale_fmt) : 0;
  for (int j = 0; j < k; ++j) {
    prods[j] = multiply(decode(dp.a_fmt, a[j]), decode(dp.b_fmt, b[j]), MulCfg{});
    if (dp.scaled()) {
      const int q = j / dp.scale_block;
      prods[j] = scale_term(prods[j], scale_product(dp.scale_fmt, sa ? sa[q] : one, sb ? sb[q] : one));
    }
  }
}
}  // namespace

uint64_t exact_result(const Datapath& dp, const uint64_t* a, const uint64_t* b, int k, uint64_t c, const uint64_t* sa,
                      const uint64_t* sb) {
  std::vector<Product> terms(k + 1);
  exact_products(dp, a, b, k, sa, sb, terms.data());
  terms[k] = addend(decode(dp.out_fmt, c));
  const SpecialKind sk = resolve_specials(terms.data(), k + 1);  // NaN, Inf - Inf, Inf: dp's patterns
  if (sk != SpecialKind::None) return special_bits(dp, sk);
  bool neg_zero = true;  // an exact zero is -0 only when every term is -0 (IEEE, round to nearest)
  for (const Product& t : terms) neg_zero = neg_zero && t.cls == Class::Zero && t.sign;
  return exact_sum_round(terms.data(), k + 1, dp.out_fmt, RoundOpts{Rounding::RNE, true, dp.out_prec, false}, neg_zero);
}

uint64_t explore_reference(const Datapath& dp, const uint64_t* a, const uint64_t* b, int k, const uint64_t* sa,
                           const uint64_t* sb, double* exact_value) {
  std::vector<Product> prods(k);
  exact_products(dp, a, b, k, sa, sb, prods.data());
  Exact ex;
  const uint64_t ref = exact_sum_round(prods.data(), k, dp.out_fmt, RoundOpts{Rounding::RNE, true, dp.out_prec, false}, false, &ex);
  if (exact_value) *exact_value = (ex.sign ? -1.0 : 1.0) * std::ldexp(static_cast<double>(ex.mag), ex.lsb_exp);
  return ref;
}

namespace {

/// A sample of large error: (|normwise error|, sample index).
using Bad = std::pair<double, uint64_t>;

/// The order of the worst samples: larger error first, then smaller index.
bool worse(const Bad& x, const Bad& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; }

/// Keeps the `keep` largest samples in the bounded min-heap h (heap top: the least bad kept).
void keep_worst(std::vector<Bad>& h, const Bad& b, size_t keep) {
  if (h.size() < keep || worse(b, h.front())) {
    h.push_back(b);
    std::push_heap(h.begin(), h.end(), worse);
    if (h.size() > keep) {
      std::pop_heap(h.begin(), h.end(), worse);
      h.pop_back();
    }
  }
}

/// What every sample of one measurement reads: the datapath, the spec and the output's rounding.
struct Measure {
  const Datapath& dp;
  int k;
  const ExploreSpec& spec;
  const FastDot& fd;
  const Format& out;
  int prec;          ///< the output's precision: its fraction bits, or fewer where the datapath keeps fewer
  double u;          ///< unit roundoff of the output, 2^-(prec+1)
  RoundOpts ref_round;
};

/// One thread's buffers of a sample (inputs, scales, exact products) and its worst samples.
struct SampleWorker {
  const Measure& m;
  std::vector<uint64_t> a, b, sa, sb;
  std::vector<Product> prods;
  std::vector<Bad>& worst;
  SampleWorker(const Measure& ms, int ns, std::vector<Bad>& w)
      : m(ms), a(ms.k), b(ms.k), sa(ns), sb(ns), prods(ms.k), worst(w) {}

  /// The design's result on the current inputs (block-scaled: with the blocks' scales).
  uint64_t run_dp() const {
    return m.fd(a.data(), b.data(), m.k, zero_bits(m.out, false), ScaleRefs{sa.data(), sb.data()});
  }

  /// Sample i's inputs into a, b (and sa, sb): block-scaled, the workload's values quantised
  /// into blocks (quantise_blocks), the design and the exact reference both with their scales.
  void make_inputs(uint64_t i) {
    const Datapath& dp = m.dp;
    if (dp.scaled()) workload_scaled_inputs(m.spec.workload, dp, m.k, m.spec.seed, i, a.data(), b.data(), sa.data(), sb.data());
    else workload_inputs(m.spec.workload, dp.a_fmt, dp.b_fmt, m.k, m.spec.seed, i, a.data(), b.data());
  }

  /// The exact products into prods; false when one is NaN or Inf, else sum|a_j b_j| into abs_sum.
  bool products(double& abs_sum) {
    bool finite = true;
    exact_products(m.dp, a.data(), b.data(), m.k, sa.data(), sb.data(), prods.data());
    for (int j = 0; j < m.k; ++j) {
      if (prods[j].cls == Class::NaN || prods[j].cls == Class::Inf) finite = false;
      else if (prods[j].cls == Class::Normal)
        abs_sum += std::ldexp(static_cast<double>(prods[j].sig), prods[j].exp - prods[j].frac);
    }
    return finite;
  }

  /// Sample i's normwise error e_nw into P (and the worst samples).
  void add_normwise(Partial& P, double e_nw, uint64_t i) {
    P.max_bound = std::max(P.max_bound, std::fabs(e_nw) / m.k);
    P.nw += e_nw;
    P.nw2 += e_nw * e_nw;
    if (m.spec.worst) keep_worst(worst, Bad{std::fabs(e_nw), i}, m.spec.worst);  // the spec.worst largest |e_nw|
    P.nw4 += e_nw * e_nw * e_nw * e_nw;
    ++P.nw_n;
  }

  /// The relative and ulp errors of design value dv against the nonzero reference rv (pattern ref) into P.
  void add_relative(Partial& P, double dv, double rv, uint64_t ref) const {
    ++P.nonzero;
    const double rel = (dv - rv) / rv;
    P.rel += rel;
    P.rel2 += rel * rel;
    P.rel4 += rel * rel * rel * rel;
    P.max_rel = std::max(P.max_rel, std::fabs(rel));
    const Unpacked ur = decode(m.out, ref);
    const double ulp = std::ldexp(1.0, ur.exp - m.prec);
    const double eu = (dv - rv) / ulp * (rv < 0 ? -1.0 : 1.0);
    P.ulp += eu;
    P.ulp2 += eu * eu;
    P.abs_ulp += std::fabs(eu);
    P.max_abs_ulp = std::max(P.max_abs_ulp, std::fabs(eu));
    const double c = std::max(-8.0, std::min(8.0, std::nearbyint(eu)));
    ++P.hist[static_cast<int>(c) + 8];
  }

  /// Monotonicity of sample i (design value dv): a[j] one step up moves the result with b[j]'s sign.
  void check_monotonic(Partial& P, uint64_t i, double dv) {
    const int j = static_cast<int>(i % static_cast<uint64_t>(m.k));
    const double bj = to_host_double(m.dp.b_fmt, b[j]);
    uint64_t up;
    if (bj != 0 && next_up(m.dp.a_fmt, a[j], up)) {
      const uint64_t keep = a[j];
      a[j] = up;
      const double dv2 = to_host_double(m.out, run_dp());
      a[j] = keep;
      if (std::isfinite(dv2)) {
        ++P.mono_checked;
        if (bj > 0 ? dv2 >= dv : dv2 <= dv) ++P.mono_ok;
      }
    }
  }

  /// Measures sample i into P.
  void sample(Partial& P, uint64_t i) {
    ++P.n;
    make_inputs(i);
    const uint64_t d = run_dp();
    double abs_sum = 0;
    if (!products(abs_sum)) return;
    Exact ex;
    const uint64_t ref = exact_sum_round(prods.data(), m.k, m.out, m.ref_round, false, &ex);
    const double dv = to_host_double(m.out, d), rv = to_host_double(m.out, ref);
    if (!std::isfinite(dv) || !std::isfinite(rv)) return;
    ++P.finite;
    const double xv = (ex.sign ? -1.0 : 1.0) * std::ldexp(static_cast<double>(ex.mag), ex.lsb_exp);
    if (d == ref || (dv == 0 && rv == 0)) ++P.correct;
    if (abs_sum > 0) add_normwise(P, (dv - xv) / (m.u * abs_sum) * (xv < 0 ? -1.0 : 1.0), i);
    if (rv != 0) add_relative(P, dv, rv, ref);
    if (m.spec.monotonic) check_monotonic(P, i, dv);
  }
};

/// Under mpirun: every rank's chunks [ch_lo, ch_hi) of parts gathered into parts on every rank.
void gather_parts(std::vector<Partial>& parts, uint64_t ch_lo, uint64_t ch_hi) {
  static_assert(std::is_trivially_copyable<Partial>::value, "Partial travels as bytes");
  const std::string mine(reinterpret_cast<const char*>(parts.data() + ch_lo), (ch_hi - ch_lo) * sizeof(Partial));
  const std::vector<std::string> all = dist::allgather(mine);
  size_t at = 0;
  for (const std::string& part : all) {
    std::memcpy(static_cast<void*>(parts.data() + at), part.data(), part.size());
    at += part.size() / sizeof(Partial);
  }
}

/// The sums of the chunks' partials that the means and standard errors are made from.
struct Sums {
  double rel = 0, rel2 = 0, ulp = 0, abs_ulp = 0, nw = 0, nw2 = 0, rel4 = 0, nw4 = 0, ulp2 = 0;
  uint64_t nw_n = 0;
};

/// The chunks' partials combined in order (the same sums whatever the thread count): counts,
/// maxima and histogram into s, the sums returned.
Sums combine_parts(const std::vector<Partial>& parts, ErrorStats& s) {
  Sums t;
  for (const Partial& P : parts) {
    s.n += P.n;
    s.finite += P.finite;
    s.nonzero += P.nonzero;
    s.correct += P.correct;
    s.mono_checked += P.mono_checked;
    s.mono_ok += P.mono_ok;
    t.rel += P.rel;
    t.rel2 += P.rel2;
    t.ulp += P.ulp;
    t.abs_ulp += P.abs_ulp;
    t.nw += P.nw;
    t.nw2 += P.nw2;
    t.nw_n += P.nw_n;
    t.rel4 += P.rel4;
    t.nw4 += P.nw4;
    t.ulp2 += P.ulp2;
    s.max_rel = std::max(s.max_rel, P.max_rel);
    s.max_abs_ulp = std::max(s.max_abs_ulp, P.max_abs_ulp);
    s.max_bound = std::max(s.max_bound, P.max_bound);
    for (int i = 0; i < kUlpBins; ++i) s.ulp_hist[i] += P.hist[i];
  }
  return t;
}

/// The `keep` worst samples of all threads (and ranks), worst first.
std::vector<Bad> merge_worst(const std::vector<std::vector<Bad>>& worst_of, size_t keep) {
  std::string mine;
  for (const auto& h : worst_of)
    for (const Bad& b : h) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g %llu\n", b.first, static_cast<unsigned long long>(b.second));
      mine += buf;
    }
  std::vector<Bad> all;
  for (const std::string& part : dist::size() > 1 ? dist::allgather(mine) : std::vector<std::string>{mine}) {
    std::istringstream in(part);
    Bad b;
    while (in >> b.first >> b.second) all.push_back(b);
  }
  // the values travel as text: re-read the local ones the same way, so every rank sorts equal keys
  std::sort(all.begin(), all.end(), worse);
  if (all.size() > keep) all.resize(keep);
  return all;
}

/// Standard error of a mean from the sums of the values s1 and of their squares s2.
double se_mean(double s1, double s2, uint64_t n) {
  if (n < 2) return 0.0;
  const double m = s1 / n, var = std::max(0.0, (s2 / n - m * m) * n / (n - 1.0));
  return std::sqrt(var / n);
}

/// Standard error of an RMS from the sums of the squares s2 and fourth powers s4 (delta method).
double se_rms(double s2, double s4, uint64_t n) {
  if (n < 2) return 0.0;
  const double m2 = s2 / n, var2 = std::max(0.0, (s4 / n - m2 * m2) * n / (n - 1.0));
  return m2 > 0 ? std::sqrt(var2 / n) / (2 * std::sqrt(m2)) : 0.0;
}

/// The means, RMS values and standard errors of s from the combined sums t.
void finish_stats(ErrorStats& s, const Sums& t) {
  if (t.nw_n) {
    s.mean_nw = t.nw / t.nw_n;
    s.rms_nw = std::sqrt(t.nw2 / t.nw_n);
    s.se_mean_nw = se_mean(t.nw, t.nw2, t.nw_n);
    s.se_rms_nw = se_rms(t.nw2, t.nw4, t.nw_n);
  }
  if (s.nonzero) {
    s.mean_rel = t.rel / s.nonzero;
    s.rms_rel = std::sqrt(t.rel2 / s.nonzero);
    s.mean_ulp = t.ulp / s.nonzero;
    s.mean_abs_ulp = t.abs_ulp / s.nonzero;
    s.se_mean_rel = se_mean(t.rel, t.rel2, s.nonzero);
    s.se_rms_rel = se_rms(t.rel2, t.rel4, s.nonzero);
    s.se_mean_ulp = se_mean(t.ulp, t.ulp2, s.nonzero);
  }
  if (s.finite) {
    const double p = s.correct_frac();
    s.se_correct = std::sqrt(p * (1 - p) / s.finite);
  }
}

}  // namespace

ErrorStats measure_error(const Datapath& dp, int k, const ExploreSpec& spec,
                         const std::function<void(uint64_t)>& progress) {
  if (k < 1) throw std::invalid_argument("explore: k must be positive");
  const Format& out = dp.out_fmt;
  const uint64_t chunks = (spec.n + kChunk - 1) / kChunk;
  std::vector<Partial> parts(chunks);
  std::atomic<uint64_t> next{0}, done{0};
  std::mutex progress_mu;
  // the output's precision: its fraction bits, or fewer where the datapath keeps fewer (e8m13)
  const int prec = dp.out_prec >= 0 ? dp.out_prec : out.mbits;
  const double u = std::ldexp(1.0, -(prec + 1));
  const RoundOpts ref_round{Rounding::RNE, true, dp.out_prec, false};
  const unsigned nt = static_cast<unsigned>(std::min<uint64_t>(thread_count(spec.threads), chunks ? chunks : 1));

  const FastDot fd(dp);
  // under mpirun each rank measures its share of the chunks; the chunks' partial sums are then
  // combined on every rank in chunk order, as one process combines them (same bits)
  uint64_t ch_lo = 0, ch_hi = chunks;
  dist::share(chunks, ch_lo, ch_hi);
  next = ch_lo;
  const int ns = std::max(1, scales_per_sample(dp, k));
  const Measure m{dp, k, spec, fd, out, prec, u, ref_round};
  // the worst samples: a bounded min-heap per thread, merged in one order (error, then index)
  std::vector<std::vector<Bad>> worst_of(nt);
  run_parallel(nt, [&](unsigned t) {
    SampleWorker wk(m, ns, worst_of[t]);
    for (;;) {
      const uint64_t ch = next.fetch_add(1);
      if (ch >= ch_hi) break;
      Partial& P = parts[ch];
      const uint64_t end = std::min(spec.n, (ch + 1) * kChunk);
      for (uint64_t i = ch * kChunk; i < end; ++i) wk.sample(P, i);
      done.fetch_add(end - ch * kChunk);
      if (t == 0 && progress) {
        std::lock_guard<std::mutex> l(progress_mu);
        progress(done.load());
      }
    }
  });

  ErrorStats s;
  if (dist::size() > 1) gather_parts(parts, ch_lo, ch_hi);
  const Sums t = combine_parts(parts, s);
  if (spec.worst) s.worst = merge_worst(worst_of, spec.worst);
  finish_stats(s, t);
  s.k_u = k * u;
  return s;
}

int ErrorStats::ulp_quantile(double q) const {
  uint64_t total = 0;
  for (uint64_t h : ulp_hist) total += h;
  if (!total) return 0;
  const double want = q * total;
  uint64_t run = 0;
  for (int i = 0; i < kUlpBins; ++i) {
    run += ulp_hist[i];
    if (run >= want && run > 0) return i - kUlpBins / 2;
  }
  return kUlpBins / 2;
}

std::pair<std::string, std::vector<std::string>> parse_sweep(const std::string& text, const Datapath& dp) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw FieldError("--sweep: '" + text + "' is not field=LO..HI[:STEP] or field=V,V,...");
  const std::string name = text.substr(0, eq), rest = text.substr(eq + 1);
  if (name.find(',') != std::string::npos) {  // linked fields: one list of values for all of them
    std::vector<std::string> names;
    std::istringstream in(name);
    for (std::string n; std::getline(in, n, ',');) names.push_back(n);
    std::vector<std::string> values;
    for (const std::string& n : names) {
      if (n.empty()) throw FieldError("--sweep: '" + name + "' has an empty field name");
      const auto one = parse_sweep(n + "=" + rest, dp);  // each field checks every value
      if (!values.empty() && one.second != values) throw FieldError("--sweep " + name + ": the fields take different values");
      values = one.second;
    }
    return {name, values};
  }
  const Field* f = find_field(name);
  if (!f) {
    Datapath probe = dp;
    set_field(probe, name, "");  // throws the unknown-field message with the list
  }
  std::vector<std::string> values;
  const auto dots = rest.find("..");
  if (dots != std::string::npos && (f->kind == FieldKind::Int || f->kind == FieldKind::Limit)) {
    std::string hi_s = rest.substr(dots + 2), step_s = "1";
    const auto colon = hi_s.find(':');
    if (colon != std::string::npos) {
      step_s = hi_s.substr(colon + 1);
      hi_s = hi_s.substr(0, colon);
    }
    char* e1 = nullptr;
    char* e2 = nullptr;
    char* e3 = nullptr;
    const std::string lo_s = rest.substr(0, dots);
    errno = 0;
    const long lo = std::strtol(lo_s.c_str(), &e1, 10), hi = std::strtol(hi_s.c_str(), &e2, 10),
               step = std::strtol(step_s.c_str(), &e3, 10);
    if (lo_s.empty() || hi_s.empty() || *e1 || *e2 || *e3 || errno == ERANGE || step < 1 || hi < lo)
      throw FieldError("--sweep " + name + ": '" + rest + "' is not LO..HI[:STEP] with LO <= HI, STEP >= 1");
    for (const std::string& end : {lo_s, hi_s}) {  // both ends in the field's range, before any value is made
      Datapath probe = dp;
      set_field(probe, name, end);
    }
    if ((static_cast<__int128>(hi) - lo) / step + 1 > kMaxSweepValues)
      throw FieldError("--sweep " + name + ": '" + rest + "' has more than " + std::to_string(kMaxSweepValues) +
                       " values (docs/cli.md, \"Limits\")");
    for (long v = lo; v <= hi; v += step) values.push_back(std::to_string(v));
  } else {
    std::istringstream in(rest);
    std::string v;
    while (std::getline(in, v, ',')) {
      values.push_back(v);
      if (values.size() > static_cast<size_t>(kMaxSweepValues))
        throw FieldError("--sweep " + name + ": more than " + std::to_string(kMaxSweepValues) +
                         " values (docs/cli.md, \"Limits\")");
    }
  }
  if (values.empty()) throw FieldError("--sweep " + name + ": no values");
  for (const std::string& v : values) {
    Datapath probe = dp;
    set_field(probe, name, v);  // range of each value (combinations: when the design is built)
  }
  return {name, values};
}

}  // namespace mc
