#include "matcore/sample.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <sys/stat.h>
#include <thread>
#include <vector>

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
  return s;
}

namespace {

/// Uniform integer in [lo, hi] from 32-bit draws (rejection: no modulo bias).
int uniform_int(std::mt19937& g, int lo, int hi) {
  const uint32_t span = static_cast<uint32_t>(hi - lo) + 1u;
  if (span == 0) return lo + static_cast<int>(g());
  const uint32_t lim = UINT32_MAX - UINT32_MAX % span;
  uint32_t r;
  do r = g(); while (r >= lim);
  return lo + static_cast<int>(r % span);
}

const Format& stored_of(const Format& f) { return f.width() > 32 ? kBinary64 : kBinary32; }

uint64_t draw_bits(const Format& f, std::mt19937& g) {
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
/// RNE of (-1)^sign * mag * 2^lsb into f, for mag < 2^62 (the sampling hot path; the same
/// result as round_to_format, which the tests check).
uint64_t round_small(const Format& f, bool sign, uint64_t mag, int lsb) {
  if (mag == 0) return zero_bits(f, sign);
  const int msb = 63 - __builtin_clzll(mag);
  int e = lsb + msb;
  bool sub = false;
  if (e < f.emin()) { e = f.emin(); sub = true; }
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
    if (rem > half || (rem == half && (kept & 1))) ++kept;
  }
  if (kept >> (f.mbits + 1)) { kept >>= 1; ++e; }
  if (sub && (kept >> f.mbits)) sub = false;
  if (kept == 0) return zero_bits(f, sign);
  const uint64_t mmask = (uint64_t{1} << f.mbits) - 1;
  const bool fn_nan = f.enc == Encoding::FN && e == f.emax() && (kept & mmask) == mmask;
  if (e > f.emax() || fn_nan) return f.has_inf() ? f.inf_bits(sign) : f.qnan_bits(sign);
  const uint64_t E = sub ? 0 : static_cast<uint64_t>(e + f.bias);
  return (static_cast<uint64_t>(sign) << (f.width() - 1)) | (E << f.mbits) | (kept & mmask);
}

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
  sig <<= (23 - top);     // 24-bit significand with the leading one at bit 23 (exact)
  return s | (static_cast<uint32_t>(lead + 127) << 23) | static_cast<uint32_t>(sig & 0x7FFFFF);
}
}  // namespace

uint64_t draw_expmant(const Format& f, int e, uint64_t u, int ubits) {
  if (ubits <= 32) {
    const int64_t centred = static_cast<int64_t>(u) - (int64_t{1} << (ubits - 1));
    const uint64_t m = static_cast<uint64_t>(centred < 0 ? -centred : centred);
    const int p = f.mbits + 1;
    return round_small(f, centred < 0, m * ((uint64_t{1} << p) - 1), e + 1 - p - (ubits - 1));
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
uint64_t draw_sig(std::mt19937& g, int bits) {
  if (bits == 32) return g();
  const uint64_t a = g() >> 5, b = g() >> 6;
  return (a << 26) | b;
}


}  // namespace

namespace {

/// Exact widening to the stored format through a table for formats of at most 16 bits.
struct Widener {
  const Format& f;
  const Format& st;
  std::vector<uint32_t> table;
  Widener(const Format& from, const Format& to) : f(from), st(to) {
    if (f.width() <= 16 && st.width() == 32) {
      table.resize(size_t{1} << f.width());
      for (size_t i = 0; i < table.size(); ++i) table[i] = widen32(f, i);
    }
  }
  uint64_t operator()(uint64_t v) const {
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

uint64_t write_samples(const SampleSpec& s, const std::string& dir, unsigned threads,
                       bool progress) {
  if (s.K < 1) throw std::invalid_argument("sample: k must be positive");
  if (s.N < 1) throw std::invalid_argument("sample: n must be positive");
  if (s.ea_lo > s.ea_hi || s.eb_lo > s.eb_hi || s.ec_lo > s.ec_hi)
    throw std::invalid_argument("sample: empty exponent range");
  ::mkdir(dir.c_str(), 0777);
  const std::string pa = dir + "/a.txt", pb = dir + "/b.txt", pc = dir + "/c.txt";
  std::FILE* fa = std::fopen(pa.c_str(), "w");
  std::FILE* fb = std::fopen(pb.c_str(), "w");
  std::FILE* fc = std::fopen(pc.c_str(), "w");
  if (!fa || !fb || !fc) throw InputError(dir + ": cannot create a.txt/b.txt/c.txt");
  char hdr[256];
  std::snprintf(hdr, sizeof hdr,
                "# matcore sample a=%s b=%s k=%d n=%llu strategy=%s seed=%u ea=[%d,%d] eb=[%d,%d] ec=[%d,%d]\n",
                s.a_fmt.name.c_str(), s.b_fmt.name.c_str(), s.K, static_cast<unsigned long long>(s.N),
                s.strategy == Strategy::Bits ? "bits" : "expmant", s.seed, s.ea_lo, s.ea_hi, s.eb_lo,
                s.eb_hi, s.ec_lo, s.ec_hi);
  for (std::FILE* f : {fa, fb, fc}) std::fputs(hdr, f);
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::mt19937 g(s.seed);
  const Format &sa = stored_of(s.a_fmt), &sb = stored_of(s.b_fmt), &sc = stored_of(s.c_fmt);
  const Widener wa(s.a_fmt, sa), wb(s.b_fmt, sb), wc(s.c_fmt, sc);
  const int da = sa.width() / 4, db = sb.width() / 4, dc = sc.width() / 4;
  const int ua = sig_bits(s.a_fmt), ub = sig_bits(s.b_fmt), uc = sig_bits(s.c_fmt);
  const uint64_t chunk = 1 << 14;
  const size_t per = static_cast<size_t>(2 * s.K + 1);
  // Two buffers: the main thread draws chunk i+1 (the one sequential part: the random stream)
  // while the workers convert and format chunk i.
  struct Buf {
    std::vector<Raw> raw;
    uint64_t n = 0;
    std::vector<std::string> ta, tb, tc;
  };
  Buf buf[2];
  for (Buf& b : buf) b.ta.resize(threads), b.tb.resize(threads), b.tc.resize(threads);
  const bool tty = progress && isatty(fileno(stderr)) && s.N >= 100000;

  auto draw = [&](Buf& b, uint64_t n) {
    b.n = n;
    b.raw.resize(n * per);
    for (uint64_t i = 0; i < n; ++i) {
      Raw* r = &b.raw[i * per];
      for (size_t j = 0; j < per; ++j) {
        const bool isa = j < static_cast<size_t>(s.K), isb = !isa && j < per - 1;
        if (s.strategy == Strategy::Bits) {
          r[j].e = 0;
          r[j].u = draw_bits(isa ? s.a_fmt : isb ? s.b_fmt : s.c_fmt, g);
        } else if (isa) {
          r[j].e = uniform_int(g, s.ea_lo, s.ea_hi);
          r[j].u = draw_sig(g, ua);
        } else if (isb) {
          r[j].e = uniform_int(g, s.eb_lo, s.eb_hi);
          r[j].u = draw_sig(g, ub);
        } else {
          r[j].e = uniform_int(g, s.ec_lo, s.ec_hi);
          r[j].u = draw_sig(g, uc);
        }
      }
    }
  };
  auto convert_part = [&](Buf& b, unsigned t, uint64_t i0, uint64_t i1) {
    std::string& A = b.ta[t];
    std::string& B = b.tb[t];
    std::string& C = b.tc[t];
    A.resize((i1 - i0) * s.K * (da + 1));
    B.resize((i1 - i0) * s.K * (db + 1));
    C.resize((i1 - i0) * (dc + 1));
    char *pa2 = &A[0], *pb2 = &B[0], *pc2 = &C[0];
    const bool bits = s.strategy == Strategy::Bits;
    for (uint64_t i = i0; i < i1; ++i) {
      const Raw* r = &b.raw[i * per];
      for (int j = 0; j < s.K; ++j) {
        const uint64_t v = bits ? r[j].u : draw_expmant(s.a_fmt, r[j].e, r[j].u, ua);
        pa2 = put_hex_fast(pa2, wa(v), da);
        *pa2++ = j == s.K - 1 ? '\n' : ' ';
      }
      for (int j = s.K; j < 2 * s.K; ++j) {
        const uint64_t v = bits ? r[j].u : draw_expmant(s.b_fmt, r[j].e, r[j].u, ub);
        pb2 = put_hex_fast(pb2, wb(v), db);
        *pb2++ = j == 2 * s.K - 1 ? '\n' : ' ';
      }
      const Raw& rc = r[2 * s.K];
      const uint64_t v = bits ? rc.u : draw_expmant(s.c_fmt, rc.e, rc.u, uc);
      pc2 = put_hex_fast(pc2, wc(v), dc);
      *pc2++ = '\n';
    }
  };
  auto convert_all = [&](Buf& b) {
    std::vector<std::thread> pool;
    const uint64_t sub = (b.n + threads - 1) / threads;
    for (unsigned t = 0; t < threads; ++t) {
      const uint64_t i0 = std::min(b.n, t * sub), i1 = std::min(b.n, i0 + sub);
      if (i0 < i1) pool.emplace_back(convert_part, std::ref(b), t, i0, i1);
      else b.ta[t].clear(), b.tb[t].clear(), b.tc[t].clear();
    }
    for (auto& th : pool) th.join();
  };
  auto write_out = [&](const Buf& b) {
    for (unsigned t = 0; t < threads; ++t) {
      std::fwrite(b.ta[t].data(), 1, b.ta[t].size(), fa);
      std::fwrite(b.tb[t].data(), 1, b.tb[t].size(), fb);
      std::fwrite(b.tc[t].data(), 1, b.tc[t].size(), fc);
    }
  };
  std::thread pending;
  int cur = 0;
  uint64_t written = 0;
  for (uint64_t base = 0; base < s.N; base += chunk) {
    draw(buf[cur], std::min(chunk, s.N - base));
    if (pending.joinable()) {
      pending.join();
      write_out(buf[cur ^ 1]);
      written += buf[cur ^ 1].n;
    }
    pending = std::thread(convert_all, std::ref(buf[cur]));
    cur ^= 1;
    if (tty) std::fprintf(stderr, "\r[%-50s] %3d%%", std::string(50 * written / s.N, '#').c_str(),
                          static_cast<int>(100 * written / s.N));
  }
  if (pending.joinable()) {
    pending.join();
    write_out(buf[cur ^ 1]);
  }
  if (tty) std::fprintf(stderr, "\r%60s\r", "");
  bool ok = true;
  for (std::FILE* f : {fa, fb, fc}) ok &= std::fclose(f) == 0;
  if (!ok) throw InputError(dir + ": write failed (disk full?)");
  return s.N;
}

}  // namespace mc
