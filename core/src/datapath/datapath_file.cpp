// Datapath files (TOML, on toml++): see datapath_file.hpp.
#include "matcore/output.hpp"
#include "matcore/datapath_file.hpp"

// toml++ header-only in this one translation unit (CMakeLists.txt)
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>
#include <sstream>

#include "matcore/fields.hpp"
#include "matcore/presets.hpp"
#include "matcore/vectors.hpp"

namespace mc {

namespace {

std::string quoted(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r + "\"";
}

std::string where(const std::string& source, const toml::source_region& r) {
  return source + ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column);
}

const char* section_title(const std::string& s) {
  if (s == "identity") return "identity (names; k of the instruction)";
  if (s == "formats") return "formats";
  if (s == "inputs") return "inputs";
  if (s == "multiplier") return "multiplier";
  if (s == "adder") return "adder structure";
  if (s == "aligner") return "aligner (fused adder)";
  if (s == "odd_even") return "odd-even recombination (interleave = 2)";
  if (s == "c_aligner") return "c-aligner (late_c)";
  if (s == "rounder") return "rounder";
  if (s == "specials") return "special values";
  if (s == "order") return "k order and the addend";
  if (s == "scales") return "block scales (OCP MX, NVFP4; docs/blockscaled.md)";
  return "";
}

std::string stem(const std::string& path) {
  std::string s = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  const auto dot = s.rfind('.');
  return dot == std::string::npos || dot == 0 ? s : s.substr(0, dot);
}

}  // namespace

Datapath preset_by_path(const std::string& name) {
  std::string n = name, variant;
  const auto plus = n.find('+');
  if (plus != std::string::npos) {
    variant = n.substr(plus + 1);
    n = n.substr(0, plus);
  }
  const auto s1 = n.find('/');
  if (s1 == std::string::npos)
    throw std::invalid_argument("'" + name + "' is not a preset name arch/type[/out][+variant]");
  const auto s2 = n.find('/', s1 + 1);
  const std::string arch = n.substr(0, s1);
  const std::string type = n.substr(s1 + 1, s2 == std::string::npos ? std::string::npos : s2 - s1 - 1);
  const std::string out = s2 == std::string::npos ? "" : n.substr(s2 + 1);
  return find_preset(arch, type, out, variant);
}

Datapath datapath_by_name(const std::string& name) {
  // a regular file, or a name ending in .toml, is a datapath file; anything else (a directory
  // h100/fp16 included) a preset name, and a directory that is no preset is an error
  struct stat st{};
  const bool exists = ::stat(name.c_str(), &st) == 0;
  if ((exists && S_ISREG(st.st_mode)) || (name.size() > 5 && name.compare(name.size() - 5, 5, ".toml") == 0))
    return load_datapath_file(name);
  if (exists) {
    try {
      return preset_by_path(name);
    } catch (const std::invalid_argument&) {
      return load_datapath_file(name);  // "is a directory", "is not a regular file"
    }
  }
  return preset_by_path(name);
}

std::string datapath_to_toml(const Datapath& dp) {
  std::ostringstream os;
  os << "# matcore datapath " << dp.name() << (dp.variant.empty() ? "" : " (" + dp.variant + ")") << "\n"
     << "# every field: docs/datapath-files.md (or `matcore show --fields`)\n";
  std::string section;
  for (const Field& f : datapath_fields()) {
    if (f.section != section) {
      section = f.section;
      os << "\n# --- " << section_title(section) << "\n";
    }
    const std::string v = f.get(dp);
    std::string val;
    switch (f.kind) {
      case FieldKind::Int:
      case FieldKind::Bool: val = v; break;
      case FieldKind::Limit: val = v == f.none_word ? quoted(v) : v; break;
      default: val = quoted(v); break;
    }
    os << f.name << " = " << val << "  # " << f.doc << "\n";
  }
  return os.str();
}

namespace {

/// ASCII only: every field value is ASCII, and toml++ 3.3 reaches __builtin_unreachable on some
/// non-ASCII bytes (found by fuzz_datapath: " \xef\xbb\xb1"). InputError at the first other byte.
void check_ascii(const std::string& text, const std::string& source) {
  int line = 1, col = 1;
  for (const char ch : text) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (u >= 0x80 || u == 0) {
      char b[8];
      std::snprintf(b, sizeof b, "0x%02X", u);
      throw InputError(source + ":" + std::to_string(line) + ":" + std::to_string(col) + ": byte " + b +
                       " (a datapath file is ASCII text)");
    }
    if (ch == '\n') ++line, col = 1;
    else ++col;
  }
}

/// The text form of a field's TOML value, as set_field takes it; false when the TOML type is
/// not the field's.
bool field_text(const Field& f, const toml::node& node, std::string& v) {
  switch (f.kind) {
    case FieldKind::Int:
      if (!node.is_integer()) return false;
      v = std::to_string(*node.value<int64_t>());
      return true;
    case FieldKind::Limit:  // an integer, or the string of the none word ("none"), not "12"
      if (node.is_integer()) v = std::to_string(*node.value<int64_t>());
      else if (node.is_string() && *node.value<std::string>() == f.none_word) v = f.none_word;
      else return false;
      return true;
    case FieldKind::Bool:
      if (!node.is_boolean()) return false;
      v = *node.value<bool>() ? "true" : "false";
      return true;
    default:
      if (!node.is_string()) return false;
      v = *node.value<std::string>();
      return true;
  }
}

}  // namespace

Datapath datapath_from_toml(const std::string& text, const std::string& source) {
  check_ascii(text, source);
  toml::table tbl;
  try {
    tbl = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw InputError(where(source, e.source()) + ": " + std::string(e.description()));
  }
  Datapath dp;
  bool has_base = false;
  if (const toml::node* b = tbl.get("base")) {
    const auto s = b->value<std::string>();
    if (!s) throw InputError(where(source, b->source()) + ": field 'base': must be a string \"arch/type\"");
    try {
      dp = preset_by_path(*s);
    } catch (const std::invalid_argument& e) {
      throw InputError(where(source, b->source()) + ": field 'base': " + e.what());
    }
    has_base = true;
  } else {
    dp.arch = stem(source);
    dp.type.clear();
    dp.family = "custom";
  }
  bool type_set = false;
  // in the order of the file (a toml::table iterates its keys sorted), so that the first error
  // reported is the first in the file
  std::vector<std::pair<std::string, const toml::node*>> keys;
  for (auto&& [key, node] : tbl) keys.emplace_back(std::string(key.str()), &node);
  std::stable_sort(keys.begin(), keys.end(), [](const auto& x, const auto& y) {
    const auto& p = x.second->source().begin;
    const auto& q = y.second->source().begin;
    return p.line != q.line ? p.line < q.line : p.column < q.column;
  });
  if (keys.empty())
    throw InputError(source + ": no fields (an empty datapath file; start from `matcore show --arch A --type T`)");
  for (const auto& kv : keys) {
    const std::string& k = kv.first;
    const toml::node& node = *kv.second;
    if (k == "base") continue;
    const std::string at = where(source, node.source());
    const Field* f = find_field(k);
    if (!f) {
      std::string known = "base";
      for (const Field& x : datapath_fields()) known += ", " + x.name;
      throw InputError(at + ": unknown field '" + k + "' (fields: " + known + ")");
    }
    std::string v;
    if (!field_text(*f, node, v)) {
      std::ostringstream t;
      t << node.type();
      throw InputError(at + ": field '" + k + "': must be " + field_allowed(*f) + " (got a TOML " + t.str() + ")");
    }
    try {
      set_field(dp, k, v);
    } catch (const FieldError& e) {
      throw InputError(at + ": " + e.what());
    }
    if (k == "type") type_set = true;
  }
  if (!has_base && !type_set)
    dp.type = dp.a_fmt == dp.b_fmt ? dp.a_fmt.name : dp.a_fmt.name + "," + dp.b_fmt.name;
  try {
    validate_datapath(dp);
  } catch (const std::invalid_argument& e) {
    throw InputError(source + ": " + e.what());
  }
  return dp;
}

Datapath load_datapath_file(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(path + ": cannot open datapath file (" + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory (a datapath file is expected)");
  if (!S_ISREG(st.st_mode))
    throw InputError(path + ": is not a regular file (a pipe or device; a datapath file is expected)");
  if (st.st_size == 0) throw InputError(path + ": is empty (a datapath file is expected)");
  if (st.st_size > (1 << 20)) throw InputError(path + ": is over 1 MiB (a datapath file is a page of TOML)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open datapath file (" + std::strerror(errno) + ")");
  note_input(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": read error");
  return datapath_from_toml(ss.str(), path);
}

}  // namespace mc
