// Internal to the fast kernels (fast.cpp, lanes/): the aligner's shift of one term and
// the round-down shift of a fixed-point value on fixed-width integers.
#pragma once
#include <cstdint>

#include "matcore/datapath.hpp"

namespace mc::fastk {

/// Aligner stage (align_term): sig * 2^-s as a signed value, rounded per mode.
template <class S, class T>
__attribute__((always_inline)) inline T align_v(S sig, int s, bool neg, AlignRound mode) {
  constexpr int W = sizeof(S) * 8;
  if (mode == AlignRound::Truncate) {
    // branch-free: the shift direction varies from term to term (mispredicted branches)
    const int r = s < 0 ? 0 : (s > W - 1 ? W - 1 : s), l = s < 0 ? -s : 0;
    const T v = s >= W ? T{0} : static_cast<T>(sig >> r) << l;  // < 2^(F+2): fits T
    return neg ? -v : v;
  }
  if (s <= 0) {
    const T v = static_cast<T>(sig) << -s;  // below 2^(F+2): fits T (FastDot chooses T)
    return neg ? -v : v;
  }
  S m;
  bool st;
  if (s >= W) { m = 0; st = sig != 0; }
  else { m = sig >> s; st = (sig & ((S{1} << s) - 1)) != 0; }
  switch (mode) {
    case AlignRound::Truncate: break;
    case AlignRound::RD:
      if (neg) return -static_cast<T>(m) - (st ? 1 : 0);
      break;
    case AlignRound::RNE:
    case AlignRound::RNA:
      if (st) {
        const bool guard = s <= W && ((sig >> (s - 1)) & 1);
        bool below = false;
        if (s >= 2) below = s - 1 >= W ? sig != 0 : (sig & ((S{1} << (s - 1)) - 1)) != 0;
        if (guard && (mode == AlignRound::RNA || below || (m & 1))) m += 1;
      }
      break;
  }
  return neg ? -static_cast<T>(m) : static_cast<T>(m);
}

/// floor(v / 2^s) (shift_to with RD), s <= 0: exact left shift.
template <class T>
inline T shift_rd(T v, int s) {
  constexpr int W = sizeof(T) * 8;
  if (s <= 0) return v * (static_cast<T>(1) << -s);
  if (s >= W - 1) return v < 0 ? -1 : 0;
  return v >> s;
}

}  // namespace mc::fastk
