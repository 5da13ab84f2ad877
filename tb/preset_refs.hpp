// The presets the multi-level testbenches (SystemC, RTL) run: every preset of core (of the
// fp6/fp4 mixes a sample: sampled_out), plus the binary16-output variant of every NVIDIA preset
// with inputs of 8 to 16 bits, each with a test-name key (mi300x_fp16,
// h100_e4m3_mma_sync_out_fp16, ...).
#pragma once
#include <cctype>
#include <stdexcept>
#include <string>
#include <vector>

#include "matcore/presets.hpp"

namespace mc_test {

struct PresetRef {
  std::string key;  ///< mi300x_fp16, h100_e4m3_mma_sync_out_fp16, ...
  mc::Datapath dp;
};

inline std::string sanitize(std::string s) {
  for (char& ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

inline bool is_amd(const mc::Datapath& d) { return d.family.rfind("cdna", 0) == 0; }
/// The AMD presets the paper's vectors (tb/vectors/paper_cdna1..3.pvt) characterise.
inline bool has_paper(const mc::Datapath& d) { return is_amd(d) && d.hypothesis.empty() && !(d.a_fmt == mc::kBinary64); }

/// The OCP MX fp6/fp4 types of the f8f6f4 instructions (21 mixes on each of b200 and rtxpro6000)
/// that the multi-level testbenches leave out: they take a same-format fp4 and fp6 type and one
/// mix, without binary16 output (every fp6/fp4 decoder path: ENC 3 with E2 and E3 exponents).
/// tb/test_fast.cpp and make bench-check compare all of them with the reference.
inline bool sampled_out(const mc::Datapath& d) {
  const std::string k = d.arch + "/" + d.type;
  // CDNA4 hypotheses (the CDNA3 datapaths with OCP, fp6/fp4 and scaled inputs): mi350x is
  // mi355x; one type of each input width, a mix and two scaled types
  if (d.family == "cdna4")
    return k != "mi355x/fp16" && k != "mi355x/e4m3" && k != "mi355x/e2m1" && k != "mi355x/e5m2,e2m3" &&
           k != "mi355x/scale.e4m3.e4m3" && k != "mi355x/scale.e2m1.e3m2";
  if (d.scaled())  // block-scaled: one of each kind and scale
    return k != "b200/mxf8f6f4.e4m3.e4m3" && k != "b200/mxf8f6f4.e2m1.e5m2" && k != "b200/mxf4" &&
           k != "b200/nvfp4" && k != "rtxpro6000/mxf4nvf4.e8m0";
  // NVIDIA fp64 (DMMA): the same FMA chain on a100, h100, h200 and b200; a100's runs
  if (d.type == "fp64" && !is_amd(d)) return d.arch != "a100";
  if (d.a_fmt.width() >= 8 && d.b_fmt.width() >= 8) return false;
  return k != "b200/e2m1" && k != "b200/e3m2" && k != "rtxpro6000/e2m3,e2m1";
}

inline const std::vector<PresetRef>& preset_refs() {
  static const std::vector<PresetRef> v = [] {
    std::vector<PresetRef> r;
    for (const mc::Datapath& d : mc::all_presets()) {
      if (sampled_out(d)) continue;
      std::string k = d.arch + "_" + d.type + (d.variant.empty() ? "" : "_" + d.variant);
      r.push_back(PresetRef{sanitize(k), d});
      if (!is_amd(d) && d.a_fmt.width() <= 16 && d.a_fmt.width() >= 8 && d.b_fmt.width() >= 8) {
        try {
          const mc::Datapath h = mc::find_preset(d.arch, d.type, "fp16", d.variant);
          r.push_back(PresetRef{sanitize(k + "_out_fp16"), h});
        } catch (const std::invalid_argument&) {
          // this input type has no binary16-output instruction
        }
      }
    }
    return r;
  }();
  return v;
}

inline const PresetRef& preset_ref(const std::string& key) {
  for (const PresetRef& p : preset_refs())
    if (p.key == key) return p;
  throw std::invalid_argument("no preset " + key);
}

inline std::vector<std::string> preset_keys() {
  std::vector<std::string> k;
  for (const PresetRef& p : preset_refs()) k.push_back(p.key);
  return k;
}

/// What the RTL testbenches run (and the fast-kernel tests): preset_refs() with one ST-FDPA
/// preset of each structure, the GST-FDPA presets of each scale format (E8M0 groups of 16 in
/// blocks of 32, UE4M3 groups of 16) and one CDNA4 hypothesis.
inline std::vector<std::string> rtl_preset_keys() {
  std::vector<std::string> k;
  // a Verilator build each: of the CDNA4 hypotheses and the scaled types (ST-FDPA: the scaler;
  // GST-FDPA: the grouper), one NVIDIA and one CDNA4 structure, one of each scale format
  for (const PresetRef& p : preset_refs())
    if ((!p.dp.scaled() && p.dp.hypothesis.empty()) || p.key == "b200_mxf8f6f4_e2m1_e5m2_tcgen05" ||
        p.key == "mi355x_scale_e2m1_e3m2" || p.key == "b200_mxf4_tcgen05" || p.key == "b200_nvfp4_tcgen05")
      k.push_back(p.key);
  return k;
}

}  // namespace mc_test
