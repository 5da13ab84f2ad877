#include "matcore/model.hpp"

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

namespace mc {

namespace {

constexpr int kMaxGroup = 64;

std::string hexu(uint64_t v) { return "0x" + to_hex(v); }

/// Pairwise tree (CDNA2): fl(fl(p1+p2)+fl(p3+p4)) ..., then fl(c + tree). Each fl is an exact
/// two-term sum rounded to out_fmt with the datapath's rounding and FTZ. Infinite terms (inputs,
/// overflowed products, c) reach the tree: each fl() resolves the specials of its two terms, so
/// a pair rounded to Inf on overflow meets the other terms like an Inf input (Inf - Inf = NaN).
uint64_t pairwise(const Datapath& dp, Product* p, int n, const Product& c, Trace* tr) {
  Product level[kMaxGroup];
  int m = n;
  for (int i = 0; i < m; ++i) level[i] = p[i];
  int depth = 0;
  while (m > 1) {
    int k = 0;
    for (int i = 0; i + 1 < m; i += 2) {
      const PairSum ps = pair_sum(dp, level[i], level[i + 1]);
      if (tr) tr->add("adder.pair" + std::to_string(depth) + "_" + std::to_string(k), hexu(ps.bits));
      level[k++] = ps.sum;
    }
    if (m & 1) level[k++] = level[m - 1];
    m = k;
    ++depth;
  }
  return pair_sum(dp, c, level[0]).bits;  // fl(c + tree)
}

/// Sum of the aligned products of one set (all, or odd/even) at their own e_max.
Fixed product_sum(const Datapath& dp, const Product* p, int n, int stride, int first, int emin_lim,
                  Trace* tr, const char* tag) {
  const int e = align_exponent(p, n, emin_lim, first, stride);
  Fixed s{0, e, dp.frac_bits};
  if (e == kNone) return s;
  bool sticky = false;
  for (int i = first; i < n; i += stride) {
    if (p[i].cls != Class::Normal) continue;
    const Aligned a = align_term(p[i], e, dp.frac_bits, dp.prod_align);
    s.v += a.v;
    sticky |= a.sticky;
  }
  if (tr) {
    tr->add(std::string("aligner.e_max") + tag, std::to_string(e));
    tr->add(std::string("aligner.sticky") + tag, sticky ? "1" : "0");
    tr->add(std::string("adder.s_sum") + tag, render(s));
  }
  return s;
}

/// all[0..n) are the products, all[n] is c (the early-c path may rewrite all[n]).
uint64_t fused(const Datapath& dp, Product* all, int n, Trace* tr) {
  const RoundOpts o = out_opts(dp);
  const Product* p = all;
  const Product c = all[n];
  const bool zs = zero_sum_sign(dp, all, n + 1);

  if (!dp.late_c) {
    // Early c: c is one more term of the multi-term addition.
    int m = n;
    Product cz = c;
    if (c.cls == Class::Zero && dp.c_zero_exp != kNone) {
      // c = 0 takes part with an exponent but no significand bits.
      cz.cls = Class::Normal;
      cz.sig = 0;
      cz.frac = 0;
      cz.exp = dp.c_zero_exp;
    }
    all[m++] = cz;
    int e = align_exponent(all, m, dp.emin_lim);
    Fixed s{0, e, dp.frac_bits};
    bool sticky = false;
    if (e != kNone) {
      for (int i = 0; i < m; ++i) {
        const Aligned a = align_term(all[i], e, dp.frac_bits, dp.prod_align);
        s.v += a.v;
        sticky |= a.sticky;
      }
    }
    if (tr) {
      tr->add("aligner.e_max", e == kNone ? "none" : std::to_string(e));
      tr->add("aligner.sticky", sticky ? "1" : "0");
      tr->add("adder.s_acc", e == kNone ? "0" : render(s));
    }
    if (e == kNone) return zero_bits(dp.out_fmt, zs);
    return round_fixed(s, dp.out_fmt, o, zs);
  }

  // Late c (Algorithms 1 and 2).
  Fixed sum;
  if (dp.interleave == 2) {
    const Fixed so = product_sum(dp, p, n, 2, 0, dp.emin_lim, tr, "_odd");
    const Fixed se = product_sum(dp, p, n, 2, 1, dp.emin_lim, tr, "_even");
    sum = combine_odd_even(so, se, dp.partial_frac);
    if (tr) tr->add("adder.s_sum", sum.exp == kNone ? "0" : render(sum));
  } else {
    sum = product_sum(dp, p, n, 1, 0, dp.emin_lim, tr, "");
  }
  int e_c = kNone;
  if (c.cls == Class::Normal) e_c = c.exp;
  else if (dp.c_zero_exp != kNone) e_c = dp.c_zero_exp;
  if (e_c == kNone) {
    // c = 0 discarded: the product sum is the result.
    if (sum.exp == kNone) return zero_bits(dp.out_fmt, zs);
    return round_fixed(sum, dp.out_fmt, o, zs);
  }
  CAlignCfg cc;
  cc.c_frac = dp.c_frac;
  cc.sum_frac = dp.sum_frac;
  cc.acc_frac = dp.acc_frac;
  cc.c_drop_gap = dp.c_drop_gap;
  cc.norm_rd = dp.late_norm_rd;
  cc.emin = dp.out_fmt.emin();
  const CAlignOut ca = c_align(sum, c, e_c, cc);
  if (tr) {
    tr->add("cadd.e_c", std::to_string(e_c));
    tr->add("cadd.branch", ca.c_shifted ? "c_shifted" : "sum_shifted");
    tr->add("cadd.c_dropped", ca.c_dropped ? "1" : "0");
    tr->add("normaliser.sticky", ca.sticky ? "1" : "0");  // c alignment and normalisation
    tr->add(ca.normalised ? "normaliser.s_acc" : "cadd.s_acc", render(ca.acc));
  }
  return round_fixed(ca.acc, dp.out_fmt, o, zs);
}

}  // namespace

uint64_t c_from_binary32(const Datapath& dp, uint64_t c32) {
  if (dp.out_fmt == kBinary32) return c32;
  return convert(kBinary32, c32, dp.out_fmt, Rounding::RNE);
}

uint64_t dot_group(const Datapath& dp, const uint64_t* a, const uint64_t* b, int n, uint64_t c,
                   Trace* tr) {
  if (n > kMaxGroup) throw std::invalid_argument("dot_group: group larger than 64 products");
  Product all[kMaxGroup + 1];  // products, then c in all[n]
  Product* p = all;
  MulCfg mc;
  mc.overflow_exp = dp.prod_overflow_exp;
  mc.round_out = dp.prod_round_out;
  mc.out = &dp.out_fmt;
  mc.sub_out = dp.sub_out;
  for (int i = 0; i < n; ++i) {
    const Unpacked ua = decode_operand(dp.a_fmt, a[i], dp.sub_in);
    const Unpacked ub = decode_operand(dp.b_fmt, b[i], dp.sub_in);
    p[i] = multiply(ua, ub, mc);
    if (tr) {
      tr->add("multiplier.p" + std::to_string(i),
              p[i].cls == Class::Normal
                  ? std::string(p[i].sign ? "-" : "+") + "0x" + to_hex(p[i].sig) + " frac=" +
                        std::to_string(p[i].frac) + " exp=" + std::to_string(p[i].exp)
                  : std::string(p[i].sign ? "-" : "+") + to_string(p[i].cls) +
                        (p[i].overflow ? " (overflow)" : ""));
    }
  }
  all[n] = addend(decode_operand(dp.out_fmt, c, dp.sub_in));
  const Product& cp = all[n];
  if (tr) tr->add("multiplier.c", describe(dp.out_fmt, c));
  // An infinity among the terms of a pairwise tree is left to the tree (special_at_inputs).
  const SpecialKind sk = resolve_specials(all, n + 1);
  uint64_t r;
  if (special_at_inputs(dp, sk)) {
    r = special_bits(dp, sk);
    if (sk == SpecialKind::NaNIn && dp.nan_keep_sign) r = nan_with_sign(dp, r, p, n, cp);
    if (tr) tr->add("specials.kind", sk == SpecialKind::NaNIn ? "nan_in" : sk == SpecialKind::Invalid ? "invalid" : "inf");
  } else {
    switch (dp.adder) {
      case AdderKind::Exact: {
        const RoundOpts o = out_opts(dp);
        Exact ex;
        r = exact_sum_round(all, n + 1, dp.out_fmt, o, zero_sum_sign(dp, all, n + 1), &ex);
        if (tr) tr->add("adder.exact", (ex.sign ? "-0x" : "0x") + to_hex(ex.mag) + "*2^" +
                                           std::to_string(ex.lsb_exp) + (ex.sticky ? " +sticky" : ""));
        break;
      }
      case AdderKind::Pairwise:
        r = pairwise(dp, p, n, cp, tr);
        break;
      case AdderKind::Fused:
      default:
        r = fused(dp, all, n, tr);
        break;
    }
  }
  if (tr) tr->add("rounder.d", describe(dp.out_fmt, r));
  return r;
}

uint64_t dot(const Datapath& dp, const uint64_t* a, const uint64_t* b, int K, uint64_t c,
             Trace* tr) {
  // Optional reordering of k (pair interleave): k mod 4 in {0,1} first, then {2,3}.
  std::vector<uint64_t> ra, rb;
  if (dp.pair_interleave && K > 2) {
    ra.reserve(K);
    rb.reserve(K);
    for (int pass = 0; pass < 2; ++pass)
      for (int k = 0; k < K; ++k)
        if (((k >> 1) & 1) == pass) { ra.push_back(a[k]); rb.push_back(b[k]); }
    a = ra.data();
    b = rb.data();
    if (tr) tr->add("order", "pair_interleave: k%4 in {0,1} then {2,3}");
  }
  uint64_t acc = dp.c_final_add ? zero_bits(dp.out_fmt, false) : c;
  const int g = dp.n_fma;
  for (int k0 = 0; k0 < K || k0 == 0; k0 += g) {
    const int n = K - k0 < g ? K - k0 : g;
    if (tr && (K > g || dp.c_final_add)) tr->add("group", std::to_string(k0 / g));
    acc = dot_group(dp, a + k0, b + k0, n < 0 ? 0 : n, acc, tr);
    if (K == 0) break;
  }
  if (dp.c_final_add) {
    acc = add_c_final(dp, acc, c);  // d = fl(acc + c): an IEEE two-term addition in out_fmt
    if (tr) tr->add("cfinal.d", describe(dp.out_fmt, acc));
  }
  return acc;
}

void validate_datapath(const Datapath& d) {
  auto bad = [&](const std::string& field, const std::string& why) {
    throw std::invalid_argument("datapath " + d.name() + ": field '" + field + "' " + why);
  };
  if (d.n_fma < 1 || d.n_fma > kMaxGroup) bad("n_fma", "must be in 1..64");
  if (d.interleave != 1 && d.interleave != 2) bad("interleave", "must be 1 or 2");
  if (d.adder == AdderKind::Fused) {
    if (d.frac_bits < 0 || d.frac_bits > 100) bad("frac_bits", "must be in 0..100");
    if (d.late_c && (d.sum_frac > 100 || d.c_frac > 100 || d.acc_frac > 100))
      bad("sum_frac/c_frac/acc_frac", "must be at most 100");
  }
  if (d.adder == AdderKind::Pairwise && (d.n_fma & (d.n_fma - 1)))
    bad("n_fma", "must be a power of two for the pairwise adder");
  if (d.k_default < 1) bad("k_default", "must be positive");
  if (!(d.out_fmt == kBinary16) && !(d.out_fmt == kBinary32) && !(d.out_fmt == kBinary64))
    bad("out_fmt", "must be binary16, binary32 or binary64 (got " + d.out_fmt.name + ")");
  if (d.out_prec < -1 || d.out_prec > d.out_fmt.mbits)
    bad("out_prec", "must be \"all\" or at most the " + std::to_string(d.out_fmt.mbits) +
                        " fraction bits of out_fmt " + d.out_fmt.name);
  const uint64_t wmask = d.out_fmt.width() >= 64 ? ~uint64_t{0} : (uint64_t{1} << d.out_fmt.width()) - 1;
  if (d.nan_invalid & ~wmask) bad("nan_invalid", "must fit the " + std::to_string(d.out_fmt.width()) + " bits of out_fmt " + d.out_fmt.name);
  if (d.nan_propagate & ~wmask)
    bad("nan_propagate", "must fit the " + std::to_string(d.out_fmt.width()) + " bits of out_fmt " + d.out_fmt.name);
}

}  // namespace mc
