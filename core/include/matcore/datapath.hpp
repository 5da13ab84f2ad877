// matcore: the generalised matrix-multiply datapath, described as data.
//
// A Datapath is a named preset of parameters. Every numerical feature of section 7 of the
// paper (and of the NVIDIA characterisation) is a field here; the arithmetic lives only in the
// stage functions of stages.hpp, composed by dot() in model.cpp. A new accumulator design is a
// new Datapath value, not new code.
//
//   a_i, b_i ──► [decode] ──► [multiplier] ──► [aligner] ──► [adder] ──► [c-aligner] ──► [normaliser] ──► [rounder] ──► d
//                                                             ▲            ▲ (late c)
//   c ─────────► [decode] ──────────────────(early c)─────────┘────────────┘
//
// K products are cut into consecutive groups of n_fma; each group's rounded result is the c of
// the next group (the way every characterised unit chains k).
#pragma once
#include <climits>
#include <string>
#include <vector>

#include "matcore/format.hpp"

namespace mc {

/// How the products of one group (and c) are summed.
enum class AdderKind : uint8_t {
  Exact,     ///< exact sum of the group + c, one rounding (Kulisch; CDNA1; SFMA when n_fma = 1)
  Pairwise,  ///< fl(c + fl(fl(p1+p2) + fl(p3+p4))) binary tree of roundings (CDNA2)
  Fused,     ///< fixed-point multi-term adder: align to the maximum exponent, F fractional bits
};

/// Rounding applied when bits are shifted out during alignment.
enum class AlignRound : uint8_t {
  Truncate,  ///< toward zero on the sign-magnitude term (NVIDIA, CDNA3 products)
  RD,        ///< toward -inf on the two's complement term (CDNA3 c-alignment)
  RNE,       ///< to nearest, ties to even, on the sign-magnitude term (guard + sticky bits)
  RNA,       ///< to nearest, ties away from zero, on the sign-magnitude term
};

constexpr int kNone = INT_MIN;  ///< "no such limit / discard" for integer parameters

struct Datapath {
  std::string arch;         ///< preset name, e.g. "mi300x"
  std::string type;         ///< input type name, e.g. "fp16", "e4m3fnuz,e5m2fnuz"
  std::string family;       ///< "cdna1", "cdna2", "cdna3", "volta", ...
  Format a_fmt = kBinary16;
  Format b_fmt = kBinary16;
  Format out_fmt = kBinary32;      ///< output = accumulator format; c is taken in this format
                                   ///< (a binary32 c is first rounded to it, RNE: fp16 output)
  Rounding ingest = Rounding::RNE; ///< how binary32/64 file values enter a_fmt/b_fmt (tf32: RTZ)

  // --- inputs -----------------------------------------------------------------------------
  bool sub_in = true;           ///< subnormal a, b, c supported; false: treated as zero (DAZ)

  // --- multiplier ---------------------------------------------------------------------------
  int prod_overflow_exp = kNone;  ///< |p| >= 2^this gives Inf (CDNA3: 128); kNone: never
  bool prod_round_out = false;    ///< products rounded (RNE) to out_fmt before the adder (CDNA2)

  // --- adder structure ----------------------------------------------------------------------
  AdderKind adder = AdderKind::Fused;
  int n_fma = 8;                ///< products per group (N_FMA, L)
  int interleave = 1;           ///< 2: odd- and even-indexed products summed separately

  // --- aligner (Fused) ----------------------------------------------------------------------
  int frac_bits = 24;           ///< F: fractional bits kept when aligning to the max exponent
  AlignRound prod_align = AlignRound::Truncate;
  int emin_lim = kNone;         ///< the alignment exponent is never below this
  int c_zero_exp = kNone;       ///< exponent given to c = 0 (CDNA3: -126); kNone: c discarded
  bool late_c = false;          ///< c added after the product sum (Algorithms 1 and 2)

  // --- odd-even recombination (interleave == 2) --------------------------------------------
  int partial_frac = 24;        ///< partial sums shifted to e_max and rounded down to this

  // --- c-aligner (late_c) -------------------------------------------------------------------
  int c_frac = 24;              ///< shifted c rounded down to this many fractional bits
  int sum_frac = 32;            ///< shifted product sum rounded down to this many
  int acc_frac = 31;            ///< after the subnormal-aware normalisation: RD to this many
  int c_drop_gap = kNone;       ///< c dropped (not rounded) when e_max - e_c exceeds this
  bool late_norm_rd = true;     ///< apply normalise + RD(acc_frac) in the e_c > e_max branch

  // --- rounder ------------------------------------------------------------------------------
  Rounding out_round = Rounding::RNE;
  bool sub_out = true;          ///< false: subnormal results flush to zero (FTZ)
  int out_prec = -1;            ///< keep only this many fraction bits (e8m13: 13); -1: all
  bool overflow_to_inf = false; ///< overflow gives Inf whatever the rounding (NVIDIA RTZ)

  // --- special values -----------------------------------------------------------------------
  uint64_t nan_invalid = 0;     ///< result bits for Inf - Inf and Inf * 0
  uint64_t nan_propagate = 0;   ///< result bits when an input is NaN
  bool nan_keep_sign = false;   ///< NaN input: the result takes the sign of the first NaN
                                ///< (c first, then a_i*b_i in order) -- AMD; else canonical

  // --- k ordering and the addend ---------------------------------------------------------------
  bool pair_interleave = false; ///< products k with k mod 4 in {0,1} form the first groups, those
                                ///< with {2,3} the later ones (fp8 mma.sync run as two fp16 HMMAs)
  bool c_final_add = false;     ///< the groups start from +0 and c is added at the end by a
                                ///< separate two-term addition rounded with c_final_round
  Rounding c_final_round = Rounding::RNE;

  // --- block scales (OCP MX, NVFP4; docs/blockscaled.md) -----------------------------------
  Format scale_fmt = kE8M0;     ///< format of the block scales (e8m0, ue4m3), when scale_block > 0
  int scale_block = 0;          ///< elements of a (and of b) per scale; 0: no scales
  int group_size = 0;           ///< G > 0 (GST-FDPA): products summed exactly in groups of G, each
                                ///< group sum multiplied by its scales and aligned at the scale
                                ///< exponents only; 0 (ST-FDPA): each product scaled, then aligned
  bool group_by_sum = false;    ///< GST: a group is aligned at its sum's own exponent (and a group
                                ///< that cancels reads e_zero) instead of e_alpha + e_beta
  bool scaled() const { return scale_block > 0; }

  // --- instruction level --------------------------------------------------------------------
  int k_default = 16;           ///< largest k of this type's instructions
  std::string variant;          ///< NVIDIA instruction class: "mma.sync", "wgmma", "tcgen05"

  // --- architecture facts (presets; not numerical) -------------------------------------------
  std::string layout;           ///< GTKWave layout family, waves/LAYOUT.gtkw: "cdna3", "nvidia"
  bool half_out = false;        ///< the instruction set has a binary16-output form of this type
  std::string instr_classes;    ///< instruction classes the architecture executes ("mma":
                                ///< mma.sync only); empty: every class of its family
  std::string hypothesis;       ///< a preset whose accumulation is not published (CDNA4): the
                                ///< fields a probe must decide, comma list; empty: measured or
                                ///< published

  std::string name() const { return arch + "/" + type; }
};

/// Checks internal consistency (widths fit the fixed-point adder, ...). Throws
/// std::invalid_argument naming the offending field.
void validate_datapath(const Datapath& d);

}  // namespace mc
