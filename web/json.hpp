// matcore web: a small JSON writer for the page's answers (web/api.cpp). Only writing: the page
// sends its requests as JavaScript objects (embind's val), never as JSON text.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

namespace mcweb {

/// s as a JSON string literal (quotes included; control characters as \u00XX).
inline std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      o += '\\';
      o += static_cast<char>(ch);
    } else if (ch == '\n') {
      o += "\\n";
    } else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      o += buf;
    } else {
      o += static_cast<char>(ch);
    }
  }
  return o + "\"";
}

/// A JSON object built member by member: Obj().s("name", "x").i("k", 16).str().
class Obj {
 public:
  Obj& raw(const std::string& key, const std::string& json) {
    body_ += (body_.empty() ? "" : ",") + jstr(key) + ":" + json;
    return *this;
  }
  Obj& s(const std::string& key, const std::string& v) { return raw(key, jstr(v)); }
  Obj& i(const std::string& key, long long v) { return raw(key, std::to_string(v)); }
  Obj& b(const std::string& key, bool v) { return raw(key, v ? "true" : "false"); }
  std::string str() const { return "{" + body_ + "}"; }

 private:
  std::string body_;
};

/// A JSON array of already written JSON values.
inline std::string jarr(const std::vector<std::string>& items) {
  std::string o = "[";
  for (size_t i = 0; i < items.size(); ++i) o += (i ? "," : "") + items[i];
  return o + "]";
}

/// A JSON array of strings.
inline std::string jstrs(const std::vector<std::string>& v) {
  std::vector<std::string> q;
  for (const std::string& s : v) q.push_back(jstr(s));
  return jarr(q);
}

}  // namespace mcweb
