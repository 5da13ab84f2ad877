// matcore: floating-point formats as values.
//
// A Format is plain data: exponent bits, mantissa (fraction) bits, bias, the NaN/Inf encoding
// and whether subnormals exist. Every format in matcore (binary64 ... fp8 FNUZ) is one of
// these values; there is no type per format.
//
//   bit pattern (width = 1 + ebits + mbits):
//   +---+-----------+------------------+
//   | s |  E (ebits) |   M (mbits)      |     value = (-1)^s * sig * 2^(exp - mbits)
//   +---+-----------+------------------+
//   normal:    E != 0 (and not special): exp = E - bias, sig = 2^mbits + M
//   subnormal: E == 0:                   exp = 1 - bias, sig = M
//
// Encodings of the special values:
//   IEEE : E all ones -> M == 0 Inf, else NaN.                  (binary64/32/16, bf16, tf32, E5M2)
//   FN   : no Inf; NaN = E and M all ones (both signs).           (OCP E4M3)
//   FNUZ : no Inf, no -0; NaN = sign 1 with E = M = 0 (0x80).      (AMD/Graphcore fp8 "fnuz")
//   Finite: no Inf, no NaN: every pattern is a number.           (OCP MX E3M2, E2M3, E2M1)
//           Rounding into it saturates at the largest finite (OCP MX's saturating conversion);
//           it is an operand format only (out_fmt is binary16/32/64).
//
//   Pow2 : no sign, no mantissa, no zero: every pattern is 2^(E - bias); all ones is NaN.
//          (OCP MX E8M0, the block scale: 0x7f = 1, 0x00 = 2^-127, 0xff = NaN)
// Scale formats (e8m0, ue4m3) have no sign bit or ignore it: `sign` says which. UE4M3 (NVFP4's
// block scale) is E4M3 with its sign bit ignored (read as +): 0x7f and 0xff are NaN, 0x00 and
// 0x80 zero. They scale products or group sums (Datapath::scale_fmt), never a, b, c or d.
//
//   e8m0:  +----------+        ue4m3:  +---+----+-----+
//          | E (8)    |                | x | E4 | M3  |   x ignored; bias 7, subnormals
//          +----------+                +---+----+-----+
//
//   e2m1 (FP4): +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}     e3m2 (FP6): largest 28     e2m3 (FP6): 7.5
//   +---+----+----+                                  +---+----+----+           +---+----+----+
//   | s | E2 | M1 |  bias 1 (E = 0: subnormal 0.5)   | s | E3 | M2 | bias 3    | s | E2 | M3 | bias 1
//   +---+----+----+                                  +---+----+----+           +---+----+----+
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "matcore/bits.hpp"

namespace mc {

enum class Encoding : uint8_t { IEEE, FN, FNUZ, Finite, Pow2 };
/// The sign bit: present, absent (e8m0), or present and ignored (ue4m3: read as +).
enum class Sign : uint8_t { Bit, None, Ignored };
enum class Class : uint8_t { Zero, Subnormal, Normal, Inf, NaN };
enum class Rounding : uint8_t { RNE, RTZ, RD, RU, RNA };

const char* to_string(Encoding e);
const char* to_string(Class c);
const char* to_string(Rounding r);
bool parse_rounding(const std::string& s, Rounding& out);

struct Format {
  std::string name;
  int ebits = 8;
  int mbits = 23;
  int bias = 127;
  Encoding enc = Encoding::IEEE;
  bool subnormals = true;  ///< the encoding has subnormals (all formats here but e8m0 do)
  Sign sign = Sign::Bit;

  int width() const { return (sign == Sign::None ? 0 : 1) + ebits + mbits; }
  bool is_scale() const { return sign != Sign::Bit; }  ///< a block-scale format (e8m0, ue4m3)
  int emin() const { return 1 - bias; }          ///< exponent of the smallest normal
  int emax() const {                             ///< exponent of the largest finite
    const int top = (1 << ebits) - 1;
    return (enc == Encoding::IEEE || enc == Encoding::Pow2 ? top - 1 : top) - bias;  // Pow2: all ones is NaN
  }
  int hex_digits() const { return (width() + 3) / 4; }
  uint64_t max_finite_bits() const;              ///< positive largest finite
  uint64_t inf_bits(bool neg) const;             ///< only for IEEE
  uint64_t qnan_bits(bool neg) const;            ///< default quiet NaN (only where has_nan())
  bool has_inf() const { return enc == Encoding::IEEE; }
  bool has_nan() const { return enc != Encoding::Finite; }
  bool operator==(const Format& o) const {
    return ebits == o.ebits && mbits == o.mbits && bias == o.bias && enc == o.enc && sign == o.sign;
  }
};

/// An exactly decoded operand: value = (-1)^sign * sig * 2^(exp - mbits).
/// For zeros sig == 0; for subnormals exp == emin and sig < 2^mbits.
struct Unpacked {
  Class cls = Class::Zero;
  bool sign = false;
  int exp = 0;
  uint64_t sig = 0;
  int mbits = 0;  ///< fractional bits of sig
  bool is_finite() const { return cls != Class::Inf && cls != Class::NaN; }
  bool is_zero() const { return cls == Class::Zero; }
};

/// The formats known by name: binary64, binary32, binary16, bf16, tf32 (alias xf32),
/// e4m3 (OCP, alias e4m3fn), e5m2 (OCP), e4m3fnuz, e5m2fnuz.
const Format& format_by_name(const std::string& name);  // throws std::invalid_argument (also for a scale format)
const Format* find_format(const std::string& name);      // nullptr if unknown; finds the scale formats too
std::vector<std::string> format_names();  ///< element and output formats (not the scales)
std::vector<std::string> scale_format_names();  ///< e8m0 (alias ue8m0), ue4m3

extern const Format kBinary64, kBinary32, kBinary16, kBfloat16, kTf32, kE4M3, kE5M2, kE4M3Fnuz,
    kE5M2Fnuz, kE3M2, kE2M3, kE2M1, kE8M0, kUE4M3;

/// Exact decode of a bit pattern (bits above width() must be zero). Inline: it runs for every
/// operand of every product.
inline Unpacked decode(const Format& f, uint64_t bits) {
  Unpacked u;
  u.mbits = f.mbits;
  const uint64_t mmask = (uint64_t{1} << f.mbits) - 1;
  const uint64_t top = (uint64_t{1} << f.ebits) - 1;
  const uint64_t E = (bits >> f.mbits) & top;
  const uint64_t M = bits & mmask;
  u.sign = f.sign == Sign::Bit && ((bits >> (f.width() - 1)) & 1);
  switch (f.enc) {
    case Encoding::IEEE:
      if (E == top) { u.cls = M ? Class::NaN : Class::Inf; return u; }
      break;
    case Encoding::FN:
      if (E == top && M == mmask) { u.cls = Class::NaN; return u; }
      break;
    case Encoding::FNUZ:
      if (u.sign && E == 0 && M == 0) { u.cls = Class::NaN; return u; }
      break;
    case Encoding::Finite: break;
    case Encoding::Pow2:  // no zero, no subnormal: 2^(E - bias), all ones NaN
      if (E == top) { u.cls = Class::NaN; return u; }
      u.exp = static_cast<int>(E) - f.bias;
      u.sig = 1;
      u.cls = Class::Normal;
      return u;
  }
  if (E == 0) {
    u.exp = f.emin();
    u.sig = M;
    u.cls = M ? Class::Subnormal : Class::Zero;
  } else {
    u.exp = static_cast<int>(E) - f.bias;
    u.sig = M | (uint64_t{1} << f.mbits);
    u.cls = Class::Normal;
  }
  return u;
}

/// An exact (or exact-plus-sticky) magnitude to be rounded: value = (-1)^sign *
/// (mag + sticky*epsilon) * 2^lsb_exp, where `sticky` says that nonzero bits lie below mag's LSB.
struct Exact {
  bool sign = false;
  u128 mag = 0;
  int lsb_exp = 0;
  bool sticky = false;
};

/// Options of the final rounding: see round_to_format.
struct RoundOpts {
  Rounding mode = Rounding::RNE;
  bool subnormals = true;       ///< false: results below 2^emin flush to a signed zero (FTZ)
  int prec_mbits = -1;          ///< keep only this many fraction bits (e8m13: 13); -1 = format's
  bool overflow_to_inf = false; ///< true: overflow gives Inf even in RTZ/RD/RU (NVIDIA)
};

/// Rounds an exact value to the format, returning its bit pattern. This is the rounder stage's
/// arithmetic core (see stages.hpp for the documented stage).
uint64_t round_to_format(const Format& f, const Exact& x, const RoundOpts& o);

/// Bits of +/-0 in the format (FNUZ has only +0).
uint64_t zero_bits(const Format& f, bool neg);

/// Converts a bit pattern of `from` to `to`: exact when representable, else rounded per `mode`
/// (truncate = Rounding::RTZ). NaN maps to the default NaN of `to`, Inf to Inf (or NaN if `to`
/// has no Inf).
uint64_t convert(const Format& from, uint64_t bits, const Format& to, Rounding mode = Rounding::RNE,
                 bool* inexact = nullptr);

/// Exact widening between IEEE-encoded formats (to has at least from's exponent and fraction
/// bits): every value, and a NaN with its sign and payload (left-aligned), as hardware does.
uint64_t widen_exact(const Format& from, uint64_t bits, const Format& to);

/// Hex rendering of a bit pattern with the format's digit count, e.g. "3c00".
std::string to_hex_bits(const Format& f, uint64_t bits);
/// Exact decimal-free rendering "1.5*2^-3" style plus a short decimal approximation.
std::string describe(const Format& f, uint64_t bits);
/// Decimal rendering of the exact value with up to 17 significant digits (display only).
std::string to_decimal(const Format& f, uint64_t bits);
/// The value as a host double (exact: every format here fits binary64; Inf and NaN kept).
/// For statistics, plots and Python arrays only: no model result goes through it.
double to_host_double(const Format& f, uint64_t bits);

}  // namespace mc
