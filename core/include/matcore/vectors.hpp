// matcore: the one plain-text vector format, shared by the CLI, tests, SystemC, RTL and the
// hardware collectors (a superset of ../shared/hwdata/nvidia/README.md):
//
//   a file, b file : one sample per line, K values separated by spaces, each the bit pattern of
//                    the value widened to binary32 (8 hex digits), or binary64 (16 hex digits)
//                    for fp64 inputs -- the hwdata form; or, for input formats of 8 and 16 bits
//                    (fp8, fp16, bf16), the bit pattern in the input format itself ("native":
//                    2 or 4 hex digits). One form per file; the digit count tells which.
//   c file, d file : one value per line, 32 binary digits (sign first) or 8 hex digits
//                    (16 hex digits for binary64); d files may carry binary16 results widened
//                    to binary32.
//   Lines starting with '#' are comments (provenance headers); blank lines are not allowed.
#pragma once
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "matcore/datapath.hpp"

namespace mc {

/// Bad input: the message names the file, the line and the field.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Hex digits of a value written in its input format itself (2 for fp8, 4 for fp16/bf16), or 0
/// for formats that are always stored widened (binary32, tf32/xf32, binary64).
int native_digits(const Format& f);
/// The stored (widened) width of values of input format f: 64 for binary64, else 32.
int stored_width(const Format& f);
/// A native a/b value of f fits its pattern (fp6/fp4 are written in 2 digits: the bits above
/// the format's width must be zero).
bool native_fits(const Format& f, uint64_t v);

/// How the values of an a/b file of input format f are written, decided by the file's first
/// value: in f itself when it has native_digits(f) digits, else widened (8 / 16 digits).
struct AbForm {
  int digits = 8;
  bool native = false;
  std::string note;  ///< for digit-count errors, e.g. " (binary16 itself, as on the first value)"
};
AbForm ab_form(const Format& f, size_t first_value_digits);

/// The longest line any reader takes (32 MiB) and the most values on an a/b line: beyond them
/// a file is refused with an InputError instead of exhausting memory.
constexpr size_t kMaxLineBytes = size_t{1} << 25;
constexpr int kMaxK = 1 << 20;

/// Opens a vector file for reading; InputError "PATH: is a directory ..." or "PATH: cannot open
/// file for reading (reason)". Every reader of vector files opens them through this.
std::FILE* open_input(const std::string& path);
/// The error for a file that starts with a UTF-8 byte-order mark.
std::string bom_error(const std::string& path);

struct AbFile {
  int K = 0;
  int width = 32;                 ///< 32 or 64: bit width of the stored (widened) values
  int native_bits = 0;            ///< nonzero: the values are patterns of the input format itself
  std::vector<uint64_t> v;        ///< N*K values, sample-major
  std::vector<uint64_t> lines;    ///< 1-based line number of each sample in the file
  size_t samples() const { return K ? v.size() / K : 0; }
  uint64_t line_of(size_t sample) const { return sample < lines.size() ? lines[sample] : sample + 1; }
  int digits() const { return native_bits ? native_bits / 4 : width / 4; }
};

/// Reads an a/b file of values of input format f, widened (8 / 16 hex digits) or native
/// (native_digits(f)); the first value decides the form and every other value must follow it.
/// expect_k > 0: every line must hold that many values.
AbFile read_ab_file(const std::string& path, int expect_k, const Format& f);

/// Value i of an a/b file as an operand of format f: a native value as it is, a widened one
/// through ingest_value (exact, or per `ingest` for tf32/xf32). `where` names it in errors.
uint64_t ab_operand(const Format& f, Rounding ingest, const AbFile& file, size_t i,
                    const std::string& where);
/// Reads a c/d file: 32 binary digits or 8 hex digits per line (width 32), or 16 hex (64).
/// lines: the 1-based line number of each value.
std::vector<uint64_t> read_cd_file(const std::string& path, int width,
                                   std::vector<uint64_t>* lines = nullptr);

/// Checks the '#' header lines of a vector file against the datapath: a word "a=FORMAT" (for
/// role "a"; "b=" for b) that names a format other than `f` is an InputError naming the file,
/// the line and both formats (matcore sample and features --emit write such headers).
void check_header(const std::string& path, const std::string& role, const Format& f);

/// A c value as stored in a c file (binary32, or binary64) in the accumulator format of dp. A
/// binary16 accumulator (NVIDIA --out fp16) takes c rounded to nearest even, as the GPUs of the
/// hardware data sets were given it (shared/hwdata/nvidia/README.md); *rounded tells when that
/// changed the value (overflow to infinity included), so that the caller can say so.
uint64_t c_operand(const Datapath& dp, uint64_t stored, int width, bool* rounded);

/// The model's result widened to the stored width of d files (binary16 -> binary32).
uint64_t widen_result(const Datapath& dp, uint64_t r);

/// Counts the c values that a binary16 accumulator took rounded, for the note the commands print.
struct RoundedC {
  uint64_t count = 0, first_line = 0;  ///< first_line: 1-based line in the c file
  std::string note(const std::string& c_path, const Datapath& dp) const;  ///< "" when count == 0
};

/// At most `max` characters of s for an error message: other bytes than printable ASCII are
/// escaped (\x00), and a cut text ends in "... (N characters)".
std::string excerpt(const std::string& s, size_t max = 24);

/// The operands of one dot product written on a command line: a and b lists "V,V,..." (see
/// parse_input_operand) and c in the accumulator format (a hex pattern of out_fmt itself, e.g.
/// 0x3c00 for binary16, or of the stored binary32/binary64 format, rounded RNE into out_fmt as
/// c files are; or an exact value rounded to nearest even into out_fmt). Every value that had
/// to be rounded adds a note, e.g. "a2 = 0.1 rounded (rne) to binary16: 0x2e66".
struct TextOperands {
  std::vector<uint64_t> a, b;
  uint64_t c = 0;
  std::vector<std::string> notes;
};
TextOperands parse_text_operands(const Datapath& dp, const std::string& a, const std::string& b,
                                 const std::string& c);

/// A block scale written on a command line or in a scale file: a hex pattern of the scale format
/// (0x7f; ue4m3 ignores its sign bit), an exact value the format holds (e8m0: 2^-127 .. 2^127, a
/// power of two; ue4m3: a non-negative E4M3 value) or nan. Anything else is an InputError.
uint64_t parse_scale(const Format& f, const std::string& text);
/// The scales of one sample: "V,V,..." with ceil(K / dp.scale_block) values (`what`: "--sa").
std::vector<uint64_t> parse_scale_list(const Datapath& dp, const std::string& text, int K, const std::string& what);
/// How many scales one sample of K elements has: ceil(K / dp.scale_block) (0 when unscaled).
int scales_per_sample(const Datapath& dp, int K);

/// A scale file (sa.txt, sb.txt; docs/vector-format.md): line i holds sample i's scales, each
/// 2 hex digits of the scale format's pattern, separated by spaces; '#' lines are comments.
/// Every line must hold `per_line` scales; errors name the file, the line and the field.
struct ScaleFile {
  std::vector<uint64_t> v;      ///< samples x per_line patterns
  std::vector<uint64_t> lines;  ///< 1-based line of each sample
  int per_line = 0;
  size_t samples() const { return per_line ? v.size() / per_line : 0; }
};
ScaleFile read_scale_file(const std::string& path, int per_line, const Format& f);
std::string scale_file_text(const std::vector<uint64_t>& v, int per_line, const std::string& header = "");

/// The text of an a/b file (header, then one line of K hex values per sample) and of a c/d file
/// (one value per line), for writers that commit several files together (commit_all).
std::string ab_file_text(const AbFile& f, const std::string& header = "");
std::string cd_file_text(const std::vector<uint64_t>& v, int width, const std::string& header = "");
void write_ab_file(const std::string& path, const AbFile& f, const std::string& header = "");
void write_cd_file(const std::string& path, const std::vector<uint64_t>& v, int width,
                   const std::string& header = "");

/// Converts a stored (binary32 / binary64) value into the input format of the datapath:
/// exact, or per `ingest` for tf32/xf32 (low bits truncated). Throws InputError (with `where`)
/// when the value is not representable and the format takes exact values only.
uint64_t ingest_value(const Format& f, Rounding ingest, uint64_t stored, int width,
                      const std::string& where);

/// Fast path of ingest_value for finite binary32 values: returns true and sets *out when the
/// value enters the format without error (the caller falls back to ingest_value otherwise).
bool ingest_exact(const Format& f, Rounding ingest, uint64_t stored, int width, uint64_t* out);

/// An a/b operand written as text: a hex pattern "0x..." is taken in the format itself; a value
/// enters the way file values do (exact for RNE-ingest formats, else the binary32/64 value with
/// the format's ingest rule, e.g. tf32/xf32 truncation). inexact: the value was rounded.
uint64_t parse_input_operand(const Format& f, Rounding ingest, const std::string& text,
                             bool* inexact = nullptr);

/// "a,b,,c" -> {"a", "b", "", "c"} (lists on command lines).
std::vector<std::string> split_commas(const std::string& s);

/// Parses one operand given on a command line: a hex bit pattern "0x3c00" in the format
/// itself, or an exact expression / decimal ("1.5", "2^-24+2^-25", "-inf", "nan"), rounded
/// to nearest even when inexact (decimals are rounded exactly, not through binary64).
uint64_t parse_operand(const Format& f, const std::string& text, bool* inexact = nullptr);

}  // namespace mc
