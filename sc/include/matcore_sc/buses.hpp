// matcore-sc: the typed payloads that travel on the pipeline registers between the stages.
//
// Every stage register is an sc_signal of one of these types. Values are the same records the
// pure stage functions of core take and return (mc::Product, mc::Fixed, mc::Exact), so a stage
// module is nothing but a call of core plus a register.
//
// Equality (used by sc_signal to decide whether a write changes the register) compares the
// valid bit and `seq`, the number the issue stage gives every group it launches: a stage's
// output is a function of (stage, seq), and data registers are written only for valid groups
// (they hold their value through bubbles, like enable-gated flops).
#pragma once
#include <systemc>

#include <array>
#include <cstdint>
#include <ostream>
#include <string>

#include "matcore/stages.hpp"

namespace mcsc {

constexpr int kLanes = 64;  ///< widest group any preset uses (n_fma <= 64, validate_datapath)

/// Control word of one pipeline slot. Travels in its own register chain next to the data.
struct Ctl {
  bool valid = false;
  uint64_t seq = 0;     ///< issue number of the group (unique)
  uint32_t tag = 0;     ///< sample index
  int grp = 0;          ///< group index within the sample (k0 / n_fma)
  int n = 0;            ///< products in this group (the last group may be short)
  bool last = false;    ///< last group of its sample
  uint64_t c0 = 0;      ///< the sample's own c (out_fmt), for the final c addition
  // filled by the specials detector (stage 2):
  mc::SpecialKind special = mc::SpecialKind::None;
  uint64_t sbits = 0;   ///< result bits when special != None
  bool zsign = false;   ///< sign of an exact zero result
  bool operator==(const Ctl& o) const { return valid == o.valid && seq == o.seq; }
};

/// Operand register (issue -> multiplier).
struct OperandBus {
  uint64_t seq = 0;
  int n = 0;
  std::array<uint64_t, kLanes> a{}, b{};  ///< a_fmt / b_fmt bit patterns
  uint64_t c = 0;                         ///< the group's c in out_fmt (fed back after group 0)
  int k0 = 0;                             ///< k of the group's first element
  int ns = 0;                             ///< block scales of the blocks this group covers
  std::array<uint64_t, kLanes> sa{}, sb{};  ///< their patterns (scale_fmt), block k0/scale_block first
  bool operator==(const OperandBus& o) const { return seq == o.seq; }
};

/// Product terms (multiplier -> aligner / exact adder / pairwise levels). The pairwise levels
/// reuse it: m shrinks level by level, pair_bits are that level's rounded pair sums.
struct ProductBus {
  uint64_t seq = 0;
  int m = 0;
  std::array<mc::Product, kLanes> p{};
  mc::Product c{};  ///< the addend term
  int pairs = 0;  ///< pairwise level: number of pair sums in pair_bits (0: passed through)
  std::array<uint64_t, kLanes / 2> pair_bits{};
  int k0 = 0, ns = 0;                        ///< block scales, as on the OperandBus
  std::array<uint64_t, kLanes> sa{}, sb{};
  bool operator==(const ProductBus& o) const { return seq == o.seq; }
};

/// Aligned terms (aligner -> adder tree).
struct AlignBus {
  uint64_t seq = 0;
  int m = 0;                  ///< number of lanes in v (early c: products + c)
  int e_max = mc::kNone;      ///< interleave 2: e_max of the odd lanes (k = 1, 3, ...)
  int e_even = mc::kNone;     ///< interleave 2: e_max of the even lanes
  bool sticky = false, sticky_even = false;
  std::array<mc::i128, kLanes + 1> v{};  ///< two's complement, frac_bits below 2^e
  mc::Product c{};
  bool operator==(const AlignBus& o) const { return seq == o.seq; }
};

/// What the rounder does with an AccBus.
enum class AccMode : uint8_t { Fixed, Exact, Zero, Bits };

/// Accumulator (adder -> odd-even combine -> c-aligner -> normaliser -> rounder; exact adder
/// and pairwise c-add -> rounder).
struct AccBus {
  uint64_t seq = 0;
  AccMode mode = AccMode::Zero;
  mc::Fixed s{};                  ///< s_sum / s_acc (exp == kNone: no nonzero product)
  mc::Fixed odd{}, even{};        ///< interleave 2: partial sums
  mc::Product c{};
  int e_c = mc::kNone;            ///< c-aligner: exponent of c (c_zero_exp for c = 0)
  bool cadd = false;              ///< the c-aligner combined c into s
  bool c_shifted = false, c_dropped = false, sticky = false, normalised = false;
  mc::Exact ex{};                 ///< exact adders
  uint64_t bits = 0;              ///< mode Bits: the result
  bool operator==(const AccBus& o) const { return seq == o.seq; }
};

/// Result (rounder -> final c add -> output converter, and the feedback to the issue stage).
struct ResultBus {
  uint64_t seq = 0;
  uint64_t d = 0;    ///< out_fmt bits
  uint64_t d32 = 0;  ///< output converter: widened to the stored width (binary16 -> binary32)
  bool operator==(const ResultBus& o) const { return seq == o.seq; }
};

// sc_signal<T> needs operator<< (print/dump) and sc_trace. Waveforms come from the probes
// (probes.hpp), which give every field its documented name and width; these are summaries.
#define MCSC_BUS_IO(T)                                                                     \
  inline std::ostream& operator<<(std::ostream& os, const T& v) {                          \
    return os << #T "{seq=" << v.seq << "}";                                                \
  }                                                                                        \
  inline void sc_trace(sc_core::sc_trace_file* tf, const T& v, const std::string& n) {     \
    sc_core::sc_trace(tf, v.seq, n + ".seq");                                               \
  }
MCSC_BUS_IO(OperandBus)
MCSC_BUS_IO(ProductBus)
MCSC_BUS_IO(AlignBus)
MCSC_BUS_IO(AccBus)
MCSC_BUS_IO(ResultBus)
#undef MCSC_BUS_IO
inline std::ostream& operator<<(std::ostream& os, const Ctl& v) {
  return os << "Ctl{valid=" << v.valid << " seq=" << v.seq << " tag=" << v.tag << " grp=" << v.grp << "}";
}
inline void sc_trace(sc_core::sc_trace_file* tf, const Ctl& v, const std::string& n) {
  sc_core::sc_trace(tf, v.valid, n + ".valid");
  sc_core::sc_trace(tf, v.tag, n + ".tag");
}

}  // namespace mcsc
