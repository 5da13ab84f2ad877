// fuzz_table: the paper test-vector table reader read_table and run_case
// (core/include/matcore/table.hpp, docs/paper-vector-table.md) on arbitrary file contents.
//   the whole input is the .pvt file; the first 16 cases it holds are run
// mc::InputError is the expected error path; any other exception, crash or hang is a bug.
#include <vector>

#include "fuzz_common.hpp"
#include "matcore/table.hpp"
#include "matcore/vectors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const mc_fuzz::TempFile file("table.pvt");
  file.write(data, size);
  std::vector<mc::TableCase> cases;
  try {
    cases = mc::read_table(file.path);
  } catch (const mc::InputError&) {
    return 0;
  }
  for (size_t i = 0; i < cases.size() && i < 16; ++i) {
    try {
      mc::run_case(cases[i], i < 2);
    } catch (const mc::InputError&) {
    }
  }
  return 0;
}
