// validate --regen: a campaign that reads only the device's d. The inputs of a `matcore sample`
// run are drawn again from their seed (stream_samples: the same streams, the same bits as the
// files), evaluated by the fast kernels and compared with the d file, chunk by chunk. a and b
// come as patterns of their own formats; c as stored (binary32, or binary64) enters the
// accumulator as validate's c_operand takes it.
#include <algorithm>
#include <atomic>

#include "matcore/fast.hpp"
#include "matcore/threads.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"

namespace mc {

StreamResult validate_regen(const Datapath& dp, const SampleSpec& spec_in, const std::string& d_path, bool zero_c,
                            unsigned threads, size_t keep) {
  if (dp.scaled())
    throw InputError("--regen: " + dp.name() + " is block-scaled; its scales are read from sa.txt/sb.txt, not drawn again (give --a/--b/--c)");
  std::vector<uint64_t> d_lines;
  const std::vector<uint64_t> D = read_cd_file(d_path, stored_width(dp.out_fmt), &d_lines);
  if (D.empty()) throw InputError(d_path + ": no samples (empty file)");
  SampleSpec spec = spec_in;
  spec.N = D.size();
  threads = thread_count(threads);
  const int w = stored_width(dp.a_fmt), K = spec.K;
  const FastDot fd(dp);
  StreamResult r;
  r.n = spec.N;
  r.K = K;
  std::vector<uint64_t> C, G;  // a chunk's c in the accumulator format, and its d
  std::vector<char> rounded;   // c was rounded into a binary16 accumulator
  stream_samples(spec, [&](uint64_t first, uint64_t n, const uint64_t* a, const uint64_t* b, const uint64_t* c) {
    C.resize(n);
    G.resize(n);
    rounded.assign(n, 0);
    const uint64_t sub = (n + threads - 1) / threads;
    run_parallel(threads, [&](unsigned t) {
      const uint64_t i0 = std::min(n, t * sub), i1 = std::min(n, i0 + sub);
      for (uint64_t i = i0; i < i1; ++i) {
        bool rc = false;
        C[i] = zero_c ? zero_bits(dp.out_fmt, false) : c_operand(dp, c[i], w, &rc);
        rounded[i] = rc;
      }
      if (i1 > i0) fd.batch(&a[i0 * K], &b[i0 * K], &C[i0], &G[i0], static_cast<size_t>(i1 - i0), K);
    });
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t got = widen_result(dp, G[i]), want = D[first + i];
      if (rounded[i] && !r.c_rounded.count++) r.c_rounded.first_line = first + i + 2;  // after the header line
      if (got == want) continue;
      ++r.mismatches;
      if (r.first.size() >= keep) continue;
      StreamMismatch m;
      m.index = first + i;
      m.line = first + i + 2;  // the line of a.txt that `sample` would write (after its header)
      m.d_line = d_lines[first + i];
      m.got = got;
      m.want = want;
      m.a.assign(&a[i * K], &a[i * K] + K);
      m.b.assign(&b[i * K], &b[i * K] + K);
      m.c = C[i];
      r.first.push_back(std::move(m));
    }
  }, threads);
  return r;
}

}  // namespace mc
