#include "matcore/options.hpp"

#include <algorithm>
#include <cstdlib>

namespace mc {

std::string Options::get(const std::string& k, const std::string& def) const {
  auto it = opt.find(k);
  return it == opt.end() ? def : it->second;
}

std::string Options::need(const std::string& k) const {
  auto it = opt.find(k);
  if (it == opt.end() || it->second.empty()) throw UsageError(prefix + "missing --" + k);
  return it->second;
}

Options parse_options(int argc, char** argv, const std::vector<std::string>& flags,
                      const std::vector<std::string>& valued, bool positional,
                      const std::string& prefix) {
  Options o;
  o.prefix = prefix;
  auto known = [](const std::vector<std::string>& v, const std::string& k) {
    return std::find(v.begin(), v.end(), k) != v.end();
  };
  for (int i = 2; i < argc; ++i) {
    const std::string s = argv[i];
    if (s.rfind("--", 0) != 0) {
      if (!positional) throw UsageError(prefix + "unexpected argument '" + s + "'");
      o.pos.push_back(s);
      continue;
    }
    std::string k = s.substr(2), v;
    const size_t eq = k.find('=');
    if (eq != std::string::npos) {
      v = k.substr(eq + 1);
      k = k.substr(0, eq);
    }
    if (known(flags, k)) {
      o.opt[k] = "1";
      continue;
    }
    if (!known(valued, k)) throw UsageError(prefix + "unknown option --" + k);
    if (eq == std::string::npos) {
      if (i + 1 >= argc) throw UsageError(prefix + "--" + k + " needs a value");
      v = argv[++i];
    }
    o.opt[k] = v;
  }
  return o;
}

int parse_int_option(const std::string& what, const std::string& s, int lo, int hi) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || v < lo || v > hi)
    throw UsageError("--" + what + " must be an integer in " + std::to_string(lo) + ".." +
                     std::to_string(hi) + " (got '" + s + "')");
  return static_cast<int>(v);
}

}  // namespace mc
