// matcore: the explain engine (see explain.hpp).
#include "matcore/explain.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "matcore/model.hpp"
#include "matcore/options.hpp"
#include "matcore/presets.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"

namespace mc {

namespace {

std::string num(int v) { return v == kNone ? "none" : std::to_string(v); }
std::string yn(bool b) { return b ? "true" : "false"; }
const char* adder_name(AdderKind k) {
  switch (k) {
    case AdderKind::Exact: return "exact";
    case AdderKind::Pairwise: return "pairwise";
    default: return "fused";
  }
}
const char* align_name(AlignRound r) { return r == AlignRound::RD ? "RD" : "truncate"; }

}  // namespace

std::vector<Variation> single_variations(const Datapath& dp, int span) {
  std::vector<Variation> out;
  auto add = [&](const std::string& param, const std::string& from, const std::string& to, Datapath v) {
    if (from == to) return;
    try {
      validate_datapath(v);
    } catch (const std::invalid_argument&) {
      return;
    }
    out.push_back(Variation{param, from, to, std::move(v)});
  };
  auto int_pm = [&](const char* name, int Datapath::*f, int lo) {
    for (int d = -span; d <= span; ++d) {
      if (d == 0 || dp.*f + d < lo) continue;
      Datapath v = dp;
      v.*f += d;
      add(name, num(dp.*f), num(v.*f), v);
    }
  };
  // an integer limit that may be kNone: +-span, and none <-> `dflt`
  auto limit = [&](const char* name, int Datapath::*f, int dflt) {
    if (dp.*f == kNone) {
      Datapath v = dp;
      v.*f = dflt;
      add(name, "none", num(dflt), v);
      return;
    }
    int_pm(name, f, INT_MIN + 1);
    Datapath v = dp;
    v.*f = kNone;
    add(name, num(dp.*f), "none", v);
  };
  auto toggle = [&](const char* name, bool Datapath::*f) {
    Datapath v = dp;
    v.*f = !(v.*f);
    add(name, yn(dp.*f), yn(v.*f), v);
  };
  const Rounding modes[] = {Rounding::RNE, Rounding::RTZ, Rounding::RD, Rounding::RU, Rounding::RNA};

  // aligner / fixed-point widths
  int_pm("frac_bits", &Datapath::frac_bits, 0);
  int_pm("partial_frac", &Datapath::partial_frac, 0);
  int_pm("c_frac", &Datapath::c_frac, 0);
  int_pm("sum_frac", &Datapath::sum_frac, 0);
  int_pm("acc_frac", &Datapath::acc_frac, 0);
  // rounding mode of each stage
  for (Rounding r : modes) {
    Datapath v = dp;
    v.out_round = r;
    add("out_round", to_string(dp.out_round), to_string(r), v);
  }
  {
    Datapath v = dp;
    v.prod_align = dp.prod_align == AlignRound::RD ? AlignRound::Truncate : AlignRound::RD;
    add("prod_align", align_name(dp.prod_align), align_name(v.prod_align), v);
  }
  for (Rounding r : modes) {
    Datapath v = dp;
    v.c_final_round = r;
    if (dp.c_final_add) add("c_final_round", to_string(dp.c_final_round), to_string(r), v);
  }
  // structure
  for (int n = 1; n <= 64; n *= 2) {
    Datapath v = dp;
    v.n_fma = n;
    add("n_fma", std::to_string(dp.n_fma), std::to_string(n), v);
  }
  for (AdderKind k : {AdderKind::Exact, AdderKind::Pairwise, AdderKind::Fused}) {
    Datapath v = dp;
    v.adder = k;
    add("adder", adder_name(dp.adder), adder_name(k), v);
  }
  toggle("late_c", &Datapath::late_c);
  {
    Datapath v = dp;
    v.interleave = dp.interleave == 2 ? 1 : 2;
    add("interleave", std::to_string(dp.interleave), std::to_string(v.interleave), v);
  }
  toggle("pair_interleave", &Datapath::pair_interleave);
  toggle("c_final_add", &Datapath::c_final_add);
  // limits
  limit("c_zero_exp", &Datapath::c_zero_exp, dp.out_fmt.emin());
  limit("emin_lim", &Datapath::emin_lim, dp.out_fmt.emin());
  limit("prod_overflow_exp", &Datapath::prod_overflow_exp, dp.out_fmt.emax() + 1);
  limit("c_drop_gap", &Datapath::c_drop_gap, dp.c_frac + 1);
  // subnormals, products, output
  toggle("sub_in", &Datapath::sub_in);
  toggle("sub_out", &Datapath::sub_out);
  toggle("prod_round_out", &Datapath::prod_round_out);
  toggle("late_norm_rd", &Datapath::late_norm_rd);
  toggle("overflow_to_inf", &Datapath::overflow_to_inf);
  toggle("nan_keep_sign", &Datapath::nan_keep_sign);
  {
    const int p = dp.out_prec;
    std::vector<int> to;
    if (p < 0) {
      to = {dp.out_fmt.mbits - 1};
      if (dp.out_fmt.mbits > 13) to.push_back(13);
    } else {
      to = {p - 1, p + 1, -1};
    }
    for (int t : to) {
      if (t < -1 || t > dp.out_fmt.mbits || (t >= 0 && t == dp.out_fmt.mbits)) continue;
      Datapath v = dp;
      v.out_prec = t;
      add("out_prec", p < 0 ? "all" : std::to_string(p), t < 0 ? "all" : std::to_string(t), v);
    }
  }
  return out;
}

uint64_t stored_result(const Datapath& dp, const ExplainSample& s, Trace* trace) {
  return widen_result(dp, dot(dp, s.a.data(), s.b.data(), static_cast<int>(s.a.size()), s.c, trace));
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

uint64_t hex_token(const std::string& t, const std::string& where) {
  std::string s = t;
  if (s.rfind("0x", 0) == 0 || s.rfind("0X", 0) == 0) s = s.substr(2);
  if (s.empty() || s.size() > 16 || s.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    throw std::invalid_argument(where + ": '" + t + "' is not a hex bit pattern");
  return std::stoull(s, nullptr, 16);
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream ss(line);
  std::vector<std::string> w;
  std::string x;
  while (ss >> x) w.push_back(x);
  return w;
}

}  // namespace

std::vector<ExplainSample> parse_mismatch_list(const Datapath& dp, std::istream& in) {
  std::vector<ExplainSample> out;
  std::string line;
  int ln = 0;
  ExplainSample cur;
  int have = 0;  // bit 0: header, 1: a, 2: b, 3: c
  auto flush = [&] {
    if (have == 0) return;
    if (have != 15)
      throw std::invalid_argument("mismatch list: sample " + std::to_string(cur.index) +
                                  " lacks its a:, b: or c: line");
    if (cur.a.size() != cur.b.size())
      throw std::invalid_argument("mismatch list: sample " + std::to_string(cur.index) +
                                  ": a and b have different lengths");
    out.push_back(cur);
    cur = ExplainSample{};
    have = 0;
  };
  while (std::getline(in, line)) {
    ++ln;
    const std::string where = "mismatch list line " + std::to_string(ln);
    const std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    if (w[0] == "mismatch" && w.size() >= 3 && w[1] == "sample") {
      flush();
      cur.index = std::stoull(w[2]);
      auto it = std::find(w.begin(), w.end(), "hardware");
      if (it == w.end() || it + 1 == w.end()) throw std::invalid_argument(where + ": no 'hardware 0x...' field");
      cur.observed = hex_token(*(it + 1), where);
      have = 1;
    } else if (have && (w[0] == "a:" || w[0] == "b:")) {
      std::vector<uint64_t>& v = w[0] == "a:" ? cur.a : cur.b;
      for (size_t i = 1; i < w.size(); ++i) v.push_back(hex_token(w[i], where));
      have |= w[0] == "a:" ? 2 : 4;
    } else if (have && w[0] == "c:" && w.size() == 2) {
      cur.c = hex_token(w[1], where);
      have |= 8;
    }
    // other lines (progress, summary "samples=..."): ignored
  }
  flush();
  (void)dp;
  return out;
}

std::vector<ExplainSample> load_dir_samples(const Datapath& dp, const std::string& dir,
                                            const std::vector<uint64_t>& idx, bool need_d) {
  const int w = stored_width(dp.a_fmt);
  const AbFile A = read_ab_file(dir + "/a.txt", 0, dp.a_fmt);
  const AbFile B = read_ab_file(dir + "/b.txt", A.K, dp.b_fmt);
  const std::vector<uint64_t> C = read_cd_file(dir + "/c.txt", w);
  std::vector<uint64_t> D;
  const std::string dpath = dir + "/d.txt";
  if (need_d || ::access(dpath.c_str(), R_OK) == 0) D = read_cd_file(dpath, stored_width(dp.out_fmt));
  std::vector<ExplainSample> out;
  for (uint64_t i : idx) {
    if (i >= A.samples() || i >= B.samples() || i >= C.size() || (need_d && i >= D.size()))
      throw InputError(dir + ": sample " + std::to_string(i) + " does not exist (" +
                       std::to_string(A.samples()) + " samples)");
    ExplainSample s;
    s.index = i;
    for (int k = 0; k < A.K; ++k) {
      s.a.push_back(ab_operand(dp.a_fmt, dp.ingest, A, i * A.K + k, dir + "/a.txt:" + std::to_string(i + 1)));
      s.b.push_back(ab_operand(dp.b_fmt, dp.ingest, B, i * A.K + k, dir + "/b.txt:" + std::to_string(i + 1)));
    }
    s.c = w == 64 ? C[i] : c_from_binary32(dp, C[i]);
    if (i < D.size()) s.observed = D[i];
    out.push_back(s);
  }
  return out;
}

// ------------------------------------------------------------------------------------ CLI
namespace {

const char* kExplainUsage =
    "usage: matcore explain --arch NAME --type TA[,TB] [--out fp32|fp16] [--variant V]\n"
    "         (--a V,V,... --b V,V,... [--c V] --d V\n"
    "          | --mismatches FILE       (the output of `matcore validate`; - for stdin)\n"
    "          | --file DIR --samples I,J,...   (DIR/a.txt b.txt c.txt d.txt))\n"
    "         [--span N] [--no-trace] [--all]\n"
    "  Prints the preset's value at every stage and every single-parameter variation of the\n"
    "  preset (widths +-N, default 1; rounding modes; n_fma; c handling; subnormals; limits;\n"
    "  orderings) that reproduces the observed d. --d is the observed d as stored in d files:\n"
    "  a binary32 (binary64) hex pattern, binary16 results widened, or an exact value.\n"
    "  Exit status: 0 some variation reproduces every sample, 1 none does, 2 bad input.\n";

int run_explain(int argc, char** argv) {
  for (int i = 2; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) { std::fputs(kExplainUsage, stdout); return 0; }
  const Options o = parse_options(argc, argv, {"no-trace", "all"},
                                  {"arch", "type", "out", "variant", "a", "b", "c", "d", "mismatches", "file",
                                   "samples", "span"});
  const Datapath dp = find_preset(o.need("arch"), o.need("type"), o.get("out"), o.get("variant"));
  const Format& sf = dp.out_fmt == kBinary64 ? kBinary64 : kBinary32;  // stored d / c format
  std::vector<ExplainSample> samples;
  const int modes = o.has("mismatches") + o.has("file") + o.has("a");
  if (modes != 1) throw std::invalid_argument("give exactly one of --a/--b/--d, --mismatches, --file");
  if (o.has("mismatches")) {
    const std::string f = o.get("mismatches");
    if (f == "-") {
      samples = parse_mismatch_list(dp, std::cin);
    } else {
      std::ifstream in(f);
      if (!in) throw InputError(f + ": cannot open file for reading");
      samples = parse_mismatch_list(dp, in);
    }
    if (samples.empty()) throw InputError(o.get("mismatches") + ": no 'mismatch sample' entries");
  } else if (o.has("file")) {
    std::vector<uint64_t> idx;
    for (const std::string& s : split_commas(o.get("samples", "0"))) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
      if (s.empty() || *end) throw std::invalid_argument("--samples takes 0-based indices separated by commas");
      idx.push_back(v);
    }
    samples = load_dir_samples(dp, o.get("file"), idx, true);
  } else {
    ExplainSample s;
    const auto as = split_commas(o.need("a")), bs = split_commas(o.need("b"));
    if (as.size() != bs.size()) throw std::invalid_argument("--a and --b have different lengths");
    for (size_t i = 0; i < as.size(); ++i) {
      s.a.push_back(parse_input_operand(dp.a_fmt, dp.ingest, as[i]));
      s.b.push_back(parse_input_operand(dp.b_fmt, dp.ingest, bs[i]));
    }
    s.c = parse_operand(sf, o.get("c", "0"));
    if (!(sf == kBinary64)) s.c = c_from_binary32(dp, s.c);
    s.observed = parse_operand(sf, o.need("d"));
    samples.push_back(s);
  }
  int span = 1;
  if (o.has("span")) {
    span = std::atoi(o.get("span").c_str());
    if (span < 1 || span > 16) throw std::invalid_argument("--span must be in 1..16");
  }
  const std::vector<Variation> vars = single_variations(dp, span);
  std::vector<size_t> hits(vars.size(), 0);
  size_t model_ok = 0;
  std::printf("preset %s%s: %zu single-parameter variations\n", dp.name().c_str(),
              dp.variant.empty() ? "" : (" (" + dp.variant + ")").c_str(), vars.size());
  for (const ExplainSample& s : samples) {
    const Explanation e = explain_sample(dp, vars, s);
    std::printf("\nsample %llu: observed 0x%s %s, preset gives 0x%s %s%s\n",
                static_cast<unsigned long long>(s.index), to_hex_bits(sf, s.observed).c_str(),
                to_decimal(sf, s.observed).c_str(), to_hex_bits(sf, e.model).c_str(),
                to_decimal(sf, e.model).c_str(), e.model == s.observed ? " (the preset already agrees)" : "");
    if (e.model == s.observed) ++model_ok;
    if (!o.has("no-trace")) {
      std::printf("  stages of the preset:\n");
      for (const auto& r : e.trace.rows) std::printf("    %-24s %s\n", r.first.c_str(), r.second.c_str());
    }
    std::printf("  variations that reproduce the observed d: %zu\n", e.matching.size());
    for (size_t i : e.matching) {
      std::printf("    %s\n", vars[i].label().c_str());
      ++hits[i];
    }
  }
  if (samples.size() > 1) {
    std::printf("\nover %zu samples (the preset reproduces %zu):\n", samples.size(), model_ok);
    std::vector<size_t> order(vars.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return hits[x] > hits[y]; });
    for (size_t i : order) {
      if (hits[i] == 0 && !o.has("all")) break;
      std::printf("  %4zu/%zu  %s\n", hits[i], samples.size(), vars[i].label().c_str());
    }
  }
  for (size_t h : hits)
    if (h == samples.size()) return 0;
  return 1;
}

}  // namespace

int explain_main(int argc, char** argv) {
  try {
    return run_explain(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matcore explain: error: %s\n%s", e.what(), kExplainUsage);
    return 2;
  }
}

}  // namespace mc
