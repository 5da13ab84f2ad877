// A small VCD reader for the tests: the signals under the top scope SystemC (the SystemC
// model's VCD, and the RTL engine's, rewritten to the same scope) by their names below it
// ("aligner.sticky"), their widths and value changes.
#pragma once

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "matcore/bits.hpp"
#include "matcore/plan.hpp"

namespace mc_test {

struct Vcd {
  std::map<std::string, std::string> id_of;  ///< name below the top scope SystemC (others: top.name) -> id
  std::map<std::string, int> width;          ///< id -> width
  std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> changes;  ///< id -> (t, bits)
  std::set<std::string> tops;                ///< the top scopes
  std::string timescale;                     ///< the $timescale text, spaces removed ("1ns")
  uint64_t end = 0;

  bool has(const std::string& n) const { return id_of.count(n) != 0; }
  /// Bits (MSB first, zero-extended to the width) of `n` after the changes at time t.
  std::string bits(const std::string& n, uint64_t t) const {
    const std::string& id = id_of.at(n);
    std::string v = "0";
    for (const auto& c : changes.at(id)) {
      if (c.first > t) break;
      v = c.second;
    }
    const int w = width.at(id);
    const char pad = v.size() == 1 && w > 1 && (v[0] == 'x' || v[0] == 'z') ? v[0] : '0';
    if (static_cast<int>(v.size()) < w) v = std::string(w - v.size(), pad) + v;
    return v;
  }
  uint64_t u(const std::string& n, uint64_t t) const { return std::stoull(bits(n, t), nullptr, 2); }
  mc::i128 s(const std::string& n, uint64_t t) const {  // two's complement
    const std::string b = bits(n, t);
    mc::i128 v = 0;
    for (char ch : b) v = v * 2 + (ch == '1');
    if (b[0] == '1') v -= static_cast<mc::i128>(1) << (b.size() - 1) << 1;
    return v;
  }
  int i32(const std::string& n, uint64_t t) const { return static_cast<int>(static_cast<int32_t>(u(n, t))); }
  /// Change times of the signal.
  std::vector<uint64_t> times(const std::string& n) const {
    std::vector<uint64_t> r;
    for (const auto& c : changes.at(id_of.at(n))) r.push_back(c.first);
    return r;
  }
};

inline Vcd read_vcd(const std::string& path) {
  std::ifstream in(path);
  Vcd v;
  std::vector<std::string> scope;
  std::string tok;
  uint64_t t = 0;
  bool defs = true;
  while (in >> tok) {
    if (defs) {
      if (tok == "$scope") {
        std::string kind, name;
        in >> kind >> name;
        if (scope.empty()) v.tops.insert(name);
        scope.push_back(name);
      } else if (tok == "$upscope") {
        scope.pop_back();
      } else if (tok == "$timescale") {
        while (in >> tok && tok != "$end") v.timescale += tok;
      } else if (tok == "$var") {
        std::string type, id, name;
        int w;
        in >> type >> w >> id >> name;
        if (scope.empty()) continue;
        std::string full = scope[0] == "SystemC" ? "" : scope[0] + ".";  // check.d_hw, harness.clk
        for (size_t i = 1; i < scope.size(); ++i) full += scope[i] + ".";
        v.id_of[full + name] = id;
        v.width[id] = w;
        v.changes[id];
      } else if (tok == "$enddefinitions") {
        defs = false;
      }
      continue;
    }
    if (tok[0] == '#') {
      t = std::stoull(tok.substr(1));
      v.end = t;
    } else if (tok[0] == 'b') {
      std::string id;
      in >> id;
      if (v.changes.count(id)) v.changes[id].emplace_back(t, tok.substr(1));
    } else if (tok[0] == '0' || tok[0] == '1' || tok[0] == 'x' || tok[0] == 'z') {
      const std::string id = tok.substr(1);
      if (v.changes.count(id)) v.changes[id].emplace_back(t, tok.substr(0, 1));
    }
  }
  return v;
}

/// The stage whose register holds the signal `name` (its signal_table group; the specials
/// detector's outputs belong to the stage after the multiplier and the scale stages).
inline std::string owner_of(const mc::Datapath& dp, const std::vector<mc::SignalField>& table, const std::string& name) {
  const mc::SignalField* f = mc::find_signal(table, name);
  if (!f) return "";
  if (f->group != "specials") return f->group;
  return mc::plan(dp)[static_cast<size_t>(mc::specials_index(mc::stage_list(dp)))].name;
}

/// A VCD value (binary digits, leading zeros possibly dropped) as an unsigned number.
inline mc::u128 to_u128(const std::string& bits) {
  mc::u128 x = 0;
  for (char ch : bits) x = x * 2 + (ch == '1');
  return x;
}

}  // namespace mc_test
