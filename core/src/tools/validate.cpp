#include "matcore/validate.hpp"
#include "matcore/npy.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "matcore/dist.hpp"
#include "matcore/fast.hpp"
#include "matcore/model.hpp"
#include "matcore/output.hpp"
#include "matcore/threads.hpp"
#include "matcore/vectors.hpp"
#include "../io/validate_stream.hpp"

namespace mc {

SampleSet load_sample_set(const Datapath& dp, const std::string& fa, const std::string& fb,
                          const std::string& fc, const std::string& fd, int expect_k) {
  const int w = stored_width(dp.a_fmt);
  AbFile A = read_ab_file(fa, expect_k, dp.a_fmt);
  AbFile B = read_ab_file(fb, A.K, dp.b_fmt);
  std::vector<uint64_t> c_lines;
  const std::vector<uint64_t> C = read_cd_file(fc, w, &c_lines);
  std::vector<uint64_t> d_lines;
  const std::vector<uint64_t> D = read_cd_file(fd, stored_width(dp.out_fmt), &d_lines);
  const size_t n = A.samples();
  if (B.samples() != n || C.size() != n || D.size() != n)
    throw InputError("sample counts differ: " + fa + " has " + std::to_string(n) + ", " + fb +
                     " " + std::to_string(B.samples()) + ", " + fc + " " +
                     std::to_string(C.size()) + ", " + fd + " " + std::to_string(D.size()));
  SampleSet s;
  s.n = n;
  s.K = A.K;
  // the value itself where it enters exactly (the common case); the file, line and field of an
  // error message are put together only for the others
  auto operand = [&](const AbFile& F, const Format& f, const std::string& path, size_t i) {
    uint64_t x;
    if (F.native_bits) return F.v[i];
    if (ingest_exact(f, dp.ingest, F.v[i], F.width, &x)) return x;
    return ab_operand(f, dp.ingest, F, i,
                      path + ":" + std::to_string(F.line_of(i / A.K)) + ": value " + std::to_string(i % A.K + 1));
  };
  if (A.native_bits && B.native_bits) {  // the patterns themselves: no copy
    s.a = std::move(A.v);
    s.b = std::move(B.v);
  } else {  // sample by sample, a then b, so that the first bad value in file order is reported
    s.a.resize(A.v.size());
    s.b.resize(B.v.size());
    for (size_t i = 0; i < s.a.size(); ++i) {
      s.a[i] = operand(A, dp.a_fmt, fa, i);
      s.b[i] = operand(B, dp.b_fmt, fb, i);
    }
  }
  s.c.resize(n);
  for (size_t i = 0; i < n; ++i) {
    bool rounded = false;
    s.c[i] = c_operand(dp, C[i], w, &rounded);
    if (rounded && !s.c_rounded.count++) s.c_rounded.first_line = c_lines[i];
  }
  s.d = D;
  s.a_lines = A.lines;
  s.d_lines = d_lines;
  return s;
}

std::vector<uint64_t> run_samples(const Datapath& dp, const SampleSet& s, unsigned threads,
                                  bool progress) {
  std::vector<uint64_t> got(s.n);
  const FastDot fd(dp);
  threads = thread_count(threads);
  std::atomic<size_t> done{0};
  auto work = [&](size_t s0, size_t s1) {
    for (size_t i = s0; i < s1; i += 1024) {
      const size_t e = std::min(s1, i + 1024);
      fd.batch(&s.a[i * s.K], &s.b[i * s.K], &s.c[i], &got[i], e - i, s.K);
      for (size_t j = i; j < e; ++j) got[j] = widen_result(dp, got[j]);
      done.fetch_add(e - i, std::memory_order_relaxed);
    }
  };
  const size_t chunk = (s.n + threads - 1) / threads;
  // Progress bar on a terminal only; the thread split does not depend on it.
  progress = progress && isatty(fileno(stderr)) && s.n >= 100000;
  std::atomic<bool> finished{false};
  Background bar;
  if (progress) {
    bar.try_start([&] {
      size_t last = ~size_t{0};
      while (!finished.load()) {
        const size_t pct = std::min<size_t>(100, 100 * done.load() / s.n);
        if (pct != last) {
          std::fprintf(stderr, "\r[%-50s] %3zu%%", std::string(pct / 2, '#').c_str(), pct);
          last = pct;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  run_parallel(threads, [&](unsigned t) {
    const size_t s0 = std::min(s.n, t * chunk), s1 = std::min(s.n, s0 + chunk);
    work(s0, s1);
  });
  finished = true;
  bar.join();
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

// ------------------------------------------------------------------------------------------
// Streaming validation: the grid engine for well-formed files and the dispatch (the general
// engine, with precise errors: validate_general.cpp).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>

namespace mc {

StreamResult validate_files(const Datapath& dp, const std::string& pa, const std::string& pb,
                            const std::string& pc, const std::string& pd, int expect_k, bool zero_c,
                            unsigned threads, size_t keep, bool progress, const ScaleFiles& scales) {
  return stream_files(dp, pa, pb, pc, pd, "", expect_k, zero_c, threads, keep, progress, scales);
}

namespace {

using vstream::count_tokens;
using vstream::kHex;
using vstream::first_token_len;

// ------------------------------------------------------------------------------------------
// The fast engine for well-formed files: every data line of a file has the same length (as
// `matcore sample`, the collectors and `matcore run` write them), so line i of a file is at
// header + i * length. The files are mapped read-only and each worker parses and evaluates its
// own range of samples in place, with no reading thread and no copy. The parsers are strict:
// any line that is not exactly K values of the file's digit count separated by single spaces
// (and any other oddity: comment lines after the header, CRLF, a missing last newline, files
// of different lengths, a value the format cannot take) makes the engine give up, and the
// general line-by-line engine runs instead and reports the error with file, line and field.

struct Mapped {
  const char* p = nullptr;
  size_t size = 0;
  int fd = -1;
  explicit Mapped(const std::string& path) {
    fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return;
    note_input(path);
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return;
    size = static_cast<size_t>(st.st_size);
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) { size = 0; return; }
    ::madvise(m, size, MADV_SEQUENTIAL);
    p = static_cast<const char*>(m);
  }
  ~Mapped() {
    if (p) ::munmap(const_cast<char*>(p), size);
    if (fd >= 0) ::close(fd);
  }
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
};

/// Data line i of a file is at off + i * len (len includes the '\n').
struct Grid {
  bool ok = false;
  size_t off = 0, len = 0;
  uint64_t n = 0;
  uint64_t first_line = 1;  ///< 1-based line number of data line 0
};

Grid grid_of(const Mapped& m) {
  Grid g;
  if (!m.p) return g;
  size_t at = 0;
  for (;;) {  // leading '#' comment lines
    if (at >= m.size) return g;
    const void* nl = std::memchr(m.p + at, '\n', m.size - at);
    if (!nl) return g;
    const size_t end = static_cast<size_t>(static_cast<const char*>(nl) - m.p);
    if (m.p[at] != '#') {
      g.off = at;
      g.len = end - at + 1;
      break;
    }
    at = end + 1;
    ++g.first_line;
  }
  if (g.len < 2 || (m.size - g.off) % g.len) return g;
  g.n = (m.size - g.off) / g.len;
  g.ok = true;
  return g;
}

using hex::HexPairTable;
using hex::hex_pairs;
using hex::hex_token;
using hex::swar_hex8;

/// A line of exactly K tokens of `digits` hex digits, single spaces, '\n' at the end.
inline bool strict_ab(const HexPairTable& t, const char* p, int K, int digits, uint64_t* out) {
  int k = 0;
  if (digits == 4) {  // six values at a time with AVX2 (hex_simd.cpp), then two per 8-character check
    k = hex::hex4_prefix(p, K, out);
    if (k < 0) return false;
    p += 5 * k;
    for (; k + 1 < K; k += 2, p += 10) {
      uint32_t x0, x1;
      std::memcpy(&x0, p, 4);
      std::memcpy(&x1, p + 5, 4);
      uint64_t v;
      if (!swar_hex8(x0 | (static_cast<uint64_t>(x1) << 32), v)) return false;
      out[k] = v >> 16;
      out[k + 1] = v & 0xFFFF;
      if (p[4] != ' ' || p[9] != (k + 1 == K - 1 ? '\n' : ' ')) return false;
    }
  }
  for (; k < K; ++k, p += digits + 1) {
    if (!hex_token(t, p, digits, out[k])) return false;
    if (p[digits] != (k == K - 1 ? '\n' : ' ')) return false;
  }
  return true;
}

/// A c/d line of the grid: 8 or 16 hex digits, or 32 binary digits (binary32), then '\n'.
inline bool strict_cd(const HexPairTable& t, const char* p, size_t len, int width, uint64_t& v) {
  if (len == static_cast<size_t>(width / 4 + 1)) return hex_token(t, p, width / 4, v) && p[width / 4] == '\n';
  if (width == 32 && len == 33) {
    v = 0;
    for (int i = 0; i < 32; ++i) {
      const unsigned d = static_cast<unsigned char>(p[i]) - '0';
      if (d > 1) return false;
      v = (v << 1) | d;
    }
    return p[32] == '\n';
  }
  return false;
}

struct GiveUp {};  // the grid engine cannot take these files: use the general engine

// A StreamResult as bytes (MPI: the ranks' results gathered on every rank).
void put64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
uint64_t get64(const std::string& s, size_t& at) {
  uint64_t v = 0;
  std::memcpy(&v, s.data() + at, 8);
  at += 8;
  return v;
}
std::string encode_result(const StreamResult& r) {
  std::string s;
  put64(s, r.n);
  put64(s, r.mismatches);
  put64(s, static_cast<uint64_t>(r.K));
  put64(s, r.c_rounded.count);
  put64(s, r.c_rounded.first_line);
  put64(s, r.first.size());
  for (const StreamMismatch& m : r.first) {
    for (uint64_t v : {m.index, m.line, m.d_line, m.got, m.want, m.c, static_cast<uint64_t>(m.a.size()),
                       static_cast<uint64_t>(m.b.size()), static_cast<uint64_t>(m.sa.size()), static_cast<uint64_t>(m.sb.size())})
      put64(s, v);
    for (const std::vector<uint64_t>* x : {&m.a, &m.b, &m.sa, &m.sb})
      for (uint64_t v : *x) put64(s, v);
  }
  return s;
}
StreamResult decode_result(const std::string& s) {
  StreamResult r;
  size_t at = 0;
  r.n = get64(s, at);
  r.mismatches = get64(s, at);
  r.K = static_cast<int>(get64(s, at));
  r.c_rounded.count = get64(s, at);
  r.c_rounded.first_line = get64(s, at);
  r.first.resize(get64(s, at));
  for (StreamMismatch& m : r.first) {
    m.index = get64(s, at);
    m.line = get64(s, at);
    m.d_line = get64(s, at);
    m.got = get64(s, at);
    m.want = get64(s, at);
    m.c = get64(s, at);
    m.a.resize(get64(s, at));
    m.b.resize(get64(s, at));
    m.sa.resize(get64(s, at));
    m.sb.resize(get64(s, at));
    for (std::vector<uint64_t>* x : {&m.a, &m.b, &m.sa, &m.sb})
      for (uint64_t& v : *x) v = get64(s, at);
  }
  return r;
}
/// The ranks' results of their sample ranges as the result of one process: counts summed, the
/// first mismatches and the first rounded c in sample order (rank r's samples precede r+1's).
StreamResult merge_ranks_impl(const StreamResult& mine, size_t keep) {
  if (dist::size() == 1) return mine;
  StreamResult res;
  for (const std::string& part : dist::allgather(encode_result(mine))) {
    StreamResult r = decode_result(part);
    res.n = r.n;
    res.K = r.K;
    res.mismatches += r.mismatches;
    if (r.c_rounded.count && !res.c_rounded.count) res.c_rounded.first_line = r.c_rounded.first_line;
    res.c_rounded.count += r.c_rounded.count;
    for (StreamMismatch& m : r.first)
      if (res.first.size() < keep) res.first.push_back(std::move(m));
  }
  return res;
}

/// The grid engine; throws GiveUp when the files are not all well-formed grids.
/// One run of the grid engine over files of equal-length lines (the shape grid_of finds): each
/// thread parses its own range of samples in place, in blocks that the fast kernels' batch
/// evaluates. Construction throws GiveUp when the files are not of that shape.
class GridRun {
 public:
  GridRun(const Datapath& dp, const std::string& pa, const std::string& pb, const std::string& pc,
          const std::string& pd, const std::string& out, int expect_k, bool zero_c, unsigned threads, size_t keep,
          bool progress);
  StreamResult run();

 private:
  struct Part {
    uint64_t mismatches = 0;
    std::vector<StreamMismatch> first;
    RoundedC c_rounded;
    std::exception_ptr err;  // an output write error
  };
  /// A block's buffers: the operands, c, the given d and the model's d of each sample.
  struct Buf {
    std::vector<uint64_t> A, B, C, D, G;
    std::string text;
    std::vector<char> raw[4];  ///< the block's lines of a, b, c, d (load)
    bool ab_done = false;      ///< A and B already parsed for the whole block (hex4_lines)
    uint64_t b0 = 0;           ///< the block's first sample
  };
  /// Reads the lines of samples [b0, b1) of each file into x.raw with pread: copied out of the
  /// page cache several times faster than loads through the mapping's 4 KiB pages.
  void load(Buf& x, uint64_t b0, uint64_t b1) const;
  /// Parses sample i into slot j of the block; false when the grid engine cannot take it.
  bool parse(Part& pt, Buf& x, uint64_t i, size_t j) const;
  /// Writes and compares the evaluated samples [b0, b1) (slots 0..).
  void record(Part& pt, Buf& x, uint64_t b0, uint64_t b1) const;
  /// Thread t: samples [i0, i1), block by block.
  void work(unsigned t, uint64_t i0, uint64_t i1);
  const char* line(const Buf& x, int f, const Grid& g, uint64_t i) const { return x.raw[f].data() + (i - x.b0) * g.len; }

  const Datapath& dp;
  const bool zero_c;
  const size_t keep;
  const int w, dw;
  const bool have_d;
  const FastDot fd;
  const Mapped ma, mb, mc_;
  std::unique_ptr<Mapped> md;
  Grid ga, gb, gc, gd;
  int K = 0;
  AbForm fa, fb;
  unsigned threads;
  bool progress;
  uint64_t n = 0, lo = 0, hi = 0;  // under mpirun: this rank's samples [lo, hi) (dist.hpp)
  std::unique_ptr<dist::SharedOutput> fo;
  size_t ol = 0;  // bytes of an output line
  const HexPairTable& hp = hex_pairs();
  std::atomic<bool> give_up{false};
  std::atomic<uint64_t> done{0};
  std::vector<Part> parts;
};

GridRun::GridRun(const Datapath& dp, const std::string& pa, const std::string& pb, const std::string& pc,
                 const std::string& pd, const std::string& out, int expect_k, bool zero_c, unsigned threads,
                 size_t keep, bool progress)
    : dp(dp), zero_c(zero_c), keep(keep), w(stored_width(dp.a_fmt)), dw(stored_width(dp.out_fmt)), have_d(!pd.empty()),
      fd(dp), ma(pa), mb(pb), mc_(pc), md(have_d ? new Mapped(pd) : nullptr), threads(threads), progress(progress) {
  ga = grid_of(ma), gb = grid_of(mb), gc = grid_of(mc_);
  gd = have_d ? grid_of(*md) : gc;
  if (!ga.ok || !gb.ok || !gc.ok || !gd.ok) throw GiveUp{};
  n = ga.n;
  if (gb.n != n || gc.n != n || gd.n != n) throw GiveUp{};
  const char* la0 = ma.p + ga.off;
  K = count_tokens(la0, ga.len - 1);
  if (K == 0 || K > kMaxK || (expect_k > 0 && K != expect_k)) throw GiveUp{};
  fa = ab_form(dp.a_fmt, first_token_len(la0, ga.len - 1));
  fb = ab_form(dp.b_fmt, first_token_len(mb.p + gb.off, gb.len - 1));
  if ((fa.digits & 1) || (fb.digits & 1)) throw GiveUp{};
  if (ga.len != static_cast<size_t>(K) * (fa.digits + 1) || gb.len != static_cast<size_t>(K) * (fb.digits + 1))
    throw GiveUp{};
  this->threads = thread_count(threads);
  hi = n;
  dist::share(n, lo, hi);
  fo.reset(out.empty() ? nullptr : new dist::SharedOutput(out));
  ol = static_cast<size_t>(dw / 4 + 1);
  parts.resize(this->threads);
}

bool GridRun::parse(Part& pt, Buf& x, uint64_t i, size_t j) const {
  uint64_t* A = &x.A[j * static_cast<size_t>(K)];
  uint64_t* B = &x.B[j * static_cast<size_t>(K)];
  uint64_t c = 0, d = 0;
  if ((!x.ab_done && (!strict_ab(hp, line(x, 0, ga, i), K, fa.digits, A) || !strict_ab(hp, line(x, 1, gb, i), K, fb.digits, B))) ||
      !strict_cd(hp, line(x, 2, gc, i), gc.len, w, c) || (have_d && !strict_cd(hp, line(x, 3, gd, i), gd.len, dw, d)))
    return false;
  // Inf/NaN, an inexact value or a bad fp6/fp4 pattern: the general engine decides (patterns of
  // 8 bits or more always fit their format: no test)
  auto fits = [&](const AbForm& f, const Format& fmt, uint64_t* v) {
    if (f.native && fmt.width() >= 8) return true;
    for (int k = 0; k < K; ++k)
      if (f.native ? !native_fits(fmt, v[k]) : !ingest_exact(fmt, dp.ingest, v[k], w, &v[k])) return false;
    return true;
  };
  if (!fits(fa, dp.a_fmt, A) || !fits(fb, dp.b_fmt, B)) return false;
  uint64_t cv = zero_bits(dp.out_fmt, false);
  if (!zero_c) {
    bool rounded = false;
    cv = c_operand(dp, c, w, &rounded);
    if (rounded && !pt.c_rounded.count++) pt.c_rounded.first_line = gc.first_line + i;
  }
  x.C[j] = cv;
  x.D[j] = d;
  return true;
}

void GridRun::load(Buf& x, uint64_t b0, uint64_t b1) const {
  x.b0 = b0;
  const Mapped* m[4] = {&ma, &mb, &mc_, md.get()};
  const Grid* g[4] = {&ga, &gb, &gc, &gd};
  for (int f = 0; f < (have_d ? 4 : 3); ++f) {
    const size_t bytes = static_cast<size_t>(b1 - b0) * g[f]->len, at = g[f]->off + static_cast<size_t>(b0) * g[f]->len;
    x.raw[f].resize(bytes + 16);  // (the parsers may look a word past a line's end)
    std::memset(x.raw[f].data() + bytes, 0, 16);
    for (size_t got = 0; got < bytes;) {
      const ssize_t r = ::pread(m[f]->fd, x.raw[f].data() + got, bytes - got, static_cast<off_t>(at + got));
      if (r <= 0) throw GiveUp{};  // (a file cut short while read: the general engine reports it)
      got += static_cast<size_t>(r);
    }
  }
}

void GridRun::record(Part& pt, Buf& x, uint64_t b0, uint64_t b1) const {
  const bool widen = !(dp.out_fmt == kBinary32 || dp.out_fmt == kBinary64);  // (widen_result's test, once a block)
  for (uint64_t i = b0; i < b1; ++i) {
    const size_t j = static_cast<size_t>(i - b0);
    const uint64_t got = widen ? widen_result(dp, x.G[j]) : x.G[j], d = x.D[j];
    if (fo) {
      char* q = &x.text[j * ol];
      uint64_t v = got;
      for (int jj = dw / 4 - 1; jj >= 0; --jj) q[jj] = "0123456789abcdef"[v & 15], v >>= 4;
      q[dw / 4] = '\n';
    }
    if (!have_d || got == d) continue;
    ++pt.mismatches;
    if (pt.first.size() < keep) {
      StreamMismatch m;
      m.index = i;
      m.line = ga.first_line + i;
      m.d_line = gd.first_line + i;
      m.got = got;
      m.want = d;
      m.a.assign(&x.A[j * static_cast<size_t>(K)], &x.A[j * static_cast<size_t>(K)] + K);
      m.b.assign(&x.B[j * static_cast<size_t>(K)], &x.B[j * static_cast<size_t>(K)] + K);
      m.c = x.C[j];
      pt.first.push_back(std::move(m));
    }
  }
}

void GridRun::work(unsigned t, uint64_t i0, uint64_t i1) {
  Part& pt = parts[t];
  // a block of samples is parsed, then evaluated by the fast kernels' batch (SIMD lanes),
  // then written and compared
  // 1024 samples, fewer for long lines: about 2^18 values a block (4 MiB a thread; K = 2^20
  // used to take 16 GiB), a full lane block (16) up to K = 2^14
  const uint64_t block = std::min<uint64_t>(
      1024, std::max<uint64_t>(K <= (1 << 14) ? 16 : 1, (uint64_t{1} << 18) / static_cast<uint64_t>(K)));
  Buf x;
  x.A.resize(block * static_cast<size_t>(K));
  x.B.resize(x.A.size());
  x.C.resize(block);
  x.D.resize(block);
  x.G.resize(block);
  try {
    for (uint64_t b0 = i0; b0 < i1 && !give_up.load(std::memory_order_relaxed); b0 += block) {
      const uint64_t b1 = std::min(i1, b0 + block);
      x.text.resize((b1 - b0) * ol);
      load(x, b0, b1);
      // the a and b lines of 4-digit values all at once (AVX2), where they are of that form
      const size_t m = static_cast<size_t>(b1 - b0);
      x.ab_done = fa.digits == 4 && fb.digits == 4 && hex::hex4_lines(x.raw[0].data(), m, K, ga.len, x.A.data()) &&
                  hex::hex4_lines(x.raw[1].data(), m, K, gb.len, x.B.data());
      for (uint64_t i = b0; i < b1; ++i)
        if (!parse(pt, x, i, static_cast<size_t>(i - b0))) {
          give_up = true;
          return;
        }
      fd.batch(x.A.data(), x.B.data(), x.C.data(), x.G.data(), static_cast<size_t>(b1 - b0), K);
      record(pt, x, b0, b1);
      if (fo) fo->pwrite(x.text.data(), x.text.size(), b0 * ol);
      done.fetch_add(b1 - b0, std::memory_order_relaxed);
    }
  } catch (const GiveUp&) {  // (a file cut short while read): every rank then meets at dist::any
    give_up = true;
  } catch (...) {
    pt.err = std::current_exception();
    give_up = true;
  }
}

StreamResult GridRun::run() {
  const uint64_t sub = (hi - lo + threads - 1) / threads;
  const bool tty = progress && isatty(fileno(stderr)) && n >= 100000 && dist::rank() == 0;
  std::atomic<bool> finished{false};
  Background bar;
  if (tty) {
    bar.try_start([&] {
      while (!finished.load() && !give_up.load()) {
        const uint64_t d = done.load();
        std::fprintf(stderr, "\r[%-50s] %3d%%  %llu samples",
                     std::string(static_cast<size_t>(50 * d / n), '#').c_str(),
                     static_cast<int>(100 * d / n), static_cast<unsigned long long>(d));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  run_parallel(threads, [&](unsigned t) {
    const uint64_t i0 = std::min(hi, lo + t * sub), i1 = std::min(hi, i0 + sub);
    if (i0 < i1) work(t, i0, i1);
  });
  finished = true;
  bar.join();
  if (tty) std::fprintf(stderr, "\r%100s\r", "");
  for (Part& pt : parts)
    if (pt.err) std::rethrow_exception(pt.err);
  if (dist::any(give_up)) throw GiveUp{};  // every rank then takes the general engine
  if (fo) fo->commit();
  StreamResult res;
  res.n = n;
  res.K = K;
  for (Part& pt : parts) {  // thread t holds samples before those of thread t+1
    res.mismatches += pt.mismatches;
    if (pt.c_rounded.count && !res.c_rounded.count) res.c_rounded.first_line = pt.c_rounded.first_line;
    res.c_rounded.count += pt.c_rounded.count;
    for (StreamMismatch& m : pt.first)
      if (res.first.size() < keep) res.first.push_back(std::move(m));
  }
  return merge_ranks_impl(res, keep);
}

StreamResult stream_grid(const Datapath& dp, const std::string& pa, const std::string& pb,
                         const std::string& pc, const std::string& pd, const std::string& out,
                         int expect_k, bool zero_c, unsigned threads, size_t keep, bool progress) {
  return GridRun(dp, pa, pb, pc, pd, out, expect_k, zero_c, threads, keep, progress).run();
}

}  // namespace

StreamResult stream_files(const Datapath& dp, const std::string& pa, const std::string& pb,
                          const std::string& pc, const std::string& pd, const std::string& out,
                          int expect_k, bool zero_c, unsigned threads, size_t keep, bool progress,
                          const ScaleFiles& scales) {
  if (is_npy_path(pa)) return stream_npy(dp, pa, pb, pc, pd, out, expect_k, zero_c, threads, keep, scales);
  if (dp.scaled()) {
    const ScaleFiles sf = resolve_scale_files(dp, pa, scales);
    return stream_scaled(dp, pa, pb, pc, pd, out, sf, expect_k, zero_c, threads, keep);
  }
  if (!scales.a.empty() || !scales.b.empty())
    throw InputError("scale files (--sa/--sb) given, but datapath " + dp.name() + " has no block scales");
  if (!out.empty()) check_not_input(out, "output", {pa, pb, pc, pd});
  check_header(pa, "a", dp.a_fmt);
  check_header(pb, "b", dp.b_fmt);
  try {
    return stream_grid(dp, pa, pb, pc, pd, out, expect_k, zero_c, threads, keep, progress);
  } catch (const GiveUp&) {
    // files of varying line lengths have no sample offsets: under mpirun rank 0 streams them
    // alone and the others take its result
    if (dist::size() == 1) return vstream::stream_general(dp, pa, pb, pc, pd, out, expect_k, zero_c, threads, keep, progress);
    StreamResult r;
    if (dist::rank() == 0) r = vstream::stream_general(dp, pa, pb, pc, pd, out, expect_k, zero_c, threads, keep, progress);
    return decode_result(dist::broadcast(encode_result(r)));
  }
}

StreamResult vstream::merge_ranks(const StreamResult& mine, size_t keep) { return merge_ranks_impl(mine, keep); }

}  // namespace mc
