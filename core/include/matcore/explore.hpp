// matcore: the accuracy of a datapath, measured (`matcore explore`, docs/explore.md).
//
//   inputs:    a workload (distribution of a_i, b_i), a dot length k, n samples, a seed;
//              sample i draws its a, b from a counter-based generator at (seed, i): the same
//              inputs for every datapath of the same formats, whatever the thread count
//   design:    d = dot(dp, a, b, k, c = 0), k chained through c in groups of n_fma as the
//              hardware chains it
//   reference: the exact sum of the k products (Kulisch accumulator), rounded once (RNE) to the
//              output format (to out_prec fraction bits where the datapath keeps fewer: e8m13;
//              u and ulps are those of that precision)
//   figures:   relative error (d - ref) / ref (RMS, max |.|, mean: the bias, negative = toward
//              zero), error in ulps of ref (mean: the bias; histogram), the fraction correctly
//              rounded (d == ref), the fraction monotonic (one a_j one ulp up moves d the way
//              the exact sum moves, or not at all), max |d - exact| / (k u sum|a_i b_i|),
//              the ratio to the classical bound (u = 2^-p of the output), and the normwise
//              error (d - exact) / (u sum|a_i b_i|) (RMS; mean signed: the bias), which stays
//              meaningful where the sum cancels and the relative error explodes.
// The statistics are host doubles (they summarise results; the results themselves are the
// model's bits).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "matcore/datapath.hpp"

namespace mc {

/// Limits of explore, checked before any work (docs/cli.md, "Limits"): values of one --sweep,
/// and values in the --k list.
constexpr int kMaxSweepValues = 1000;
constexpr int kMaxKValues = 64;


enum class Workload : uint8_t { Uniform01, Uniform11, Normal, LogUniform, Cancel };
/// "uniform01", "uniform11", "normal", "loguniform", "cancel".
const char* to_string(Workload w);
bool parse_workload(const std::string& s, Workload& w);

/// The inputs of sample `index` of a workload: k values of a_fmt and of b_fmt (bit patterns).
///   uniform01  a, b uniform in [0, 1)          uniform11  uniform in [-1, 1)
///   normal     standard normal (Box-Muller)    loguniform random sign, exponent uniform over
///              the normal range of the format (clipped so that no product overflows)
///   cancel     normal pairs with a_{2j+1} b_{2j+1} = -a_{2j} b_{2j} (1 + 2^-8 * normal): most
///              of each pair cancels, the sum is small against sum |a_i b_i|
/// Values are drawn in binary64 and rounded (RNE) into the formats (so uniform01 may give 1.0);
/// the sequence depends only on (seed, index).
void workload_inputs(Workload w, const Format& fa, const Format& fb, int k, uint64_t seed, uint64_t index,
                     uint64_t* a, uint64_t* b);
/// The inputs of a block-scaled datapath: the workload's values (binary32 range) quantised into
/// dp's blocks the way the OCP MX spec chooses scales (E8M0: 2^(floor(log2 amax) - emax of the
/// element format); UE4M3: amax / largest element, rounded), each value / scale rounded to
/// nearest, saturating, into the element format. sa, sb: ceil(k / scale_block) scales each.
void workload_scaled_inputs(Workload w, const Datapath& dp, int k, uint64_t seed, uint64_t index, uint64_t* a,
                            uint64_t* b, uint64_t* sa, uint64_t* sb);

/// The histogram of the signed error in ulps: bins -8 .. 8, the outer ones open (<= -8, >= 8).
constexpr int kUlpBins = 17;

struct ErrorStats {
  uint64_t n = 0;            ///< samples run
  uint64_t finite = 0;       ///< of those, with a finite d and reference (the others: overflow)
  uint64_t nonzero = 0;      ///< of the finite, with a nonzero reference (relative errors)
  double rms_rel = 0, max_rel = 0, mean_rel = 0;  ///< relative error (d - ref) / ref
  double mean_ulp = 0, mean_abs_ulp = 0, max_abs_ulp = 0;  ///< (d - ref) / ulp(ref)
  uint64_t correct = 0;      ///< d == ref bit for bit
  uint64_t mono_checked = 0, mono_ok = 0;
  double max_bound = 0;      ///< max |d - exact| / (k u sum |a_i b_i|)
  /// normwise error (d - exact) / sum |a_i b_i| in units of u: RMS and mean signed by the exact
  /// sum (negative = toward zero). Unlike the relative error it does not blow up when the sum
  /// cancels, so it shows the trend with k (the classical bound grows as k).
  double rms_nw = 0, mean_nw = 0;
  std::array<uint64_t, kUlpBins> ulp_hist{};
  /// Standard errors of the estimates (95% interval: +-1.96 se): of a mean, sqrt(var / (n - 1));
  /// of an RMS, by the delta method from the fourth moment; of a fraction, sqrt(p (1 - p) / n).
  double se_rms_rel = 0, se_mean_rel = 0, se_mean_ulp = 0, se_rms_nw = 0, se_mean_nw = 0, se_correct = 0;
  /// The q-quantile of the ulp error (rounded to whole ulps and clamped to +-8, from ulp_hist):
  /// robust where a few cancelling samples dominate mean_ulp.
  int ulp_quantile(double q) const;
  double k_u = 0;            ///< the classical bound k u (u of the output precision) of this k
  /// the fraction correctly rounded (of the finite) and monotonic (of those checked; 1: none)
  double correct_frac() const { return finite ? static_cast<double>(correct) / finite : 0.0; }
  double mono_frac() const { return mono_checked ? static_cast<double>(mono_ok) / mono_checked : 1.0; }
  /// With ExploreSpec::worst = N: the N samples of largest |normwise error|, (error, sample
  /// index), largest first (ties: lower index first); the same for any thread or rank count.
  std::vector<std::pair<double, uint64_t>> worst;
};

struct ExploreSpec {
  Workload workload = Workload::Normal;
  uint64_t n = 10000;
  uint64_t seed = 1;
  unsigned threads = 0;      ///< 0: every core
  bool monotonic = true;     ///< run the monotonicity check (a second dot per sample)
  size_t worst = 0;          ///< keep the indices of this many worst samples (ErrorStats::worst)
};

/// The reference of explore for one sample: the exact sum of the k products (with the blocks'
/// scales where dp has them; sa, sb may be null then) rounded once (RNE) to out_fmt, or to
/// out_prec bits where dp keeps fewer. *exact_value: the exact sum as a host double, if given.
uint64_t explore_reference(const Datapath& dp, const uint64_t* a, const uint64_t* b, int k, const uint64_t* sa,
                           const uint64_t* sb, double* exact_value = nullptr);
/// The exact a.b + c (c in out_fmt; block scales as for explore_reference) rounded once (RNE) to
/// out_fmt, or to out_prec bits where dp keeps fewer: what an ideal unit of dp's formats gives.
uint64_t exact_result(const Datapath& dp, const uint64_t* a, const uint64_t* b, int k, uint64_t c, const uint64_t* sa,
                      const uint64_t* sb);

/// Measures dp at dot length k. `progress(done)` is called now and then from the calling thread
/// with the samples done so far (may be empty). Deterministic for a seed whatever the threads.
ErrorStats measure_error(const Datapath& dp, int k, const ExploreSpec& spec,
                         const std::function<void(uint64_t)>& progress = {});

/// A swept field: "frac_bits=20..32", "frac_bits=20..32:4", "n_fma=4,8,16", "prod_align=truncate,rne".
/// FieldError naming the field when it is unknown or a value is out of its range (checked on dp).
std::pair<std::string, std::vector<std::string>> parse_sweep(const std::string& text, const Datapath& dp);

}  // namespace mc
