// The hex digits of the shared vector format (docs/vector-format.md), read one way by every
// reader: the vector files and command-line patterns (vectors.cpp) and the validation engines
// (validate.cpp's grid engine, validate_general.cpp's line reader).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

namespace mc::hex {

/// The value of a hex digit, -1 for any other character.
inline int hexval(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/// hexval of every byte.
struct HexTable {
  int8_t v[256];
  HexTable() {
    for (int i = 0; i < 256; ++i) v[i] = static_cast<int8_t>(hexval(static_cast<char>(i)));
  }
};
inline const HexTable kHex;

/// 1 to 16 hex digits -> their value; false for an empty, longer or non-hex text.
inline bool parse_hex(const std::string& t, uint64_t& out) {
  if (t.empty() || t.size() > 16) return false;
  uint64_t v = 0;
  for (char ch : t) {
    const int d = kHex.v[static_cast<unsigned char>(ch)];
    if (d < 0) return false;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  out = v;
  return true;
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
inline const HexPairTable& hex_pairs() {
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

/// A line of K values of 4 hex digits, single spaces, '\n' after the last (the grid engine's
/// form): the values of its tokens into out with AVX2 (hex_simd.cpp), six at a time, and
/// their count: K where K >= 6, else 0; 0 without AVX2 (the caller parses every token); -1 when
/// one of them is not of that form (the caller's parser then finds what). Reads 1 byte past
/// the line's '\n'.
int hex4_prefix(const char* p, int K, uint64_t* out);

/// hex4_prefix over the n lines of a block (line i at p + i * len, len = 5 K), every value:
/// true when each line is of that form and K >= 6 (with AVX2), else false (the caller parses
/// the lines one by one). Reads 1 byte past the last line's '\n'.
bool hex4_lines(const char* p, size_t n, int K, size_t len, uint64_t* out);

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

}  // namespace mc::hex
