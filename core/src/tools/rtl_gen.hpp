// matcore RTL generator, internal: the derived widths of a datapath's generated top and the
// expressions of its documented views (rtl.cpp writes the top; rtl_views.cpp holds these).
#pragma once
#include <string>
#include <vector>

#include "matcore/datapath.hpp"
#include "matcore/plan.hpp"

namespace mc {
namespace rtlgen {

/// The derived widths of one datapath's RTL (docs/rtl.md, "Widths").
struct Dims {
  int N, AW, BW, OW, DW;
  int TF, SW, PFRAC, XW = 20;
  int F, ALW, SUMW;        // fused: fraction bits, aligned lane width, product sum width
  int PF, OEW;             // odd-even: partial fraction bits, its sum width
  int FS, SUMW_IN;         // what the c-aligner receives
  int ACCF, ACCW;          // c-aligner / normaliser accumulator
  int X_LSB, X_ACCW;       // exact adder
  int P_LSB;               // pair sums: lowest bit
  int NS = 0, LPS = 0;     // ST-FDPA scaler: scale pairs per group, products per pair (0: unscaled)
  int NT = 0, IB = 2;      // terms of the aligner and adder besides c (products or group sums), their integer bits
  int GF = 0;              // GST-FDPA: fraction bits of the C++ group-sum record (grouper.s<g>)
};

Dims dims_of(const Datapath& dp);

/// What a view expression reads: the datapath, its widths, its stages, the stage whose control
/// register holds the specials.
struct RtlViewCtx {
  const Datapath& dp;
  const Dims& d;
  const std::vector<PlannedStage>& stages;
  const std::string& spec_stage;
};
/// The expression that a documented signal (signal_table) views in the generated top.
std::string view_expr(const RtlViewCtx& c, const SignalField& f);

}  // namespace rtlgen
}  // namespace mc
