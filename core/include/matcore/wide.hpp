// matcore: a wide two's complement fixed-point accumulator (Kulisch-style exact sums).
//
//   bit:  n*64-1 ......................................... 1 0
//         [ limb n-1 ] ... [ limb 1 ] [ limb 0 ]            weight of bit 0 = 2^lsb_exp
//
// Used by the exact adder (correct rounding, SFMA) where the terms span up to ~4300 bits
// (binary64 products). Terms are added exactly; the sum is read out as sign-magnitude with the
// top 124 bits and a sticky bit, which is all the rounder needs.
#pragma once
#include <array>
#include <cstdint>

#include "matcore/format.hpp"

namespace mc {

class Wide {
 public:
  static constexpr int kMaxLimbs = 72;
  /// Clears the accumulator so that it covers exponents [lsb_exp, lsb_exp + nbits).
  void reset(int lsb_exp, int nbits);
  /// Adds (-1)^neg * mag * 2^exp exactly. Requires exp >= lsb_exp and the term to fit.
  void add(bool neg, u128 mag, int exp);
  bool is_zero() const;
  bool negative() const { return (l_[n_ - 1] >> 63) & 1; }
  /// Sign-magnitude read-out: top bits of |sum| (up to 124) plus sticky for the rest.
  Exact to_exact() const;
  int lsb_exp() const { return lsb_; }

 private:
  void add_mag(u128 mag, int bit);
  void sub_mag(u128 mag, int bit);
  int lsb_ = 0;
  int n_ = 1;
  std::array<uint64_t, kMaxLimbs> l_{};
};

}  // namespace mc
