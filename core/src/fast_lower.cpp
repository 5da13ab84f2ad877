// The lowering of a datapath for the lane kernels (fast_impl.hpp): the typed parameters of
// fast_lanes.hpp from the datapath and FastDot's precomputed rounders, and the choice of the
// lane kernels' instruction set.
#include <cstdlib>
#include <string>

#include "fast_impl.hpp"

namespace mc::fastk {

using Impl = FastDot::Impl;

void lower_lanes(Impl& I, bool tree, bool exact_lanes, bool narrow_in) {
  const Datapath& dp = I.dp;
  auto lf = [](const Format& f, bool sub) {
    lanes::LaneFmt x;
    x.mbits = static_cast<uint32_t>(f.mbits);
    x.top = (uint64_t{1} << f.ebits) - 1;
    x.mmask = (uint64_t{1} << f.mbits) - 1;
    x.sign_shift = static_cast<uint32_t>(f.width() - 1);
    x.bias = f.bias;
    const uint64_t em = x.top << x.mbits, sb = uint64_t{1} << x.sign_shift;
    if (f.enc == Encoding::IEEE) { x.sp_mask = em; x.sp_val = em; }
    else if (f.enc == Encoding::FN) { x.sp_mask = em | x.mmask; x.sp_val = x.sp_mask; }
    else { x.sp_mask = sb | em | x.mmask; x.sp_val = sb; }
    x.sub_mask = sub ? x.mmask : 0;
    return x;
  };
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
  auto lr = [](const RoundK& R) {
    lanes::LaneRound LR;
    LR.p = R.p;
    LR.mbits = R.mbits;
    LR.emin = R.emin;
    LR.emax = R.emax;
    LR.bias = R.bias;
    LR.enc = R.enc;
    LR.mode = R.mode;
    LR.subn = R.subn;
    LR.ovf_inf = R.ovf_inf;
    LR.has_inf = R.has_inf;
    LR.sbit = R.sbit;
    LR.maxf = R.maxf;
    LR.inf_p = R.inf_p;
    LR.inf_n = R.inf_n;
    LR.nan_p = R.nan_p;
    LR.nan_n = R.nan_n;
    LR.z_p = R.z_p;
    LR.z_n = R.z_n;
    return LR;
  };
  P.R = lr(I.R);
  P.Rc = lr(I.Rc);
  P.Rprod = lr(I.Rprod);
  P.prod_round = dp.prod_round_out;
  P.prod_fits = dp.a_fmt.mbits + dp.b_fmt.mbits + 2 <= P.Rprod.p + 1 && P.Rprod.enc == Encoding::IEEE;
  P.prod_below_zero = P.prod_fits && dp.a_fmt.mbits + dp.b_fmt.mbits + 2 <= P.Rprod.p;
  P.acc = lf(dp.out_fmt, true);
  // the pairwise levels on the encodings (fast_lanes.cpp add_rne_ftz): products rounded to
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

namespace {

/// The lane kernels of one instruction set's namespace (fast_lanes.hpp Set) for batch().
template <class Set>
void use_lanes(Impl& I) {
  I.lane_block = Set::block;
  I.lane_transpose = Set::transpose;
  I.lane_transpose32 = Set::transpose32;
  I.lane_c_final = Set::c_final;
  I.lane_isa = Set::name;
}

}  // namespace

/// The lane kernel of the best instruction set this CPU has (AVX-512, else AVX2, else none);
/// MATCORE_LANES=generic|avx2|avx512|avx512x2 picks one (tests, benchmarks), MATCORE_LANES=off
/// none (batch() then runs sample by sample). With AVX-512: the avx512x2 lanes (two registers a
/// lane vector, built by Clang) where they were built, but for the FMA chains of sum2
/// (fast_lanes.cpp fma_chain: c or d wider than 24 bits; the GCC-built avx512 lanes run those
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

}  // namespace mc::fastk
