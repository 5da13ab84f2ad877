// matcore: randomized test inputs (section 5 of the paper).
//
//  * exponent-mantissa sampling (Algorithm 3): a_l = s * 2^e with e uniform on [e-, e+] and s
//    uniform on [-2+2^(1-f), 2-2^(1-f)] (f = precision of the format), rounded to nearest even
//    into the format; c likewise with f = 24. Mersenne Twister mt19937 seeded with `seed`
//    (0 by default), one stream for the whole set, drawn in file order (a_1..a_k, b_1..b_k, c
//    per sample), so the files do not depend on the thread count.
//  * independent bit sampling (section 5.2): every bit of the pattern is a fair coin; an
//    exponent field that would encode Inf/NaN is redrawn.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "matcore/datapath.hpp"
#include "matcore/format.hpp"

namespace mc {

enum class Strategy : uint8_t { ExpMant, Bits };

struct SampleSpec {
  Format a_fmt = kBinary16, b_fmt = kBinary16, c_fmt = kBinary32;
  int K = 16;
  uint64_t N = 1000;
  Strategy strategy = Strategy::ExpMant;
  int ea_lo = 0, ea_hi = 0, eb_lo = 0, eb_hi = 0, ec_lo = 0, ec_hi = 0;
  uint32_t seed = 0;
  bool native = true;  ///< fp8/fp16/bf16 values written in their own format (2 or 4 hex
                       ///< digits); false: widened to binary32 as in the hwdata files
  // block scales (scale_block > 0): sa.txt and sb.txt, ceil(K / scale_block) per sample, each
  // scale's exponent uniform on [es_lo, es_hi] (ue4m3: its 3 mantissa bits uniform too), drawn
  // from their own mt19937 stream (seed + 1) so that a/b/c do not depend on them
  Format scale_fmt = kE8M0;
  int scale_block = 0;
  int es_lo = -8, es_hi = 8;
};

/// The exponent ranges of sections 5.1.1-5.1.4 for the normal (`subnormal` false) or the
/// subnormal case, for any input format (the paper's values for fp16, bf16, tf32, fp8 FNUZ;
/// the same rule -- minimum normal to maximum normal exponent, or minimum subnormal to minimum
/// normal -- for the others; bf16/tf32/fp32 normal a, b capped at 63 so products stay finite).
void default_ranges(SampleSpec& s, bool subnormal);

/// The sample set of a datapath: its a/b formats, its k, c stored in binary32 (binary64 for
/// binary64 output), and the exponent ranges of default_ranges.
SampleSpec sample_spec_for(const Datapath& dp, bool subnormal = false);

/// One value by exponent-mantissa sampling: s * 2^e rounded (RNE) into f, where
/// s = (2 - 2^(1-p)) * (u * 2^(1-ubits) - 1) and u is a uniform draw of ubits bits (32 for
/// formats of at most 24 bits of precision, 53 for binary64).
uint64_t draw_expmant(const Format& f, int e, uint64_t u, int ubits);
/// The same through the general 128-bit rounder (reference for the fast path).
uint64_t draw_expmant_exact(const Format& f, int e, uint64_t u, int ubits);

/// Writes DIR/a.txt, DIR/b.txt, DIR/c.txt (and DIR/sa.txt, DIR/sb.txt with scales) in the shared vector format (a/b in their own format
/// when s.native and the format has 8 or 16 bits, else widened to binary32, or binary64 for
/// binary64 inputs), with a '#' provenance header line.
/// threads = 0: all hardware threads. Returns the number of samples written.
uint64_t write_samples(const SampleSpec& s, const std::string& dir, unsigned threads = 0,
                       bool progress = false);

/// The sample set write_samples writes, in memory, chunk by chunk: the same streams and the same
/// values, a and b as patterns of a_fmt and b_fmt themselves (the files may hold them widened to
/// binary32), c as the c file holds it (c_fmt: binary32 or binary64). use(first, n, a, b, c)
/// gets samples [first, first + n), a and b n*K values each. The block scales are not part of
/// it. threads = 0: all hardware threads.
using SampleChunk = std::function<void(uint64_t first, uint64_t n, const uint64_t* a, const uint64_t* b, const uint64_t* c)>;
void stream_samples(const SampleSpec& s, const SampleChunk& use, unsigned threads = 0);
/// The block scales write_samples writes to sa.txt and sb.txt: N * ceil(K / scale_block) each.
void sample_scales(const SampleSpec& s, std::vector<uint64_t>& sa, std::vector<uint64_t>& sb);

}  // namespace mc
