#include "matcore/validate.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "matcore/model.hpp"
#include "matcore/vectors.hpp"

namespace mc {

SampleSet load_sample_set(const Datapath& dp, const std::string& fa, const std::string& fb,
                          const std::string& fc, const std::string& fd, int expect_k) {
  const int w = dp.a_fmt == kBinary64 ? 64 : 32;
  const AbFile A = read_ab_file(fa, expect_k, w);
  const AbFile B = read_ab_file(fb, A.K, w);
  const std::vector<uint64_t> C = read_cd_file(fc, w);
  const std::vector<uint64_t> D = read_cd_file(fd, dp.out_fmt == kBinary64 ? 64 : 32);
  const size_t n = A.samples();
  if (B.samples() != n || C.size() != n || D.size() != n)
    throw InputError("sample counts differ: " + fa + " has " + std::to_string(n) + ", " + fb +
                     " " + std::to_string(B.samples()) + ", " + fc + " " +
                     std::to_string(C.size()) + ", " + fd + " " + std::to_string(D.size()));
  SampleSet s;
  s.n = n;
  s.K = A.K;
  s.a.resize(A.v.size());
  s.b.resize(B.v.size());
  for (size_t i = 0; i < A.v.size(); ++i) {
    const std::string pos = std::to_string(i / A.K + 1) + ": value " + std::to_string(i % A.K + 1);
    s.a[i] = ingest_value(dp.a_fmt, dp.ingest, A.v[i], w, fa + ":" + pos);
    s.b[i] = ingest_value(dp.b_fmt, dp.ingest, B.v[i], w, fb + ":" + pos);
  }
  s.c.resize(n);
  for (size_t i = 0; i < n; ++i) s.c[i] = w == 64 ? C[i] : c_from_binary32(dp, C[i]);
  s.d = D;
  return s;
}

uint64_t widen_result(const Datapath& dp, uint64_t r) {
  if (dp.out_fmt == kBinary32 || dp.out_fmt == kBinary64) return r;
  return convert(dp.out_fmt, r, kBinary32, Rounding::RNE);
}

std::vector<uint64_t> run_samples(const Datapath& dp, const SampleSet& s, unsigned threads,
                                  bool progress) {
  std::vector<uint64_t> got(s.n);
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<size_t> done{0};
  auto work = [&](size_t s0, size_t s1) {
    for (size_t i = s0; i < s1; ++i) {
      got[i] = widen_result(dp, dot(dp, &s.a[i * s.K], &s.b[i * s.K], s.K, s.c[i]));
      if ((i & 1023) == 1023) done.fetch_add(1024, std::memory_order_relaxed);
    }
  };
  std::vector<std::thread> pool;
  const size_t chunk = (s.n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const size_t s0 = t * chunk, s1 = std::min(s.n, s0 + chunk);
    if (s0 < s1) pool.emplace_back(work, s0, s1);
  }
  // Progress bar on a terminal only; the thread split does not depend on it.
  progress = progress && isatty(fileno(stderr)) && s.n >= 100000;
  if (progress) {
    size_t last = ~size_t{0};
    while (done.load() + 1024 * pool.size() < s.n) {
      const size_t pct = 100 * done.load() / s.n;
      if (pct != last) {
        std::fprintf(stderr, "\r[%-50s] %3zu%%", std::string(pct / 2, '#').c_str(), pct);
        last = pct;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  for (auto& th : pool) th.join();
  if (progress) std::fprintf(stderr, "\r%60s\r", "");
  return got;
}

std::vector<size_t> mismatches(const SampleSet& s, const std::vector<uint64_t>& got) {
  std::vector<size_t> m;
  for (size_t i = 0; i < s.n; ++i)
    if (got[i] != s.d[i]) m.push_back(i);
  return m;
}

}  // namespace mc
