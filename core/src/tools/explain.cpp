// matcore: the explain engine (see explain.hpp).
#include "matcore/output.hpp"
#include "matcore/explain.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "matcore/fields.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"
#include "../io/hex.hpp"

namespace mc {

namespace {


}  // namespace

namespace {
/// One variation per candidate value of every numerical field of the field table (fields.hpp):
/// `span_of(field)` is the span its `near` takes. Values that fail validate_datapath are left out.
template <class SpanOf>
std::vector<Variation> variations(const Datapath& dp, SpanOf span_of) {
  std::vector<Variation> out;
  for (const Field& f : datapath_fields()) {
    if (!f.numeric) continue;
    const std::string from = f.get(dp);
    for (const std::string& to : f.near(dp, span_of(f))) {
      if (to == from) continue;
      Datapath v = dp;
      try {
        set_field(v, f.name, to);
        validate_datapath(v);
      } catch (const std::invalid_argument&) {
        continue;
      }
      out.push_back(Variation{f.name, from, to, std::move(v)});
    }
  }
  return out;
}
}  // namespace

std::vector<Variation> single_variations(const Datapath& dp, int span) {
  // widths +-span, each other rounding mode, n_fma over the powers of two, each limit +-span and
  // none <-> a default, each flag toggled
  return variations(dp, [span](const Field&) { return span; });
}

std::vector<Variation> every_value_variations(const Datapath& dp, int span) {
  // every value of the integer fields over their range (limits: +-kWideSpan and none), the
  // other fields' alternatives (a superset of single_variations)
  return variations(dp, [span](const Field& f) {
    constexpr int kWideSpan = 256;
    if (f.kind == FieldKind::Int && f.hi - f.lo <= 2 * kWideSpan) return std::max(span, static_cast<int>(f.hi - f.lo));
    return f.kind == FieldKind::Int || f.kind == FieldKind::Limit ? std::max(span, kWideSpan) : span;
  });
}

std::string compact_labels(const std::vector<Variation>& vars, const std::vector<size_t>& which) {
  // per field: "frac_bits 24 -> 25..88 (64 values)"; other values one by one
  std::string out;
  size_t i = 0;
  while (i < which.size()) {
    const Variation& v0 = vars[which[i]];
    std::vector<std::string> tos;
    size_t j = i;
    for (; j < which.size() && vars[which[j]].param == v0.param; ++j) tos.push_back(vars[which[j]].to);
    std::string vals;
    for (size_t k = 0; k < tos.size();) {  // runs of consecutive integers
      size_t e = k;
      auto is_int = [](const std::string& s) { return !s.empty() && s.find_first_not_of("-0123456789") == std::string::npos; };
      while (e + 1 < tos.size() && is_int(tos[e]) && is_int(tos[e + 1]) && std::stol(tos[e + 1]) == std::stol(tos[e]) + 1) ++e;
      vals += (vals.empty() ? "" : ", ") + (e > k + 1 ? tos[k] + ".." + tos[e] : e == k + 1 ? tos[k] + ", " + tos[e] : tos[k]);
      k = e + 1;
    }
    out += (out.empty() ? "" : "; ") + v0.param + " " + v0.from + " -> " + vals;
    if (tos.size() > 2) out += " (" + std::to_string(tos.size()) + " values)";
    i = j;
  }
  return out;
}

uint64_t stored_result(const Datapath& dp, const ExplainSample& s, Trace* trace) {
  const ScaleRefs r = scale_refs(s.sa, s.sb);
  return widen_result(dp, dot(dp, s.a.data(), s.b.data(), static_cast<int>(s.a.size()), s.c, r, trace));
}

Explanation explain_sample(const Datapath& dp, const std::vector<Variation>& vars, const ExplainSample& s) {
  Explanation e;
  e.model = stored_result(dp, s, &e.trace);
  for (size_t i = 0; i < vars.size(); ++i) {
    uint64_t r;
    try {
      r = stored_result(vars[i].dp, s);
    } catch (const std::exception&) {
      continue;  // a variation outside what the stages support (e.g. a term beyond e_ref)
    }
    if (r == s.observed) e.matching.push_back(i);
  }
  return e;
}

namespace {

/// A hex bit pattern of a `width`-bit value ("0x" optional); wider values are refused.
uint64_t hex_token(const std::string& t, const std::string& where, int width, const std::string& what) {
  std::string s = t;
  if (s.rfind("0x", 0) == 0 || s.rfind("0X", 0) == 0) s = s.substr(2);
  uint64_t v = 0;
  if (!hex::parse_hex(s, v)) throw InputError(where + ": " + what + ": '" + excerpt(t) + "' is not a hex bit pattern");
  if (width < 64 && (v >> width) != 0)
    throw InputError(where + ": " + what + ": '" + excerpt(t) + "' is wider than " + std::to_string(width) +
                     " bits (the format's width)");
  return v;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream ss(line);
  std::vector<std::string> w;
  std::string x;
  while (ss >> x) w.push_back(x);
  return w;
}

}  // namespace

std::vector<ExplainSample> parse_mismatch_list(const Datapath& dp, std::istream& in, const std::string& source) {
  std::vector<ExplainSample> out;
  std::string line;
  int ln = 0;
  ExplainSample cur;
  int have = 0;  // bit 0: header, 1: a, 2: b, 3: c
  int head_ln = 0;  // the line of the current sample's header
  auto flush = [&] {
    if (have == 0) return;
    const std::string at = source + ":" + std::to_string(head_ln) + ": sample " + std::to_string(cur.index);
    if (have != 15) throw std::invalid_argument(at + " lacks its a:, b: or c: line");
    if (cur.a.size() != cur.b.size()) throw std::invalid_argument(at + ": a and b have different lengths");
    out.push_back(cur);
    cur = ExplainSample{};
    have = 0;
  };
  while (std::getline(in, line)) {
    ++ln;
    const std::string where = source + ":" + std::to_string(ln);
    const std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    if (w[0] == "mismatch" && w.size() >= 3 && w[1] == "sample") {
      flush();
      head_ln = ln;
      if (w[2].empty() || w[2].size() > 19 || w[2].find_first_not_of("0123456789") != std::string::npos)
        throw InputError(where + ": sample: '" + excerpt(w[2]) + "' is not a sample index");
      cur.index = std::stoull(w[2]);
      auto it = std::find(w.begin(), w.end(), "hardware");
      if (it == w.end() || it + 1 == w.end()) throw InputError(where + ": no 'hardware 0x...' field");
      cur.observed = hex_token(*(it + 1), where, stored_width(dp.out_fmt), "hardware");
      cur.has_observed = true;
      have = 1;
    } else if (have && (w[0] == "a:" || w[0] == "b:")) {
      std::vector<uint64_t>& v = w[0] == "a:" ? cur.a : cur.b;
      const Format& f = w[0] == "a:" ? dp.a_fmt : dp.b_fmt;
      for (size_t i = 1; i < w.size(); ++i) v.push_back(hex_token(w[i], where, f.width(), w[0].substr(0, 1)));
      have |= w[0] == "a:" ? 2 : 4;
    } else if (have && w[0] == "c:" && w.size() == 2) {
      cur.c = hex_token(w[1], where, dp.out_fmt.width(), "c");
      have |= 8;
    } else if (have && (w[0] == "sa:" || w[0] == "sb:")) {  // block scales (validate prints them)
      std::vector<uint64_t>& v = w[0] == "sa:" ? cur.sa : cur.sb;
      for (size_t i = 1; i < w.size(); ++i) v.push_back(hex_token(w[i], where, dp.scale_fmt.width(), w[0].substr(0, 2)));
    }
    // other lines (progress, summary "samples=..."): ignored
  }
  flush();
  return out;
}

namespace {
/// The file of one role (a, b, c, d) in a sample folder: ROLE.txt (matcore's names), else the
/// hardware sets' ROLE_<gpu>_<type>.txt (../shared/hwdata: a_A100_fp16.txt, d_A100_fp32.txt):
/// the only one, or for d the one of dp's output type (fp16, fp32, fp64). Missing: ROLE.txt
/// (the reader names it).
std::string dir_file(const std::string& dir, const std::string& role, const Datapath& dp) {
  const std::string plain = dir + "/" + role + ".txt";
  if (::access(plain.c_str(), F_OK) == 0) return plain;
  std::vector<std::string> found;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > role.size() + 5 && n.compare(0, role.size() + 1, role + "_") == 0 && n.compare(n.size() - 4, 4, ".txt") == 0)
        found.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  if (found.size() == 1) return dir + "/" + found[0];
  if (found.empty()) return plain;
  const std::string out = dp.out_fmt == kBinary16 ? "fp16" : dp.out_fmt == kBinary64 ? "fp64" : "fp32";
  std::vector<std::string> mine;
  for (const std::string& n : found)
    if (n.size() > out.size() + 5 && n.compare(n.size() - out.size() - 5, out.size() + 5, "_" + out + ".txt") == 0) mine.push_back(n);
  if (mine.size() == 1) return dir + "/" + mine[0];
  std::string list;
  for (const std::string& n : found) list += (list.empty() ? "" : ", ") + n;
  throw InputError(dir + ": several " + role + " files (" + list + ") and none only for the " + out + " output: name "
                   "the sample files a.txt, b.txt, c.txt, d.txt");
}
}  // namespace

std::vector<ExplainSample> load_dir_samples(const Datapath& dp, const std::string& dir,
                                            const std::vector<uint64_t>& idx, bool need_d,
                                            std::vector<std::string>* notes) {
  const int w = stored_width(dp.a_fmt);
  const std::string pa = dir_file(dir, "a", dp), pb = dir_file(dir, "b", dp), pc = dir_file(dir, "c", dp),
                    pd = dir_file(dir, "d", dp);
  check_header(pa, "a", dp.a_fmt);
  check_header(pb, "b", dp.b_fmt);
  const AbFile A = read_ab_file(pa, 0, dp.a_fmt);
  const AbFile B = read_ab_file(pb, A.K, dp.b_fmt);
  std::vector<uint64_t> c_lines;
  const std::vector<uint64_t> C = read_cd_file(pc, w, &c_lines);
  std::vector<uint64_t> D;
  const bool have_d = need_d || ::access(pd.c_str(), F_OK) == 0;
  if (have_d) D = read_cd_file(pd, stored_width(dp.out_fmt));
  const size_t n = A.samples();
  if (B.samples() != n || C.size() != n || (have_d && D.size() != n))
    throw InputError("sample counts differ: " + pa + " has " + std::to_string(n) + ", " + pb + " " +
                     std::to_string(B.samples()) + ", " + pc + " " + std::to_string(C.size()) +
                     (have_d ? ", " + pd + " " + std::to_string(D.size()) : std::string()));
  // block scales: DIR/sa.txt and DIR/sb.txt
  ScaleFile SA, SB;
  const int per = scales_per_sample(dp, A.K);
  if (dp.scaled()) {
    check_header(dir + "/sa.txt", "sa", dp.scale_fmt);
    check_header(dir + "/sb.txt", "sb", dp.scale_fmt);
    SA = read_scale_file(dir + "/sa.txt", per, dp.scale_fmt);
    SB = read_scale_file(dir + "/sb.txt", per, dp.scale_fmt);
    if (SA.samples() != n || SB.samples() != n)
      throw InputError("sample counts differ: " + pa + " has " + std::to_string(n) + ", " + dir + "/sa.txt " +
                       std::to_string(SA.samples()) + ", " + dir + "/sb.txt " + std::to_string(SB.samples()));
  }
  std::vector<ExplainSample> out;
  for (uint64_t i : idx) {
    if (i >= n)
      throw InputError(dir + ": sample " + std::to_string(i) + " does not exist (" + std::to_string(n) +
                       " samples, indices from 0)");
    ExplainSample s;
    s.index = i;
    for (int k = 0; k < A.K; ++k) {
      const std::string value = ": value " + std::to_string(k + 1);
      s.a.push_back(ab_operand(dp.a_fmt, dp.ingest, A, i * A.K + k, pa + ":" + std::to_string(A.line_of(i)) + value));
      s.b.push_back(ab_operand(dp.b_fmt, dp.ingest, B, i * A.K + k, pb + ":" + std::to_string(B.line_of(i)) + value));
    }
    bool rounded = false;
    s.c = c_operand(dp, C[i], w, &rounded);
    if (rounded && notes)
      notes->push_back("c on " + pc + ":" + std::to_string(c_lines[i]) + " rounded (rne) to " + dp.out_fmt.name +
                       ": 0x" + to_hex_bits(dp.out_fmt, s.c) + " (" + to_decimal(dp.out_fmt, s.c) + ")");
    if (have_d) {
      s.observed = D[i];
      s.has_observed = true;
    }
    if (dp.scaled()) {
      s.sa.assign(SA.v.begin() + i * per, SA.v.begin() + (i + 1) * per);
      s.sb.assign(SB.v.begin() + i * per, SB.v.begin() + (i + 1) * per);
    }
    out.push_back(s);
  }
  return out;
}

size_t pair_variations(const Datapath& dp, const std::vector<Variation>& vars,
                       const std::vector<ExplainSample>& samples, std::vector<PairVariation>& out) {
  size_t tried = 0;
  for (size_t i = 0; i < vars.size(); ++i)
    for (size_t j = i + 1; j < vars.size(); ++j) {
      if (vars[i].param == vars[j].param) continue;
      Datapath v = dp;
      try {
        set_field(v, vars[i].param, vars[i].to);
        set_field(v, vars[j].param, vars[j].to);
        validate_datapath(v);
      } catch (const std::invalid_argument&) {
        continue;
      }
      ++tried;
      bool ok = true;
      for (const ExplainSample& s : samples)
        if (stored_result(v, s) != s.observed) {
          ok = false;
          break;
        }
      if (ok) out.push_back(PairVariation{i, j, vars[i].label() + ", " + vars[j].label(), v});
    }
  return tried;
}

}  // namespace mc
