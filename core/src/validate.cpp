#include "matcore/validate.hpp"

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

namespace mc {

SampleSet load_sample_set(const Datapath& dp, const std::string& fa, const std::string& fb,
                          const std::string& fc, const std::string& fd, int expect_k) {
  const int w = stored_width(dp.a_fmt);
  const AbFile A = read_ab_file(fa, expect_k, dp.a_fmt);
  const AbFile B = read_ab_file(fb, A.K, dp.b_fmt);
  std::vector<uint64_t> c_lines;
  const std::vector<uint64_t> C = read_cd_file(fc, w, &c_lines);
  const std::vector<uint64_t> D = read_cd_file(fd, stored_width(dp.out_fmt));
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
    const std::string value = ": value " + std::to_string(i % A.K + 1);
    s.a[i] = ab_operand(dp.a_fmt, dp.ingest, A, i, fa + ":" + std::to_string(A.line_of(i / A.K)) + value);
    s.b[i] = ab_operand(dp.b_fmt, dp.ingest, B, i, fb + ":" + std::to_string(B.line_of(i / A.K)) + value);
  }
  s.c.resize(n);
  for (size_t i = 0; i < n; ++i) {
    bool rounded = false;
    s.c[i] = c_operand(dp, C[i], w, &rounded);
    if (rounded && !s.c_rounded.count++) s.c_rounded.first_line = c_lines[i];
  }
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
// Streaming validation.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
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

/// Length of the first token of a line.
size_t first_token_len(const char* s, size_t n) {
  size_t i = 0;
  while (i < n && (s[i] == ' ' || s[i] == '\t')) ++i;
  size_t j = i;
  while (j < n && s[j] != ' ' && s[j] != '\t') ++j;
  return j - i;
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

namespace {

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

/// Two hex characters (as a little-endian 16-bit load) -> their byte, or -1.
struct HexPairTable {
  int16_t v[65536];
  HexPairTable() {
    for (int i = 0; i < 65536; ++i) {
      const int h = kHex.v[i & 0xFF], l = kHex.v[i >> 8];
      v[i] = static_cast<int16_t>(h < 0 || l < 0 ? -1 : (h << 4) | l);
    }
  }
};
const HexPairTable& hex_pairs() {
  static const HexPairTable t;
  return t;
}

/// Eight ASCII characters (little-endian load, first character in the low byte): true when all
/// are hex digits (0-9, a-f, A-F); v = their value. SWAR: every byte is range-checked at once.
inline bool swar_hex8(uint64_t x, uint64_t& v) {
  constexpr uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  if (x & high) return false;
  auto ge = [x](uint64_t lo) { return (x + (0x80 - lo) * ones) & high; };   // byte >= lo
  auto le = [x](uint64_t hi) { return ~(x + (0x7F - hi) * ones) & high; };  // byte <= hi
  if (((ge(0x30) & le(0x39)) | (ge(0x61) & le(0x66)) | (ge(0x41) & le(0x46))) != high) return false;
  const uint64_t n = (x & (0x0F * ones)) + ((x >> 6) & ones) * 9;  // each byte: its digit's value
  // pairs: 16-bit lane j holds digit 2j (high nibble) and digit 2j+1 (low nibble)
  const uint64_t t = ((n & 0x00FF00FF00FF00FFull) << 4) | ((n >> 8) & 0x00FF00FF00FF00FFull);
  const uint32_t u = static_cast<uint32_t>((t & 0xFF) | ((t >> 8) & 0xFF00) | ((t >> 16) & 0xFF0000) |
                                           ((t >> 24) & 0xFF000000));
  v = __builtin_bswap32(u);
  return true;
}

/// `digits` (even) hex digits at p; false when one is not hex.
inline bool hex_token(const HexPairTable& t, const char* p, int digits, uint64_t& v) {
  if (digits == 8 || digits == 16) {
    uint64_t x, hi;
    std::memcpy(&x, p, 8);
    if (!swar_hex8(x, hi)) return false;
    if (digits == 8) { v = hi; return true; }
    uint64_t lo;
    std::memcpy(&x, p + 8, 8);
    if (!swar_hex8(x, lo)) return false;
    v = (hi << 32) | lo;
    return true;
  }
  if (digits == 4) {  // the high four bytes are '0' digits: value 0 in front
    uint32_t x4;
    std::memcpy(&x4, p, 4);
    uint64_t w;
    if (!swar_hex8(0x3030303000000000ull | x4, w)) return false;
    v = w >> 16;
    return true;
  }
  v = 0;
  int bad_any = 0;
  for (int j = 0; j < digits; j += 2) {
    uint16_t two;
    std::memcpy(&two, p + j, 2);
    const int b = t.v[two];
    bad_any |= b;
    v = (v << 8) | static_cast<uint64_t>(b & 0xFF);
  }
  return bad_any >= 0;
}

/// A line of exactly K tokens of `digits` hex digits, single spaces, '\n' at the end.
inline bool strict_ab(const HexPairTable& t, const char* p, int K, int digits, uint64_t* out) {
  int k = 0;
  if (digits == 4) {  // two 4-digit values per 8-character check
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
                       static_cast<uint64_t>(m.b.size())})
      put64(s, v);
    for (uint64_t v : m.a) put64(s, v);
    for (uint64_t v : m.b) put64(s, v);
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
    for (uint64_t& v : m.a) v = get64(s, at);
    for (uint64_t& v : m.b) v = get64(s, at);
  }
  return r;
}
/// The ranks' results of their sample ranges as the result of one process: counts summed, the
/// first mismatches and the first rounded c in sample order (rank r's samples precede r+1's).
StreamResult merge_ranks(const StreamResult& mine, size_t keep) {
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
StreamResult stream_grid(const Datapath& dp, const std::string& pa, const std::string& pb,
                         const std::string& pc, const std::string& pd, const std::string& out,
                         int expect_k, bool zero_c, unsigned threads, size_t keep, bool progress) {
  const int w = stored_width(dp.a_fmt);
  const int dw = stored_width(dp.out_fmt);
  const bool have_d = !pd.empty();
  const FastDot fd(dp);
  const Mapped ma(pa), mb(pb), mc_(pc);
  std::unique_ptr<Mapped> md(have_d ? new Mapped(pd) : nullptr);
  const Grid ga = grid_of(ma), gb = grid_of(mb), gc = grid_of(mc_);
  const Grid gd = have_d ? grid_of(*md) : gc;
  if (!ga.ok || !gb.ok || !gc.ok || !gd.ok) throw GiveUp{};
  const uint64_t n = ga.n;
  if (gb.n != n || gc.n != n || gd.n != n) throw GiveUp{};
  const char* la0 = ma.p + ga.off;
  const int K = count_tokens(la0, ga.len - 1);
  if (K == 0 || K > kMaxK || (expect_k > 0 && K != expect_k)) throw GiveUp{};
  const AbForm fa = ab_form(dp.a_fmt, first_token_len(la0, ga.len - 1));
  const AbForm fb = ab_form(dp.b_fmt, first_token_len(mb.p + gb.off, gb.len - 1));
  if ((fa.digits & 1) || (fb.digits & 1)) throw GiveUp{};
  if (ga.len != static_cast<size_t>(K) * (fa.digits + 1) || gb.len != static_cast<size_t>(K) * (fb.digits + 1))
    throw GiveUp{};
  threads = thread_count(threads);

  // under mpirun: this rank's samples [lo, hi) and its byte ranges of the output (dist.hpp)
  uint64_t lo = 0, hi = n;
  dist::share(n, lo, hi);
  std::unique_ptr<dist::SharedOutput> fo(out.empty() ? nullptr : new dist::SharedOutput(out));
  const size_t ol = static_cast<size_t>(dw / 4 + 1);

  const HexPairTable& hp = hex_pairs();
  std::atomic<bool> give_up{false};
  std::atomic<uint64_t> done{0};
  struct Part {
    uint64_t mismatches = 0;
    std::vector<StreamMismatch> first;
    RoundedC c_rounded;
    std::exception_ptr err;  // an output write error
  };
  std::vector<Part> parts(threads);
  auto work = [&](unsigned t, uint64_t i0, uint64_t i1) {
    Part& pt = parts[t];
    // a block of samples is parsed, then evaluated by the fast kernels' batch (SIMD lanes),
    // then written and compared
    // 1024 samples, fewer for long lines: about 2^18 values a block (4 MiB a thread; K = 2^20
    // used to take 16 GiB), a full lane block (16) up to K = 2^14
    const uint64_t block = std::min<uint64_t>(
        1024, std::max<uint64_t>(K <= (1 << 14) ? 16 : 1, (uint64_t{1} << 18) / static_cast<uint64_t>(K)));
    std::vector<uint64_t> AB(block * static_cast<size_t>(K)), BB(AB.size()), CB(block), DB(block), GB(block);
    std::string text;
    try {
      for (uint64_t b0 = i0; b0 < i1 && !give_up.load(std::memory_order_relaxed); b0 += block) {
        const uint64_t b1 = std::min(i1, b0 + block);
        text.resize((b1 - b0) * ol);
        for (uint64_t i = b0; i < b1; ++i) {
          const size_t j = static_cast<size_t>(i - b0);
          uint64_t* A = &AB[j * static_cast<size_t>(K)];
          uint64_t* B = &BB[j * static_cast<size_t>(K)];
          const char* la = la0 + i * ga.len;
          const char* lb = mb.p + gb.off + i * gb.len;
          uint64_t c = 0, d = 0;
          if (!strict_ab(hp, la, K, fa.digits, A) || !strict_ab(hp, lb, K, fb.digits, B) ||
              !strict_cd(hp, mc_.p + gc.off + i * gc.len, gc.len, w, c) ||
              (have_d && !strict_cd(hp, md->p + gd.off + i * gd.len, gd.len, dw, d))) {
            give_up = true;
            return;
          }
          for (int k = 0; k < K; ++k) {
            if ((!fa.native && !ingest_exact(dp.a_fmt, dp.ingest, A[k], w, &A[k])) ||
                (!fb.native && !ingest_exact(dp.b_fmt, dp.ingest, B[k], w, &B[k]))) {
              give_up = true;  // Inf/NaN or an inexact value: the general engine decides
              return;
            }
          }
          uint64_t cv = zero_bits(dp.out_fmt, false);
          if (!zero_c) {
            bool rounded = false;
            cv = c_operand(dp, c, w, &rounded);
            if (rounded && !pt.c_rounded.count++) pt.c_rounded.first_line = gc.first_line + i;
          }
          CB[j] = cv;
          DB[j] = d;
        }
        fd.batch(AB.data(), BB.data(), CB.data(), GB.data(), static_cast<size_t>(b1 - b0), K);
        for (uint64_t i = b0; i < b1; ++i) {
          const size_t j = static_cast<size_t>(i - b0);
          const uint64_t got = widen_result(dp, GB[j]), d = DB[j];
          if (fo) {
            char* q = &text[j * ol];
            uint64_t v = got;
            for (int jj = dw / 4 - 1; jj >= 0; --jj) q[jj] = "0123456789abcdef"[v & 15], v >>= 4;
            q[dw / 4] = '\n';
          }
          if (have_d && got != d) {
            ++pt.mismatches;
            if (pt.first.size() < keep) {
              StreamMismatch m;
              m.index = i;
              m.line = ga.first_line + i;
              m.d_line = gd.first_line + i;
              m.got = got;
              m.want = d;
              m.a.assign(&AB[j * static_cast<size_t>(K)], &AB[j * static_cast<size_t>(K)] + K);
              m.b.assign(&BB[j * static_cast<size_t>(K)], &BB[j * static_cast<size_t>(K)] + K);
              m.c = CB[j];
              pt.first.push_back(std::move(m));
            }
          }
        }
        if (fo) fo->pwrite(text.data(), text.size(), b0 * ol);
        done.fetch_add(b1 - b0, std::memory_order_relaxed);
      }
    } catch (...) {
      pt.err = std::current_exception();
      give_up = true;
    }
  };
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
  return merge_ranks(res, keep);
}

StreamResult stream_general(const Datapath& dp, const std::string& pa, const std::string& pb,
                            const std::string& pc, const std::string& pd, const std::string& out,
                            int expect_k, bool zero_c, unsigned threads, size_t keep, bool progress);

}  // namespace

StreamResult stream_files(const Datapath& dp, const std::string& pa, const std::string& pb,
                          const std::string& pc, const std::string& pd, const std::string& out,
                          int expect_k, bool zero_c, unsigned threads, size_t keep, bool progress) {
  if (!out.empty()) check_not_input(out, "output", {pa, pb, pc, pd});
  check_header(pa, "a", dp.a_fmt);
  check_header(pb, "b", dp.b_fmt);
  try {
    return stream_grid(dp, pa, pb, pc, pd, out, expect_k, zero_c, threads, keep, progress);
  } catch (const GiveUp&) {
    // files of varying line lengths have no sample offsets: under mpirun rank 0 streams them
    // alone and the others take its result
    if (dist::size() == 1) return stream_general(dp, pa, pb, pc, pd, out, expect_k, zero_c, threads, keep, progress);
    StreamResult r;
    if (dist::rank() == 0) r = stream_general(dp, pa, pb, pc, pd, out, expect_k, zero_c, threads, keep, progress);
    return decode_result(dist::broadcast(encode_result(r)));
  }
}

namespace {

/// The general engine: any line lengths, comment lines anywhere, precise errors.
StreamResult stream_general(const Datapath& dp, const std::string& pa, const std::string& pb,
                            const std::string& pc, const std::string& pd, const std::string& out,
                            int expect_k, bool zero_c, unsigned threads, size_t keep, bool progress) {
  const int w = stored_width(dp.a_fmt);
  const int dw = stored_width(dp.out_fmt);
  const bool have_d = !pd.empty();
  const FastDot fd(dp);
  BlockReader ra(pa), rb(pb), rc(pc);
  std::unique_ptr<BlockReader> rd(have_d ? new BlockReader(pd) : nullptr);
  std::unique_ptr<OutputFile> fo(out.empty() ? nullptr : new OutputFile(out));
  threads = thread_count(threads);
  StreamResult res;
  size_t chunk = 1 << 15;  // samples a block; fewer for long lines (set from K below)
  // Two buffers: the main thread reads chunk i+1 while the workers parse and evaluate chunk i.
  struct Work {
    Block ba, bb, bc, bd;
    size_t n = 0;
    std::vector<uint64_t> A, B, C, D, G;
    std::vector<char> R;  ///< c was rounded into the accumulator format
    std::vector<std::exception_ptr> err;
  };
  Work wk[2];
  const bool tty = progress && isatty(fileno(stderr));
  int K = 0;  // from the first line of a (never from --k: memory follows what the file holds)
  AbForm form_a, form_b;
  uint64_t consumed = 0;  // samples read so far
  std::string count_error;

  auto read = [&](Work& x) {
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
  };
  auto compute_part = [&](Work& x, unsigned t, size_t i0, size_t i1) {
    try {
      for (size_t i = i0; i < i1; ++i) {
        uint64_t* A = &x.A[i * K];
        uint64_t* B = &x.B[i * K];
        parse_ab_line(x.ba.data.data() + x.ba.start[i], x.ba.len[i], K, form_a.digits, A, pa,
                      x.ba.lineno[i], form_a.note);
        parse_ab_line(x.bb.data.data() + x.bb.start[i], x.bb.len[i], K, form_b.digits, B, pb,
                      x.bb.lineno[i], form_b.note);
        for (int k = 0; k < K; ++k) {
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
  };
  auto compute = [&](Work& x) {
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
  };
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
      pending.start([&compute, x] { compute(*x); });
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

}  // namespace mc
