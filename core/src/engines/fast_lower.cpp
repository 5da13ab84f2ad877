// The lowering of a datapath for the lane kernels (fast_impl.hpp): the typed parameters of
// fast_lanes.hpp from the datapath and FastDot's precomputed rounders, and the choice of the
// lane kernels' instruction set.
#include <cstdlib>
#include <string>

#include "fast_impl.hpp"

namespace mc::fastk {

using Impl = FastDot::Impl;

lanes::LaneFmt lane_fmt(const Format& f, bool sub) {
  lanes::LaneFmt x;
  x.mbits = static_cast<uint32_t>(f.mbits);
  x.top = (uint64_t{1} << f.ebits) - 1;
  x.mmask = (uint64_t{1} << f.mbits) - 1;
  x.sign_shift = static_cast<uint32_t>(f.width() - 1);
  x.bias = f.bias;
  const uint64_t em = x.top << x.mbits, sb = uint64_t{1} << x.sign_shift;
  if (f.enc == Encoding::IEEE) { x.sp_mask = em; x.sp_val = em; }
  else if (f.enc == Encoding::FN) { x.sp_mask = em | x.mmask; x.sp_val = x.sp_mask; }
  else if (f.enc == Encoding::FNUZ) { x.sp_mask = sb | em | x.mmask; x.sp_val = sb; }
  else { x.sp_mask = 0; x.sp_val = 1; }  // Finite: (x & 0) never equals 1, no pattern is special
  x.sub_mask = sub ? x.mmask : 0;
  return x;
}

namespace {

/// The lane kernels' parameters from the datapath and the precomputed rounders (I.LP). tree: the
/// pairwise kernel (or an FMA chain); exact_lanes: the exact adder's lanes; narrow_in: operands
/// of at most 24-bit significands.
void lower_lanes(Impl& I, bool tree, bool exact_lanes, bool narrow_in) {
  const Datapath& dp = I.dp;
  const auto lf = lane_fmt;
  lanes::LaneParams& P = I.LP;
  P.a = lf(dp.a_fmt, dp.sub_in);
  P.b = lf(dp.b_fmt, dp.sub_in);
  P.c = lf(dp.out_fmt, dp.sub_in);
  P.n_fma = dp.n_fma;
  P.raw_frac = I.raw_frac;
  P.ovf_on = dp.prod_overflow_exp != kNone;
  P.ovf = dp.prod_overflow_exp;
  P.F = dp.frac_bits;
  P.lim_on = dp.emin_lim != kNone;
  P.emin_lim = dp.emin_lim;
  P.czero_on = dp.c_zero_exp != kNone;
  P.c_zero_exp = dp.c_zero_exp;
  P.pairwise = tree && !exact_lanes;
  P.exact = exact_lanes;
  P.wide = !narrow_in;
  P.late_c = dp.late_c;
  P.inter2 = dp.late_c && dp.interleave == 2;
  P.mode = dp.prod_align;
  P.zs_rd = dp.out_round == Rounding::RD;
  P.partial_frac = dp.partial_frac;
  P.c_frac = dp.c_frac;
  P.sum_frac = dp.sum_frac;
  P.acc_frac = dp.acc_frac;
  P.gap_on = dp.c_drop_gap != kNone;
  P.c_drop_gap = dp.c_drop_gap;
  P.late_norm_rd = dp.late_norm_rd;
  P.scale_block = I.scaled_lanes ? dp.scale_block : 0;
  const auto lr = [](const RoundK& R) { return static_cast<const lanes::LaneRound&>(R); };
  P.R = lr(I.R);
  P.Rc = lr(I.Rc);
  P.Rprod = lr(I.Rprod);
  P.prod_round = dp.prod_round_out;
  P.prod_fits = dp.a_fmt.mbits + dp.b_fmt.mbits + 2 <= P.Rprod.p + 1 && P.Rprod.enc == Encoding::IEEE;
  P.prod_below_zero = P.prod_fits && dp.a_fmt.mbits + dp.b_fmt.mbits + 2 <= P.Rprod.p;
  P.acc = lf(dp.out_fmt, true);
  // the pairwise levels on the encodings (lanes/terms.hpp add_rne_ftz): products rounded to
  // out_fmt and exact inside its range, flushed below it; RNE levels with no subnormals
  P.fast_levels = P.pairwise && P.n_fma > 1 && P.prod_round && P.prod_fits && !P.Rprod.subn &&
                  P.R.enc == Encoding::IEEE && P.R.mode == Rounding::RNE && !P.R.subn && P.c.sub_mask == 0 &&
                  P.R.mbits <= 52;
  P.tree_direct = P.fast_levels && P.prod_below_zero && !P.ovf_on && P.a.sp_mask == P.a.sp_val &&
                  P.b.sp_mask == P.b.sp_val;
  P.fast_cfinal = P.Rc.enc == Encoding::IEEE && P.Rc.mode == Rounding::RNE && P.Rc.mbits <= 52;
  P.ieee_rne = lanes::is_ieee_rne(P, P.wide);
  P.c_direct = P.R.enc == Encoding::IEEE && static_cast<int>(P.c.mbits) == P.R.mbits && P.c.bias == P.R.bias &&
               P.R.emin == 1 - P.R.bias && P.R.p <= P.R.mbits;
  P.top_round = P.c_direct && P.R.p == P.R.mbits && P.R.mbits <= 52 && P.R.has_inf;
}

/// The lane kernels of one instruction set's namespace (fast_lanes.hpp Set) for batch().
template <class Set>
void use_lanes(Impl& I) {
  I.lane_block = Set::block;
  I.lane_block_scaled = Set::block_scaled;
  I.lane_transpose = Set::transpose;
  I.lane_transpose32 = Set::transpose32;
  I.lane_c_final = Set::c_final;
  I.lane_isa = Set::name;
}

/// The lane kernel of the best instruction set this CPU has (AVX-512, else AVX2, else none);
/// MATCORE_LANES=generic|avx2|avx512|avx512x2 picks one (tests, benchmarks), MATCORE_LANES=off
/// none (batch() then runs sample by sample). With AVX-512: the avx512x2 lanes (two registers a
/// lane vector, built by Clang) where they were built, but for the FMA chains of sum2
/// (lanes/fma.cpp fma_chain: c or d wider than 24 bits; the GCC-built avx512 lanes run those
/// 10% faster, measured: docs/performance.md).
void pick_lanes(Impl& I, bool fma_chain) {
  const char* env = std::getenv("MATCORE_LANES");
  const std::string want = env ? env : "";
  if (want == "off") return;
#if defined(MATCORE_LANES_X86)
  const bool has512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512cd");
  const bool has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
#if defined(MATCORE_LANES_X2)
  if (has512 && ((want.empty() && !fma_chain) || want == "avx512x2"))
    return use_lanes<lanes::avx512x2::Set>(I);
#endif
  if (has512 && (want.empty() || want == "avx512" || want == "avx512x2"))
    return use_lanes<lanes::avx512::Set>(I);
  if (has2 && (want.empty() || want == "avx2" || want == "avx512" || want == "avx512x2"))
    return use_lanes<lanes::avx2::Set>(I);
#endif
  // without AVX2 the lanes are two 64-bit values wide and no faster than one sample at a time
  // (measured): batch() then runs sample by sample unless the generic lanes are asked for
  if (want == "generic") use_lanes<lanes::generic::Set>(I);
}

using lanes::LaneKernel;
using lanes::LaneParams;

/// What the lane families need to know of the operands: narrow_in, significands of at most 24
/// bits in words of at most 32 (products of at most 48 bits); wide_in, of at most 53 bits (a, b
/// and out_fmt: the binary64 chains).
struct LaneShape {
  bool narrow_in, wide_in;
};
/// The lane families (lanes/*.cpp) and the datapaths each takes: the first row whose predicate
/// holds lowers the datapath for it (lower_lanes with tree, exact). Products rounded to out_fmt
/// (prod_round_out) only in the pairwise trees.
struct LaneFamily {
  const char* family;
  bool (*applies)(const Impl&, const LaneShape&);
  bool tree, exact;
};
constexpr LaneFamily kLaneFamilies[] = {
    // the exact adder of several products, and any exact adder of wider significands (up to
    // binary64's: the fp64 FMA chains): two-limb sums, lanes/exact.cpp and lanes/fma.cpp
    {"exact",
     [](const Impl& I, const LaneShape& s) {
       return I.kernel == Kernel::ExactI128 && !I.dp.prod_round_out && (s.narrow_in ? I.dp.n_fma > 1 : s.wide_in);
     },
     false, true},
    // the pairwise trees, and the exact adder of one product of narrow operands: an FMA chain
    // fl(c + p), the pairwise kernel with n = 1 (lanes/tree.cpp, lanes/fma.cpp)
    {"tree",
     [](const Impl& I, const LaneShape& s) {
       return s.narrow_in && (I.kernel == Kernel::PairwiseI128 || (I.kernel == Kernel::ExactI128 && I.dp.n_fma == 1));
     },
     true, false},
    // the fused adder in 64-bit integers (lanes/fused.cpp), ST-FDPA's too (the scale exponents
    // added to the products': block_scaled)
    {"fused",
     [](const Impl& I, const LaneShape& s) {
       return s.narrow_in && (I.kernel == Kernel::FusedI64 || I.scaled_lanes) && !I.dp.prod_round_out;
     },
     false, false},
};

bool trunc(const LaneParams& P) { return P.mode == AlignRound::Truncate; }

/// The lane kernels' strategy table: after the lowering, the first row whose predicate holds is
/// the kernel block() runs (lanes/block.cpp kRun: one entry point per kernel). The order is the
/// predicates' order: a row holds only where none above it does.
struct LaneStrategy {
  LaneKernel kernel;
  const char* name;
  bool (*applies)(const LaneParams&);
};
constexpr LaneStrategy kLaneStrategies[] = {
    {LaneKernel::FmaB32, "fma/b32", [](const LaneParams& P) { return lanes::is_fma_chain(P) && P.ieee_rne; }},
    {LaneKernel::FmaNarrow, "fma/narrow",
     [](const LaneParams& P) { return lanes::is_fma_chain(P) && lanes::fits_fixed_narrow(P); }},
    {LaneKernel::FmaSum2, "fma/sum2", [](const LaneParams& P) { return lanes::is_fma_chain(P); }},
    {LaneKernel::FmaB64, "fma/b64", [](const LaneParams& P) { return lanes::is_wide_fma_chain(P) && P.ieee_rne; }},
    {LaneKernel::FmaWide, "fma/wide", [](const LaneParams& P) { return lanes::is_wide_fma_chain(P); }},
    {LaneKernel::PairwiseBits, "pairwise/bits", [](const LaneParams& P) { return P.pairwise && P.fast_levels; }},
    {LaneKernel::PairwiseTerms, "pairwise/terms", [](const LaneParams& P) { return P.pairwise; }},
    {LaneKernel::ExactWide, "exact/wide", [](const LaneParams& P) { return P.exact && P.wide; }},
    {LaneKernel::ExactSorted, "exact/sorted",
     [](const LaneParams& P) { return P.exact && P.n_fma >= 1 && P.n_fma <= 7; }},
    {LaneKernel::ExactAny, "exact/any", [](const LaneParams& P) { return P.exact; }},
    {LaneKernel::FusedTruncEarly, "fused/trunc", [](const LaneParams& P) { return trunc(P) && !P.late_c; }},
    {LaneKernel::FusedTruncLateInter2, "fused/trunc-late-inter2",
     [](const LaneParams& P) { return trunc(P) && P.inter2; }},
    {LaneKernel::FusedTruncLate, "fused/trunc-late", [](const LaneParams& P) { return trunc(P); }},
    {LaneKernel::FusedRdEarly, "fused/rd", [](const LaneParams& P) { return !P.late_c; }},
    {LaneKernel::FusedRdLateInter2, "fused/rd-late-inter2", [](const LaneParams& P) { return P.inter2; }},
    {LaneKernel::FusedRdLate, "fused/rd-late", [](const LaneParams&) { return true; }},
};
static_assert(sizeof(kLaneStrategies) / sizeof(kLaneStrategies[0]) == lanes::kLaneKernels,
              "one strategy per lane kernel");

LaneKernel choose_lane_kernel(const LaneParams& P) {
  for (const LaneStrategy& s : kLaneStrategies)
    if (s.applies(P)) return s.kernel;
  return LaneKernel::FusedRdLate;  // not reached: the last row always holds
}

}  // namespace

void lower_for_lanes(Impl& I) {
  const Datapath& dp = I.dp;
  const LaneShape shape{dp.a_fmt.width() <= 32 && dp.b_fmt.width() <= 32 && dp.a_fmt.mbits <= 23 &&
                            dp.b_fmt.mbits <= 23,
                        dp.a_fmt.mbits <= 52 && dp.b_fmt.mbits <= 52 && dp.out_fmt.mbits <= 52};
  for (const LaneFamily& f : kLaneFamilies) {
    if (!f.applies(I, shape)) continue;
    lower_lanes(I, f.tree, f.exact, shape.narrow_in);
    I.LP.kernel = choose_lane_kernel(I.LP);
    pick_lanes(I, I.LP.kernel == LaneKernel::FmaSum2);
    return;
  }
}

}  // namespace mc::fastk

namespace mc::lanes {
const char* lane_kernel_name(LaneKernel k) {
  for (const fastk::LaneStrategy& s : fastk::kLaneStrategies)
    if (s.kernel == k) return s.name;
  return "?";
}
}  // namespace mc::lanes
