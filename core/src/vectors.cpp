#include "matcore/vectors.hpp"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "matcore/exact.hpp"

namespace mc {

namespace {

[[noreturn]] void fail(const std::string& path, size_t line, const std::string& field,
                       const std::string& why) {
  throw InputError(path + ":" + std::to_string(line) + ": " + field + ": " + why);
}

bool parse_hex(const std::string& t, uint64_t& out) {
  if (t.empty() || t.size() > 16) return false;
  uint64_t v = 0;
  for (char ch : t) {
    int d;
    if (ch >= '0' && ch <= '9') d = ch - '0';
    else if (ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
    else if (ch >= 'A' && ch <= 'F') d = ch - 'A' + 10;
    else return false;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  out = v;
  return true;
}

std::ifstream open_in(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file for reading");
  return in;
}

void strip_cr(std::string& s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
}

}  // namespace

int native_digits(const Format& f) {
  const int w = f.width();
  return (w == 8 || w == 16) ? w / 4 : 0;
}

int stored_width(const Format& f) { return f == kBinary64 ? 64 : 32; }

AbForm ab_form(const Format& f, size_t first_value_digits) {
  AbForm form;
  const int nd = native_digits(f), sw = stored_width(f);
  form.native = nd > 0 && first_value_digits == static_cast<size_t>(nd);
  form.digits = form.native ? nd : sw / 4;
  if (nd > 0)
    form.note = form.native ? " (" + f.name + " itself, as on the first value)"
                            : " (" + f.name + " widened to binary" + std::to_string(sw) + ", as on the first value)";
  return form;
}

AbFile read_ab_file(const std::string& path, int expect_k, const Format& fmt) {
  std::ifstream in = open_in(path);
  AbFile f;
  f.width = stored_width(fmt);
  AbForm form;
  bool decided = false;  // by the first value
  std::string line;
  size_t ln = 0;
  while (std::getline(in, line)) {
    ++ln;
    strip_cr(line);
    if (!line.empty() && line[0] == '#') continue;
    if (line.empty()) fail(path, ln, "line", "empty line (one sample per line expected)");
    std::istringstream ss(line);
    std::string tok;
    int k = 0;
    while (ss >> tok) {
      ++k;
      if (!decided) {
        form = ab_form(fmt, tok.size());
        f.native_bits = form.native ? fmt.width() : 0;
        decided = true;
      }
      uint64_t v;
      if (tok.size() != static_cast<size_t>(form.digits) || !parse_hex(tok, v))
        fail(path, ln, "value " + std::to_string(k),
             "'" + tok + "' is not " + std::to_string(form.digits) + " hex digits" + form.note);
      f.v.push_back(v);
    }
    if (f.K == 0) f.K = k;
    if (expect_k > 0 && k != expect_k)
      fail(path, ln, "K", "line holds " + std::to_string(k) + " values, expected K = " +
                              std::to_string(expect_k));
    if (k != f.K)
      fail(path, ln, "K", "line holds " + std::to_string(k) + " values, earlier lines " +
                              std::to_string(f.K));
  }
  if (f.v.empty()) throw InputError(path + ": no samples (empty file)");
  return f;
}

uint64_t ab_operand(const Format& f, Rounding ingest, const AbFile& file, size_t i,
                    const std::string& where) {
  if (file.native_bits) return file.v[i];
  return ingest_value(f, ingest, file.v[i], file.width, where);
}

std::vector<uint64_t> read_cd_file(const std::string& path, int width) {
  std::ifstream in = open_in(path);
  std::vector<uint64_t> out;
  std::string line;
  size_t ln = 0;
  while (std::getline(in, line)) {
    ++ln;
    strip_cr(line);
    while (!line.empty() && (line[0] == ' ' || line[0] == '\t')) line.erase(0, 1);
    if (!line.empty() && line[0] == '#') continue;
    if (line.empty()) fail(path, ln, "value", "empty line");
    uint64_t v = 0;
    if (width == 32 && line.size() == 32 && line.find_first_not_of("01") == std::string::npos) {
      for (char ch : line) v = (v << 1) | static_cast<uint64_t>(ch - '0');
    } else if (line.size() == static_cast<size_t>(width / 4) && parse_hex(line, v)) {
    } else {
      fail(path, ln, "value",
           "'" + line + "' is neither " + (width == 32 ? "32 binary digits nor 8" : "16") +
               " hex digits");
    }
    out.push_back(v);
  }
  if (out.empty()) throw InputError(path + ": no samples (empty file)");
  return out;
}

void write_ab_file(const std::string& path, const AbFile& f, const std::string& header) {
  std::FILE* fp = std::fopen(path.c_str(), "w");
  if (!fp) throw InputError(path + ": cannot open file for writing");
  if (!header.empty()) std::fputs(header.c_str(), fp);
  const int digits = f.digits();
  for (size_t s = 0; s < f.samples(); ++s) {
    for (int k = 0; k < f.K; ++k)
      std::fprintf(fp, "%s%0*llx", k ? " " : "", digits,
                   static_cast<unsigned long long>(f.v[s * f.K + k]));
    std::fputc('\n', fp);
  }
  if (std::fclose(fp) != 0) throw InputError(path + ": write failed");
}

void write_cd_file(const std::string& path, const std::vector<uint64_t>& v, int width,
                   const std::string& header) {
  std::FILE* fp = std::fopen(path.c_str(), "w");
  if (!fp) throw InputError(path + ": cannot open file for writing");
  if (!header.empty()) std::fputs(header.c_str(), fp);
  for (uint64_t x : v) std::fprintf(fp, "%0*llx\n", width / 4, static_cast<unsigned long long>(x));
  if (std::fclose(fp) != 0) throw InputError(path + ": write failed");
}

uint64_t ingest_value(const Format& f, Rounding ingest, uint64_t stored, int width,
                      const std::string& where) {
  const Format& from = width == 64 ? kBinary64 : kBinary32;
  if (f == from) return stored;
  const Unpacked u = decode(from, stored);
  if (u.cls == Class::NaN) return f.qnan_bits(u.sign);
  if (u.cls == Class::Inf) {
    if (!f.has_inf())
      throw InputError(where + ": infinity is not representable in " + f.name +
                       " (it has no infinity encoding)");
    return f.inf_bits(u.sign);
  }
  bool inexact = false;
  const uint64_t r = convert(from, stored, f, ingest, &inexact);
  if (inexact && ingest == Rounding::RNE) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%0*llx", width / 4, static_cast<unsigned long long>(stored));
    throw InputError(where + ": value 0x" + std::string(buf) + " (" + to_decimal(from, stored) +
                     ") is not exactly representable in " + f.name);
  }
  return r;
}

bool ingest_exact(const Format& f, Rounding ingest, uint64_t stored, int width, uint64_t* out) {
  if (width != 32) {
    if (f == kBinary64) { *out = stored; return true; }
    return false;
  }
  if (f == kBinary32) { *out = stored; return true; }
  const uint32_t E = (stored >> 23) & 0xFF, M = stored & 0x7FFFFF;
  const bool neg = (stored >> 31) & 1;
  if (E == 0xFF) return false;  // Inf / NaN: the general path
  if (E == 0 && M == 0) { *out = zero_bits(f, neg); return true; }
  const int e = E ? static_cast<int>(E) - 127 : -126;  // exponent of the leading position
  uint64_t sig = E ? (M | 0x800000u) : M;
  const int lead = E ? e : e - (23 - (31 - __builtin_clz(M)));
  if (lead > f.emax()) return false;
  const int q = (lead > f.emin() ? lead : f.emin()) - f.mbits;  // target LSB exponent
  const int shift = q - (e - 23);
  if (shift > 0) {
    const uint64_t dropped = shift >= 64 ? sig : (sig & ((uint64_t{1} << shift) - 1));
    if (dropped && ingest != Rounding::RTZ) return false;
    sig = shift >= 64 ? 0 : sig >> shift;
  } else if (shift < 0) {
    sig <<= -shift;
  }
  if (sig == 0) { *out = zero_bits(f, neg); return true; }
  const uint64_t mmask = (uint64_t{1} << f.mbits) - 1;
  const uint64_t Ef = (sig >> f.mbits) ? static_cast<uint64_t>(lead + f.bias) : 0;
  const uint64_t bits = (static_cast<uint64_t>(neg) << (f.width() - 1)) | (Ef << f.mbits) | (sig & mmask);
  if (f.enc == Encoding::FN && Ef == ((uint64_t{1} << f.ebits) - 1) && (sig & mmask) == mmask) return false;
  if (f.enc == Encoding::IEEE && Ef == ((uint64_t{1} << f.ebits) - 1)) return false;
  *out = bits;
  return true;
}

uint64_t parse_operand(const Format& f, const std::string& text, bool* inexact) {
  if (inexact) *inexact = false;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    uint64_t v;
    if (!parse_hex(text.substr(2), v) || (f.width() < 64 && (v >> f.width()) != 0))
      throw std::invalid_argument("'" + text + "' is not a " + std::to_string(f.width()) +
                                  "-bit hex pattern of " + f.name);
    return v;
  }
  const ExactValue ev = parse_exact(text);
  return exact_to_format(f, ev, Rounding::RNE, inexact);
}

uint64_t parse_input_operand(const Format& f, Rounding ingest, const std::string& text,
                             bool* inexact) {
  if (ingest == Rounding::RNE || (text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')))
    return parse_operand(f, text, inexact);
  const Format& stored = f.width() > 32 ? kBinary64 : kBinary32;
  bool in1 = false;
  const uint64_t v = parse_operand(stored, text, &in1);
  bool in2 = false;
  const uint64_t r = convert(stored, v, f, ingest, &in2);
  if (inexact) *inexact = in1 || in2;
  return r;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> r;
  std::string cur;
  for (char ch : s) {
    if (ch == ',') { r.push_back(cur); cur.clear(); }
    else cur += ch;
  }
  r.push_back(cur);
  return r;
}

}  // namespace mc
