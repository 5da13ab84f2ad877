// matcore: streaming validation, the general engine (any line lengths, comment lines anywhere,
// errors with file, line and field). validate.cpp tries the grid engine first.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>

#include "matcore/fast.hpp"
#include "matcore/model.hpp"
#include "matcore/output.hpp"
#include "matcore/threads.hpp"
#include "matcore/vectors.hpp"
#include "../io/validate_stream.hpp"

namespace mc::vstream {

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
    f_ = open_input(path);
    struct stat st;
    if (::fstat(fileno(f_), &st) == 0) size_ = static_cast<uint64_t>(st.st_size);
    // 4 MiB blocks, or the whole of a smaller regular file (the buffer grows for longer lines:
    // zero-filling 4 MiB per file made many small files slow)
    const bool small = size_ > 0 && S_ISREG(st.st_mode) && size_ + 1 < (uint64_t{1} << 22);
    buf_.resize(small ? std::max<size_t>(4096, static_cast<size_t>(size_) + 1) : size_t{1} << 22);
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

  /// Appends up to n data lines to b; returns how many were read. A malformed line (empty, too
  /// long, a byte-order mark) ends the lines returned: the error is thrown by the next call, so
  /// that errors in the lines before it, found when they are parsed, are reported first.
  size_t read(size_t n, Block& b) {
    if (!pending_.empty()) throw InputError(pending_);
    size_t got = 0;
    while (got < n && pending_.empty()) {
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
        if (len_ == buf_.size()) {
          if (buf_.size() >= kMaxLineBytes) {
            pending_ = path_ + ":" + std::to_string(line_ + 1) + ": line: longer than " +
                       std::to_string(kMaxLineBytes >> 20) + " MiB";
            break;
          }
          buf_.resize(buf_.size() * 2);
        }
        if (!refill_append()) eof_ = true;
        continue;
      }
      ++line_;
      if (line_ == 1 && end - pos_ >= 3 && std::memcmp(base + pos_, "\xEF\xBB\xBF", 3) == 0) {
        pending_ = bom_error(path_);
        break;
      }
      size_t l = end - pos_;
      const char* p = base + pos_;
      while (l && (p[l - 1] == '\r' || p[l - 1] == ' ' || p[l - 1] == '\t')) --l;
      pos_ = end + 1;
      if (l && p[0] == '#') continue;
      if (l == 0) {
        if (!nl && eof_) break;  // trailing newline at the end of the file
        pending_ = path_ + ":" + std::to_string(line_) + ": line: empty line";
        break;
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
  std::string pending_;  ///< the error at the line after the last one returned

 public:
  const std::string& pending() const { return pending_; }
};


[[noreturn]] void bad(const std::string& path, uint64_t line, const std::string& field,
                      const std::string& why) {
  throw InputError(path + ":" + std::to_string(line) + ": " + field + ": " + why);
}

/// Parses a line of K hex values of `digits` digits each.

void parse_ab_line(const char* s, size_t n, int K, int digits, uint64_t* out,
                   const std::string& path, uint64_t line, const std::string& form) {
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
      if (h < 0) {
        size_t e = j;
        while (e < n && s[e] != ' ' && s[e] != '\t') ++e;
        bad(path, line, "value " + std::to_string(k + 1), "'" + excerpt(sub(i, e - i)) + "' is not hex");
      }
      v = (v << 4) | static_cast<uint64_t>(h);
      ++j;
    }
    if (static_cast<int>(j - i) != digits)
      bad(path, line, "value " + std::to_string(k + 1),
          "'" + excerpt(sub(i, j - i)) + "' is not " + std::to_string(digits) + " hex digits" + form);
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
      "'" + excerpt(t) + "' is neither " + (width == 32 ? "32 binary digits nor 8" : "16") + " hex digits");
}

}  // namespace

/// The general engine: any line lengths, comment lines anywhere, precise errors.
namespace {

/// One run of the general engine: the readers, the output, the result so far and two work
/// buffers: the main thread reads chunk i+1 while the workers parse and evaluate chunk i.
class GeneralRun {
 public:
  GeneralRun(const Datapath& dp, const std::string& pa, const std::string& pb, const std::string& pc,
             const std::string& pd, const std::string& out, int expect_k, bool zero_c, unsigned threads, size_t keep,
             bool progress)
      : dp(dp), pa(pa), pb(pb), pc(pc), pd(pd), expect_k(expect_k), zero_c(zero_c), keep(keep),
        w(stored_width(dp.a_fmt)), dw(stored_width(dp.out_fmt)), have_d(!pd.empty()), fd(dp), ra(pa), rb(pb), rc(pc),
        rd(have_d ? new BlockReader(pd) : nullptr), fo(out.empty() ? nullptr : new OutputFile(out)),
        threads(thread_count(threads)), tty(progress && isatty(fileno(stderr))) {}
  StreamResult run();

 private:
  struct Work {
    Block ba, bb, bc, bd;
    size_t n = 0;
    std::vector<uint64_t> A, B, C, D, G;
    std::vector<char> R;  ///< c was rounded into the accumulator format
    std::vector<std::exception_ptr> err;
  };
  /// Reads the next chunk of every file into x (x.n samples; 0 at the end).
  void read(Work& x);
  /// Parses and evaluates samples [i0, i1) of x (thread t; its error kept in x.err[t]).
  void compute_part(Work& x, unsigned t, size_t i0, size_t i1);
  /// Parses and evaluates the chunk x on every thread.
  void compute(Work& x);
  /// Rethrows x's first error, writes its d, counts its mismatches and its rounded c.
  void finish(Work& x);

  const Datapath& dp;
  const std::string &pa, &pb, &pc, &pd;
  const int expect_k;
  const bool zero_c;
  const size_t keep;
  const int w, dw;
  const bool have_d;
  const FastDot fd;
  BlockReader ra, rb, rc;
  std::unique_ptr<BlockReader> rd;
  std::unique_ptr<OutputFile> fo;
  const unsigned threads;
  const bool tty;
  StreamResult res;
  size_t chunk = 1 << 15;  // samples a block; fewer for long lines (set from K below)
  Work wk[2];
  int K = 0;  // from the first line of a (never from --k: memory follows what the file holds)
  AbForm form_a, form_b;
  uint64_t consumed = 0;  // samples read so far
  std::string count_error;
};

void GeneralRun::read(Work& x) {
  x.ba.clear(); x.bb.clear(); x.bc.clear(); x.bd.clear();
  const size_t n = ra.read(chunk, x.ba);
  const size_t nb = rb.read(n ? n : 1, x.bb), nc = rc.read(n ? n : 1, x.bc);
  const size_t nd = have_d ? rd->read(n ? n : 1, x.bd) : n;
  const size_t m = std::min({n, nb, nc, nd});
  // A malformed line ends what a reader returns; its error is reported after the lines before
  // it have been checked (so that an earlier bad value wins), in place of a count mismatch.
  std::string pend;
  for (const BlockReader* r : {&ra, &rb, &rc, rd.get()})
    if (r && pend.empty()) pend = r->pending();
  if (!pend.empty()) {
    count_error = pend;
  } else if (nb != n || nc != n || nd != n) {
    // reported after the common samples are checked, so that an earlier bad line wins
    const std::string& shorter = nb < n ? pb : nc < n ? pc : nd < n ? pd : pa;
    count_error = "sample counts differ: " + shorter + " ends before the other files (at sample " +
                  std::to_string(consumed + m + 1) + ")";
  }
  if (m && K == 0) {
    K = count_tokens(x.ba.data.data() + x.ba.start[0], x.ba.len[0]);
    if (K > kMaxK)
      bad(pa, x.ba.lineno[0], "K", "line holds " + std::to_string(K) + " values, more than " + std::to_string(kMaxK));
    if (expect_k > 0 && K != expect_k)
      bad(pa, x.ba.lineno[0], "K", "line holds " + std::to_string(K) + " values, expected K = " + std::to_string(expect_k));
    chunk = std::max<size_t>(1, std::min<size_t>(chunk, (size_t{1} << 20) / static_cast<size_t>(K)));
  }
  if (m && consumed == 0) {
    form_a = ab_form(dp.a_fmt, first_token_len(x.ba.data.data() + x.ba.start[0], x.ba.len[0]));
    form_b = ab_form(dp.b_fmt, first_token_len(x.bb.data.data() + x.bb.start[0], x.bb.len[0]));
  }
  x.n = m;
  consumed += m;
}

void GeneralRun::compute_part(Work& x, unsigned t, size_t i0, size_t i1) {
  try {
    for (size_t i = i0; i < i1; ++i) {
      uint64_t* A = &x.A[i * K];
      uint64_t* B = &x.B[i * K];
      parse_ab_line(x.ba.data.data() + x.ba.start[i], x.ba.len[i], K, form_a.digits, A, pa,
                    x.ba.lineno[i], form_a.note);
      parse_ab_line(x.bb.data.data() + x.bb.start[i], x.bb.len[i], K, form_b.digits, B, pb,
                    x.bb.lineno[i], form_b.note);
      for (int k = 0; k < K; ++k) {
        if (form_a.native && !native_fits(dp.a_fmt, A[k]))
          bad(pa, x.ba.lineno[i], "value " + std::to_string(k + 1), "not a " + std::to_string(dp.a_fmt.width()) + "-bit pattern of " + dp.a_fmt.name);
        if (form_b.native && !native_fits(dp.b_fmt, B[k]))
          bad(pb, x.bb.lineno[i], "value " + std::to_string(k + 1), "not a " + std::to_string(dp.b_fmt.width()) + "-bit pattern of " + dp.b_fmt.name);
        if (!form_a.native && !ingest_exact(dp.a_fmt, dp.ingest, A[k], w, &A[k]))
          A[k] = ingest_value(dp.a_fmt, dp.ingest, A[k], w,
                              pa + ":" + std::to_string(x.ba.lineno[i]) + ": value " + std::to_string(k + 1));
        if (!form_b.native && !ingest_exact(dp.b_fmt, dp.ingest, B[k], w, &B[k]))
          B[k] = ingest_value(dp.b_fmt, dp.ingest, B[k], w,
                              pb + ":" + std::to_string(x.bb.lineno[i]) + ": value " + std::to_string(k + 1));
      }
      const uint64_t c = parse_cd_line(x.bc.data.data() + x.bc.start[i], x.bc.len[i], w, pc, x.bc.lineno[i]);
      bool rounded = false;
      x.C[i] = zero_c ? zero_bits(dp.out_fmt, false) : c_operand(dp, c, w, &rounded);
      x.R[i] = rounded;
      if (have_d) x.D[i] = parse_cd_line(x.bd.data.data() + x.bd.start[i], x.bd.len[i], dw, pd, x.bd.lineno[i]);
      x.G[i] = widen_result(dp, fd(A, B, K, x.C[i]));
    }
  } catch (...) {
    x.err[t] = std::current_exception();
  }
}

void GeneralRun::compute(Work& x) {
  x.err.assign(threads, nullptr);
  try {
    x.A.resize(x.n * K);
    x.B.resize(x.n * K);
    x.C.resize(x.n);
    x.D.resize(x.n);
    x.G.resize(x.n);
    x.R.assign(x.n, 0);
    const size_t sub = (x.n + threads - 1) / threads;
    run_parallel(threads, [&](unsigned t) {
      const size_t i0 = std::min(x.n, t * sub), i1 = std::min(x.n, i0 + sub);
      if (i0 < i1) compute_part(x, t, i0, i1);
    });
  } catch (...) {
    x.err[0] = std::current_exception();
  }
}

void GeneralRun::finish(Work& x) {
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
    fo->write(text);
  }
  for (size_t i = 0; i < x.n; ++i)
    if (x.R[i] && !res.c_rounded.count++) res.c_rounded.first_line = x.bc.lineno[i];
  for (size_t i = 0; i < x.n && have_d; ++i) {
    if (x.G[i] == x.D[i]) continue;
    ++res.mismatches;
    if (res.first.size() < keep) {
      StreamMismatch m;
      m.index = res.n + i;
      m.line = x.ba.lineno[i];
      m.d_line = x.bd.lineno[i];
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
}

StreamResult GeneralRun::run() {
  Background pending;  // evaluates chunk i while chunk i+1 is read
  bool pending_chunk = false;
  int cur = 0;
  auto settle = [&] {  // finish the chunk being evaluated: its errors are earlier than any later one
    if (!pending_chunk) return;
    pending_chunk = false;
    pending.join();
    finish(wk[cur ^ 1]);
  };
  try {
    for (;;) {
      try {
        read(wk[cur]);
      } catch (...) {
        settle();  // an error in the lines already read wins over the read error
        throw;
      }
      settle();
      if (wk[cur].n == 0) {
        if (!count_error.empty()) throw InputError(count_error);  // a ended, another file did not
        break;
      }
      Work* x = &wk[cur];
      pending.start([this, x] { compute(*x); });
      pending_chunk = true;
      cur ^= 1;
      if (!count_error.empty()) {
        settle();
        throw InputError(count_error);
      }
    }
  } catch (...) {
    pending.join();
    throw;
  }
  if (tty) std::fprintf(stderr, "\r%100s\r", "");
  if (res.n == 0) throw InputError(pa + ": no samples (empty file)");
  if (fo) fo->commit();
  res.K = K;
  return res;
}

}  // namespace

StreamResult stream_general(const Datapath& dp, const std::string& pa, const std::string& pb,
                            const std::string& pc, const std::string& pd, const std::string& out,
                            int expect_k, bool zero_c, unsigned threads, size_t keep, bool progress) {
  return GeneralRun(dp, pa, pb, pc, pd, out, expect_k, zero_c, threads, keep, progress).run();
}

}  // namespace mc::vstream
