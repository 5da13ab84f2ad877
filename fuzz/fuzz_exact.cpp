// fuzz_exact: the exact-value parser parse_exact (core/include/matcore/exact.hpp) and the operand
// parsers parse_operand / parse_input_operand (vectors.hpp) on arbitrary text.
//   byte 0: the format (index into format_names()); bit 7: the ingest rule RTZ instead of RNE
//   rest  : the text
// std::invalid_argument (and mc::InputError) are the expected error paths; any other
// exception, crash or hang is a bug.
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "matcore/exact.hpp"
#include "matcore/format.hpp"
#include "matcore/vectors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> names = mc::format_names();
  mc_fuzz::Input in{data, size};
  const uint8_t b0 = in.byte();
  const mc::Format& fmt = mc::format_by_name(names[(b0 & 0x7f) % names.size()]);
  const mc::Rounding ingest = (b0 & 0x80) ? mc::Rounding::RTZ : mc::Rounding::RNE;
  const std::string text = in.rest();
  try {
    const mc::ExactValue v = mc::parse_exact(text);
    bool inexact = false;
    for (mc::Rounding r : {mc::Rounding::RNE, mc::Rounding::RTZ, mc::Rounding::RD, mc::Rounding::RU})
      mc::exact_to_format(fmt, v, r, &inexact);
  } catch (const std::invalid_argument&) {
  }
  try {
    bool inexact = false;
    const uint64_t bits = mc::parse_operand(fmt, text, &inexact);
    if (fmt.width() < 64 && (bits >> fmt.width()) != 0) __builtin_trap();
  } catch (const std::invalid_argument&) {
  } catch (const mc::InputError&) {
  }
  try {
    bool inexact = false;
    const uint64_t bits = mc::parse_input_operand(fmt, ingest, text, &inexact);
    if (fmt.width() < 64 && (bits >> fmt.width()) != 0) __builtin_trap();
  } catch (const std::invalid_argument&) {
  } catch (const mc::InputError&) {
  }
  return 0;
}
