// Feature detection for block-scaled units (issue 27): probes that decide where a unit applies
// its block scales, by fitting the fields that place them (group_size, group_align and the
// alignment width frac_bits) to the device's d, the other fields taken from a base datapath.
// docs/features.md ("Block scales") describes the probes and the fit.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "matcore/features.hpp"
#include "matcore/fields.hpp"
#include "matcore/model.hpp"
#include "matcore/vectors.hpp"

namespace mc {

namespace {

// The alignment widths the fit tries, and the gaps D (between the dominant term's exponent and
// the probed terms') the probes sweep: a cut at F bits shows where D crosses F.
constexpr int kFmin = 6, kFmax = 56;
constexpr int kDmin = 4, kDmax = 60;

/// One sample under construction: unit scales, zero products, c = +0.
struct ScaleSmp {
  std::vector<uint64_t> a, b, sa, sb;
  uint64_t c = 0;
  bool ok = true;
};

class ScaleEmitter {
 public:
  ScaleEmitter(const Datapath& dp, int K, ScaleProbes& out) : dp_(dp), K_(K), out_(out) {
    per_ = scales_per_sample(dp, K);
    one_ = unit_scale_bits(dp.scale_fmt);
  }
  int blocks() const { return per_; }
  int block() const { return dp_.scale_block; }
  int K() const { return K_; }

  ScaleSmp blank() const {
    ScaleSmp s;
    s.a.assign(K_, 0);
    s.b.assign(K_, 0);
    s.sa.assign(per_, one_);
    s.sb.assign(per_, one_);
    return s;
  }
  /// a_slot = x, b_slot = y (exact values of the element formats).
  void prod(ScaleSmp& s, int slot, const std::string& x, const std::string& y) const {
    if (slot < 0 || slot >= K_) { s.ok = false; return; }
    bool ia = false, ib = false;
    s.a[slot] = parse_operand(dp_.a_fmt, x, &ia);
    s.b[slot] = parse_operand(dp_.b_fmt, y, &ib);
    if (ia || ib) s.ok = false;
  }
  /// The scale product of block j is 2^e: e split between a's and b's scale.
  void scale(ScaleSmp& s, int j, int e) const {
    const int ea = e / 2, eb = e - ea;
    try {
      s.sa[j] = parse_scale(dp_.scale_fmt, "2^" + std::to_string(ea));
      s.sb[j] = parse_scale(dp_.scale_fmt, "2^" + std::to_string(eb));
    } catch (const InputError&) {
      s.ok = false;  // outside the scale format's range
    }
  }
  /// c = +-n * 2^e (n a small odd integer), exact in out_fmt (normal or subnormal), else the
  /// sample is not emitted.
  void c(ScaleSmp& s, uint64_t n, int e, bool neg) const {
    const Format& f = dp_.out_fmt;
    int len = 0;
    while ((n >> len) > 1) ++len;  // n = 1.x * 2^len
    const int top = e + len;
    uint64_t bits = 0;
    if (top > f.emax() || len > f.mbits) { s.ok = false; return; }
    if (top >= f.emin()) {
      bits = (static_cast<uint64_t>(top + f.bias) << f.mbits) | ((n << (f.mbits - len)) & ((uint64_t{1} << f.mbits) - 1));
    } else {
      const int sh = e - (f.emin() - f.mbits);  // in units of the smallest subnormal
      if (sh < 0) { s.ok = false; return; }
      bits = n << sh;
    }
    s.c = bits | (neg ? uint64_t{1} << (f.width() - 1) : 0);
  }
  void emit(const std::string& name, const ScaleSmp& s) {
    if (!s.ok) return;
    FeatureVectors& v = out_.v;
    v.a.insert(v.a.end(), s.a.begin(), s.a.end());
    v.b.insert(v.b.end(), s.b.begin(), s.b.end());
    v.c.push_back(s.c);
    v.probe.push_back(name);
    out_.sa.insert(out_.sa.end(), s.sa.begin(), s.sa.end());
    out_.sb.insert(out_.sb.end(), s.sb.begin(), s.sb.end());
  }

 private:
  const Datapath& dp_;
  int K_, per_ = 0;
  uint64_t one_ = 0;
  ScaleProbes& out_;
};

// sc/group (two scale blocks): c = 36 * 2^S1 and the product 6 * -6 of block 1 (scale 2^S1)
// cancel exactly but set e_max = S1 + 5 (S1 for a group aligned at its scale exponent); block 0
// (scale 2^S0, the smallest) holds +1.5 (slot 0) and -0.75 (slot j), cut at 2^(e_max - F). Cut
// one by one (ST-FDPA, or in different groups) they give trunc(1.5) + trunc(-0.75) in units of
// the cut, summed exactly first (one group: j < G) trunc(0.75): the smallest j whose result
// changes is G, the gap D = S1 - S0 where the cut appears is F.
void emit_group(ScaleEmitter& em, int s_lo, int s_hi) {
  if (em.K() < 2 * em.block()) return;
  for (int D = kDmin; D <= kDmax; ++D) {
    const int S0 = std::max(s_lo, s_hi - D), S1 = S0 + D;
    if (S1 > s_hi) continue;
    for (int j = 1; j < em.block(); j *= 2) {
      ScaleSmp s = em.blank();
      em.scale(s, 0, S0);
      em.scale(s, 1, S1);
      em.c(s, 9, S1 + 2, false);  // 36 * 2^S1
      em.prod(s, em.block(), "6", "-6");
      em.prod(s, 0, "1.5", "1");
      em.prod(s, j, "-1.5", "0.5");
      em.emit("sc/group/D" + std::to_string(D) + "/j" + std::to_string(j), s);
    }
  }
}

// sc/align (one scale block): block 0 has scale 2^S (the largest the scale format holds) and
// holds v = one product 1 | one product 0.25 | the cancelling pair 36 - 36 | nothing; c =
// +-1.5 * 2^(S - D) is cut at 2^(e_max - F). e_max is S + the products' exponent (0, -2, 5)
// for ST-FDPA; S for a group aligned at its scale exponent (a cancelled group keeps it); S - 2
// for 0.25 aligned at its sum; c's own for an all-zero group (or a cancelled one aligned at its
// sum): where the cut falls tells which.
void emit_align(ScaleEmitter& em, int S) {
  static const char* kind[] = {"one", "quarter", "cancel", "zero"};
  for (int v = 0; v < 4; ++v)
    for (int D = kDmin; D <= kDmax; ++D)
      for (bool neg : {false, true}) {
        ScaleSmp s = em.blank();
        em.scale(s, 0, S);
        if (v == 0) em.prod(s, 0, "1", "1");
        if (v == 1) em.prod(s, 0, "0.5", "0.5");
        if (v == 2) {
          em.prod(s, 0, "6", "6");
          em.prod(s, 1, "-6", "6");
        }
        em.c(s, 3, S - D - 1, neg);  // 1.5 * 2^(S - D)
        em.emit(std::string("sc/align/") + kind[v] + "/D" + std::to_string(D) + (neg ? "/neg" : ""), s);
      }
}

/// The range of scale-product exponents 2^e (e split between a's and b's scale) the scale
/// format holds: [*lo, *hi].
void scale_range(const Format& f, int* lo, int* hi) {
  auto holds = [&f](int e) {
    try {
      parse_scale(f, "2^" + std::to_string(e / 2));
      parse_scale(f, "2^" + std::to_string(e - e / 2));
      return true;
    } catch (const InputError&) {
      return false;
    }
  };
  *lo = *hi = 0;
  while (*hi < 254 && holds(*hi + 1)) ++*hi;
  while (*lo > -254 && holds(*lo - 1)) --*lo;
}

/// The candidate values of the fitted fields: group_size none or a power of two up to the
/// scale block (and K); group_align scale or sum; F in kFmin..kFmax.
std::vector<Datapath> candidates(const Datapath& base, int K) {
  std::vector<Datapath> v;
  std::vector<int> gs = {0};
  for (int g = 1; g <= std::min({K, base.scale_block, 64}); g *= 2) gs.push_back(g);
  for (int g : gs)
    for (int by_sum = 0; by_sum <= (g ? 1 : 0); ++by_sum)
      for (int F = kFmin; F <= kFmax; ++F) {
        Datapath d = base;
        d.group_size = g;
        d.group_by_sum = by_sum;
        d.frac_bits = F;
        if (g && d.n_fma % g) continue;  // groups within the base's n_fma (every other field is the base's)
        try {
          validate_datapath(d);
        } catch (const std::invalid_argument&) {
          continue;
        }
        v.push_back(d);
      }
  return v;
}

std::string describe(const Datapath& d) {
  return "group_size = " + (d.group_size ? std::to_string(d.group_size) : std::string("none")) +
         (d.group_size ? std::string(", group_align = ") + (d.group_by_sum ? "sum" : "scale") : "") +
         ", frac_bits = " + std::to_string(d.frac_bits);
}

}  // namespace

std::vector<uint64_t> run_scale_probes(const Datapath& dp, const ScaleProbes& p) {
  const int K = p.v.K;
  std::vector<uint64_t> d(p.v.size());
  for (size_t i = 0; i < d.size(); ++i)
    d[i] = dot(dp, &p.v.a[i * K], &p.v.b[i * K], K, p.v.c[i],
               ScaleRefs{&p.sa[i * p.per_sample], &p.sb[i * p.per_sample]});
  return d;
}

ScaleProbes scale_feature_vectors(const Datapath& base, int K) {
  if (!base.scaled()) throw std::invalid_argument("scale probes: " + base.name() + " has no block scales");
  if (K < 2 || K > 64) throw std::invalid_argument("scale probes: K must be in 2..64");
  ScaleProbes p;
  p.v.type = base.type;
  p.v.K = K;
  p.v.a_fmt = base.a_fmt;
  p.v.b_fmt = base.b_fmt;
  p.v.out_fmt = base.out_fmt;
  p.scale_fmt = base.scale_fmt;
  p.per_sample = scales_per_sample(base, K);
  ScaleEmitter em(base, K, p);
  // scale products that keep c (up to 36 * 2^e) and the probed terms normal in out_fmt
  int lo = 0, hi = 0;
  scale_range(base.scale_fmt, &lo, &hi);
  lo = std::max(lo, base.out_fmt.emin() + 2);
  hi = std::min(hi, base.out_fmt.emax() - 8);
  emit_group(em, lo, hi);
  emit_align(em, hi);
  return p;
}

DetectedFeatures decide_scale_features(const Datapath& base, const ScaleProbes& p, const std::vector<uint64_t>& d) {
  if (d.size() != p.v.size())
    throw std::invalid_argument("scale probes: " + std::to_string(d.size()) + " results for " +
                                std::to_string(p.v.size()) + " probe samples");
  DetectedFeatures r;
  r.samples = d.size();
  // Every candidate that reproduces every probe result; the fields' table keeps the first
  // (none before groups, scale before sum, the smallest F) and the notes name the others.
  std::vector<Datapath> fit;
  size_t best_rep = 0;
  Datapath best = base;
  for (const Datapath& c : candidates(base, p.v.K)) {
    const std::vector<uint64_t> got = run_scale_probes(c, p);
    size_t rep = 0;
    for (size_t i = 0; i < got.size(); ++i) rep += got[i] == d[i];
    if (rep == d.size()) fit.push_back(c);
    if (rep > best_rep) {
      best_rep = rep;
      best = c;
    }
  }
  // Among the fits, the one closest to the base (its own values where the probes leave them open).
  auto score = [&base](const Datapath& c) {
    return (c.frac_bits == base.frac_bits) * 4 + (c.group_size == base.group_size) * 2 + (c.group_by_sum == base.group_by_sum);
  };
  r.dp = fit.empty() ? best : *std::max_element(fit.begin(), fit.end(), [&](const Datapath& x, const Datapath& y) {
    return score(x) < score(y);
  });
  r.reproduced = fit.empty() ? best_rep : d.size();
  r.fits = fit.size();
  // A field is decided when every fitting candidate has the same value; else its values are listed.
  auto values = [&fit](auto get) {
    std::vector<std::string> v;
    for (const Datapath& c : fit)
      if (std::find(v.begin(), v.end(), get(c)) == v.end()) v.push_back(get(c));
    return v;
  };
  auto show = [](const std::vector<std::string>& v, const std::string& one) {
    if (v.size() <= 1) return one;
    std::string s = "undecided: " + v.front();
    for (size_t i = 1; i < v.size() && i < 8; ++i) s += ", " + v[i];
    return s + (v.size() > 8 ? ", ... (" + std::to_string(v.size()) + " values)" : std::string());
  };
  const Datapath& w = r.dp;
  const auto gs = values([](const Datapath& c) { return c.group_size ? std::to_string(c.group_size) : std::string("none"); });
  const auto al = values([](const Datapath& c) { return std::string(c.group_size ? (c.group_by_sum ? "sum" : "scale") : "-"); });
  const auto fs = values([](const Datapath& c) { return std::to_string(c.frac_bits); });
  const bool st_and_gst = gs.size() > 1 && std::find(gs.begin(), gs.end(), "none") != gs.end();
  r.table = {{"scale placement", st_and_gst ? "undecided (ST-FDPA and GST-FDPA candidates fit)"
                                 : w.group_size ? "GST-FDPA: products summed exactly in groups, each group scaled"
                                                : "ST-FDPA: each product scaled (exponents add)"},
             {"group_size (G)", show(gs, w.group_size ? std::to_string(w.group_size) : "none")},
             {"group_align", show(al, w.group_size ? (w.group_by_sum ? "sum (a cancelled group reads e_zero)"
                                                                     : "scale (a cancelled group keeps its scale exponent)")
                                                   : "-")},
             {"frac_bits (F)", show(fs, std::to_string(w.frac_bits))},
             {"model check", "reproduces " + std::to_string(r.reproduced) + " of " + std::to_string(r.samples) +
                                 " scale-probe results" + (fit.size() > 1 ? " (" + std::to_string(fit.size()) + " candidates do)" : "")}};
  if (fit.empty())
    r.notes.push_back("no candidate reproduces every scale probe: the unit is outside the fitted family (" +
                      describe(best) + " comes closest); check the base datapath's other fields");
  if (fit.size() > 1)
    r.notes.push_back("the probes cannot tell " + std::to_string(fit.size()) + " candidates apart (" + describe(fit.front()) +
                      " ... " + describe(fit.back()) + "): the undecided fields keep the base's values, to be decided otherwise");
  r.notes.push_back("fitted: group_size, group_align, frac_bits; every other field is the base datapath's (" +
                    base.name() + ")");
  return r;
}

DetectedFeatures detect_scale_features(const Datapath& preset, int K) {
  if (K <= 0) K = std::min(preset.k_default, 64);
  const ScaleProbes p = scale_feature_vectors(preset, K);
  return decide_scale_features(scale_fit_base(preset), p, run_scale_probes(preset, p));
}

Datapath scale_fit_base(const Datapath& dp) {
  Datapath b = dp;
  b.group_size = 0;
  b.group_by_sum = false;
  return b;
}

}  // namespace mc
