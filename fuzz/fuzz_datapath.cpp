// fuzz_datapath: the surfaces that read a datapath's description (issue 25): datapath files,
// --set strings, --sweep strings and explain's mismatch logs, on arbitrary bytes.
//   byte 0 chooses the surface (mod 4), the rest is the text
// mc::InputError and std::invalid_argument (FieldError, the usage errors) are the expected error
// paths; any other exception, crash or hang is a bug. A datapath that loads must write back as
// a file that loads to the same text (what `show` writes always reads back).
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

#include "fuzz_common.hpp"
#include "matcore/datapath_file.hpp"
#include "matcore/explain.hpp"
#include "matcore/explore.hpp"
#include "matcore/fields.hpp"
#include "matcore/presets.hpp"
#include "matcore/vectors.hpp"

namespace {
void round_trip(const mc::Datapath& dp) {
  const std::string text = mc::datapath_to_toml(dp);
  const mc::Datapath back = mc::datapath_from_toml(text, "show.toml");  // must not throw
  if (mc::datapath_to_toml(back) != text) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const mc_fuzz::TempFile file("datapath.toml");
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  static const mc::Datapath base = mc::find_preset("mi300x", "fp16", "", "");
  try {
    switch (data[0] % 4) {
      case 0: {
        file.write(text);
        round_trip(mc::load_datapath_file(file.path));
        break;
      }
      case 1: {
        mc::Datapath dp = base;
        mc::apply_settings(dp, text);
        mc::validate_datapath(dp);
        round_trip(dp);
        break;
      }
      case 2: {
        const auto sw = mc::parse_sweep(text, base);
        if (sw.second.empty() || sw.second.size() > static_cast<size_t>(mc::kMaxSweepValues)) std::abort();
        break;
      }
      default: {
        std::istringstream in(text);
        mc::parse_mismatch_list(base, in);
        break;
      }
    }
  } catch (const mc::InputError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
