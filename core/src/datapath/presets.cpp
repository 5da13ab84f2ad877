// The presets: every numerical feature of each characterised unit, as data. Sources:
// the AMD paper (sections 4.1-4.3, Table 3) for CDNA 1/2/3, ../shared/spec/nvidia-tensor-cores.md
// for NVIDIA. docs/architectures/*.md lists each preset with the vectors that pin it.
#include "matcore/presets.hpp"

#include "matcore/instructions.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace mc {

namespace {

constexpr uint64_t kAmdNegNaN = 0xFFC00000;   // "-NaN" of Inf - Inf (sections 4.1-4.3)
constexpr uint64_t kAmdNaN = 0x7FC00000;      // NaN input: default quiet NaN (assumed)
constexpr uint64_t kNvNaN32 = 0x7FFFFFFF;     // NVIDIA canonical NaN, binary32 output
constexpr uint64_t kNvNaN16 = 0x7FFF;         // NVIDIA canonical NaN, binary16 output

Datapath amd_base(const std::string& arch, const std::string& family) {
  Datapath d;
  d.arch = arch;
  d.family = family;
  d.layout = family;  // waves/cdna1.gtkw, cdna2, cdna3, cdna4
  d.out_fmt = kBinary32;
  d.out_round = Rounding::RNE;
  d.nan_invalid = kAmdNegNaN;
  d.nan_propagate = kAmdNaN;
  d.nan_keep_sign = true;
  return d;
}

// SFMA: (((c + p1) + p2) + ...), each step exact then RNE: an exact adder of group size 1.
Datapath sfma(Datapath d, const std::string& type, const Format& f, int k) {
  d.type = type;
  d.a_fmt = d.b_fmt = f;
  d.adder = AdderKind::Exact;
  d.n_fma = 1;
  d.k_default = k;
  if (f == kBinary64) {
    d.out_fmt = kBinary64;
    d.nan_invalid = 0xFFF8000000000000ull;
    d.nan_propagate = 0x7FF8000000000000ull;
  }
  return d;
}

// CDNA1 fp16 / bf16: products exact, c and the group summed exactly (Kulisch), one RNE.
Datapath cdna1(Datapath d, const std::string& type, const Format& f, int nfma, int k) {
  d.type = type;
  d.a_fmt = d.b_fmt = f;
  d.adder = AdderKind::Exact;
  d.n_fma = nfma;
  d.k_default = k;
  return d;
}

// CDNA2 fp16 / bf16: products rounded to binary32 (FTZ), pairwise tree of RNE additions,
// no subnormals in or out.
Datapath cdna2(Datapath d, const std::string& type, const Format& f, int group, int k) {
  d.type = type;
  d.a_fmt = d.b_fmt = f;
  d.adder = AdderKind::Pairwise;
  d.n_fma = group;
  d.k_default = k;
  d.sub_in = false;
  d.sub_out = false;
  d.prod_round_out = true;
  return d;
}

// CDNA3 fp16 / bf16 / xf32 (Algorithm 1) and binary8 (Algorithm 2).
Datapath cdna3(Datapath d, const std::string& type, const Format& fa, const Format& fb, int nfma,
               int k, bool odd_even) {
  d.type = type;
  d.a_fmt = fa;
  d.b_fmt = fb;
  d.adder = AdderKind::Fused;
  d.n_fma = nfma;
  d.k_default = k;
  d.frac_bits = 24;
  d.prod_align = AlignRound::Truncate;
  d.c_zero_exp = -126;
  d.late_c = true;
  d.c_frac = 24;
  d.sum_frac = 32;
  d.acc_frac = 31;
  d.prod_overflow_exp = 128;
  if (odd_even) {
    d.interleave = 2;
    d.partial_frac = 24;
    d.c_drop_gap = 25;
  }
  if (fa == kTf32) d.ingest = Rounding::RTZ;
  return d;
}

Datapath nv_base(const std::string& arch, const std::string& family, int emin_lim) {
  Datapath d;
  d.arch = arch;
  d.family = family;
  d.layout = "nvidia";
  d.adder = AdderKind::Fused;
  d.late_c = false;
  d.c_zero_exp = kNone;
  d.prod_align = AlignRound::Truncate;
  d.emin_lim = emin_lim;
  d.out_fmt = kBinary32;
  d.out_round = Rounding::RTZ;
  d.overflow_to_inf = true;
  d.nan_invalid = kNvNaN32;
  d.nan_propagate = kNvNaN32;
  return d;
}

Datapath nv(Datapath d, const std::string& type, const Format& fa, const Format& fb, int L, int F,
            int k, int out_prec = -1) {
  d.type = type;
  d.a_fmt = fa;
  d.b_fmt = fb;
  d.n_fma = L;
  d.frac_bits = F;
  d.k_default = k;
  d.out_prec = out_prec;
  if (fa == kTf32) d.ingest = Rounding::RTZ;
  // PTX: f16 accumulators for fp16 and fp8 inputs only (not modelled for fp6/fp4 elements:
  // docs/decisions.md)
  d.half_out = fa == kBinary16 || (fa.width() == 8 && fb.width() == 8);
  return d;
}

/// CDNA4 (MI350X/MI355X, gfx950): nothing of its accumulation is published
/// (../shared/spec/block-scaled.md). The documented facts are kept (OCP fp8; fp6/fp4 elements
/// chosen for a and b independently; E8M0 scales per 32 applied to the block's products before
/// the accumulation; narrow inputs, c and d never flushed; F64 RNE with subnormals); the rest is
/// the measured CDNA3 datapath of the same input width (paper, Algorithms 1 and 2). Every preset
/// names the fields a probe must decide (`hypothesis`; docs/architectures/cdna4.md).
void add_cdna4(std::vector<Datapath>& v, const Datapath& b) {
  const std::string chain = "adder,n_fma";
  const std::string fused = "n_fma,frac_bits,prod_align,late_c,c_frac,sum_frac,acc_frac,c_zero_exp,prod_overflow_exp";
  const std::string oddeven = fused + ",interleave,partial_frac,c_drop_gap";
  auto mark = [&](Datapath d, const std::string& fields) {
    d.hypothesis = fields;
    v.push_back(d);
  };
  mark(sfma(b, "fp32", kBinary32, 4), chain);
  mark(sfma(b, "fp64", kBinary64, 4), chain);
  mark(cdna3(b, "fp16", kBinary16, kBinary16, 8, 32, false), fused);  // v_mfma_f32_16x16x32_f16
  mark(cdna3(b, "bf16", kBfloat16, kBfloat16, 8, 32, false), fused);
  // v_mfma_f32_16x16x128_f8f6f4: A and B formats by CBSZ / BLGP (e4m3, e5m2, e2m3, e3m2, e2m1)
  const Format* fs[] = {&kE4M3, &kE5M2, &kE3M2, &kE2M3, &kE2M1};
  for (const Format* fa : fs)
    for (const Format* fb : fs)
      mark(cdna3(b, fa == fb ? fa->name : fa->name + "," + fb->name, *fa, *fb, 16, 128, true), oddeven);
  // v_mfma_scale_f32_16x16x128_f8f6f4: one E8M0 scale per 32 elements of a row of A / column of B
  for (const Format* fa : fs)
    for (const Format* fb : fs) {
      Datapath d = cdna3(b, "scale." + fa->name + "." + fb->name, *fa, *fb, 16, 128, true);
      d.scale_fmt = kE8M0;
      d.scale_block = 32;
      mark(d, oddeven + ",scale_block");
    }
}

void add_cdna(std::vector<Datapath>& v, const std::string& arch, int gen) {
  const std::string fam = "cdna" + std::to_string(gen);
  Datapath b = amd_base(arch, fam);
  if (gen == 4) return add_cdna4(v, b);
  v.push_back(sfma(b, "fp32", kBinary32, 4));
  if (gen >= 2) v.push_back(sfma(b, "fp64", kBinary64, 4));
  if (gen == 1) {
    v.push_back(cdna1(b, "fp16", kBinary16, 4, 16));
    v.push_back(cdna1(b, "bf16", kBfloat16, 2, 8));
  } else if (gen == 2) {
    v.push_back(cdna2(b, "fp16", kBinary16, 4, 16));
    v.push_back(cdna2(b, "bf16", kBfloat16, 2, 8));
    v.push_back(cdna2(b, "bf16_1k", kBfloat16, 4, 16));
  } else {
    v.push_back(cdna3(b, "fp16", kBinary16, kBinary16, 8, 16, false));
    v.push_back(cdna3(b, "bf16", kBfloat16, kBfloat16, 8, 16, false));
    v.push_back(cdna3(b, "xf32", kTf32, kTf32, 4, 8, false));
    const Format* f8[2] = {&kE4M3Fnuz, &kE5M2Fnuz};
    for (const Format* fa : f8)
      for (const Format* fb : f8) {
        const std::string t = fa == fb ? fa->name : fa->name + "," + fb->name;
        v.push_back(cdna3(b, t, *fa, *fb, 16, 32, true));
      }
  }
}

/// The fp8 types (OCP e4m3, e5m2 and their mixes) of an NVIDIA datapath; with f6f4, also the
/// OCP MX fp6 and fp4 element formats and every mix a,b of the five (tcgen05 kind::f8f6f4,
/// sm_120a mma.sync kind::f8f6f4: A and B chosen independently).
void add_fp8(std::vector<Datapath>& v, const Datapath& b, int L, int F, int k, int prec,
             const std::string& variant, bool f6f4 = false) {
  const std::vector<const Format*> fs = f6f4 ? std::vector<const Format*>{&kE4M3, &kE5M2, &kE3M2, &kE2M3, &kE2M1}
                                             : std::vector<const Format*>{&kE4M3, &kE5M2};
  for (const Format* fa : fs)
    for (const Format* fb : fs) {
      const std::string t = fa == fb ? fa->name : fa->name + "," + fb->name;
      Datapath d = nv(b, t, *fa, *fb, L, F, k, prec);
      d.variant = variant;
      v.push_back(d);
    }
}

/// NVIDIA fp64 (DMMA, mma.sync.m8n8k4.f64, sm_80 and later): a chain of IEEE binary64 fused
/// multiply-adds in k order, c = fma(a_k, b_k, c), round to nearest even, subnormals kept
/// (../shared/spec/block-scaled.md). NaN results: the canonical 0x7FFFFFFFFFFFFFFF
/// (docs/decisions.md: an assumption; PTX propagates fp64 NaN payloads, not modelled).
Datapath nv_fp64(Datapath d) {
  d.type = "fp64";
  d.a_fmt = d.b_fmt = d.out_fmt = kBinary64;
  d.adder = AdderKind::Exact;
  d.n_fma = 1;
  d.k_default = 4;
  d.emin_lim = kNone;
  d.out_round = Rounding::RNE;
  d.overflow_to_inf = false;
  d.nan_invalid = d.nan_propagate = 0x7FFFFFFFFFFFFFFFull;
  d.half_out = false;
  d.variant.clear();
  return d;
}

/// The block-scaled types of a Blackwell datapath (../shared/spec/block-scaled.md; published
/// descriptions, no hardware data here):
///   mxf8f6f4.<a>.<b>  ST-FDPA: E8M0 per 32, K = L = 32, F = 25, e_zero = -133 (b's emin_lim)
///   mxf4, mxf4nvf4.e8m0, nvfp4  GST-FDPA: E2M1, G = 16, K = L = 64, F = 35, e_zero = -139,
///                     E8M0 per 32 / E8M0 per 16 / UE4M3 per 16
void add_blockscaled(std::vector<Datapath>& v, const Datapath& b, const std::string& variant) {
  const Format* fs[] = {&kE4M3, &kE5M2, &kE3M2, &kE2M3, &kE2M1};
  for (const Format* fa : fs)
    for (const Format* fb : fs) {
      Datapath d = nv(b, "mxf8f6f4." + fa->name + "." + fb->name, *fa, *fb, 32, 25, 32);
      d.half_out = false;  // block_scale: f32 accumulators only
      d.variant = variant;
      d.scale_fmt = kE8M0;
      d.scale_block = 32;
      v.push_back(d);
    }
  struct G { const char* type; const Format* scale; int block; };
  for (const G& g : {G{"mxf4", &kE8M0, 32}, G{"mxf4nvf4.e8m0", &kE8M0, 16}, G{"nvfp4", &kUE4M3, 16}}) {
    Datapath d = nv(b, g.type, kE2M1, kE2M1, 64, 35, 64);
    d.half_out = false;
    d.variant = variant;
    d.emin_lim = -139;
    d.scale_fmt = *g.scale;
    d.scale_block = g.block;
    d.group_size = 16;
    v.push_back(d);
  }
}

// fp8 mma.sync on sm_90 / sm_100: run as two fp16-style HMMAs of 16 products each (k mod 4 in
// {0,1}, then {2,3}), the first starting from +0 and each rounded like that output's HMMA
// (binary32: RTZ; binary16: RNE); the user's c (binary16 output: first rounded to binary16) is
// added last by a separate RNE addition. Found from the hardware data (docs/nvidia-open-sets.md).
void add_fp8_hmma(std::vector<Datapath>& v, const Datapath& b) {
  const size_t first = v.size();
  add_fp8(v, b, 16, 25, 32, -1, "mma.sync");
  for (size_t i = first; i < v.size(); ++i) {
    v[i].pair_interleave = true;
    v[i].c_final_add = true;
    v[i].c_final_round = Rounding::RNE;
  }
}

std::vector<Datapath> build() {
  std::vector<Datapath> v;
  add_cdna(v, "mi100", 1);
  add_cdna(v, "mi210", 2);
  add_cdna(v, "mi250", 2);
  add_cdna(v, "mi300a", 3);
  add_cdna(v, "mi300x", 3);
  add_cdna(v, "mi350x", 4);  // hypotheses: docs/architectures/cdna4.md
  add_cdna(v, "mi355x", 4);

  {  // Volta: mma.m8n8k4, fp16 only.
    Datapath b = nv_base("v100", "volta", -131);
    v.push_back(nv(b, "fp16", kBinary16, kBinary16, 4, 23, 4));
  }
  {  // Turing (T4, sm_75): fp16 mma.m16n8k8 / wmma, L = 8, F = 24 (published description, no data)
    Datapath b = nv_base("t4", "turing", -132);
    b.instr_classes = "mma";
    v.push_back(nv(b, "fp16", kBinary16, kBinary16, 8, 24, 8));
  }
  for (const char* arch : {"a100", "a2", "a30"}) {  // Ampere
    Datapath b = nv_base(arch, "ampere", -132);
    v.push_back(nv(b, "fp16", kBinary16, kBinary16, 8, 24, 8));
    v.push_back(nv(b, "bf16", kBfloat16, kBfloat16, 8, 24, 8));
    v.push_back(nv(b, "tf32", kTf32, kTf32, 4, 24, 4));
    if (std::string(arch) == "a100") v.push_back(nv_fp64(b));
  }
  {  // Ada (L40S)
    Datapath b = nv_base("l40s", "ada", -132);
    v.push_back(nv(b, "fp16", kBinary16, kBinary16, 8, 24, 8));
    v.push_back(nv(b, "bf16", kBfloat16, kBfloat16, 8, 24, 8));
    v.push_back(nv(b, "tf32", kTf32, kTf32, 4, 24, 4));
    add_fp8(v, b, 16, 13, 32, 13, "mma.sync");
  }
  for (const char* arch : {"h100", "h200"}) {  // Hopper
    Datapath b = nv_base(arch, "hopper", -133);
    v.push_back(nv(b, "fp16", kBinary16, kBinary16, 16, 25, 16));
    v.push_back(nv(b, "bf16", kBfloat16, kBfloat16, 16, 25, 16));
    v.push_back(nv(b, "tf32", kTf32, kTf32, 8, 25, 8));
    add_fp8(v, b, 32, 13, 32, 13, "wgmma");  // the fp32-output data: wgmma with c = 0
    add_fp8_hmma(v, b);                      // the fp16-output data: mma.sync
    v.push_back(nv_fp64(b));
  }
  {  // Blackwell datacentre
    Datapath b = nv_base("b200", "blackwell", -133);
    v.push_back(nv(b, "fp16", kBinary16, kBinary16, 16, 25, 16));
    v.push_back(nv(b, "bf16", kBfloat16, kBfloat16, 16, 25, 16));
    v.push_back(nv(b, "tf32", kTf32, kTf32, 8, 25, 8));
    add_fp8_hmma(v, b);                        // mma.sync: all the B200 hardware data
    v.push_back(nv_fp64(b));
    // tcgen05 kind::f8f6f4 (T-FDPA, L = 32, F = 25): published description (MMA-Sim), no data
    // here; fp6/fp4 elements as in ../shared/spec/block-scaled.md (docs/decisions.md)
    add_fp8(v, b, 32, 25, 32, -1, "tcgen05", true);
    add_blockscaled(v, b, "tcgen05");  // kind::mxf8f6f4, mxf4, mxf4nvf4 .block_scale
  }
  {  // Blackwell workstation (sm_120): no hardware data here; published description.
    Datapath b = nv_base("rtxpro6000", "blackwell", -133);
    b.instr_classes = "mma";  // sm_120: mma.sync only (no wgmma, no tcgen05)
    v.push_back(nv(b, "fp16", kBinary16, kBinary16, 16, 25, 16));
    v.push_back(nv(b, "bf16", kBfloat16, kBfloat16, 16, 25, 16));
    // mma.sync kind::f8f6f4 (m16n8k32): published description, no data here
    add_fp8(v, b, 32, 25, 32, -1, "mma.sync", true);
    add_blockscaled(v, b, "mma.sync");  // mma.sync ... block_scale (sm_120a)
  }
  for (const Datapath& d : v) validate_datapath(d);
  return v;
}

/// The fp16-output variant of an NVIDIA preset: c rounded to binary16 first, every group's
/// result rounded (RNE) to binary16 and fed back as the next c.
Datapath fp16_output(Datapath d) {
  d.out_fmt = kBinary16;
  d.out_round = Rounding::RNE;
  d.out_prec = -1;
  d.overflow_to_inf = false;
  d.nan_invalid = kNvNaN16;
  d.nan_propagate = kNvNaN16;
  return d;
}

}  // namespace

const std::vector<Datapath>& all_presets() {
  static const std::vector<Datapath> v = build();
  return v;
}

std::vector<std::string> arch_names() {
  std::vector<std::string> n;
  for (const Datapath& d : all_presets())
    if (std::find(n.begin(), n.end(), d.arch) == n.end()) n.push_back(d.arch);
  return n;
}

std::vector<std::string> types_of(const std::string& arch) {
  std::vector<std::string> t;
  for (const Datapath& d : all_presets())
    if (d.arch == arch && std::find(t.begin(), t.end(), d.type) == t.end()) t.push_back(d.type);
  return t;
}

namespace {
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}
std::string canonical_type(const std::string& t) {
  // "e4m3,e4m3" -> "e4m3"; "bf16_1k" is bf16 on CDNA3 (the only bf16 instructions there).
  const auto comma = t.find(',');
  if (comma != std::string::npos && t.substr(0, comma) == t.substr(comma + 1))
    return t.substr(0, comma);
  return t;
}
}  // namespace

std::vector<std::string> variants_of(const std::string& arch, const std::string& type) {
  std::vector<std::string> r;
  const std::string t = canonical_type(type);
  for (const Datapath& d : all_presets())
    if (d.arch == arch && d.type == t && !d.variant.empty()) r.push_back(d.variant);
  return r;
}

Datapath find_preset(const std::string& arch, const std::string& type_in, const std::string& out,
                     const std::string& variant) {
  const std::vector<std::string> archs = arch_names();
  if (std::find(archs.begin(), archs.end(), arch) == archs.end())
    throw std::invalid_argument("unknown architecture '" + arch + "' (known: " + join(archs) + ")");
  std::string type = canonical_type(type_in);
  if (type == "bf16_1k") {
    bool preset = false, instr = false;
    for (const Datapath& d : all_presets()) preset |= d.arch == arch && d.type == "bf16_1k";
    for (const Instruction* in : instructions_for(arch)) instr |= in->type() == "bf16_1k";
    // CDNA3: the _1k instructions are its only bf16 ones, and the bf16 preset is theirs; an
    // architecture without bf16_1k instructions (CDNA1, NVIDIA) has no such type.
    if (!preset && instr) type = "bf16";
  }
  std::vector<const Datapath*> cand;
  for (const Datapath& d : all_presets())
    if (d.arch == arch && d.type == type) cand.push_back(&d);
  if (cand.empty())
    throw std::invalid_argument("architecture '" + arch + "' has no input type '" + type_in +
                                "' (it has: " + join(types_of(arch)) + ")");
  const bool want16 = out == "fp16" || out == "binary16";
  const Datapath* hit = cand[0];  // table order: the first is the default
  if (!variant.empty()) {
    hit = nullptr;
    for (const Datapath* d : cand)
      if (d->variant == variant) hit = d;
    if (!hit)
      throw std::invalid_argument("preset " + arch + "/" + type + " has no variant '" + variant +
                                  "' (it has: " + join(variants_of(arch, type)) + ")");
  } else if (want16) {
    // The public fp16-output hardware data of every GPU comes from mma.sync.
    for (const Datapath* d : cand)
      if (d->variant == "mma.sync") { hit = d; break; }
  }
  Datapath d = *hit;
  if (out.empty() || out == d.out_fmt.name || (out == "fp32" && d.out_fmt == kBinary32) ||
      (out == "fp64" && d.out_fmt == kBinary64))
    return d;
  const bool has16 = d.half_out;
  if (want16 && has16) return fp16_output(d);
  throw std::invalid_argument("preset " + d.name() + " has no output type '" + out +
                              "' (it has: " + (d.out_fmt == kBinary64 ? "fp64" : "fp32") +
                              (has16 ? ", fp16" : "") + ")");
}

}  // namespace mc
