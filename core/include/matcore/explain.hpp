// matcore: explaining an observed d. Given a sample and the d a device (or a mismatch list of
// `matcore validate`) gave, print the preset's value at every stage (the core Trace) and every
// single-parameter variation of the preset that reproduces the observed d.
//
//   matcore explain --arch mi300x --type fp16 --a ... --b ... --c ... --d 0x3f800001
//   matcore validate ... > mism.txt ; matcore explain --arch mi300x --type fp16 --mismatches mism.txt
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "matcore/datapath.hpp"
#include "matcore/stages.hpp"

namespace mc {

/// One sample with its observed d.
struct ExplainSample {
  uint64_t index = 0;            ///< sample number (from the mismatch list or the file)
  std::vector<uint64_t> a, b;    ///< a_fmt / b_fmt bit patterns
  uint64_t c = 0;                ///< out_fmt bit pattern (as mc::dot takes it)
  uint64_t observed = 0;         ///< stored width: binary32 (binary16 results widened) or binary64
  bool has_observed = false;     ///< observed was given (a d file or --d)
  std::vector<uint64_t> sa, sb;  ///< block scales (scaled datapaths; empty: 1.0)
};

/// A preset with one parameter changed.
struct Variation {
  std::string param;             ///< Datapath field, e.g. "frac_bits"
  std::string from, to;          ///< rendered values, e.g. "24", "23"
  Datapath dp;
  std::string label() const { return param + " " + from + " -> " + to; }
};

/// Every single-parameter variation of dp: frac_bits/partial_frac/c_frac/sum_frac/acc_frac
/// +-span, each stage's rounding mode (out_round, prod_align, c_final_round), n_fma (powers of
/// two), adder kind, late_c, c_zero_exp, sub_in, sub_out, emin_lim, interleave,
/// prod_overflow_exp, prod_round_out, out_prec, overflow_to_inf, late_norm_rd, c_drop_gap,
/// pair_interleave, c_final_add, nan_keep_sign. Variations that fail validate_datapath are
/// left out.
std::vector<Variation> single_variations(const Datapath& dp, int span = 1);
/// single_variations with every value of each integer field over its range (limits: +-256 and
/// none): the single changes `explain` tries, so that no answer is missed for being far away.
std::vector<Variation> every_value_variations(const Datapath& dp, int span = 1);
/// The labels of vars[which] (grouped by field, in order) compacted: "frac_bits 24 -> 25..88 (64
/// values); out_round rtz -> rne".
std::string compact_labels(const std::vector<Variation>& vars, const std::vector<size_t>& which);

/// Two single variations of different fields applied together.
struct PairVariation {
  size_t first = 0, second = 0;  ///< indices into the single variations
  std::string label;             ///< "frac_bits 24 -> 25, n_fma 8 -> 16"
  Datapath dp;
};
/// Every pair of single variations of two different fields that reproduces the observed d of
/// every sample (appended to `out`, in the order of the single variations); returns the number
/// of valid pairs tried. The search `explain` runs when no single change explains all samples.
size_t pair_variations(const Datapath& dp, const std::vector<Variation>& vars,
                       const std::vector<ExplainSample>& samples, std::vector<PairVariation>& out);

/// d of dp for the sample, widened to the stored width.
uint64_t stored_result(const Datapath& dp, const ExplainSample& s, Trace* trace = nullptr);

struct Explanation {
  uint64_t model = 0;            ///< the preset's d (stored width)
  Trace trace;                   ///< the preset's stages
  std::vector<size_t> matching;  ///< indices into the variations that reproduce `observed`
};
Explanation explain_sample(const Datapath& dp, const std::vector<Variation>& vars,
                           const ExplainSample& s);

/// Reads the mismatch list `matcore validate` prints ("mismatch sample N ... hardware 0x..",
/// then "a:", "b:", "c:" lines). Throws std::invalid_argument on malformed input.
/// `source` names the log in errors ("LOG:12: a: '3c0000' is wider than 16 bits").
std::vector<ExplainSample> parse_mismatch_list(const Datapath& dp, std::istream& in,
                                               const std::string& source = "mismatch list");

/// Samples `idx` (0-based) of DIR/a.txt, b.txt, c.txt and DIR/d.txt (the observed d; needed
/// with need_d, else read when present). The files must hold the same number of samples and
/// their headers must name the datapath's formats (InputError otherwise). A c value that a
/// binary16 accumulator takes rounded adds a line to *notes.
std::vector<ExplainSample> load_dir_samples(const Datapath& dp, const std::string& dir,
                                            const std::vector<uint64_t>& idx, bool need_d,
                                            std::vector<std::string>* notes = nullptr);


}  // namespace mc
