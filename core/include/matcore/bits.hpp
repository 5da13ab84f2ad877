// matcore: small helpers for exact integer bit manipulation (no host floating point).
#pragma once
#include <cstdint>
#include <string>

namespace mc {

using u128 = unsigned __int128;
using i128 = __int128;

/// ceil(log2(x)) for x >= 1: the bits that count x values (carries of a sum of x terms).
inline int clog2(int x) {
  int r = 0;
  while ((1 << r) < x) ++r;
  return r;
}

/// Index of the most significant set bit of x (0-based), or -1 for x == 0.
inline int msb_index(u128 x) {
  if (x == 0) return -1;
  const uint64_t hi = static_cast<uint64_t>(x >> 64);
  if (hi) return 127 - __builtin_clzll(hi);
  return 63 - __builtin_clzll(static_cast<uint64_t>(x));
}

/// Right shift of a magnitude by s >= 0 bits; the bits shifted out are OR-ed into `sticky`.
/// Shifts of 128 or more leave 0 and set sticky if x != 0.
inline u128 shr_sticky(u128 x, int s, bool& sticky) {
  if (s <= 0) return x;
  if (s >= 128) { sticky |= (x != 0); return 0; }
  sticky |= (x & ((static_cast<u128>(1) << s) - 1)) != 0;
  return x >> s;
}

/// x / 2^s rounded to nearest (ties to even with ties_even, else away from zero), s >= 0;
/// sticky |= some bit was shifted out. The guard bit is bit s-1 of x, the bits below it decide
/// a tie.
inline u128 shr_nearest(u128 x, int s, bool ties_even, bool& sticky) {
  if (s <= 0) return x;
  bool st = false;
  const u128 m = shr_sticky(x, s, st);
  if (!st) return m;
  sticky = true;
  const bool guard = s <= 128 && ((x >> (s - 1)) & 1);
  bool below = false;
  if (s >= 2) below = s - 1 >= 128 ? x != 0 : (x & ((static_cast<u128>(1) << (s - 1)) - 1)) != 0;
  if (guard && (!ties_even || below || (m & 1))) return m + 1;
  return m;
}

/// Floor division of a two's complement value by 2^s (arithmetic shift, RD), s >= 0.
inline i128 shr_floor(i128 x, int s) {
  if (s <= 0) return x;
  if (s >= 127) return x < 0 ? -1 : 0;
  return x >> s;  // arithmetic shift on g++ == floor
}

/// Truncating (toward zero) division of a two's complement value by 2^s, s >= 0.
inline i128 shr_trunc(i128 x, int s) {
  if (s <= 0) return x;
  if (s >= 127) return 0;
  return x < 0 ? -static_cast<i128>((static_cast<u128>(-x)) >> s) : (x >> s);
}

/// Hex rendering of a 128-bit magnitude (no leading zeros, at least one digit).
std::string to_hex(u128 x);
/// Binary rendering of a two's complement value with `frac` fractional bits, e.g. "-10.0101".
std::string to_binary_fixed(i128 x, int frac);

}  // namespace mc
