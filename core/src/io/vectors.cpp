#include "matcore/vectors.hpp"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "matcore/exact.hpp"
#include "matcore/model.hpp"
#include "matcore/output.hpp"
#include "hex.hpp"

namespace mc {

namespace {

[[noreturn]] void fail(const std::string& path, size_t line, const std::string& field,
                       const std::string& why) {
  throw InputError(path + ":" + std::to_string(line) + ": " + field + ": " + why);
}

using hex::parse_hex;

void strip_cr(std::string& s);

/// A text file read line by line with bounded memory: a line longer than kMaxLineBytes is an
/// error, a directory or a missing file is named as such, a UTF-8 byte-order mark is refused.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path), f_(open_input(path)) {}
  ~LineReader() { std::fclose(f_); }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  /// The next line without its end ("\n", "\r\n", trailing blanks); false at the end.
  bool next(std::string& line) {
    line.clear();
    int ch;
    bool any = false;
    while ((ch = getc_unlocked(f_)) != EOF) {  // one reader a file: no stream lock a character
      any = true;
      if (ch == '\n') break;
      if (line.size() >= kMaxLineBytes)
        throw InputError(path_ + ":" + std::to_string(ln_ + 1) + ": line: longer than " +
                         std::to_string(kMaxLineBytes >> 20) + " MiB");
      line += static_cast<char>(ch);
    }
    if (std::ferror(f_)) throw InputError(path_ + ": read error (" + std::strerror(errno) + ")");
    if (!any) return false;
    ++ln_;
    if (ln_ == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) throw InputError(bom_error(path_));
    strip_cr(line);
    return true;
  }
  size_t line_number() const { return ln_; }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  size_t ln_ = 0;
};

void strip_cr(std::string& s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
}

}  // namespace

std::FILE* open_input(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw InputError(path + ": is a directory (a vector file is expected)");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InputError(path + ": cannot open file for reading (" + std::strerror(errno) + ")");
  note_input(path);
  return f;
}

std::string bom_error(const std::string& path) {
  return path + ":1: line: starts with a UTF-8 byte-order mark (EF BB BF); save the file as plain "
                "ASCII without it";
}

int native_digits(const Format& f) {
  const int w = f.width();
  return w <= 8 ? 2 : w == 16 ? 4 : 0;  // fp6/fp4: their own pattern in 2 digits
}

bool native_fits(const Format& f, uint64_t v) { return f.width() >= 8 || (v >> f.width()) == 0; }

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

/// Room for the samples of an a/b file whose lines are about `line_bytes` long (from its size):
/// the vectors then grow once instead of doubling, on a machine where fresh memory is slow.
void reserve_for(AbFile& f, const std::string& path, size_t line_bytes) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || line_bytes == 0) return;
  const size_t lines = static_cast<size_t>(st.st_size) / line_bytes + 1;
  if (lines * static_cast<size_t>(f.K) > (size_t{1} << 31)) return;  // beyond 16 GiB of values: grow as they come
  f.lines.reserve(lines);
  f.v.reserve(lines * static_cast<size_t>(f.K));
}

AbFile read_ab_file(const std::string& path, int expect_k, const Format& fmt) {
  LineReader in(path);
  AbFile f;
  f.width = stored_width(fmt);
  AbForm form;
  bool decided = false;  // by the first value
  std::string line;
  while (in.next(line)) {
    const size_t ln = in.line_number();
    if (!line.empty() && line[0] == '#') continue;
    if (line.empty()) fail(path, ln, "line", "empty line (one sample per line expected)");
    int k = 0;
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i >= line.size()) break;
      size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
      const char* tok = line.data() + i;
      const size_t len = j - i;
      i = j;
      if (++k > kMaxK) fail(path, ln, "K", "more than " + std::to_string(kMaxK) + " values on the line");
      if (!decided) {
        form = ab_form(fmt, len);
        f.native_bits = form.native ? native_digits(fmt) * 4 : 0;
        decided = true;
      }
      uint64_t v = 0;
      bool hex_ok = len == static_cast<size_t>(form.digits);
      for (size_t q = 0; hex_ok && q < len; ++q) {
        const int d = hex::kHex.v[static_cast<unsigned char>(tok[q])];
        hex_ok = d >= 0;
        v = (v << 4) | static_cast<uint64_t>(d & 15);
      }
      if (!hex_ok)
        fail(path, ln, "value " + std::to_string(k),
             "'" + excerpt(std::string(tok, len)) + "' is not " + std::to_string(form.digits) + " hex digits" + form.note);
      if (form.native && !native_fits(fmt, v))
        fail(path, ln, "value " + std::to_string(k),
             "'" + excerpt(std::string(tok, len)) + "' is not a " + std::to_string(fmt.width()) + "-bit pattern of " + fmt.name);
      if (f.K && k > f.K)
        fail(path, ln, "K", "line holds more than the " + std::to_string(f.K) + " values of earlier lines");
      f.v.push_back(v);
    }
    if (f.K == 0 && expect_k > 0 && k != expect_k)
      fail(path, ln, "K", "line holds " + std::to_string(k) + " values, expected K = " +
                              std::to_string(expect_k));
    if (f.K == 0) {
      f.K = k;
      reserve_for(f, path, line.size() + 1);
    }
    if (k != f.K)
      fail(path, ln, "K", "line holds " + std::to_string(k) + " values, earlier lines " +
                              std::to_string(f.K));
    f.lines.push_back(ln);
  }
  if (f.v.empty()) throw InputError(path + ": no samples (empty file)");
  return f;
}

uint64_t ab_operand(const Format& f, Rounding ingest, const AbFile& file, size_t i,
                    const std::string& where) {
  if (file.native_bits) return file.v[i];
  return ingest_value(f, ingest, file.v[i], file.width, where);
}

std::vector<uint64_t> read_cd_file(const std::string& path, int width, std::vector<uint64_t>* lines) {
  LineReader in(path);
  std::vector<uint64_t> out;
  std::string line;
  while (in.next(line)) {
    const size_t ln = in.line_number();
    while (!line.empty() && (line[0] == ' ' || line[0] == '\t')) line.erase(0, 1);
    if (!line.empty() && line[0] == '#') continue;
    if (line.empty()) fail(path, ln, "value", "empty line");
    uint64_t v = 0;
    if (width == 32 && line.size() == 32 && line.find_first_not_of("01") == std::string::npos) {
      for (char ch : line) v = (v << 1) | static_cast<uint64_t>(ch - '0');
    } else if (line.size() == static_cast<size_t>(width / 4) && parse_hex(line, v)) {
    } else {
      fail(path, ln, "value",
           "'" + excerpt(line) + "' is neither " + (width == 32 ? "32 binary digits nor 8" : "16") +
               " hex digits");
    }
    out.push_back(v);
    if (lines) lines->push_back(ln);
  }
  if (out.empty()) throw InputError(path + ": no samples (empty file)");
  return out;
}

void check_header(const std::string& path, const std::string& role, const Format& f) {
  std::FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp) return;  // the reader reports it
  char buf[4096];
  const std::string key = role + "=";
  for (int ln = 1; ln <= 64 && std::fgets(buf, sizeof buf, fp); ++ln) {
    if (buf[0] != '#') break;
    std::istringstream ss(buf + 1);
    std::string w;
    while (ss >> w) {
      if (w.compare(0, key.size(), key) != 0) continue;
      const std::string name = w.substr(key.size());
      const Format* named = find_format(name);
      if (!named) continue;  // not a format (e.g. "a=path" in a collector's provenance line)
      if (!(*named == f)) {
        std::fclose(fp);
        fail(path, static_cast<size_t>(ln), "header",
             "the file holds " + named->name + " values (" + excerpt(w) + ") but the datapath's " + role +
                 " format is " + f.name + " (check --type)");
      }
    }
  }
  std::fclose(fp);
}

std::string excerpt(const std::string& s, size_t max) {
  std::string r;
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    const unsigned char ch = static_cast<unsigned char>(s[i]);
    if (ch >= 0x20 && ch < 0x7f) {
      r += static_cast<char>(ch);
    } else {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", ch);
      r += b;
    }
  }
  if (s.size() > max) r += "... (" + std::to_string(s.size()) + " characters)";
  return r;
}

std::string ab_file_text(const AbFile& f, const std::string& header) {
  std::string text = header;
  const int digits = f.digits();
  char buf[24];
  for (size_t s = 0; s < f.samples(); ++s) {
    for (int k = 0; k < f.K; ++k) {
      std::snprintf(buf, sizeof buf, "%s%0*llx", k ? " " : "", digits,
                    static_cast<unsigned long long>(f.v[s * f.K + k]));
      text += buf;
    }
    text += '\n';
  }
  return text;
}

void write_ab_file(const std::string& path, const AbFile& f, const std::string& header) {
  OutputFile out(path);
  out.write(ab_file_text(f, header));
  out.commit();
}

std::string cd_file_text(const std::vector<uint64_t>& v, int width, const std::string& header) {
  std::string text = header;
  char buf[24];
  for (uint64_t x : v) {
    std::snprintf(buf, sizeof buf, "%0*llx\n", width / 4, static_cast<unsigned long long>(x));
    text += buf;
  }
  return text;
}

void write_cd_file(const std::string& path, const std::vector<uint64_t>& v, int width,
                   const std::string& header) {
  OutputFile out(path);
  out.write(cd_file_text(v, width, header));
  out.commit();
}

uint64_t ingest_value(const Format& f, Rounding ingest, uint64_t stored, int width,
                      const std::string& where) {
  const Format& from = width == 64 ? kBinary64 : kBinary32;
  if (f == from) return stored;
  const Unpacked u = decode(from, stored);
  if (u.cls == Class::NaN) {
    if (!f.has_nan())
      throw InputError(where + ": NaN is not representable in " + f.name + " (it has no NaN encoding)");
    return f.qnan_bits(u.sign);
  }
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
      throw std::invalid_argument("'" + excerpt(text) + "' is not a " + std::to_string(f.width()) +
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

uint64_t c_operand(const Datapath& dp, uint64_t stored, int width, bool* rounded) {
  *rounded = false;
  if (width == 64 || dp.out_fmt == kBinary32) return stored;
  if (((stored >> 23) & 0xFF) == 0xFF) return c_from_binary32(dp, stored);  // Inf / NaN
  return convert(kBinary32, stored, dp.out_fmt, Rounding::RNE, rounded);
}

std::string RoundedC::note(const std::string& c_path, const Datapath& dp) const {
  if (!count) return "";
  return std::to_string(count) + " c value" + (count > 1 ? "s" : "") + " of " + c_path +
         " (the first on line " + std::to_string(first_line) + ") rounded (rne) to " + dp.out_fmt.name +
         ", the accumulator format of " + dp.name() + ", as the GPUs of the hardware data take c";
}

TextOperands parse_text_operands(const Datapath& dp, const std::string& a, const std::string& b,
                                 const std::string& c) {
  const auto as = split_commas(a), bs = split_commas(b);
  if (as.size() != bs.size())
    throw InputError("--a has " + std::to_string(as.size()) + " values but --b has " + std::to_string(bs.size()));
  if (as.size() > static_cast<size_t>(kMaxK)) throw InputError("--a: more than " + std::to_string(kMaxK) + " values");
  TextOperands r;
  auto note = [&](const std::string& what, const std::string& t, const char* how, const Format& f, uint64_t v) {
    r.notes.push_back(what + " = " + excerpt(t, 48) + " rounded (" + how + ") to " + f.name + ": 0x" +
                      to_hex_bits(f, v) + " (" + to_decimal(f, v) + ")");
  };
  auto ab = [&](const Format& f, const std::string& t, const std::string& what) {
    bool inexact = false;
    uint64_t v;
    try {
      v = parse_input_operand(f, dp.ingest, t, &inexact);
    } catch (const std::exception& e) {
      throw InputError(what + ": " + e.what());
    }
    if (inexact) note(what, t, dp.ingest != Rounding::RNE ? to_string(dp.ingest) : "rne", f, v);
    return v;
  };
  for (size_t i = 0; i < as.size(); ++i) {
    r.a.push_back(ab(dp.a_fmt, as[i], "a" + std::to_string(i + 1)));
    r.b.push_back(ab(dp.b_fmt, bs[i], "b" + std::to_string(i + 1)));
  }
  const Format& of = dp.out_fmt;
  const Format& sf = of == kBinary64 ? kBinary64 : kBinary32;
  const bool hex = c.size() > 2 && c[0] == '0' && (c[1] == 'x' || c[1] == 'X');
  try {
    if (hex && !(of == sf) && c.size() - 2 == static_cast<size_t>(of.width() / 4)) {
      r.c = parse_operand(of, c);  // a pattern of the accumulator format itself (0x3c00)
    } else if (hex) {
      bool rounded = false;
      r.c = c_operand(dp, parse_operand(sf, c), sf.width(), &rounded);
      if (rounded) note("c", c, "rne", of, r.c);
    } else {
      bool inexact = false;
      r.c = parse_operand(of, c, &inexact);
      if (inexact) note("c", c, "rne", of, r.c);
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(std::string("c: ") + e.what());
  }
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

// ---- block scales (sa.txt, sb.txt, --sa, --sb) ------------------------------------------------

namespace mc {

int scales_per_sample(const Datapath& dp, int K) {
  return dp.scaled() ? (K + dp.scale_block - 1) / dp.scale_block : 0;
}

uint64_t parse_scale(const Format& f, const std::string& text) {
  const uint64_t wmask = (uint64_t{1} << f.width()) - 1;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    uint64_t v = 0;
    if (!parse_hex(text.substr(2), v) || (v & ~wmask))
      throw InputError("'" + excerpt(text) + "' is not a " + std::to_string(f.width()) + "-bit hex pattern of " + f.name);
    return v;
  }
  ExactValue ev;
  try {
    ev = parse_exact(text);
  } catch (const std::exception& e) {
    throw InputError("'" + excerpt(text) + "': " + e.what());
  }
  if (ev.nan) return f.qnan_bits(false);
  if (ev.inf || ev.max || (ev.neg && !ev.num.is_zero()))
    throw InputError("'" + excerpt(text) + "' is not a value of the scale format " + f.name + " (non-negative, finite)");
  bool inexact = false;
  const uint64_t v64 = ev.num.is_zero() ? 0 : exact_to_format(kBinary64, ev, Rounding::RNE, &inexact);
  // every scale pattern's value is a binary64 value: find the one that equals it
  for (uint64_t p = 0; !inexact && p <= wmask; ++p) {
    if (decode(f, p).cls == Class::NaN) continue;
    if (convert(f, p, kBinary64) == v64) return p;
  }
  throw InputError("'" + excerpt(text) + "' is not exactly a value of the scale format " + f.name +
                   (f.enc == Encoding::Pow2 ? " (a power of two 2^-127 .. 2^127)" : ""));
}

std::vector<uint64_t> parse_scale_list(const Datapath& dp, const std::string& text, int K, const std::string& what) {
  const int want = scales_per_sample(dp, K);
  if (!dp.scaled()) throw InputError(what + ": datapath " + dp.name() + " has no block scales (scale_block = none)");
  const std::vector<std::string> parts = split_commas(text);
  if (static_cast<int>(parts.size()) != want)
    throw InputError(what + ": " + std::to_string(parts.size()) + " scales given, " + dp.name() + " needs " +
                     std::to_string(want) + " for K = " + std::to_string(K) + " (one per " +
                     std::to_string(dp.scale_block) + " elements)");
  std::vector<uint64_t> v;
  for (size_t i = 0; i < parts.size(); ++i) {
    try {
      v.push_back(parse_scale(dp.scale_fmt, parts[i]));
    } catch (const InputError& e) {
      throw InputError(what + " scale " + std::to_string(i + 1) + ": " + e.what());
    }
  }
  return v;
}

ScaleFile read_scale_file(const std::string& path, int per_line, const Format& f) {
  LineReader in(path);
  ScaleFile s;
  s.per_line = per_line;
  std::string line;
  while (in.next(line)) {
    const size_t ln = in.line_number();
    if (!line.empty() && line[0] == '#') continue;
    if (line.empty()) fail(path, ln, "line", "empty line (one sample's scales per line expected)");
    int k = 0;
    std::istringstream words(line);
    std::string tok;
    while (words >> tok) {
      ++k;
      uint64_t v = 0;
      if (tok.size() != 2 || !parse_hex(tok, v) || (v >> f.width()))
        fail(path, ln, "scale " + std::to_string(k), "'" + excerpt(tok) + "' is not 2 hex digits of a " + f.name + " pattern");
      if (k <= per_line) s.v.push_back(v);
    }
    if (k != per_line)
      fail(path, ln, "scales", "line holds " + std::to_string(k) + " scales, expected " + std::to_string(per_line));
    s.lines.push_back(ln);
  }
  if (s.v.empty()) throw InputError(path + ": no samples (empty file)");
  return s;
}

std::string scale_file_text(const std::vector<uint64_t>& v, int per_line, const std::string& header) {
  std::string text = header;
  char buf[8];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%02llx", static_cast<unsigned long long>(v[i]));
    text += buf;
    text += (i + 1) % per_line ? ' ' : '\n';
  }
  return text;
}

uint64_t widen_result(const Datapath& dp, uint64_t r) {
  if (dp.out_fmt == kBinary32 || dp.out_fmt == kBinary64) return r;
  return widen_exact(dp.out_fmt, r, kBinary32);  // a binary16 NaN keeps its payload (0x7fff -> 0x7fffe000)
}

}  // namespace mc
