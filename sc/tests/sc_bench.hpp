// Shared helpers of the SystemC tests: the list of presets (every preset of core, plus the
// binary16-output variant of every NVIDIA preset with inputs of at most 16 bits), one
// DatapathTop per preset, and a runner that compares the SystemC results with mc::dot.
//
// SystemC elaborates once per process and a top cannot be added after sc_start. So the first
// use builds the tops of EVERY preset at once (about 0.1 s); each top has its own gated clock,
// so idle tops cost nothing and the tests pass both one per process (ctest) and all together.
#pragma once
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "matcore/fast.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/validate.hpp"
#include "matcore_sc/top.hpp"
#include "preset_refs.hpp"
#include "sampled.hpp"

namespace scb {

using mc_test::PresetRef;
using mc_test::has_paper;
using mc_test::is_amd;
using mc_test::sanitize;
inline const std::vector<PresetRef>& sc_presets() { return mc_test::preset_refs(); }

inline mcsc::DatapathTop& top_for(const std::string& key) {
  static std::map<std::string, mcsc::DatapathTop*> tops;
  if (tops.empty())
    for (const PresetRef& p : sc_presets())
      tops[p.key] = new mcsc::DatapathTop(("top_" + p.key).c_str(), p.dp);
  return *tops.at(key);
}

using mc_test::Sample;

/// Runs the samples through the top (in chunks), compares d and the widened d with the fast
/// kernels (mc::FastDot, equal to mc::dot: tb/test_fast.cpp, make bench-check).
/// Returns the number of mismatches; `first` describes the first one.
inline size_t compare_with_dot(mcsc::DatapathTop& top, const std::vector<Sample>& s, std::string* first) {
  const mc::Datapath& dp = top.datapath();
  const mc::FastDot fd(dp);  // the fast kernels (fast.hpp), themselves checked against mc::dot
  size_t bad = 0;
  const size_t chunk = 4096;
  for (size_t base = 0; base < s.size(); base += chunk) {
    const size_t n = std::min(chunk, s.size() - base);
    for (size_t i = 0; i < n; ++i) {
      const Sample& x = s[base + i];
      top.push(mcsc::Job{static_cast<uint32_t>(base + i), x.a, x.b, x.c, x.sa, x.sb});
    }
    top.run();
    const std::vector<mcsc::Done> done = top.take();
    if (done.size() != n) {
      if (first && first->empty())
        *first = "chunk at " + std::to_string(base) + ": " + std::to_string(done.size()) + " of " +
                 std::to_string(n) + " samples finished";
      bad += n - std::min(n, done.size());
    }
    for (const mcsc::Done& d : done) {
      const Sample& x = s.at(d.tag);
      // block-scaled: the reference stages with the sample's scales (no fast kernel takes them)
      const uint64_t want =
          dp.scaled() ? mc::dot(dp, x.a.data(), x.b.data(), static_cast<int>(x.a.size()), x.c,
                                mc::scale_refs(x.sa, x.sb))
                      : fd(x.a.data(), x.b.data(), static_cast<int>(x.a.size()), x.c);
      if (d.d == want && d.d32 == mc::widen_result(dp, want)) continue;
      if (first && first->empty()) {
        std::string t = "sample " + std::to_string(d.tag) + ": SystemC 0x" + mc::to_hex_bits(dp.out_fmt, d.d) +
                        " fast model 0x" + mc::to_hex_bits(dp.out_fmt, want) + "\n  a:";
        for (uint64_t v : x.a) t += " " + mc::to_hex_bits(dp.a_fmt, v);
        t += "\n  b:";
        for (uint64_t v : x.b) t += " " + mc::to_hex_bits(dp.b_fmt, v);
        t += "\n  c: " + mc::to_hex_bits(dp.out_fmt, x.c);
        for (uint64_t v : x.sa) t += " sa " + mc::to_hex_bits(dp.scale_fmt, v);
        for (uint64_t v : x.sb) t += " sb " + mc::to_hex_bits(dp.scale_fmt, v);
        *first = t;
      }
      ++bad;
    }
  }
  return bad;
}

}  // namespace scb
