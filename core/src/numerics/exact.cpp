#include "matcore/exact.hpp"

#include "matcore/vectors.hpp"

#include <cctype>
#include <stdexcept>

namespace mc {

BigUint BigUint::from(uint64_t v) {
  BigUint b;
  while (v) { b.d.push_back(static_cast<uint32_t>(v)); v >>= 32; }
  return b;
}
bool BigUint::is_zero() const {
  for (uint32_t x : d) if (x) return false;
  return true;
}
void BigUint::trim() { while (!d.empty() && d.back() == 0) d.pop_back(); }
void BigUint::mul_small(uint32_t m) {
  uint64_t carry = 0;
  for (uint32_t& x : d) {
    const uint64_t t = static_cast<uint64_t>(x) * m + carry;
    x = static_cast<uint32_t>(t);
    carry = t >> 32;
  }
  if (carry) d.push_back(static_cast<uint32_t>(carry));
}
void BigUint::add(const BigUint& o) {
  if (d.size() < o.d.size()) d.resize(o.d.size(), 0);
  uint64_t carry = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const uint64_t t = static_cast<uint64_t>(d[i]) + (i < o.d.size() ? o.d[i] : 0) + carry;
    d[i] = static_cast<uint32_t>(t);
    carry = t >> 32;
  }
  if (carry) d.push_back(static_cast<uint32_t>(carry));
}
void BigUint::sub(const BigUint& o) {
  int64_t borrow = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    int64_t t = static_cast<int64_t>(d[i]) - (i < o.d.size() ? o.d[i] : 0) - borrow;
    borrow = t < 0;
    if (t < 0) t += (int64_t{1} << 32);
    d[i] = static_cast<uint32_t>(t);
  }
  trim();
}
void BigUint::shl(int n) {
  if (n <= 0 || is_zero()) return;
  const int w = n / 32, b = n % 32;
  std::vector<uint32_t> r(d.size() + w + 1, 0);
  for (size_t i = 0; i < d.size(); ++i) {
    const uint64_t t = static_cast<uint64_t>(d[i]) << b;
    r[i + w] |= static_cast<uint32_t>(t);
    r[i + w + 1] |= static_cast<uint32_t>(t >> 32);
  }
  d.swap(r);
  trim();
}
int BigUint::bits() const {
  for (int i = static_cast<int>(d.size()) - 1; i >= 0; --i)
    if (d[i]) return i * 32 + 32 - __builtin_clz(d[i]);
  return 0;
}
bool BigUint::bit(int i) const {
  const size_t w = static_cast<size_t>(i / 32);
  return w < d.size() && ((d[w] >> (i % 32)) & 1);
}
int BigUint::cmp(const BigUint& a, const BigUint& b) {
  const int ba = a.bits(), bb = b.bits();
  if (ba != bb) return ba < bb ? -1 : 1;
  for (int i = static_cast<int>(std::max(a.d.size(), b.d.size())) - 1; i >= 0; --i) {
    const uint32_t x = i < static_cast<int>(a.d.size()) ? a.d[i] : 0;
    const uint32_t y = i < static_cast<int>(b.d.size()) ? b.d[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

namespace {

struct Term { bool neg; BigUint num; int e2; int d10; };

/// Deepest nesting of '(' ... ')' parse_exact accepts (each level is a recursion of expr).
constexpr int kMaxNesting = 100;

struct Parser {
  const std::string& s;
  size_t i = 0;
  int depth = 0;  ///< open parentheses around the current position
  [[noreturn]] void fail(const std::string& why) const {
    throw std::invalid_argument("cannot parse '" + excerpt(s, 40) + "' at position " + std::to_string(i) +
                                ": " + why);
  }
  void ws() { while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i; }
  bool eat(char c) { ws(); if (i < s.size() && s[i] == c) { ++i; return true; } return false; }
  long integer() {
    ws();
    bool neg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) fail("integer expected");
    long v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      v = v * 10 + (s[i++] - '0');
      if (v > 100000) fail("integer too large");
    }
    return neg ? -v : v;
  }
  bool at_pow() { ws(); return i + 1 < s.size() && s[i] == '2' && s[i + 1] == '^'; }
  Term pow2() {  // '2^' int
    i += 2;
    const long e = integer();
    return Term{false, BigUint::from(1), static_cast<int>(e), 0};
  }
  Term number() {
    ws();
    BigUint n;
    int d10 = 0;
    bool any = false, dot = false;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || (s[i] == '.' && !dot))) {
      if (s[i] == '.') { dot = true; ++i; continue; }
      n.mul_small(10);
      n.add(BigUint::from(static_cast<uint64_t>(s[i] - '0')));
      if (dot) ++d10;
      any = true;
      ++i;
    }
    if (!any) fail("number expected");
    n.trim();
    return Term{false, n, 0, d10};
  }
  void expr(std::vector<Term>& out, bool neg_all) {
    bool first = true;
    for (;;) {
      ws();
      bool neg = false;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
      else if (!first) break;
      first = false;
      ws();
      const bool sign = neg != neg_all;
      if (eat('(')) {
        if (++depth > kMaxNesting)
          fail("parentheses nested deeper than " + std::to_string(kMaxNesting) + " levels");
        expr(out, sign);
        --depth;
        if (!eat(')')) fail("')' expected");
        continue;
      }
      if (i + 1 < s.size() && s[i] == 'S' && s[i + 1] == '(') {
        i += 2;
        const long a = integer();
        if (!eat(',')) fail("',' expected");
        const long b = integer();
        if (!eat(')')) fail("')' expected");
        if (b < a || b - a > 4096) fail("S(a,b) needs a <= b");
        for (long l = a; l <= b; ++l) out.push_back(Term{sign, BigUint::from(1), static_cast<int>(-l), 0});
        continue;
      }
      Term t = at_pow() ? pow2() : number();
      if (eat('*')) {
        if (!at_pow()) fail("'2^' expected after '*'");
        t.e2 += pow2().e2;
      }
      t.neg = sign;
      out.push_back(t);
    }
  }
};

BigUint pow10(int k) {
  BigUint b = BigUint::from(1);
  for (int j = 0; j < k; ++j) b.mul_small(10);
  return b;
}

}  // namespace

ExactValue parse_exact(const std::string& text) {
  ExactValue v;
  std::string t;
  for (char ch : text) if (!std::isspace(static_cast<unsigned char>(ch))) t += ch;
  if (t.empty()) throw std::invalid_argument("empty value");
  std::string body = t;
  bool neg = false;
  if (body[0] == '-' || body[0] == '+') { neg = body[0] == '-'; body = body.substr(1); }
  if (body == "inf" || body == "Inf" || body == "INF") { v.inf = true; v.neg = neg; return v; }
  if (body == "nan" || body == "NaN" || body == "NAN") { v.nan = true; v.neg = neg; return v; }
  if (body == "max") { v.max = true; v.neg = neg; return v; }
  Parser p{t};
  std::vector<Term> terms;
  p.expr(terms, false);
  p.ws();
  if (p.i != t.size()) p.fail("unexpected character");
  int K = 0, M = 0;
  bool first = true;
  for (const Term& x : terms) {
    if (x.num.is_zero()) continue;
    if (first) { K = x.d10; M = x.e2; first = false; }
    K = std::max(K, x.d10);
    M = std::min(M, x.e2);
  }
  BigUint pos, negs;
  bool all_neg_zero = true, any_term = false;
  for (const Term& x : terms) {
    any_term = true;
    if (!x.neg) all_neg_zero = false;
    if (x.num.is_zero()) continue;
    BigUint n = x.num;
    for (int j = x.d10; j < K; ++j) n.mul_small(10);
    n.shl(x.e2 - M);
    (x.neg ? negs : pos).add(n);
  }
  pos.trim();
  negs.trim();
  const int c = BigUint::cmp(pos, negs);
  if (c >= 0) { v.num = pos; v.num.sub(negs); v.neg = false; }
  else { v.num = negs; v.num.sub(pos); v.neg = true; }
  if (v.num.is_zero()) v.neg = any_term && all_neg_zero;  // "-0"
  v.e2 = M;
  v.d10 = K;
  return v;
}

uint64_t exact_to_format(const Format& f, const ExactValue& v, Rounding mode, bool* inexact) {
  if (inexact) *inexact = false;
  if (v.nan) {
    if (!f.has_nan()) throw std::invalid_argument("format " + f.name + " has no NaN");
    return f.qnan_bits(v.neg);
  }
  if (v.inf) {
    if (!f.has_inf()) throw std::invalid_argument("format " + f.name + " has no infinity");
    return f.inf_bits(v.neg);
  }
  if (v.max) return f.max_finite_bits() | (v.neg ? uint64_t{1} << (f.width() - 1) : 0);
  if (v.num.is_zero()) return zero_bits(f, v.neg);
  // value = num * 2^e2 / 10^d10. Long division producing 126 significant bits + sticky.
  BigUint N = v.num, D = pow10(v.d10);
  // Scale so that N / D lies in [2^125, 2^126): q = N*2^s / D.
  int s = 125 - (N.bits() - D.bits());
  if (s > 0) N.shl(s); else D.shl(-s);
  // Now N/D in [2^124, 2^126).
  u128 q = 0;
  BigUint Dj;
  for (int j = 126; j >= 0; --j) {
    Dj = D;
    Dj.shl(j);
    q <<= 1;
    if (BigUint::cmp(N, Dj) >= 0) { N.sub(Dj); q |= 1; }
  }
  const bool sticky = !N.is_zero();
  Exact x{v.neg, q, v.e2 - s, sticky};
  const uint64_t r = round_to_format(f, x, RoundOpts{mode, true, -1, false});
  if (inexact) {
    bool exact = !sticky;
    if (exact) {
      // Exact iff rounding lost no bit of q: re-decode and compare magnitudes.
      const Unpacked u = decode(f, r);
      if (!u.is_finite() || u.cls == Class::Zero) exact = false;
      else {
        const int sh = (u.exp - u.mbits) - x.lsb_exp;
        if (sh < 0 || sh >= 128) exact = false;  // cannot happen: q has 126 significant bits
        else exact = (q >> sh) == static_cast<u128>(u.sig) && (q & ((static_cast<u128>(1) << sh) - 1)) == 0;
      }
    }
    *inexact = !exact;
  }
  return r;
}

}  // namespace mc
