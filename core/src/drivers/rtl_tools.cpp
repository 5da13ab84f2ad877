// matcore RTL engine: file, cache and temporary-directory helpers (rtl_tools.hpp).
#include "rtl_tools.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "matcore/output.hpp"
#include "matcore/vectors.hpp"

namespace mc {
namespace rtlio {

std::string absolute(const std::string& p) {
  if (p.empty() || p[0] == '/') return p;
  char buf[4096];
  return ::getcwd(buf, sizeof buf) ? std::string(buf) + "/" + p : p;
}


std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path + ": cannot read (" + std::strerror(errno) + ")");
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

bool is_file(const std::string& p) {
  struct stat st{};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void mkdirs(const std::string& p) {
  for (size_t i = 1; i <= p.size(); ++i)
    if (i == p.size() || p[i] == '/') {
      const std::string q = p.substr(0, i);
      if (::mkdir(q.c_str(), 0777) != 0 && errno != EEXIST)
        throw InputError(q + ": cannot create the RTL cache directory (" + std::strerror(errno) + ")");
    }
}

/// The RTL cache (docs/rtl.md): $MATCORE_RTL_CACHE, which must be an existing writable
/// directory; else $XDG_CACHE_HOME/matcore/rtl, ~/.cache/matcore/rtl or /tmp/matcore-rtl-UID,
/// created below a directory that exists. An empty variable counts as unset (never "/").
std::string cache_root() {
  auto set = [](const char* v) -> const char* {
    const char* e = std::getenv(v);
    return e && *e ? e : nullptr;
  };
  if (const char* e = set("MATCORE_RTL_CACHE")) {
    const std::string r = absolute(e);
    struct stat st{};
    if (::stat(r.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw InputError("MATCORE_RTL_CACHE=" + std::string(e) + ": not an existing directory (create it, or unset the variable)");
    if (::access(r.c_str(), W_OK | X_OK) != 0)
      throw InputError("MATCORE_RTL_CACHE=" + std::string(e) + ": not writable (" + std::strerror(errno) + ")");
    return r;
  }
  std::string base, below;
  if (const char* x = set("XDG_CACHE_HOME")) base = absolute(x), below = "/matcore/rtl";
  else if (const char* h = set("HOME")) base = h, below = "/.cache/matcore/rtl";
  else base = "/tmp", below = "/matcore-rtl-" + std::to_string(::getuid());
  struct stat st{};
  if (::stat(base.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError(base + ": the RTL cache would go below it, but it is not a directory (set MATCORE_RTL_CACHE)");
  return base + below;
}

TempDir::TempDir(std::string tmpl) {
  if (!::mkdtemp(&tmpl[0]))
    throw InputError(tmpl.substr(0, tmpl.rfind('/')) + ": cannot create a directory (" + std::strerror(errno) + ")");
  path = tmpl;
  slot = register_temp(path, true);
}
TempDir::~TempDir() {
  if (!keep) run_tool("rm -rf " + shell_quote(path), 600, "rm");
  unregister_temp(slot);
}

std::string tmp_base() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

/// The last lines of a tool's log, for its error message.
std::string log_tail(const std::string& path, size_t lines) {
  std::ifstream f(path, std::ios::binary);
  std::vector<std::string> last;
  std::string l;
  while (std::getline(f, l)) {
    if (l.empty()) continue;
    last.push_back(l.size() > 300 ? l.substr(0, 300) + "..." : l);
    if (last.size() > lines) last.erase(last.begin());
  }
  std::string r;
  for (const std::string& x : last) r += "\n  " + x;
  return r;
}

}  // namespace rtlio
}  // namespace mc
