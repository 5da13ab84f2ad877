#include "matcore/format.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace mc {

const Format kBinary64{"binary64", 11, 52, 1023, Encoding::IEEE, true};
const Format kBinary32{"binary32", 8, 23, 127, Encoding::IEEE, true};
const Format kBinary16{"binary16", 5, 10, 15, Encoding::IEEE, true};
const Format kBfloat16{"bf16", 8, 7, 127, Encoding::IEEE, true};
const Format kTf32{"tf32", 8, 10, 127, Encoding::IEEE, true};
const Format kE4M3{"e4m3", 4, 3, 7, Encoding::FN, true};
const Format kE5M2{"e5m2", 5, 2, 15, Encoding::IEEE, true};
const Format kE4M3Fnuz{"e4m3fnuz", 4, 3, 8, Encoding::FNUZ, true};
const Format kE5M2Fnuz{"e5m2fnuz", 5, 2, 16, Encoding::FNUZ, true};
const Format kE3M2{"e3m2", 3, 2, 3, Encoding::Finite, true};
const Format kE2M3{"e2m3", 2, 3, 1, Encoding::Finite, true};
const Format kE2M1{"e2m1", 2, 1, 1, Encoding::Finite, true};
const Format kE8M0{"e8m0", 8, 0, 127, Encoding::Pow2, false, Sign::None};
const Format kUE4M3{"ue4m3", 4, 3, 7, Encoding::FN, true, Sign::Ignored};

const char* to_string(Encoding e) {
  switch (e) {
    case Encoding::IEEE: return "ieee";
    case Encoding::FN: return "fn";
    case Encoding::FNUZ: return "fnuz";
    case Encoding::Finite: return "finite";
    case Encoding::Pow2: return "pow2";
  }
  return "?";
}
const char* to_string(Class c) {
  switch (c) {
    case Class::Zero: return "zero";
    case Class::Subnormal: return "subnormal";
    case Class::Normal: return "normal";
    case Class::Inf: return "inf";
    case Class::NaN: return "nan";
  }
  return "?";
}
const char* to_string(Rounding r) {
  switch (r) {
    case Rounding::RNE: return "rne";
    case Rounding::RTZ: return "rtz";
    case Rounding::RD: return "rd";
    case Rounding::RU: return "ru";
    case Rounding::RNA: return "rna";
  }
  return "?";
}
bool parse_rounding(const std::string& s, Rounding& out) {
  for (Rounding r : {Rounding::RNE, Rounding::RTZ, Rounding::RD, Rounding::RU, Rounding::RNA})
    if (s == to_string(r)) { out = r; return true; }
  return false;
}

uint64_t Format::max_finite_bits() const {
  const uint64_t mmask = (uint64_t{1} << mbits) - 1;
  const uint64_t top = (uint64_t{1} << ebits) - 1;
  switch (enc) {
    case Encoding::IEEE: return ((top - 1) << mbits) | mmask;
    case Encoding::FN: return (top << mbits) | (mmask - 1);  // all-ones mantissa is NaN
    case Encoding::FNUZ:
    case Encoding::Finite: return (top << mbits) | mmask;
    case Encoding::Pow2: return top - 1;
  }
  return 0;
}

uint64_t Format::inf_bits(bool neg) const {
  const uint64_t top = (uint64_t{1} << ebits) - 1;
  return (neg ? uint64_t{1} << (width() - 1) : 0) | (top << mbits);
}

uint64_t Format::qnan_bits(bool neg) const {
  const uint64_t s = uint64_t{1} << (width() - 1);
  const uint64_t top = (uint64_t{1} << ebits) - 1;
  const uint64_t mmask = (uint64_t{1} << mbits) - 1;
  switch (enc) {
    case Encoding::IEEE: return (neg ? s : 0) | (top << mbits) | (uint64_t{1} << (mbits - 1));
    case Encoding::FN: return (neg ? s : 0) | (top << mbits) | mmask;
    case Encoding::FNUZ: return s;
    case Encoding::Pow2: return top;
    case Encoding::Finite: break;
  }
  throw std::logic_error("format " + name + " has no NaN");
}

namespace {
struct Named { const char* name; const Format* f; };
const Named kNamed[] = {
    {"binary64", &kBinary64}, {"fp64", &kBinary64},     {"binary32", &kBinary32},
    {"fp32", &kBinary32},     {"binary16", &kBinary16}, {"fp16", &kBinary16},
    {"bf16", &kBfloat16},     {"bfloat16", &kBfloat16}, {"tf32", &kTf32},
    {"xf32", &kTf32},         {"e4m3", &kE4M3},         {"e4m3fn", &kE4M3},
    {"e5m2", &kE5M2},         {"e4m3fnuz", &kE4M3Fnuz}, {"e5m2fnuz", &kE5M2Fnuz},
    {"e3m2", &kE3M2},         {"e2m3", &kE2M3},         {"e2m1", &kE2M1},
};
const Named kScaleNamed[] = {{"e8m0", &kE8M0}, {"ue8m0", &kE8M0}, {"ue4m3", &kUE4M3}};
}  // namespace

const Format* find_format(const std::string& name) {
  for (const auto& n : kNamed)
    if (name == n.name) return n.f;
  for (const auto& n : kScaleNamed)
    if (name == n.name) return n.f;
  return nullptr;
}

const Format& format_by_name(const std::string& name) {
  if (const Format* f = find_format(name)) {
    if (f->is_scale())
      throw std::invalid_argument("'" + name + "' is a block-scale format (a datapath's scale_fmt), not an element or output format");
    return *f;
  }
  std::string known;
  for (const auto& n : kNamed) known += std::string(known.empty() ? "" : ", ") + n.name;
  for (const auto& n : kScaleNamed) known += std::string(", ") + n.name;
  throw std::invalid_argument("unknown format '" + name + "' (known: " + known + ")");
}

std::vector<std::string> format_names() {
  std::vector<std::string> v;
  for (const auto& n : kNamed) v.push_back(n.name);
  return v;
}

std::vector<std::string> scale_format_names() { return {"e8m0", "ue8m0", "ue4m3"}; }

uint64_t zero_bits(const Format& f, bool neg) {
  if (f.enc == Encoding::FNUZ) return 0;
  return neg ? uint64_t{1} << (f.width() - 1) : 0;
}

namespace {
/// Does rounding increment the kept magnitude? `lsb` is the kept LSB, `rb` the first dropped bit,
/// `st` the OR of all further dropped bits.
bool round_up(Rounding m, bool neg, bool lsb, bool rb, bool st) {
  switch (m) {
    case Rounding::RNE: return rb && (st || lsb);
    case Rounding::RNA: return rb;
    case Rounding::RTZ: return false;
    case Rounding::RD: return neg && (rb || st);
    case Rounding::RU: return !neg && (rb || st);
  }
  return false;
}
}  // namespace

uint64_t round_to_format(const Format& f, const Exact& x, const RoundOpts& o) {
  const int p = o.prec_mbits >= 0 ? o.prec_mbits : f.mbits;
  const uint64_t sbit = x.sign ? uint64_t{1} << (f.width() - 1) : 0;
  if (x.mag == 0) {
    if (!x.sticky) return zero_bits(f, x.sign);
    // Only sticky bits: a value strictly between 0 and the smallest LSB we can see.
  }
  const int msb = msb_index(x.mag);
  // Exponent of the leading bit (if mag == 0 but sticky, treat as tiny: far below emin).
  int e = x.mag ? x.lsb_exp + msb : f.emin() - p - 4;
  bool sub = false;
  if (e < f.emin()) { e = f.emin(); sub = true; }
  const int q = e - p;  // exponent of the LSB we keep
  bool st = x.sticky, rb = false;
  u128 kept;
  const int sh = q - x.lsb_exp;
  if (sh <= 0) {
    kept = (sh <= -127) ? 0 : x.mag << (-sh);  // exact (sh < 0 only happens for small mag)
  } else {
    u128 m = shr_sticky(x.mag, sh - 1, st);
    rb = m & 1;
    kept = m >> 1;
  }
  if (round_up(o.mode, x.sign, kept & 1, rb, st)) kept += 1;
  // Renormalise after a carry: kept may reach 2^(p+1) (normal) or 2^p (subnormal -> normal).
  if (msb_index(kept) > p) {
    kept >>= 1;
    ++e;
    sub = false;
  }
  if (sub && (kept >> p) != 0) sub = false;  // carried into the smallest normal
  if (kept == 0) return zero_bits(f, x.sign);
  if (sub && !o.subnormals) return zero_bits(f, x.sign);
  // Re-express the kept significand with the format's own fraction width.
  const uint64_t sig = static_cast<uint64_t>(kept) << (f.mbits - p);
  const bool overflow = e > f.emax() ||
                        (e == f.emax() && f.enc == Encoding::FN &&
                         (sig & ((uint64_t{1} << f.mbits) - 1)) == ((uint64_t{1} << f.mbits) - 1));
  if (overflow) {
    bool to_inf = o.overflow_to_inf || o.mode == Rounding::RNE || o.mode == Rounding::RNA ||
                  (o.mode == Rounding::RU && !x.sign) || (o.mode == Rounding::RD && x.sign);
    if (to_inf && f.has_nan()) return f.has_inf() ? f.inf_bits(x.sign) : f.qnan_bits(x.sign);
    return sbit | f.max_finite_bits();
  }
  const uint64_t E = sub || (sig >> f.mbits) == 0 ? 0 : static_cast<uint64_t>(e + f.bias);
  const uint64_t M = sig & ((uint64_t{1} << f.mbits) - 1);
  const uint64_t bits = sbit | (E << f.mbits) | M;
  if (f.enc == Encoding::FNUZ && bits == sbit && sbit) return 0;  // no -0 in FNUZ
  return bits;
}

uint64_t convert(const Format& from, uint64_t bits, const Format& to, Rounding mode,
                 bool* inexact) {
  const Unpacked u = decode(from, bits);
  if (inexact) *inexact = false;
  switch (u.cls) {
    case Class::NaN:
      if (!to.has_nan()) throw std::invalid_argument("NaN is not representable in " + to.name + " (it has no NaN)");
      return to.qnan_bits(u.sign);
    case Class::Inf:
      if (to.has_inf()) return to.inf_bits(u.sign);
      if (!to.has_nan()) throw std::invalid_argument("infinity is not representable in " + to.name);
      return to.qnan_bits(u.sign);
    case Class::Zero: return zero_bits(to, u.sign);
    default: break;
  }
  Exact x{u.sign, u.sig, u.exp - u.mbits, false};
  const uint64_t r = round_to_format(to, x, RoundOpts{mode, true, -1, false});
  if (inexact) {
    const Unpacked v = decode(to, r);
    bool same = v.is_finite() && v.sign == u.sign;
    if (same) {
      // compare sig*2^(exp-mbits) exactly
      const int e1 = u.exp - u.mbits, e2 = v.exp - v.mbits;
      const int lo = e1 < e2 ? e1 : e2;
      const int s1 = e1 - lo, s2 = e2 - lo;
      if (s1 > 60 || s2 > 60) same = (u.sig == 0 && v.sig == 0);
      else same = (static_cast<u128>(u.sig) << s1) == (static_cast<u128>(v.sig) << s2);
    }
    *inexact = !same;
  }
  return r;
}

uint64_t widen_exact(const Format& from, uint64_t bits, const Format& to) {
  const Unpacked u = decode(from, bits);
  if (u.cls == Class::NaN && from.enc == Encoding::IEEE && to.enc == Encoding::IEEE) {
    const uint64_t payload = bits & ((uint64_t{1} << from.mbits) - 1);
    return to.inf_bits(u.sign) | (payload << (to.mbits - from.mbits));
  }
  return convert(from, bits, to, Rounding::RNE);
}

std::string to_hex_bits(const Format& f, uint64_t bits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*llx", f.hex_digits(), static_cast<unsigned long long>(bits));
  return buf;
}

std::string to_decimal(const Format& f, uint64_t bits) {
  const Unpacked u = decode(f, bits);
  switch (u.cls) {
    case Class::NaN: return u.sign ? "-nan" : "nan";
    case Class::Inf: return u.sign ? "-inf" : "inf";
    case Class::Zero: return u.sign ? "-0" : "0";
    default: break;
  }
  // Display only: the exact value is sig*2^(exp-mbits); long double holds it exactly for all
  // formats up to binary64.
  long double v = std::ldexp(static_cast<long double>(u.sig), u.exp - u.mbits);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%.17Lg", u.sign ? "-" : "", v);
  return buf;
}

std::string describe(const Format& f, uint64_t bits) {
  const Unpacked u = decode(f, bits);
  std::string s = "0x" + to_hex_bits(f, bits) + " " + to_decimal(f, bits);
  if (u.cls == Class::Normal || u.cls == Class::Subnormal) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " (%s%s sig=0x%llx*2^%d)", u.sign ? "-" : "+", to_string(u.cls),
                  static_cast<unsigned long long>(u.sig), u.exp - u.mbits);
    s += buf;
  }
  return s;
}

std::string to_hex(u128 x) {
  if (x == 0) return "0";
  std::string s;
  while (x) {
    s.insert(s.begin(), "0123456789abcdef"[static_cast<int>(x & 15)]);
    x >>= 4;
  }
  return s;
}

std::string to_binary_fixed(i128 x, int frac) {
  const bool neg = x < 0;
  u128 m = neg ? static_cast<u128>(-x) : static_cast<u128>(x);
  std::string s;
  const int n = msb_index(m) + 1;
  const int hi = n > frac + 1 ? n : frac + 1;
  for (int i = hi - 1; i >= 0; --i) {
    s += ((m >> i) & 1) ? '1' : '0';
    if (i == frac && frac > 0) s += '.';
  }
  return (neg ? "-" : "") + s;
}

double to_host_double(const Format& f, uint64_t bits) {
  const Unpacked u = decode(f, bits);
  if (u.cls == Class::Zero) return u.sign ? -0.0 : 0.0;
  if (u.cls == Class::Inf) return u.sign ? -HUGE_VAL : HUGE_VAL;
  if (u.cls == Class::NaN) return u.sign ? -NAN : NAN;
  const double v = std::ldexp(static_cast<double>(u.sig), u.exp - u.mbits);
  return u.sign ? -v : v;
}

}  // namespace mc
