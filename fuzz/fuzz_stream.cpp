// fuzz_stream: the streaming validation engines, stream_files (core/include/matcore/validate.hpp):
// the mapped grid engine and the general engine it falls back to.
//   byte 0: the preset (index into a table of every (architecture, type) of all_presets())
//   byte 1: bit 0: threads 1 / 2; bit 1: write the model's d to an output file; bit 2: zero_c;
//           bit 3: no d file (nothing compared); bits 4-7: keep (0..15)
//   byte 2: expect_k (mc_fuzz::expect_k: 0..64, or 2^16 / 2^20 for the bytes 254 / 255)
//   rest  : the a, b, c, d, sa and sb files, separated by '|' (missing parts are empty files)
// mc::InputError is the expected error path; any other exception, crash or hang is a bug.
#include <string>
#include <utility>
#include <vector>

#include "fuzz_common.hpp"
#include "matcore/presets.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"

namespace {

std::vector<std::pair<std::string, std::string>> preset_table() {
  std::vector<std::pair<std::string, std::string>> t;
  for (const mc::Datapath& d : mc::all_presets()) {
    const std::pair<std::string, std::string> e{d.arch, d.type};
    bool seen = false;
    for (const auto& x : t) seen |= x == e;
    if (!seen) t.push_back(e);
  }
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const mc_fuzz::TempFile fa("a"), fb("b"), fc("c"), fd("d"), fo("out"), fsa("sa"), fsb("sb");
  static const auto table = preset_table();
  mc_fuzz::Input in{data, size};
  const auto& pt = table[in.byte() % table.size()];
  const mc::Datapath dp = mc::find_preset(pt.first, pt.second);
  const uint8_t flags = in.byte();
  const unsigned threads = (flags & 1) ? 2 : 1;
  const bool want_out = flags & 2, zero_c = flags & 4, no_d = flags & 8;
  const size_t keep = flags >> 4;
  const int expect_k = mc_fuzz::expect_k(in.byte());
  const std::string rest = in.rest();
  std::string part[6];  // a|b|c|d|sa|sb (the scale files: block-scaled presets)
  for (size_t i = 0, k = 0; i < rest.size(); ++i) {
    if (rest[i] == '|' && k < 5) ++k;
    else part[k] += rest[i];
  }
  fa.write(part[0]);
  fb.write(part[1]);
  fc.write(part[2]);
  fd.write(part[3]);
  fsa.write(part[4]);
  fsb.write(part[5]);
  const mc::ScaleFiles sf = dp.scaled() ? mc::ScaleFiles{fsa.path, fsb.path} : mc::ScaleFiles{};
  try {
    const mc::StreamResult r =
        mc::stream_files(dp, fa.path, fb.path, fc.path, no_d ? "" : fd.path,
                         want_out ? fo.path : "", expect_k, zero_c, threads, keep, false, sf);
    if (r.first.size() > keep || r.mismatches > r.n) __builtin_trap();
    if (no_d && r.mismatches) __builtin_trap();
  } catch (const mc::InputError&) {
  }
  return 0;
}
