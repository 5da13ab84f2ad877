#include "matcore/output.hpp"
#include "matcore/table.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "matcore/exact.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/vectors.hpp"

namespace mc {

std::vector<std::string> expand_family(const std::string& name) {
  std::vector<std::string> r;
  for (const Datapath& d : all_presets())
    if (d.family == name && (r.empty() || r.back() != d.arch)) r.push_back(d.arch);
  if (r.empty()) r.push_back(name);
  return r;
}

namespace {

[[noreturn]] void fail(const std::string& file, int line, const std::string& field,
                       const std::string& why) {
  throw InputError(file + ":" + std::to_string(line) + ": " + field + ": " + why);
}

/// A table integer: decimal digits only (no sign, no blanks, no trailing characters), within
/// [lo, hi]; anything else is an InputError naming file:line:field.
int strict_int(const std::string& text, int lo, int hi, const std::string& file, int line,
               const std::string& field) {
  const std::string range = " (an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] expected)";
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    fail(file, line, field, "'" + excerpt(text) + "' is not a number" + range);
  long long v = 0;
  for (char ch : text) {
    v = v * 10 + (ch - '0');
    if (v > hi) fail(file, line, field, "'" + excerpt(text) + "' is out of range" + range);
  }
  if (v < lo) fail(file, line, field, "'" + excerpt(text) + "' is out of range" + range);
  return static_cast<int>(v);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> r;
  std::string cur;
  for (char ch : s) {
    if (ch == sep) { r.push_back(cur); cur.clear(); }
    else cur += ch;
  }
  r.push_back(cur);
  return r;
}

/// Splits p (exact) into a (fa) * b (fb) with b = 2^e, both normal when possible; failing that,
/// into two normal factors d*2^x and (m/d)*2^y of its odd part m.
bool split_product(const Format& fa, const Format& fb, const ExactValue& p, uint64_t& a,
                   uint64_t& b) {
  if (p.nan || p.inf || p.max) return false;
  if (p.num.is_zero()) {
    a = zero_bits(fa, p.neg);
    b = 0;
    return true;
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (int eb = fb.emin() - fb.mbits; eb <= fb.emax(); ++eb) {
      ExactValue bv;
      bv.num = BigUint::from(1);
      bv.e2 = eb;
      bool inex = false;
      const uint64_t bb = exact_to_format(fb, bv, Rounding::RNE, &inex);
      const Unpacked ub = decode(fb, bb);
      if (inex || !ub.is_finite() || (pass == 0 && ub.cls != Class::Normal)) continue;
      ExactValue av = p;
      av.e2 -= eb;
      const uint64_t ab = exact_to_format(fa, av, Rounding::RNE, &inex);
      const Unpacked ua = decode(fa, ab);
      if (inex || !ua.is_finite() || ua.cls == Class::Zero) continue;
      if (pass == 0 && ua.cls != Class::Normal) continue;
      a = ab;
      b = bb;
      return true;
    }
  }
  // a = d*2^x and b = (m/d)*2^y for an odd divisor d of the odd part m of p (both normal).
  if (p.d10 != 0 || p.num.bits() > 40) return false;
  uint64_t m = 0;
  for (int i = p.num.bits() - 1; i >= 0; --i) m = (m << 1) | (p.num.bit(i) ? 1 : 0);
  int e = p.e2;
  while (m && !(m & 1)) { m >>= 1; ++e; }
  for (uint64_t d = 3; d * d <= m; d += 2) {
    if (m % d) continue;
    const int pa = fa.mbits + 1, pb = fb.mbits + 1;
    if (d >> pa || (m / d) >> pb) continue;
    for (int x = fa.emin() - 64; x <= fa.emax() + 64; ++x) {
      ExactValue av, bv;
      av.num = BigUint::from(d);
      av.e2 = x;
      av.neg = p.neg;
      bv.num = BigUint::from(m / d);
      bv.e2 = e - x;
      bool i1 = false, i2 = false;
      const uint64_t ab = exact_to_format(fa, av, Rounding::RNE, &i1);
      const uint64_t bb = exact_to_format(fb, bv, Rounding::RNE, &i2);
      if (i1 || i2 || decode(fa, ab).cls != Class::Normal || decode(fb, bb).cls != Class::Normal) continue;
      a = ab;
      b = bb;
      return true;
    }
  }
  return false;
}

uint64_t value_in(const Format& f, const std::string& text, const std::string& where) {
  bool inexact = false;
  uint64_t v;
  try {
    v = parse_operand(f, text, &inexact);
  } catch (const std::exception& e) {
    throw InputError(where + ": " + e.what());
  }
  if (inexact) throw InputError(where + ": '" + text + "' is not exactly representable in " + f.name);
  return v;
}

/// An a/b operand: exact, or with the format's ingest rule (tf32/xf32 truncation).
uint64_t operand_in(const Datapath& dp, const Format& f, const std::string& text,
                    const std::string& where) {
  if (dp.ingest == Rounding::RNE) return value_in(f, text, where);
  try {
    return parse_input_operand(f, dp.ingest, text);
  } catch (const std::exception& e) {
    throw InputError(where + ": " + e.what());
  }
}

}  // namespace

std::vector<TableCase> read_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file for reading");
  note_input(path);
  std::vector<TableCase> out;
  std::string line, comment, type;
  std::vector<std::string> presets;
  int k = 0, ln = 0;
  bool ambiguous = false;
  while (std::getline(in, line)) {
    ++ln;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    size_t st = line.find_first_not_of(" \t");
    if (st == std::string::npos) continue;
    line = line.substr(st);
    if (line[0] == '#') {
      if (line.rfind("# AMBIGUOUS", 0) == 0) ambiguous = true;
      comment = line.substr(1);
      while (!comment.empty() && comment[0] == ' ') comment.erase(0, 1);
      continue;
    }
    if (line[0] == '@') {
      std::istringstream ss(line.substr(1));
      std::string fams;
      if (!(ss >> fams >> type)) fail(path, ln, "context", "'@ <presets> <type> [k=K]' expected");
      presets.clear();
      for (const std::string& f : split(fams, ','))
        for (const std::string& a : expand_family(f)) presets.push_back(a);
      k = 0;
      std::string kw;
      while (ss >> kw) {
        if (kw.rfind("k=", 0) == 0) k = strict_int(kw.substr(2), 1, 65536, path, ln, "k");
        else fail(path, ln, "context", "unknown word '" + excerpt(kw) + "'");
      }
      // every preset must have the type (run_case looks them up)
      for (const std::string& a : presets) {
        try {
          find_preset(a, type);
        } catch (const std::invalid_argument& e) {
          fail(path, ln, "context", e.what());
        }
      }
      continue;
    }
    if (presets.empty()) fail(path, ln, "context", "case before any '@' line");
    TableCase tc;
    tc.file = path;
    tc.line = ln;
    tc.comment = comment;
    tc.presets = presets;
    tc.type = type;
    tc.k = k;
    tc.ambiguous = ambiguous;
    const size_t arrow = line.find("=>");
    if (arrow == std::string::npos) fail(path, ln, "d", "'=> d=<value>' missing");
    std::string rhs = line.substr(arrow + 2);
    st = rhs.find_first_not_of(' ');
    rhs = st == std::string::npos ? "" : rhs.substr(st);
    if (rhs.rfind("d=", 0) != 0) fail(path, ln, "d", "'d=<value>' expected after '=>'");
    tc.d = rhs.substr(2);
    std::istringstream ss(line.substr(0, arrow));
    std::string w;
    while (ss >> w) {
      const size_t eq = w.find('=');
      if (eq == std::string::npos || eq == 0) fail(path, ln, w, "'name=value' expected");
      const std::string name = w.substr(0, eq), val = w.substr(eq + 1);
      if (name == "c") { tc.c = val; continue; }
      const char kind = name[0];
      if (kind != 'a' && kind != 'b' && kind != 'p')
        fail(path, ln, name, "unknown operand (c, a<i>, b<i> or p<i> with 1 <= i <= 64)");
      const int idx = strict_int(name.substr(1), 1, 64, path, ln, name);
      (kind == 'a' ? tc.a : kind == 'b' ? tc.b : tc.p).emplace_back(idx, val);
    }
    out.push_back(tc);
  }
  if (out.empty()) throw InputError(path + ": no cases (empty table)");
  return out;
}

void build_operands(const TableCase& tc, const Datapath& dp, std::vector<uint64_t>& a,
                    std::vector<uint64_t>& b, uint64_t& c) {
  const std::string where = tc.file + ":" + std::to_string(tc.line);
  int K = tc.k ? tc.k : dp.k_default;
  for (const auto* v : {&tc.a, &tc.b, &tc.p})
    for (const auto& x : *v)
      if (x.first > K) fail(tc.file, tc.line, "k", "operand index " + std::to_string(x.first) +
                                                     " beyond k = " + std::to_string(K));
  a.assign(K, 0);
  b.assign(K, 0);
  // unlisted products: +0 * +0
  for (const auto& x : tc.a)
    a[x.first - 1] = operand_in(dp, dp.a_fmt, x.second, where + ": a" + std::to_string(x.first));
  for (const auto& x : tc.b)
    b[x.first - 1] = operand_in(dp, dp.b_fmt, x.second, where + ": b" + std::to_string(x.first));
  // an a without b (or b without a) multiplies 1
  for (const auto& x : tc.a) {
    bool hasb = false;
    for (const auto& y : tc.b) hasb |= y.first == x.first;
    if (!hasb) b[x.first - 1] = value_in(dp.b_fmt, "1", where);
  }
  for (const auto& y : tc.b) {
    bool hasa = false;
    for (const auto& x : tc.a) hasa |= y.first == x.first;
    if (!hasa) a[y.first - 1] = value_in(dp.a_fmt, "1", where);
  }
  for (const auto& x : tc.p) {
    ExactValue pv;
    try { pv = parse_exact(x.second); } catch (const std::exception& e) {
      fail(tc.file, tc.line, "p" + std::to_string(x.first), e.what());
    }
    if (pv.inf || pv.nan) {
      a[x.first - 1] = value_in(dp.a_fmt, x.second, where);
      b[x.first - 1] = value_in(dp.b_fmt, "1", where);
      continue;
    }
    if (!split_product(dp.a_fmt, dp.b_fmt, pv, a[x.first - 1], b[x.first - 1]))
      fail(tc.file, tc.line, "p" + std::to_string(x.first),
           "'" + excerpt(x.second) + "' is not a product of a " + dp.a_fmt.name + " and a " + dp.b_fmt.name + " value");
  }
  const Format& cf = dp.out_fmt == kBinary64 ? kBinary64 : kBinary32;
  c = value_in(cf, tc.c, where + ": c");
  if (!(cf == dp.out_fmt)) c = convert(cf, c, dp.out_fmt, Rounding::RNE);
}

std::vector<CaseResult> run_case(const TableCase& tc, bool trace_on_fail) {
  std::vector<CaseResult> res;
  for (const std::string& arch : tc.presets) {
    const Datapath dp = find_preset(arch, tc.type);
    CaseResult r;
    r.preset = dp.name();
    r.out_width = dp.out_fmt.width();
    std::vector<uint64_t> a, b;
    uint64_t c;
    build_operands(tc, dp, a, b, c);
    r.got = dot(dp, a.data(), b.data(), static_cast<int>(a.size()), c);
    const std::string where = tc.file + ":" + std::to_string(tc.line) + ": d";
    r.want = value_in(dp.out_fmt, tc.d, where);  // "nan", "-nan" or a hex NaN pattern
    const Unpacked want = decode(dp.out_fmt, r.want);
    if (want.cls == Class::NaN) {
      const Unpacked u = decode(dp.out_fmt, r.got);
      r.pass = u.cls == Class::NaN && u.sign == want.sign;
    } else {
      r.pass = r.got == r.want;
    }
    if (!r.pass && trace_on_fail) {
      std::ostringstream os;
      os << tc.file << ":" << tc.line << ": " << r.preset << ": expected " << describe(dp.out_fmt, r.want)
         << " got " << describe(dp.out_fmt, r.got) << "\n  # " << tc.comment << "\n  c=0x"
         << to_hex_bits(dp.out_fmt, c) << "\n  a=";
      for (uint64_t x : a) os << to_hex_bits(dp.a_fmt, x) << " ";
      os << "\n  b=";
      for (uint64_t x : b) os << to_hex_bits(dp.b_fmt, x) << " ";
      Trace t;
      dot(dp, a.data(), b.data(), static_cast<int>(a.size()), c, &t);
      os << "\n  stages:\n" << t.text("    ");
      r.detail = os.str();
    }
    res.push_back(r);
  }
  return res;
}

}  // namespace mc
