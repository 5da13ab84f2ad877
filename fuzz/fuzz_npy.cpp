// fuzz_npy: the binary form's reader (NpyArray, core/include/matcore/npy.hpp) on arbitrary file
// contents: the header (magic, version, length, descr, fortran_order, shape) and the data length.
// mc::InputError is the expected error path; any other exception, crash or hang is a bug, and
// so is an accepted array whose elements lie outside the file (ASan sees the read).
#include <vector>

#include "fuzz_common.hpp"
#include "matcore/npy.hpp"
#include "matcore/vectors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const mc_fuzz::TempFile file("npy");
  file.write(data, size);
  try {
    const mc::NpyArray a(file.path);
    const uint64_t n = a.size() < 4096 ? a.size() : 4096;
    std::vector<uint64_t> v(n);
    std::vector<uint32_t> w(n);
    a.get(0, n, v.data());
    a.get(0, n, w.data());
    if (a.size()) (void)a.at(a.size() - 1);
    if (a.word() != 1 && a.word() != 2 && a.word() != 4 && a.word() != 8) __builtin_trap();
  } catch (const mc::InputError&) {
  }
  return 0;
}
