// matcore: exact values written as text (for the CLI and the paper test tables), and their
// correctly rounded conversion to any Format. Arbitrary precision integers; no host floating
// point anywhere.
//
// Grammar:  expr := ['+'|'-'] term { ('+'|'-') term }
//           term := number ['*' pow] | pow | 'S(' int ',' int ')' | '(' expr ')'
//           pow  := '2^' ['-'] int           number := digits ['.' digits]
//           S(a,b) = sum_{l=a}^{b} 2^-l    (the paper's notation)
// plus the whole-string keywords inf, -inf, nan, -nan, max, -max. Parentheses nest at most
// 100 deep (deeper: std::invalid_argument).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "matcore/format.hpp"

namespace mc {

/// Non-negative arbitrary precision integer (little-endian 32-bit limbs).
struct BigUint {
  std::vector<uint32_t> d;
  static BigUint from(uint64_t v);
  bool is_zero() const;
  void trim();
  void mul_small(uint32_t m);
  void add(const BigUint& o);
  void sub(const BigUint& o);  ///< requires *this >= o
  void shl(int n);
  int bits() const;            ///< index of the top bit + 1 (0 for zero)
  bool bit(int i) const;
  static int cmp(const BigUint& a, const BigUint& b);
};

/// (-1)^neg * num * 2^e2 / 10^d10, or a special.
struct ExactValue {
  bool nan = false, inf = false, max = false, neg = false;
  BigUint num;
  int e2 = 0;
  int d10 = 0;
};

/// Parses the grammar above; throws std::invalid_argument naming the offending position.
ExactValue parse_exact(const std::string& text);

/// Correctly rounded conversion (specials: Inf/NaN/max of the format).
uint64_t exact_to_format(const Format& f, const ExactValue& v, Rounding mode, bool* inexact);

}  // namespace mc
