// matcore: running a preset over a set of recorded samples (a/b/c/d files) and counting the
// samples whose d differs bit for bit.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "matcore/datapath.hpp"
#include "matcore/sample.hpp"
#include "matcore/vectors.hpp"

namespace mc {

struct SampleSet {
  size_t n = 0;
  int K = 0;
  std::vector<uint64_t> a, b;  ///< native a_fmt / b_fmt patterns, n*K
  std::vector<uint64_t> c;     ///< in out_fmt
  std::vector<uint64_t> d;     ///< as stored (binary32, or binary64)
  RoundedC c_rounded;          ///< c values a binary16 accumulator took rounded
  std::vector<uint64_t> a_lines, d_lines;  ///< 1-based line of each sample in the a and d files
};

/// Reads and converts a/b/c/d files (shared vector format). expect_k > 0 checks K. Errors
/// (InputError) name the file, line and field.
SampleSet load_sample_set(const Datapath& dp, const std::string& a, const std::string& b,
                          const std::string& c, const std::string& d, int expect_k = 0);

/// Evaluates every sample on `threads` threads (0 = all); returns the model's widened results.
/// Deterministic whatever the thread count.
std::vector<uint64_t> run_samples(const Datapath& dp, const SampleSet& s, unsigned threads = 0,
                                  bool progress = false);

/// Indices of the samples where the model differs from d.
std::vector<size_t> mismatches(const SampleSet& s, const std::vector<uint64_t>& got);

}  // namespace mc

namespace mc {

/// Streaming validation of large files (bounded memory, all cores): the files are read in
/// chunks, each chunk parsed and evaluated in parallel; results do not depend on the thread
/// count. Errors name the file, line and field.
struct StreamMismatch {
  uint64_t index = 0;  ///< 0-based sample index (line = index + 1 when there is no header)
  uint64_t line = 0;   ///< 1-based line in the a file
  uint64_t d_line = 0; ///< 1-based line in the d file
  uint64_t got = 0, want = 0;
  std::vector<uint64_t> a, b;
  uint64_t c = 0;
  std::vector<uint64_t> sa, sb;  ///< block-scaled datapaths: the sample's scales
};
struct StreamResult {
  uint64_t n = 0, mismatches = 0;
  int K = 0;
  std::vector<StreamMismatch> first;  ///< the first `keep` mismatches
  RoundedC c_rounded;                 ///< c values a binary16 accumulator took rounded
};
/// The scale files of a block-scaled datapath (docs/vector-format.md, "Block scales"): sa.txt
/// and sb.txt, one line of ceil(K / scale_block) 2-digit patterns per sample. Empty paths: the
/// files sa.txt and sb.txt beside the a file.
struct ScaleFiles {
  std::string a, b;
};
/// The scale files a command reads for dp (empty when dp has no scales): the given paths, or
/// sa.txt / sb.txt in the a file's folder (sa.npy / sb.npy beside an a.npy); a missing file is
/// an InputError naming it.
ScaleFiles resolve_scale_files(const Datapath& dp, const std::string& a_path, const ScaleFiles& given);

/// stream_files on the binary form (.npy arrays: matcore/npy.hpp; a .npy a file selects it): a,
/// b (N, K), c and d (N,), the output d (N,) written as .npy; block scales sa, sb (N,
/// ceil(K / scale_block)) (resolve_scale_files). One process.
StreamResult stream_npy(const Datapath& dp, const std::string& a, const std::string& b, const std::string& c,
                        const std::string& d, const std::string& out, int expect_k, bool zero_c, unsigned threads,
                        size_t keep, const ScaleFiles& scales = {});

/// sample --npy: the set write_samples writes (the same streams: the same bits), as DIR/a.npy,
/// b.npy (N, K) of the input formats' patterns and c.npy (N,) of binary32/binary64 patterns.
struct SampleSpec;
uint64_t write_samples_npy(const SampleSpec& s, const std::string& dir, unsigned threads = 0);

StreamResult validate_files(const Datapath& dp, const std::string& a, const std::string& b,
                            const std::string& c, const std::string& d, int expect_k = 0,
                            bool zero_c = false, unsigned threads = 0, size_t keep = 10,
                            bool progress = false, const ScaleFiles& scales = {});
/// The same engine: d optional (empty: nothing compared); `out` optional: the model's d values
/// are written there (8 or 16 hex digits per line), which makes matcore a stand-in for a device.
StreamResult stream_files(const Datapath& dp, const std::string& a, const std::string& b,
                          const std::string& c, const std::string& d, const std::string& out,
                          int expect_k, bool zero_c, unsigned threads, size_t keep, bool progress,
                          const ScaleFiles& scales = {});
/// The engine of the block-scaled datapaths (stream_files sends them here): a/b/c(/d) and the
/// scale files read whole, every sample through the reference stages on `threads` threads.
StreamResult stream_scaled(const Datapath& dp, const std::string& a, const std::string& b,
                           const std::string& c, const std::string& d, const std::string& out,
                           const ScaleFiles& scales, int expect_k, bool zero_c, unsigned threads,
                           size_t keep);

/// validate --regen: the inputs of a `matcore sample` run drawn again from spec (its seed,
/// strategy, K and ranges; N is the d file's length) instead of read, evaluated and compared
/// with the d file (its d as stored). Block-scaled datapaths are refused (their scales are read
/// from files). Errors name the d file's line.
StreamResult validate_regen(const Datapath& dp, const SampleSpec& spec, const std::string& d_path, bool zero_c,
                            unsigned threads, size_t keep);

}  // namespace mc
