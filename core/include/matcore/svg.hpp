// matcore: a picture of one dot product (`matcore dot --svg`, `matcore trace --svg`), for
// teaching and reports. Drawn from the stage trace (stages.hpp's Trace), so the picture shows
// exactly the values the trace prints:
//
//   columns   one per binary weight 2^w (a shared scale for all rows; at most 96 columns, the
//             bits further below are summarised on the right)
//   rows      every product (multiplier.p<i>: its unnormalised significand at its weights), c,
//             every fixed-point value (adder.s_sum, cadd.s_acc, ...: two's complement shown as
//             sign and magnitude), every rounded value (pairs of the pairwise tree, rounder.d)
//   marks     the aligner's cut (e_max - F: bits below it are dropped, drawn grey, and the
//             sticky bit says whether any was 1), the c-aligner's cuts, the output's last bit
//   groups    each group of n_fma products is one block (k chained through c)
// Two datapaths are drawn one above the other.
#pragma once
#include <string>
#include <vector>

#include "matcore/datapath.hpp"
#include "matcore/stages.hpp"

namespace mc {

struct SvgPanel {
  Datapath dp;
  Trace trace;  ///< the trace of dot() for the sample
  uint64_t d = 0;
};

/// The SVG document (complete, standalone).
std::string trace_svg(const std::vector<SvgPanel>& panels);

}  // namespace mc
