// matcore: feature detection from fixed probe vectors (section 4 of the paper, generalised):
// the table, the comparison, the files (section 5b).
//
// Layout of this file (docs/features.md describes every probe and decision):
//   1. exact values and their encodings (products split into a_i * b_i exactly)
//   2. the geometry of a format combination (which exponents the probes use)
//   3. the probe families: one emit_* function each, documented with its vectors
//   5a. the canonical (detectable) form of a datapath, used by the decisions and the comparison
//   4. the decisions: one decide_* function per feature, in the order they depend on each other
//   5b. the table, the comparison, the files
//
// Conventions of the probes. E is the base exponent of the probes near the top of the output
// precision (0 where the formats allow it), P the output precision (fraction bits) being probed,
// T = 2^(E-P-1) the "tie" (half an ulp of 2^E), Bc = 1.5*1.5*2^(E-1) = 2^E + 2^(E-3) a product
// whose significand 2.25 lies in [2,4): kept unnormalised its exponent is E-1 although its
// leading bit is E (the "carry" product that lets a unit keeping only P bits below its maximum
// exponent still show a round bit). Ef is the top exponent of the alignment sweeps (as high as
// products and the output allow, for the widest spread), Ec the exponent of a large c.
#include "matcore/output.hpp"
#include "matcore/features.hpp"
#include "matcore/fields.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "matcore/bits.hpp"
#include "matcore/model.hpp"
#include "matcore/vectors.hpp"
#include "features_common.hpp"

namespace mc {

using namespace feat;

// =============================================================================================
// 5b. The table, the comparison, the files.
// =============================================================================================

std::string compare_features(const Datapath& expected, const Datapath& detected) {
  const int K = detected.k_default;
  const Datapath e = canonical_features(expected, K), d = canonical_features(detected, K);
  std::ostringstream os;
  for (const Field& f : datapath_fields()) {  // every numerical field of the field table
    if (!f.numeric) continue;
    const std::string x = f.get(e), y = f.get(d);
    if (x != y) os << f.name << ": expected " << x << ", detected " << y << "\n";
  }
  return os.str();
}

std::string format_feature_table(const DetectedFeatures& f) {
  size_t w = 0;
  for (const auto& r : f.table) w = std::max(w, r.first.size());
  std::ostringstream os;
  for (const auto& r : f.table) os << r.first << std::string(w - r.first.size() + 2, ' ') << r.second << "\n";
  for (const std::string& n : f.notes) os << "note: " << n << "\n";
  return os.str();
}

// --- files ------------------------------------------------------------------------------------

namespace {
uint64_t widen_input(const Format& f, uint64_t bits) {
  if (f == kBinary64 || f == kBinary32) return bits;
  return convert(f, bits, kBinary32, Rounding::RNE);
}
}  // namespace

namespace {

/// a, b, c and manifest (and the scale files sa, sb when `scales`), committed together.
void emit_files(const FeatureVectors& v, const std::string& dir, const ScaleProbes* scales) {
  AbFile a, b;
  a.K = b.K = v.K;
  a.width = b.width = stored_width(v.a_fmt);
  for (uint64_t x : v.a) a.v.push_back(widen_input(v.a_fmt, x));
  for (uint64_t x : v.b) b.v.push_back(widen_input(v.b_fmt, x));
  std::vector<uint64_t> c;
  for (uint64_t x : v.c) c.push_back(feature_result_to_file(v.out_fmt, x));
  const std::string hdr = "# matcore features: type " + v.type + " (" + v.a_fmt.name + " x " +
                          v.b_fmt.name + " -> " + v.out_fmt.name + "), K = " +
                          std::to_string(v.K) + ", " + std::to_string(v.size()) +
                          " samples; line i belongs to probe i of manifest.txt\n";
  // the files appear together or not at all
  OutputFile fa(dir + "/a.txt"), fb(dir + "/b.txt"), fc(dir + "/c.txt"), fm(dir + "/manifest.txt");
  fa.write(ab_file_text(a, hdr));
  fb.write(ab_file_text(b, hdr));
  fc.write(cd_file_text(c, stored_width(v.out_fmt), hdr));
  std::string text = hdr;
  for (const std::string& p : v.probe) text += p + "\n";
  fm.write(text);
  if (!scales) return commit_all({&fa, &fb, &fc, &fm});
  OutputFile fsa(dir + "/sa.txt"), fsb(dir + "/sb.txt");
  fsa.write(scale_file_text(scales->sa, scales->per_sample, hdr));
  fsb.write(scale_file_text(scales->sb, scales->per_sample, hdr));
  commit_all({&fa, &fb, &fc, &fm, &fsa, &fsb});
}

}  // namespace

void emit_feature_vectors(const FeatureVectors& v, const std::string& dir) { emit_files(v, dir, nullptr); }

void emit_scale_probes(const ScaleProbes& p, const std::string& dir) { emit_files(p.v, dir, &p); }

uint64_t feature_result_to_file(const Format& out, uint64_t d) {
  if (out == kBinary32 || out == kBinary64) return d;
  return widen_exact(out, d, kBinary32);  // as validate/run write d files (NaN payload kept)
}

uint64_t feature_result_from_file(const Format& out, uint64_t s) {
  if (out == kBinary32 || out == kBinary64) return s;
  const Unpacked u = decode(kBinary32, s);
  if (u.cls == Class::NaN && out.enc == Encoding::IEEE) {
    uint64_t frac = (s & 0x7FFFFF) >> (23 - out.mbits);
    if (frac == 0) frac = uint64_t{1} << (out.mbits - 1);
    return (u.sign ? sign_bit(out) : 0) | (((uint64_t{1} << out.ebits) - 1) << out.mbits) | frac;
  }
  return convert(kBinary32, s, out, Rounding::RNE);
}

std::vector<uint64_t> read_feature_results(const FeatureVectors& v, const std::string& path) {
  const std::vector<uint64_t> raw = read_cd_file(path, stored_width(v.out_fmt));
  if (raw.size() != v.size())
    throw InputError(path + ": " + std::to_string(raw.size()) + " results for " +
                     std::to_string(v.size()) + " probe samples (see manifest.txt)");
  std::vector<uint64_t> d;
  d.reserve(raw.size());
  for (uint64_t x : raw) d.push_back(feature_result_from_file(v.out_fmt, x));
  return d;
}

}  // namespace mc
