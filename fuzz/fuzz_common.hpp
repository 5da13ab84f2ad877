// fuzz/: helpers shared by the libFuzzer targets (docs/fuzzing.md).
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mc_fuzz {

/// A temporary file of this process named `tag` (created once, rewritten for every input;
/// removed at exit).
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& tag) {
    const char* dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/matcore_fuzz_" + std::to_string(::getpid()) +
           "_" + tag;
  }
  ~TempFile() { std::remove(path.c_str()); }
  void write(const uint8_t* p, size_t n) const {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();
    if (n && std::fwrite(p, 1, n, f) != n) std::abort();
    std::fclose(f);
  }
  void write(const std::string& s) const {
    write(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
};

/// The K a harness asks for: 0 (any) to 64, or far more than any fuzz input holds (2^16 for the
/// byte 254, 2^20 for 255): memory must follow the file, never --k.
inline int expect_k(uint8_t b) { return b == 255 ? (1 << 20) : b == 254 ? (1 << 16) : b % 65; }

/// Reads bytes off the front of the fuzz input (0 when it is used up).
struct Input {
  const uint8_t* p;
  size_t n;
  uint8_t byte() {
    if (!n) return 0;
    --n;
    return *p++;
  }
  std::string rest() const { return std::string(reinterpret_cast<const char*>(p), n); }
};

}  // namespace mc_fuzz
