// matcore: numerical feature detection from a fixed set of probe vectors (section 4 of the
// paper, generalised to every parameter of the Datapath).
//
//   feature_vectors(a, b, out, K)  -> a FIXED list of samples (a, b, c), each tagged with the
//                                     probe it belongs to ("family/P23/detail")
//   d values, however obtained     -> from dot() of a preset (model mode), or from real
//                                     hardware (the vectors emitted once, run on the device)
//   decide_features(vectors, d)    -> the Datapath parameters that explain them, decided in
//                                     order (rounding first, then structure, then alignment)
//
// Every decision compares the observed d of its probe family with what each candidate value
// of the field predicts, given the fields decided before it (the paper's "if X were the case we
// would have obtained d = ..."). docs/features.md lists every probe, its vectors and reasoning.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "matcore/datapath.hpp"

namespace mc {

/// A fixed, emitted set of probe vectors for one input type and K.
struct FeatureVectors {
  std::string type;
  int K = 0;
  Format a_fmt, b_fmt, out_fmt;
  std::vector<uint64_t> a, b;      ///< native a_fmt / b_fmt bit patterns, n*K (sample-major)
  std::vector<uint64_t> c;         ///< out_fmt patterns, one per sample
  std::vector<std::string> probe;  ///< the probe each sample belongs to (unique per sample)
  size_t size() const { return c.size(); }
};

/// The probe vectors for inputs a x b, output `out` and dot length K (2..64; use the
/// instruction's k: the probes of a fused adder's window need at least 4 products in a group,
/// and with K < 4 some of its features are not testable). Deterministic: the same arguments
/// give the same vectors, sample for sample.
FeatureVectors feature_vectors(const Format& a, const Format& b, const Format& out, int K,
                               const std::string& type = "");

struct DetectedFeatures {
  Datapath dp;                                               ///< the decided parameters
  std::vector<std::pair<std::string, std::string>> table;    ///< feature -> value (Table 3 like)
  std::vector<std::string> notes;      ///< ambiguities, fields not testable and why
  size_t samples = 0;                  ///< probe samples given
  size_t reproduced = 0;               ///< of those, reproduced bit for bit by `dp`
  size_t fits = 0;                     ///< scale fit: candidates that reproduce every result
};

/// Decides the features from the d values (out_fmt patterns, one per sample) of the vectors,
/// however obtained. Throws std::invalid_argument if d has the wrong length.
DetectedFeatures decide_features(const FeatureVectors& v, const std::vector<uint64_t>& d);

/// Model mode: runs the vectors through dot() of a preset and decides. K = 0: the preset's
/// k_default, at most 64 (the probes' range).
DetectedFeatures detect_features(const Datapath& preset, int K = 0);

/// The detectable form of a datapath for dot products of length K: fields that cannot change any
/// result (not applicable to its adder, or not reachable with its formats) are set to fixed
/// defaults, and equivalent values to one representative (n_fma >= K -> K, out_prec = all bits
/// -> -1, ...). Two datapaths with equal canonical forms give the same d for every input.
Datapath canonical_features(const Datapath& dp, int K);

/// Field-by-field comparison of the detectable parameters (canonical forms for K =
/// detected.k_default); "" when equal, else one line per difference.
std::string compare_features(const Datapath& expected, const Datapath& detected);

/// Table-3-like text table of the detected features.
std::string format_feature_table(const DetectedFeatures&);

// --- block scales (issue 27; docs/features.md, "Block scales") ------------------------------
/// Probes of a block-scaled unit: the vectors, and each sample's scales (per_sample patterns of
/// scale_fmt for a and for b, as sa.txt / sb.txt hold them).
struct ScaleProbes {
  FeatureVectors v;
  Format scale_fmt;
  int per_sample = 0;
  std::vector<uint64_t> sa, sb;
};
/// The scale probes for a block-scaled datapath's formats, scale format and block (only those
/// are read from `base`) and dot length K (2..64).
ScaleProbes scale_feature_vectors(const Datapath& base, int K);
/// Fits group_size, group_align and frac_bits to the d of the scale probes: every other field is
/// base's. The candidates that reproduce every result are kept; a field they disagree on is
/// reported undecided and keeps base's value (when a fit has it); when none fits, the closest.
DetectedFeatures decide_scale_features(const Datapath& base, const ScaleProbes& p, const std::vector<uint64_t>& d);
/// The d of every scale probe under datapath dp (a model standing in for the device).
std::vector<uint64_t> run_scale_probes(const Datapath& dp, const ScaleProbes& p);
/// Model mode: the probes through dot() of a block-scaled preset, fitted on scale_fit_base(preset).
DetectedFeatures detect_scale_features(const Datapath& preset, int K = 0);
/// The base of the model-mode fit: dp with group_size none and group_align scale (frac_bits is
/// kept: it is fitted, and stays where the probes leave it open).
Datapath scale_fit_base(const Datapath& dp);
/// Writes the scale probes as DIR/a.txt, b.txt, c.txt, sa.txt, sb.txt and manifest.txt.
void emit_scale_probes(const ScaleProbes& p, const std::string& dir);

// --- files (shared vector format, docs/vector-format.md) ------------------------------------
/// Writes DIR/a.txt, b.txt, c.txt (values widened to binary32, or binary64) and
/// DIR/manifest.txt (line i: sample i's probe name). The directory must exist.
void emit_feature_vectors(const FeatureVectors& v, const std::string& dir);
/// A d value as stored in d files: binary16 results widened to binary32 exactly (a NaN keeps its
/// payload, shifted into the top fraction bits as a hardware conversion does).
uint64_t feature_result_to_file(const Format& out, uint64_t d);
/// The inverse: a stored d value back to out_fmt (a NaN payload's top bits are kept).
uint64_t feature_result_from_file(const Format& out, uint64_t stored);
/// Reads a d file for these vectors (one value per sample) and converts it to out_fmt patterns.
std::vector<uint64_t> read_feature_results(const FeatureVectors& v, const std::string& path);

}  // namespace mc
