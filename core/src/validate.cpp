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
  return widen_exact(dp.out_fmt, r, kBinary32);  // a binary16 NaN keeps its payload (0x7fff -> 0x7fffe000)
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

// ------------------------------------------------------------------------------------------
// Streaming validation.
#include <sys/stat.h>

#include <cstring>
#include <exception>
#include <memory>

namespace mc {

namespace {

/// Reads a text file in blocks of whole lines; '#' comment lines are skipped. The data lines of
/// a block live in one buffer (no allocation per line).
struct Block {
  std::string data;
  std::vector<size_t> start, len;
  std::vector<uint64_t> lineno;
  void clear() { data.clear(); start.clear(); len.clear(); lineno.clear(); }
  std::string line(size_t i) const { return data.substr(start[i], len[i]); }
};

class BlockReader {
 public:
  explicit BlockReader(const std::string& path) : path_(path) {
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_) throw InputError(path + ": cannot open file for reading");
    buf_.resize(1 << 22);
    struct stat st;
    if (::fstat(fileno(f_), &st) == 0) size_ = static_cast<uint64_t>(st.st_size);
  }
  /// Fraction of the file consumed so far (for the progress bar).
  double fraction() const {
    if (size_ == 0) return 0;
    const long at = std::ftell(f_);
    const double used = static_cast<double>(at) - static_cast<double>(len_ - pos_);
    return used / static_cast<double>(size_);
  }
  ~BlockReader() {
    if (f_) std::fclose(f_);
  }
  BlockReader(const BlockReader&) = delete;
  BlockReader& operator=(const BlockReader&) = delete;

  /// Appends up to n data lines to b; returns how many were read.
  size_t read(size_t n, Block& b) {
    size_t got = 0;
    while (got < n) {
      if (pos_ >= len_ && !refill()) break;
      const char* base = buf_.data();
      const void* nl = std::memchr(base + pos_, '\n', len_ - pos_);
      size_t end;
      if (nl) {
        end = static_cast<const char*>(nl) - base;
      } else if (eof_) {
        end = len_;  // last line without '\n'
      } else {
        // partial line: move it to the front and read more
        std::memmove(buf_.data(), base + pos_, len_ - pos_);
        len_ -= pos_;
        pos_ = 0;
        if (len_ == buf_.size()) buf_.resize(buf_.size() * 2);
        if (!refill_append()) eof_ = true;
        continue;
      }
      ++line_;
      size_t l = end - pos_;
      const char* p = base + pos_;
      while (l && (p[l - 1] == '\r' || p[l - 1] == ' ' || p[l - 1] == '\t')) --l;
      pos_ = end + 1;
      if (l && p[0] == '#') continue;
      if (l == 0) {
        if (!nl && eof_) break;  // trailing newline at the end of the file
        throw InputError(path_ + ":" + std::to_string(line_) + ": line: empty line");
      }
      b.start.push_back(b.data.size());
      b.len.push_back(l);
      b.lineno.push_back(line_);
      b.data.append(p, l);
      ++got;
    }
    return got;
  }

 private:
  bool refill() {
    if (eof_) return false;
    len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
    pos_ = 0;
    if (len_ < buf_.size()) eof_ = true;
    return len_ > 0;
  }
  bool refill_append() {
    const size_t n = std::fread(buf_.data() + len_, 1, buf_.size() - len_, f_);
    len_ += n;
    return n > 0 && len_ == buf_.size();
  }
  std::string path_;
  std::FILE* f_ = nullptr;
  std::vector<char> buf_;
  size_t pos_ = 0, len_ = 0;
  bool eof_ = false;
  uint64_t line_ = 0;
  uint64_t size_ = 0;
};

inline int hexval(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

[[noreturn]] void bad(const std::string& path, uint64_t line, const std::string& field,
                      const std::string& why) {
  throw InputError(path + ":" + std::to_string(line) + ": " + field + ": " + why);
}

/// Parses a line of K hex values of `digits` digits each.
struct HexTable {
  int8_t v[256];
  HexTable() {
    for (int i = 0; i < 256; ++i) v[i] = static_cast<int8_t>(hexval(static_cast<char>(i)));
  }
};
const HexTable kHex;

void parse_ab_line(const char* s, size_t n, int K, int digits, uint64_t* out,
                   const std::string& path, uint64_t line) {
  // Fast path: exactly K tokens of `digits` hex digits separated by single spaces.
  if (n == static_cast<size_t>(K) * (digits + 1) - 1) {
    bool ok = true;
    const unsigned char* u = reinterpret_cast<const unsigned char*>(s);
    for (int k = 0; k < K && ok; ++k) {
      const unsigned char* t = u + static_cast<size_t>(k) * (digits + 1);
      uint64_t v = 0;
      int bad_digit = 0;
      for (int j = 0; j < digits; ++j) {
        const int h = kHex.v[t[j]];
        bad_digit |= h;
        v = (v << 4) | static_cast<uint64_t>(h & 15);
      }
      ok = bad_digit >= 0 && (k == K - 1 || t[digits] == ' ');
      out[k] = v;
    }
    if (ok) return;
  }
  size_t i = 0;
  int k = 0;
  auto sub = [&](size_t from, size_t cnt) { return std::string(s + from, cnt); };
  while (i < n) {
    while (i < n && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= n) break;
    size_t j = i;
    uint64_t v = 0;
    while (j < n && s[j] != ' ' && s[j] != '\t') {
      const int h = hexval(s[j]);
      if (h < 0) bad(path, line, "value " + std::to_string(k + 1), "'" + sub(i, j - i + 1) + "' is not hex");
      v = (v << 4) | static_cast<uint64_t>(h);
      ++j;
    }
    if (static_cast<int>(j - i) != digits)
      bad(path, line, "value " + std::to_string(k + 1),
          "'" + sub(i, j - i) + "' is not " + std::to_string(digits) + " hex digits");
    if (k >= K) bad(path, line, "K", "more than K = " + std::to_string(K) + " values on the line");
    out[k++] = v;
    i = j;
  }
  if (k != K) bad(path, line, "K", "line holds " + std::to_string(k) + " values, expected K = " + std::to_string(K));
}

uint64_t parse_cd_line(const char* s, size_t n, int width, const std::string& path, uint64_t line) {
  while (n && (*s == ' ' || *s == '\t')) ++s, --n;
  uint64_t v = 0;
  if (width == 32 && n == 8) {  // fast path: 8 hex digits
    bool ok = true;
    for (size_t i = 0; i < 8; ++i) {
      const int h = hexval(s[i]);
      ok &= h >= 0;
      v = (v << 4) | static_cast<uint64_t>(h & 15);
    }
    if (ok) return v;
    v = 0;
  }
  const std::string t(s, n);
  if (width == 32 && t.size() == 32 && t.find_first_not_of("01") == std::string::npos) {
    for (char ch : t) v = (v << 1) | static_cast<uint64_t>(ch - '0');
    return v;
  }
  if (t.size() == static_cast<size_t>(width / 4)) {
    bool ok = true;
    for (char ch : t) {
      const int h = hexval(ch);
      if (h < 0) { ok = false; break; }
      v = (v << 4) | static_cast<uint64_t>(h);
    }
    if (ok) return v;
  }
  bad(path, line, "value",
      "'" + t + "' is neither " + (width == 32 ? "32 binary digits nor 8" : "16") + " hex digits");
}

int count_tokens(const char* s, size_t n) {
  int k = 0;
  bool in = false;
  for (size_t i = 0; i < n; ++i) {
    const char ch = s[i];
    const bool sp = ch == ' ' || ch == '\t';
    if (!sp && !in) ++k;
    in = !sp;
  }
  return k;
}

}  // namespace

StreamResult validate_files(const Datapath& dp, const std::string& pa, const std::string& pb,
                            const std::string& pc, const std::string& pd, int expect_k, bool zero_c,
                            unsigned threads, size_t keep, bool progress) {
  return stream_files(dp, pa, pb, pc, pd, "", expect_k, zero_c, threads, keep, progress);
}

StreamResult stream_files(const Datapath& dp, const std::string& pa, const std::string& pb,
                          const std::string& pc, const std::string& pd, const std::string& out,
                          int expect_k, bool zero_c, unsigned threads, size_t keep, bool progress) {
  const int w = dp.a_fmt == kBinary64 ? 64 : 32;
  const int dw = dp.out_fmt == kBinary64 ? 64 : 32;
  const bool have_d = !pd.empty();
  BlockReader ra(pa), rb(pb), rc(pc);
  std::unique_ptr<BlockReader> rd(have_d ? new BlockReader(pd) : nullptr);
  std::FILE* fo = nullptr;
  if (!out.empty()) {
    fo = std::fopen(out.c_str(), "w");
    if (!fo) throw InputError(out + ": cannot open file for writing");
  }
  struct Closer { std::FILE* f; ~Closer() { if (f) std::fclose(f); } } closer{fo};
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  StreamResult res;
  const size_t chunk = 1 << 15;
  // Two buffers: the main thread reads chunk i+1 while the workers parse and evaluate chunk i.
  struct Work {
    Block ba, bb, bc, bd;
    size_t n = 0;
    std::vector<uint64_t> A, B, C, D, G;
    std::vector<std::exception_ptr> err;
  };
  Work wk[2];
  const bool tty = progress && isatty(fileno(stderr));
  int K = expect_k;
  uint64_t consumed = 0;  // samples read so far
  std::string count_error;

  auto read = [&](Work& x) {
    x.ba.clear(); x.bb.clear(); x.bc.clear(); x.bd.clear();
    const size_t n = ra.read(chunk, x.ba);
    const size_t nb = rb.read(n ? n : 1, x.bb), nc = rc.read(n ? n : 1, x.bc);
    const size_t nd = have_d ? rd->read(n ? n : 1, x.bd) : n;
    const size_t m = std::min({n, nb, nc, nd});
    if (nb != n || nc != n || nd != n) {
      // reported after the common samples are checked, so that an earlier bad line wins
      const std::string& shorter = nb < n ? pb : nc < n ? pc : nd < n ? pd : pa;
      count_error = "sample counts differ: " + shorter + " ends before the other files (at sample " +
                    std::to_string(consumed + m + 1) + ")";
    }
    if (m && K == 0) K = count_tokens(x.ba.data.data() + x.ba.start[0], x.ba.len[0]);
    x.n = m;
    consumed += m;
  };
  auto compute_part = [&](Work& x, unsigned t, size_t i0, size_t i1) {
    try {
      for (size_t i = i0; i < i1; ++i) {
        uint64_t* A = &x.A[i * K];
        uint64_t* B = &x.B[i * K];
        parse_ab_line(x.ba.data.data() + x.ba.start[i], x.ba.len[i], K, w / 4, A, pa, x.ba.lineno[i]);
        parse_ab_line(x.bb.data.data() + x.bb.start[i], x.bb.len[i], K, w / 4, B, pb, x.bb.lineno[i]);
        for (int k = 0; k < K; ++k) {
          if (!ingest_exact(dp.a_fmt, dp.ingest, A[k], w, &A[k]))
            A[k] = ingest_value(dp.a_fmt, dp.ingest, A[k], w,
                                pa + ":" + std::to_string(x.ba.lineno[i]) + ": value " + std::to_string(k + 1));
          if (!ingest_exact(dp.b_fmt, dp.ingest, B[k], w, &B[k]))
            B[k] = ingest_value(dp.b_fmt, dp.ingest, B[k], w,
                                pb + ":" + std::to_string(x.bb.lineno[i]) + ": value " + std::to_string(k + 1));
        }
        const uint64_t c = parse_cd_line(x.bc.data.data() + x.bc.start[i], x.bc.len[i], w, pc, x.bc.lineno[i]);
        x.C[i] = zero_c ? zero_bits(dp.out_fmt, false) : (w == 64 ? c : c_from_binary32(dp, c));
        if (have_d) x.D[i] = parse_cd_line(x.bd.data.data() + x.bd.start[i], x.bd.len[i], dw, pd, x.bd.lineno[i]);
        x.G[i] = widen_result(dp, dot(dp, A, B, K, x.C[i]));
      }
    } catch (...) {
      x.err[t] = std::current_exception();
    }
  };
  auto compute = [&](Work& x) {
    x.A.resize(x.n * K);
    x.B.resize(x.n * K);
    x.C.resize(x.n);
    x.D.resize(x.n);
    x.G.resize(x.n);
    x.err.assign(threads, nullptr);
    std::vector<std::thread> pool;
    const size_t sub = (x.n + threads - 1) / threads;
    for (unsigned t = 0; t < threads; ++t) {
      const size_t i0 = std::min(x.n, t * sub), i1 = std::min(x.n, i0 + sub);
      if (i0 < i1) pool.emplace_back(compute_part, std::ref(x), t, i0, i1);
    }
    for (auto& th : pool) th.join();
  };
  auto finish = [&](Work& x) {
    for (auto& e : x.err)
      if (e) std::rethrow_exception(e);  // the first thread's error is the earliest line
    if (fo) {
      std::string text(x.n * (dw / 4 + 1), '\n');
      static const char* hx = "0123456789abcdef";
      for (size_t i = 0; i < x.n; ++i) {
        uint64_t v = x.G[i];
        char* q = &text[i * (dw / 4 + 1)];
        for (int j = dw / 4 - 1; j >= 0; --j) q[j] = hx[v & 15], v >>= 4;
      }
      if (std::fwrite(text.data(), 1, text.size(), fo) != text.size())
        throw InputError(out + ": write failed");
    }
    for (size_t i = 0; i < x.n && have_d; ++i) {
      if (x.G[i] == x.D[i]) continue;
      ++res.mismatches;
      if (res.first.size() < keep) {
        StreamMismatch m;
        m.index = res.n + i;
        m.line = x.ba.lineno[i];
        m.got = x.G[i];
        m.want = x.D[i];
        m.a.assign(x.A.begin() + i * K, x.A.begin() + (i + 1) * K);
        m.b.assign(x.B.begin() + i * K, x.B.begin() + (i + 1) * K);
        m.c = x.C[i];
        res.first.push_back(m);
      }
    }
    res.n += x.n;
    if (tty) {
      const int pct = static_cast<int>(100 * ra.fraction());
      std::fprintf(stderr, "\r[%-50s] %3d%%  %llu samples, %llu mismatches",
                   std::string(static_cast<size_t>(pct / 2), '#').c_str(), pct,
                   static_cast<unsigned long long>(res.n),
                   static_cast<unsigned long long>(res.mismatches));
    }
  };
  std::thread pending;
  int cur = 0;
  try {
    for (;;) {
      read(wk[cur]);
      if (pending.joinable()) {
        pending.join();
        finish(wk[cur ^ 1]);
      }
      if (wk[cur].n == 0) break;
      pending = std::thread(compute, std::ref(wk[cur]));
      cur ^= 1;
      if (!count_error.empty()) {
        pending.join();
        finish(wk[cur ^ 1]);
        throw InputError(count_error);
      }
    }
  } catch (...) {
    if (pending.joinable()) pending.join();
    throw;
  }
  if (tty) std::fprintf(stderr, "\r%100s\r", "");
  if (res.n == 0) throw InputError(pa + ": no samples (empty file)");
  res.K = K;
  return res;
}

}  // namespace mc
