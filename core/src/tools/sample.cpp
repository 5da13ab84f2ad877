#include "matcore/sample.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <functional>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <vector>

#include "matcore/mt19937.hpp"
#include "matcore/dist.hpp"
#include "matcore/output.hpp"
#include "matcore/threads.hpp"
#include "matcore/vectors.hpp"

namespace mc {

void default_ranges(SampleSpec& s, bool sub) {
  auto one = [&](const Format& f, int& lo, int& hi, bool is_c) {
    if (sub) {
      lo = f.emin() - f.mbits;  // minimum subnormal exponent
      hi = f.emin();
      if (&f == &s.a_fmt || &f == &s.b_fmt) {
        if (f == kTf32) lo = -136;  // section 5.1.3
      }
    } else {
      lo = f.emin();
      hi = f.emax();
      if (!is_c && f.ebits >= 8) hi = std::min(hi, 63);        // products stay below 2^128
      if (!is_c && f.ebits >= 8 && f.ebits < 11) lo = std::max(lo, -126);
      if (!is_c && f.ebits == 11) { lo = -511; hi = 511; }     // binary64 products finite
    }
  };
  one(s.a_fmt, s.ea_lo, s.ea_hi, false);
  one(s.b_fmt, s.eb_lo, s.eb_hi, false);
  one(s.c_fmt, s.ec_lo, s.ec_hi, true);
}

SampleSpec sample_spec_for(const Datapath& dp, bool subnormal) {
  SampleSpec s;
  s.a_fmt = dp.a_fmt;
  s.b_fmt = dp.b_fmt;
  s.c_fmt = dp.out_fmt == kBinary64 ? kBinary64 : kBinary32;
  s.K = dp.k_default;
  default_ranges(s, subnormal);
  s.scale_fmt = dp.scale_fmt;
  s.scale_block = dp.scale_block;
  if (dp.scale_fmt.enc != Encoding::Pow2) {  // ue4m3: its normal range
    s.es_lo = dp.scale_fmt.emin();
    s.es_hi = dp.scale_fmt.emax();
  }
  return s;
}

namespace {

/// Uniform integer in [lo, hi] from 32-bit draws (rejection: no modulo bias): a draw r below
/// lim = 2^32-1 - (2^32-1) mod span is kept and gives lo + r mod span. The remainder is computed
/// by multiplication (Lemire's fastmod), the same number as r % span.
struct UniformInt {
  int lo;
  uint32_t span, lim;
  uint64_t magic;
  UniformInt(int l, int hi) : lo(l) {
    span = static_cast<uint32_t>(hi - lo) + 1u;
    lim = span ? UINT32_MAX - UINT32_MAX % span : UINT32_MAX;
    magic = span ? UINT64_MAX / span + 1 : 0;
  }
  uint32_t mod(uint32_t r) const {
    return static_cast<uint32_t>((static_cast<u128>(magic * r) * span) >> 64);
  }
  /// Is the draw w rejected? (Never when the span is the full 32-bit range.)
  bool rejects(uint32_t w) const { return span != 0 && w >= lim; }
  /// The integer of an accepted draw w.
  int value(uint32_t w) const { return lo + static_cast<int>(span == 0 ? w : span == 1 ? 0 : mod(w)); }
};

const Format& stored_of(const Format& f) { return f.width() > 32 ? kBinary64 : kBinary32; }

/// The text of sa.txt or sb.txt: N lines of ceil(K / scale_block) scales (SampleSpec).
/// The N * ceil(K / scale_block) block scales of one file (sa, then sb from the same stream).
std::vector<uint64_t> scale_values(const SampleSpec& s, Mt19937& g) {
  const int per = (s.K + s.scale_block - 1) / s.scale_block;
  const UniformInt e(s.es_lo, s.es_hi), m(0, (1 << s.scale_fmt.mbits) - 1);
  auto draw = [&g](const UniformInt& u) {
    for (;;) {
      const uint32_t w = g();
      if (!u.rejects(w)) return u.value(w);
    }
  };
  std::vector<uint64_t> v;
  v.reserve(s.N * per);
  for (uint64_t i = 0; i < s.N * per; ++i) {
    const int E = draw(e) + s.scale_fmt.bias;
    const uint64_t M = s.scale_fmt.mbits ? static_cast<uint64_t>(draw(m)) : 0;
    uint64_t p = (static_cast<uint64_t>(E) << s.scale_fmt.mbits) | M;
    if (decode(s.scale_fmt, p).cls == Class::NaN) p = s.scale_fmt.max_finite_bits();
    v.push_back(p);
  }
  return v;
}

std::string scale_samples(const SampleSpec& s, Mt19937& g, const std::string& header) {
  return scale_file_text(scale_values(s, g), (s.K + s.scale_block - 1) / s.scale_block, header);
}

uint64_t draw_bits(const Format& f, Mt19937& g) {
  const int w = f.width();
  for (;;) {
    uint64_t v = g();
    if (w > 32) v = (v << 32) | g();
    v &= (w == 64) ? ~uint64_t{0} : ((uint64_t{1} << w) - 1);
    const Unpacked u = decode(f, v);
    if (u.cls != Class::Inf && u.cls != Class::NaN) return v;
    // redraw the exponent field only (section 5.2)
    const uint64_t emask = ((uint64_t{1} << f.ebits) - 1) << f.mbits;
    for (;;) {
      uint64_t e = g();
      if (f.ebits > 32) e = (e << 32) | g();
      v = (v & ~emask) | ((e << f.mbits) & emask);
      const Unpacked u2 = decode(f, v);
      if (u2.cls != Class::Inf && u2.cls != Class::NaN) return v;
    }
  }
}

}  // namespace

namespace {
/// The constants of a format that the sampling hot path needs, read once (plain integers).
struct FmtConst {
  int mbits, emin, emax, bias, width;
  bool fnuz, fn, has_inf;
  uint64_t mmask, inf_pos, inf_neg, nan_pos, nan_neg, sign_bit;
  explicit FmtConst(const Format& f)
      : mbits(f.mbits), emin(f.emin()), emax(f.emax()), bias(f.bias), width(f.width()),
        fnuz(f.enc == Encoding::FNUZ), fn(f.enc == Encoding::FN), has_inf(f.has_inf()),
        mmask((uint64_t{1} << f.mbits) - 1), inf_pos(f.has_inf() ? f.inf_bits(false) : 0),
        inf_neg(f.has_inf() ? f.inf_bits(true) : 0),
        // a format with no NaN (OCP MX fp6/fp4): an overflow saturates at the largest finite
        nan_pos(f.has_nan() ? f.qnan_bits(false) : f.max_finite_bits()),
        nan_neg(f.has_nan() ? f.qnan_bits(true) : f.max_finite_bits() | (uint64_t{1} << (f.width() - 1))),
        sign_bit(uint64_t{1} << (f.width() - 1)) {}
  uint64_t zero(bool sign) const { return sign && !fnuz ? sign_bit : 0; }
};

/// RNE of (-1)^sign * mag * 2^lsb into f, for mag < 2^62 (the sampling hot path; the same
/// result as round_to_format, which the tests check).
inline uint64_t round_small(const FmtConst& f, bool sign, uint64_t mag, int lsb) {
  if (mag == 0) return f.zero(sign);
  const int msb = 63 - __builtin_clzll(mag);
  int e = lsb + msb;
  bool sub = false;
  if (e < f.emin) { e = f.emin; sub = true; }
  const int q = e - f.mbits;
  const int sh = q - lsb;
  uint64_t kept;
  if (sh <= 0) {
    kept = mag << -sh;
  } else if (sh >= 63) {
    kept = 0;  // below half of the smallest subnormal: rounds to zero
  } else {
    const uint64_t half = uint64_t{1} << (sh - 1);
    const uint64_t rem = mag & ((half << 1) - 1);
    kept = mag >> sh;
    kept += static_cast<uint64_t>(rem > half) | (static_cast<uint64_t>(rem == half) & kept & 1);  // RNE, branch-free
  }
  if (kept >> (f.mbits + 1)) { kept >>= 1; ++e; }
  if (sub && (kept >> f.mbits)) sub = false;
  if (kept == 0) return f.zero(sign);
  const bool fn_nan = f.fn && e == f.emax && (kept & f.mmask) == f.mmask;
  if (e > f.emax || fn_nan) return f.has_inf ? (sign ? f.inf_neg : f.inf_pos) : (sign ? f.nan_neg : f.nan_pos);
  const uint64_t E = sub ? 0 : static_cast<uint64_t>(e + f.bias);
  return (sign ? f.sign_bit : 0) | (E << f.mbits) | (kept & f.mmask);
}

/// draw_expmant for 32-bit significand draws (formats of at most 24 bits of precision).
inline uint64_t draw_expmant32(const FmtConst& f, int e, uint32_t u) {
  const int64_t centred = static_cast<int64_t>(u) - (int64_t{1} << 31);
  const uint64_t neg = static_cast<uint64_t>(centred) >> 63;  // |centred| without a branch
  const uint64_t m = (static_cast<uint64_t>(centred) ^ (0 - neg)) + neg;
  const int p = f.mbits + 1;
  return round_small(f, neg != 0, (m << p) - m, e + 1 - p - 31);
}
}  // namespace

namespace {
/// Exact widening of a finite or special pattern of f to binary32 (f at most 32 bits wide).
uint32_t widen32(const Format& f, uint64_t bits) {
  if (f == kBinary32) return static_cast<uint32_t>(bits);
  const Unpacked u = decode(f, bits);
  const uint32_t s = u.sign ? 0x80000000u : 0u;
  switch (u.cls) {
    case Class::Zero: return s;
    case Class::Inf: return s | 0x7F800000u;
    case Class::NaN: return s | 0x7FC00000u;
    default: break;
  }
  int lead = u.exp;
  uint64_t sig = u.sig;
  const int top = 63 - __builtin_clzll(sig);
  lead -= u.mbits - top;  // exponent of the leading one
  if (lead < -126)        // a binary32 subnormal (bf16, tf32 subnormals): units of 2^-149
    return s | static_cast<uint32_t>(sig << (u.exp - u.mbits + 149));
  sig <<= (23 - top);     // 24-bit significand with the leading one at bit 23 (exact)
  return s | (static_cast<uint32_t>(lead + 127) << 23) | static_cast<uint32_t>(sig & 0x7FFFFF);
}
}  // namespace

uint64_t draw_expmant(const Format& f, int e, uint64_t u, int ubits) {
  if (ubits == 32 && f.mbits + 1 <= 24) return draw_expmant32(FmtConst(f), e, static_cast<uint32_t>(u));
  if (ubits <= 32) {
    const int64_t centred = static_cast<int64_t>(u) - (int64_t{1} << (ubits - 1));
    const uint64_t m = static_cast<uint64_t>(centred < 0 ? -centred : centred);
    const int p = f.mbits + 1;
    return round_small(FmtConst(f), centred < 0, m * ((uint64_t{1} << p) - 1), e + 1 - p - (ubits - 1));
  }
  return draw_expmant_exact(f, e, u, ubits);
}

uint64_t draw_expmant_exact(const Format& f, int e, uint64_t u, int ubits) {
  // s = (2 - 2^(1-p)) * (u * 2^(1-ubits) - 1), u uniform in [0, 2^ubits)  (p = precision)
  // value = s * 2^e = (2^p - 1) * (u - 2^(ubits-1)) * 2^(e + 1 - p - (ubits-1)), exact.
  const int p = f.mbits + 1;
  const int64_t centred = static_cast<int64_t>(u) - (int64_t{1} << (ubits - 1));
  Exact x;
  x.sign = centred < 0;
  const u128 m = static_cast<u128>(centred < 0 ? -centred : centred);
  x.mag = m * ((static_cast<u128>(1) << p) - 1);
  x.lsb_exp = e + 1 - p - (ubits - 1);
  x.sticky = false;
  return round_to_format(f, x, RoundOpts{Rounding::RNE, true, -1, false});
}

namespace {

struct Raw {  // the random draws of one value: exponent and significand draw, or bits
  int e;
  uint64_t u;
};

/// Significand draw: 32 bits for formats of at most 24 bits of precision, 53 bits (two draws,
/// as genrand_res53) for binary64.
int sig_bits(const Format& f) { return f.mbits + 1 > 24 ? 53 : 32; }


}  // namespace

namespace {

/// Exact widening to the stored format through a table for formats of at most 16 bits.
struct Widener {
  const Format& f;
  const Format& st;
  std::vector<uint32_t> table;
  bool same;
  Widener(const Format& from, const Format& to) : f(from), st(to), same(from == to) {
    if (f.width() <= 16 && st.width() == 32) {
      table.resize(size_t{1} << f.width());
      for (size_t i = 0; i < table.size(); ++i) table[i] = widen32(f, i);
    }
  }
  uint64_t operator()(uint64_t v) const {
    if (same) return v;
    if (!table.empty()) return table[v];
    if (f == st) return v;
    return st.width() == 32 ? widen32(f, v) : convert(f, v, st, Rounding::RNE);
  }
};

struct HexPairs {
  char pair[256][2];
  HexPairs() {
    const char* hx = "0123456789abcdef";
    for (int i = 0; i < 256; ++i) pair[i][0] = hx[i >> 4], pair[i][1] = hx[i & 15];
  }
};
const HexPairs kHexPairs;

inline char* put_hex_fast(char* p, uint64_t v, int digits) {
  for (int i = digits - 2; i >= 0; i -= 2) {
    std::memcpy(p + i, kHexPairs.pair[v & 0xFF], 2);
    v >>= 8;
  }
  return p + digits;
}

}  // namespace

namespace {

/// Words of the random stream in blocks (the draw loop keeps its position in registers).
struct WordSource {
  Mt19937& g;
  uint32_t buf[4096];
  size_t pos = 0, end = 0;  ///< buf[pos..end) are the next words of the stream
  explicit WordSource(Mt19937& gen) : g(gen) {}
  /// The next n words into dst.
  void take(uint32_t* dst, size_t n) {
    const size_t have = std::min(n, end - pos);
    std::memcpy(dst, buf + pos, have * sizeof(uint32_t));
    pos += have;
    g.generate(dst + have, n - have);
  }
};

/// Exponent and significand draws of one operand (Algorithm 3).
struct ExpDraw {
  UniformInt x;
  int ubits;
  ExpDraw(const UniformInt& xi, int u) : x(xi), ubits(u) {}
};

/// How the values of one file are made and written.
struct LineCfg {
  const Format* f;
  FmtConst k;
  int ubits, digits;
  bool bits;          ///< bit sampling: the draw is the pattern
  bool same;          ///< written in the drawn format itself
  const uint32_t* table;  ///< widening table (formats of at most 16 bits), or null
  const Widener* wd;
  LineCfg(const Format& fmt, const Widener& w, int u, int d, bool b)
      : f(&fmt), k(fmt), ubits(u), digits(d), bits(b), same(w.same),
        table(w.table.empty() ? nullptr : w.table.data()), wd(&w) {}
};

/// The pattern of one value from its raw draws (any format, either strategy).
inline uint64_t raw_value(const LineCfg& c, const Raw& r) {
  if (c.bits) return r.u;
  if (c.ubits == 32 && c.f->mbits + 1 <= 24) return draw_expmant32(c.k, r.e, static_cast<uint32_t>(r.u));
  return draw_expmant(*c.f, r.e, r.u, c.ubits);
}

/// n lines of K values each: value(i, j) is the pattern of value j of line i, written widened
/// as cfg says, in hex, separated by `sep`, lines ended by '\n'. Returns the end of the text.
template <class Value>
char* put_lines(char* q, uint64_t n, int K, const LineCfg& cfg, char sep, Value value) {
  const LineCfg c = cfg;  // a local copy: the text written below cannot alias it
  for (uint64_t i = 0; i < n; ++i) {
    for (int j = 0; j < K; ++j) {
      uint64_t v = value(i, j);
      v = c.same ? v : c.table ? c.table[v] : (*c.wd)(v);
      q = put_hex_fast(q, v, c.digits);
      *q++ = sep;
    }
    q[-1] = '\n';
  }
  return q;
}

/// Draws n samples (K a values, K b values, c) from the stream into r, in file order: first
/// the npre words at pre (already taken from the stream), then the stream.
void draw_expmant_raw(WordSource& src, const uint32_t* pre, size_t npre, Raw* r, uint64_t n, int K,
                      const ExpDraw& A, const ExpDraw& B, const ExpDraw& C) {
  bool in_pre = npre > 0;
  const uint32_t* wp = in_pre ? pre : src.buf + src.pos;  // local copies: nothing written below
  const uint32_t* we = in_pre ? pre + npre : src.buf + src.end;  // can alias them
  auto word = [&]() -> uint32_t {
    if (wp == we) {
      if (in_pre) {
        in_pre = false;
        wp = src.buf + src.pos;
        we = src.buf + src.end;
      }
      if (wp == we) {
        src.g.generate(src.buf, 4096);
        wp = src.buf;
        we = src.buf + 4096;
      }
    }
    return *wp++;
  };
  const UniformInt xa = A.x, xb = B.x, xc = C.x;
  const int ua = A.ubits, ub = B.ubits, uc = C.ubits;
  auto expo = [&](const UniformInt& x) -> int {
    uint32_t w;
    do w = word(); while (x.rejects(w));
    return x.value(w);
  };
  auto sig = [&](int ubits) -> uint64_t {
    if (ubits == 32) return word();
    const uint64_t hi = word() >> 5, lo = word() >> 6;  // 53 bits, as genrand_res53
    return (hi << 26) | lo;
  };
  for (uint64_t i = 0; i < n; ++i) {
    for (int j = 0; j < K; ++j) { const int e = expo(xa); *r++ = Raw{e, sig(ua)}; }
    for (int j = 0; j < K; ++j) { const int e = expo(xb); *r++ = Raw{e, sig(ub)}; }
    const int e = expo(xc);
    *r++ = Raw{e, sig(uc)};
  }
  // words of the block not used yet are the next call's first words (pre is always used up:
  // it holds exactly the words of a chunk without rejected draws)
  if (in_pre) throw std::logic_error("sample: pre-drawn words left over");
  src.pos = static_cast<size_t>(wp - src.buf);
  src.end = static_cast<size_t>(we - src.buf);
}

}  // namespace

namespace {

/// The stored formats, widenings, hex digits and line lengths of a.txt, b.txt and c.txt: every
/// value of a file has the same number of hex digits, so every line of a file has the same length.
struct SampleLayout {
  bool na, nb;  ///< a, b written in their own format (native values)
  const Format &sa, &sb, &sc;
  Widener wa, wb, wc;
  int da, db, dc;
  size_t la, lb, lc;
  explicit SampleLayout(const SampleSpec& s)
      : na(s.native && native_digits(s.a_fmt) > 0), nb(s.native && native_digits(s.b_fmt) > 0),
        sa(na ? s.a_fmt : stored_of(s.a_fmt)), sb(nb ? s.b_fmt : stored_of(s.b_fmt)), sc(stored_of(s.c_fmt)),
        wa(s.a_fmt, sa), wb(s.b_fmt, sb), wc(s.c_fmt, sc),
        da(na ? native_digits(s.a_fmt) : sa.width() / 4), db(nb ? native_digits(s.b_fmt) : sb.width() / 4),
        dc(sc.width() / 4), la(static_cast<size_t>(s.K) * (da + 1)), lb(static_cast<size_t>(s.K) * (db + 1)),
        lc(static_cast<size_t>(dc + 1)) {}
};

/// The header line of a.txt, b.txt and c.txt.
std::string sample_header(const SampleSpec& s, bool native) {
  char hdr[320];
  std::snprintf(hdr, sizeof hdr,
                "# matcore sample a=%s b=%s k=%d n=%llu strategy=%s seed=%u ea=[%d,%d] eb=[%d,%d] ec=[%d,%d] values=%s\n",
                s.a_fmt.name.c_str(), s.b_fmt.name.c_str(), s.K, static_cast<unsigned long long>(s.N),
                s.strategy == Strategy::Bits ? "bits" : "expmant", s.seed, s.ea_lo, s.ea_hi, s.eb_lo,
                s.eb_hi, s.ec_lo, s.ec_hi, native ? "native" : "widened");
  return hdr;
}

/// One buffer of draws of a chunk of samples [first, first + n).
struct DrawBuf {
  std::vector<uint32_t> words;  ///< direct: the chunk's random words, two per value
  std::vector<Raw> raw;         ///< otherwise: the draws of each value
  bool direct = false;
  uint64_t first = 0, n = 0;
};

/// One file's part of a line of a sample: its file (bit in `files`, index), line length, line
/// format, exponent draw, first value within the sample, values per line and separator.
struct FilePart {
  int bit, id;
  size_t line;
  const LineCfg* cfg;
  const UniformInt* x;
  size_t first;
  int k;
  char sep;
};

/// Draws the random stream of a sample set chunk by chunk and has workers convert, format and
/// write each chunk at its lines' offsets (pwrite) while the next chunk is drawn.
class SampleWriter {
 public:
  /// out: a.txt, b.txt, c.txt; hlen: their header length; [lo, hi): this rank's samples.
  SampleWriter(const SampleSpec& s, const SampleLayout& L, dist::SharedOutput* const* out, size_t hlen,
               unsigned threads, uint64_t lo, uint64_t hi)
      : s_(s), L_(L), out_{out[0], out[1], out[2]}, hlen_(hlen), threads_(threads), lo_(lo), hi_(hi), g_(s.seed),
        ua_(sig_bits(s.a_fmt)), ub_(sig_bits(s.b_fmt)), uc_(sig_bits(s.c_fmt)),
        xa_(s.ea_lo, s.ea_hi), xb_(s.eb_lo, s.eb_hi), xc_(s.ec_lo, s.ec_hi),
        per_(static_cast<size_t>(2 * s.K + 1)), text_(threads), err_(threads),
        bits_(s.strategy == Strategy::Bits), src_(g_), da_(xa_, ua_), db_(xb_, ub_), dc_(xc_, uc_),
        direct_ok_(!bits_ && ua_ == 32 && ub_ == 32 && uc_ == 32),
        cfa_(s.a_fmt, L.wa, ua_, L.da, bits_), cfb_(s.b_fmt, L.wb, ub_, L.db, bits_),
        cfc_(s.c_fmt, L.wc, uc_, L.dc, bits_) {}

  /// Draws, converts and writes samples [0, hi) chunk by chunk (tty: a progress bar on stderr).
  void run(bool tty) {
    const uint64_t chunk = std::max<uint64_t>(1, (uint64_t{1} << 20) / per_);  // 16 MB of draws
    Background pending;
    auto settle = [&] {
      pending.join();
      for (auto& e : err_)
        if (e) std::rethrow_exception(e);
    };
    int cur = 0;
    try {
      for (uint64_t base = 0; base < hi_; base += chunk) {
        draw(buf_[cur], base, std::min(chunk, s_.N - base));
        settle();
        const DrawBuf* bp = &buf_[cur];
        pending.start([this, bp] { convert_all(*bp); });
        cur ^= 1;
        if (tty) std::fprintf(stderr, "\r[%-50s] %3d%%", std::string(50 * base / s_.N, '#').c_str(),
                              static_cast<int>(100 * base / s_.N));
      }
      settle();
    } catch (...) {
      pending.join();
      throw;
    }
  }

  /// The memory form of run: draws samples [0, N) chunk by chunk, makes their values (patterns
  /// of the drawn formats) on the threads and gives each chunk to use.
  void run_values(const SampleChunk& use) {
    const uint64_t chunk = std::max<uint64_t>(1, (uint64_t{1} << 20) / per_);
    const std::array<FilePart, 3> fs = file_parts();
    std::vector<uint64_t> v[3];
    int cur = 0;
    draw(buf_[cur], 0, std::min(chunk, s_.N));
    for (uint64_t base = 0; base < s_.N; base += chunk, cur ^= 1) {
      const DrawBuf& b = buf_[cur];
      const uint64_t n = b.n, next = base + chunk;
      Background ahead;  // the next chunk is drawn while this one is made and used
      if (next < s_.N) ahead.start([this, cur, next, chunk] { draw(buf_[cur ^ 1], next, std::min(chunk, s_.N - next)); });
      try {
        for (const FilePart& f : fs) v[f.id].resize(n * static_cast<size_t>(f.k));
        const uint64_t sub = (n + threads_ - 1) / threads_;
        run_parallel(threads_, [&](unsigned t) {
          const uint64_t i0 = std::min(n, t * sub), i1 = std::min(n, i0 + sub);
          for (const FilePart& f : fs)
            with_values(b, i0, f, [&](auto value) {
              uint64_t* o = v[f.id].data() + i0 * static_cast<size_t>(f.k);
              for (uint64_t i = 0; i < i1 - i0; ++i)
                for (int j = 0; j < f.k; ++j) *o++ = value(i, j);
            });
        });
        use(base, n, v[0].data(), v[1].data(), v[2].data());
      } catch (...) {
        ahead.join();
        throw;
      }
      ahead.join();
    }
  }

 private:
  const SampleSpec& s_;
  const SampleLayout& L_;
  dist::SharedOutput* out_[3];
  size_t hlen_;
  unsigned threads_;
  uint64_t lo_, hi_;
  Mt19937 g_;
  int ua_, ub_, uc_;
  UniformInt xa_, xb_, xc_;
  size_t per_;
  // Two buffers of draws: the main thread draws chunk i+1 (the one sequential part: the random
  // stream, in file order a_1..a_k, b_1..b_k, c per sample) while the workers convert, format
  // and write chunk i.
  DrawBuf buf_[2];
  std::vector<std::string> text_;
  std::vector<std::exception_ptr> err_;
  bool bits_;
  WordSource src_;
  ExpDraw da_, db_, dc_;
  // Exponent-mantissa sampling with 32-bit significand draws takes two words a value, unless an
  // exponent draw is rejected (probability (2^32 mod span)/2^32, below 1e-8 for the paper's
  // ranges). The main thread takes the chunk's words from the stream and only checks the
  // exponent words against the rejection limits; the workers compute the values from the words.
  // A chunk with a rejection is drawn value by value instead, from the same words.
  bool direct_ok_;
  LineCfg cfa_, cfb_, cfc_;

  /// Takes the 2 * n * per words of n samples from the stream into b.words; true when no
  /// exponent word among them is rejected (the chunk is then converted from the words directly).
  bool take_words(DrawBuf& b, uint64_t n) {
    const size_t npre = 2 * n * per_;
    b.words.resize(npre);
    src_.take(b.words.data(), npre);
    const uint32_t* w = b.words.data();
    uint32_t rejected = 0;
    for (uint64_t i = 0; i < n; ++i, w += 2 * per_) {
      for (int j = 0; j < s_.K; ++j) rejected |= xa_.rejects(w[2 * j]);
      for (int j = s_.K; j < 2 * s_.K; ++j) rejected |= xb_.rejects(w[2 * j]);
      rejected |= xc_.rejects(w[4 * s_.K]);
    }
    return !rejected;
  }

  /// Draws samples [first, first + n) into b.
  void draw(DrawBuf& b, uint64_t first, uint64_t n) {
    b.first = first;
    b.n = n;
    b.direct = false;
    size_t npre = 0;
    if (direct_ok_) {
      npre = 2 * n * per_;
      if (take_words(b, n)) {
        b.direct = true;
        return;
      }
    }
    b.raw.resize(n * per_);
    Raw* r = b.raw.data();
    if (bits_) {
      for (uint64_t i = 0; i < n; ++i) {
        for (int j = 0; j < s_.K; ++j) *r++ = Raw{0, draw_bits(s_.a_fmt, g_)};
        for (int j = 0; j < s_.K; ++j) *r++ = Raw{0, draw_bits(s_.b_fmt, g_)};
        *r++ = Raw{0, draw_bits(s_.c_fmt, g_)};
      }
      return;
    }
    draw_expmant_raw(src_, b.words.data(), npre, r, n, s_.K, da_, db_, dc_);
  }

  /// Calls use(value) with the function (i, j) -> the pattern of value j of sample i0 + i of
  /// chunk b in the file part f, in the drawn format (put_lines widens it as the file stores it).
  template <class Use>
  void with_values(const DrawBuf& b, uint64_t i0, const FilePart& f, Use use) const {
    const size_t per = per_;
    if (b.direct) {
      // value j of a line from its two words: exponent (through x) and significand
      const uint32_t* wf = b.words.data() + i0 * 2 * per + 2 * f.first;
      const UniformInt x = *f.x;
      const FmtConst k = f.cfg->k;
      const size_t stride = 2 * per;
      use([=](uint64_t i, int j) {
        const uint32_t* v = wf + i * stride + 2 * static_cast<size_t>(j);
        return draw_expmant32(k, x.value(v[0]), v[1]);
      });
    } else {
      const Raw* rf = b.raw.data() + i0 * per + f.first;
      const LineCfg& c = *f.cfg;
      use([=, &c](uint64_t i, int j) { return raw_value(c, rf[i * per + j]); });
    }
  }

  /// The lines of n samples from sample i0 of chunk b for one file, made at q.
  void put_file(const DrawBuf& b, char* q, uint64_t i0, uint64_t n, const FilePart& f) const {
    with_values(b, i0, f, [&](auto value) { put_lines(q, n, f.k, *f.cfg, f.sep, value); });
  }

  /// The three file parts of a sample: a, b, c.
  std::array<FilePart, 3> file_parts() const {
    return {FilePart{1, 0, L_.la, &cfa_, &xa_, 0, s_.K, ' '},
            FilePart{2, 1, L_.lb, &cfb_, &xb_, static_cast<size_t>(s_.K), s_.K, ' '},
            FilePart{4, 2, L_.lc, &cfc_, &xc_, static_cast<size_t>(2 * s_.K), 1, '\n'}};
  }

  /// A part makes the lines of samples [i0, i1) of the chunk for the files in `files` (1: a,
  /// 2: b, 4: c) and writes them at their offsets.
  void convert_part(const DrawBuf& b, unsigned part, uint64_t i0, uint64_t i1, int files) {
    try {
      std::string& T = text_[part];
      const uint64_t n = i1 - i0;
      T.resize(n * ((files & 1 ? L_.la : 0) + (files & 2 ? L_.lb : 0) + (files & 4 ? L_.lc : 0)));
      char* q = &T[0];
      const std::array<FilePart, 3> fs = file_parts();
      for (const FilePart& f : fs) {
        if (!(files & f.bit)) continue;
        put_file(b, q, i0, n, f);
        out_[f.id]->pwrite(q, n * f.line, hlen_ + (b.first + i0) * f.line);
        q += n * f.line;
      }
    } catch (...) {
      err_[part] = std::current_exception();
    }
  }

  /// Converts and writes this rank's samples of chunk b. Two threads: one writes a.txt, the
  /// other b.txt and c.txt (writes to one file from two threads would serialise on its inode
  /// lock in the kernel). More threads: each makes a range of samples for all three files (the
  /// conversion then scales; the writes share the locks).
  void convert_all(const DrawBuf& b) {
    // this rank's samples of the chunk: [j0, j1)
    const uint64_t j0 = std::max(lo_, b.first) - b.first, j1 = std::min(hi_, b.first + b.n) - b.first;
    if (j0 >= j1) return;
    if (threads_ == 1) {
      convert_part(b, 0, j0, j1, 7);
      return;
    }
    if (threads_ == 2) {
      run_parallel(2, [&](unsigned t) {
        if (t) convert_part(b, 1u, j0, j1, 6);
        else convert_part(b, 0, j0, j1, 1);
      });
    } else {
      const uint64_t sub = (j1 - j0 + threads_ - 1) / threads_;
      run_parallel(threads_, [&](unsigned t) {
        const uint64_t i0 = std::min(j1, j0 + t * sub), i1 = std::min(j1, i0 + sub);
        if (i0 < i1) convert_part(b, t, i0, i1, 7);
      });
    }
  }
};

/// Block scales: sa.txt and sb.txt into fsa, fsb (rank 0 writes them, a few per sample).
void write_scale_files(const SampleSpec& s, const std::string& dir, std::unique_ptr<dist::SharedOutput>& fsa,
                       std::unique_ptr<dist::SharedOutput>& fsb) {
  fsa.reset(new dist::SharedOutput(dir + "/sa.txt"));
  fsb.reset(new dist::SharedOutput(dir + "/sb.txt"));
  if (dist::rank() == 0) {
    Mt19937 gs(s.seed + 1);
    char sh[160];
    for (dist::SharedOutput* f : {fsa.get(), fsb.get()}) {
      std::snprintf(sh, sizeof sh, "# matcore sample %s=%s block=%d k=%d n=%llu seed=%u es=[%d,%d]\n",
                    f == fsa.get() ? "sa" : "sb", s.scale_fmt.name.c_str(), s.scale_block, s.K,
                    static_cast<unsigned long long>(s.N), s.seed + 1, s.es_lo, s.es_hi);
      const std::string t = scale_samples(s, gs, sh);
      f->pwrite(t.data(), t.size(), 0);
    }
  }
}

}  // namespace

uint64_t write_samples(const SampleSpec& s, const std::string& dir, unsigned threads,
                       bool progress) {
  if (s.K < 1) throw std::invalid_argument("sample: k must be positive");
  if (s.N < 1) throw std::invalid_argument("sample: n must be positive");
  if (s.ea_lo > s.ea_hi || s.eb_lo > s.eb_hi || s.ec_lo > s.ec_hi)
    throw std::invalid_argument("sample: empty exponent range");
  OutputDir out_dir(dir, "--out (a.txt, b.txt, c.txt)");
  threads = thread_count(threads);

  // Every line of a file has the same length and sample i starts at byte header + i * line:
  // the workers write their parts at those offsets themselves (pwrite), in parallel, while the
  // main thread draws the next chunk of the random stream.
  const SampleLayout L(s);
  const std::string hdr = sample_header(s, L.na || L.nb);
  const size_t hlen = hdr.size();
  // Each file is written to a temporary beside it and the three are renamed into place
  // together at the end: an interrupted or failed run leaves no a/b/c that passes for complete.
  // Under mpirun (dist.hpp) every rank writes the lines of its own samples [lo, hi) into the
  // temporaries rank 0 created; the random stream is one sequence in file order, so each rank
  // draws it from the start and converts only its samples (drawing is the cheap part).
  dist::SharedOutput fa(dir + "/a.txt"), fb(dir + "/b.txt"), fc(dir + "/c.txt");
  dist::SharedOutput* out[3] = {&fa, &fb, &fc};
  if (dist::rank() == 0)
    for (int i = 0; i < 3; ++i) out[i]->pwrite(hdr.data(), hlen, 0);
  uint64_t lo = 0, hi = s.N;
  dist::share(s.N, lo, hi);

  const bool tty = progress && isatty(fileno(stderr)) && s.N >= 100000 && dist::rank() == 0;
  {
    SampleWriter w(s, L, out, hlen, threads, lo, hi);
    w.run(tty);
  }
  if (tty) std::fprintf(stderr, "\r%60s\r", "");
  std::vector<dist::SharedOutput*> all{&fa, &fb, &fc};
  std::unique_ptr<dist::SharedOutput> fsa, fsb;
  if (s.scale_block > 0) {
    write_scale_files(s, dir, fsa, fsb);
    all.push_back(fsa.get());
    all.push_back(fsb.get());
  }
  dist::SharedOutput::commit_all(all);
  out_dir.keep();
  return s.N;
}

void stream_samples(const SampleSpec& s, const SampleChunk& use, unsigned threads) {
  if (s.K < 1) throw std::invalid_argument("sample: k must be positive");
  if (s.N < 1) throw std::invalid_argument("sample: n must be positive");
  if (s.ea_lo > s.ea_hi || s.eb_lo > s.eb_hi || s.ec_lo > s.ec_hi)
    throw std::invalid_argument("sample: empty exponent range");
  const SampleLayout L(s);
  dist::SharedOutput* none[3] = {nullptr, nullptr, nullptr};
  SampleWriter w(s, L, none, 0, thread_count(threads), 0, s.N);
  w.run_values(use);
}

void sample_scales(const SampleSpec& s, std::vector<uint64_t>& sa, std::vector<uint64_t>& sb) {
  if (s.scale_block < 1) throw std::invalid_argument("sample: no block scales (scale_block)");
  Mt19937 gs(s.seed + 1);  // the stream of sa.txt, then sb.txt
  sa = scale_values(s, gs);
  sb = scale_values(s, gs);
}

}  // namespace mc
