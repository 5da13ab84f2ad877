// matcore RTL engine, internal: the file, cache and temporary-directory helpers shared by the
// Verilator driver (rtl_driver.cpp) and the yosys cost (rtl_cost.cpp).
#pragma once
#include <cstdint>
#include <string>

namespace mc {
namespace rtlio {

/// An absolute form of p (the builds run verilator and make in other directories).
std::string absolute(const std::string& p);
std::string slurp(const std::string& path);
uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull);
bool is_file(const std::string& p);
/// mkdir -p; InputError naming the path on failure.
void mkdirs(const std::string& p);
/// The RTL cache (docs/rtl.md): $MATCORE_RTL_CACHE, else $XDG_CACHE_HOME/matcore/rtl, ...
std::string cache_root();
/// $TMPDIR or /tmp.
std::string tmp_base();
/// The last lines of a tool's log, for its error message.
std::string log_tail(const std::string& path, size_t lines = 6);

/// A temporary directory that is removed when it goes out of scope and on a signal.
struct TempDir {
  std::string path;
  int slot = -1;
  bool keep = false;
  explicit TempDir(std::string tmpl);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace rtlio
}  // namespace mc
