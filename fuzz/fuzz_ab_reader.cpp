// fuzz_ab_reader: read_ab_file / ab_operand / read_cd_file (core/include/matcore/vectors.hpp)
// on arbitrary file contents.
//   byte 0: the input format (index into format_names()) and, bit 7, the c/d width (32 / 64)
//   byte 1: expect_k (mc_fuzz::expect_k: 0 = any K, 1..64, or 2^16 / 2^20 for the bytes 254 / 255)
//   rest  : the file
// mc::InputError is the expected error path; any other exception, crash or hang is a bug.
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "matcore/format.hpp"
#include "matcore/vectors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const mc_fuzz::TempFile file("ab");
  static const std::vector<std::string> names = mc::format_names();
  mc_fuzz::Input in{data, size};
  const uint8_t b0 = in.byte();
  const mc::Format& fmt = mc::format_by_name(names[(b0 & 0x7f) % names.size()]);
  const int cd_width = (b0 & 0x80) ? 64 : 32;
  const int expect_k = mc_fuzz::expect_k(in.byte());
  file.write(in.p, in.n);
  try {
    const mc::AbFile ab = mc::read_ab_file(file.path, expect_k, fmt);
    if (expect_k > 0 && ab.K != expect_k) __builtin_trap();
    if (ab.K > 0 && ab.v.size() % static_cast<size_t>(ab.K) != 0) __builtin_trap();
    // every value as an operand, with both ingest rules the presets use
    for (size_t i = 0; i < ab.v.size() && i < 256; ++i) {
      for (mc::Rounding r : {mc::Rounding::RNE, mc::Rounding::RTZ}) {
        try {
          mc::ab_operand(fmt, r, ab, i, "value");
        } catch (const mc::InputError&) {
        }
      }
    }
  } catch (const mc::InputError&) {
  }
  try {
    mc::read_cd_file(file.path, cd_width);
  } catch (const mc::InputError&) {
  }
  return 0;
}
