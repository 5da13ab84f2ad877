// matcore explain: which single-parameter change of a preset reproduces an observed d (the
// command of matcore and matcore-sc; the search itself is core/src/tools/explain.cpp).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "matcore/cli.hpp"
#include "matcore/explain.hpp"
#include "matcore/output.hpp"
#include "matcore/vectors.hpp"

namespace mc {

std::vector<ExplainSample> command_line_samples(const Datapath& dp, const std::string& file,
                                                const std::string& samples, bool need_d,
                                                const std::string& a, const std::string& b,
                                                const std::string& c, const std::string& sa,
                                                const std::string& sb) {
  std::vector<std::string> notes;
  std::vector<ExplainSample> list;
  if (!file.empty()) {
    std::vector<uint64_t> idx;
    for (const std::string& t : split_commas(samples.empty() ? "0" : samples))
      idx.push_back(static_cast<uint64_t>(cli::to_int("--samples", t, 0, (1LL << 62))));
    list = load_dir_samples(dp, file, idx, need_d, &notes);
  } else {
    const TextOperands op = parse_text_operands(dp, a, b, c);
    notes = op.notes;
    ExplainSample s;
    s.a = op.a;
    s.b = op.b;
    s.c = op.c;
    const int K = static_cast<int>(op.a.size());
    if (!dp.scaled() && (!sa.empty() || !sb.empty()))
      throw InputError("--sa/--sb: datapath " + dp.name() + " has no block scales");
    if (!sa.empty()) s.sa = parse_scale_list(dp, sa, K, "--sa");
    if (!sb.empty()) s.sb = parse_scale_list(dp, sb, K, "--sb");
    list.push_back(s);
  }
  for (const std::string& n : notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  return list;
}

// ------------------------------------------------------------------------------------ CLI
namespace {

struct ExplainCmd {
  cli::DatapathArgs dpa;
  std::string a, b, c = "0", d, mismatches, file, samples = "0", sa, sb;
  int span = 1;
  bool no_trace = false, all = false;
  int run() const;
  int summarise(const Datapath& dp, const std::vector<ExplainSample>& list, const std::vector<Variation>& vars,
                const std::vector<size_t>& hits, size_t model_ok) const;
};

int ExplainCmd::run() const {
  const Datapath dp = dpa.resolve();
  const Format& sf = dp.out_fmt == kBinary64 ? kBinary64 : kBinary32;  // stored d / c format
  std::vector<ExplainSample> list;
  const int modes = !mismatches.empty() + !file.empty() + !a.empty();
  if (modes != 1) throw UsageError("give exactly one of --a/--b/--d, --mismatches, --file");
  if (!mismatches.empty()) {
    if (mismatches == "-") {
      list = parse_mismatch_list(dp, std::cin, "standard input");
    } else {
      struct stat st;
      if (::stat(mismatches.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        throw InputError(mismatches + ": is a directory (the output of matcore validate is expected)");
      std::ifstream in(mismatches);
      if (!in) throw InputError(mismatches + ": cannot open file for reading (" + std::strerror(errno) + ")");
      note_input(mismatches);
      list = parse_mismatch_list(dp, in, mismatches);
    }
    if (list.empty()) throw InputError(mismatches + ": no 'mismatch sample' entries");
  } else if (!file.empty()) {
    list = command_line_samples(dp, file, samples, true, a, b, c);
  } else {
    if (b.empty() || d.empty()) throw UsageError("--a needs --b and --d (the observed d)");
    ExplainSample s = command_line_samples(dp, "", "", false, a, b, c, sa, sb)[0];
    bool inexact = false;
    try {
      s.observed = parse_operand(sf, d, &inexact);
    } catch (const std::exception& e) {
      throw InputError(std::string("d: ") + e.what());
    }
    if (inexact) throw InputError("d: '" + excerpt(d) + "' is not a " + sf.name + " value (give the observed d exactly)");
    s.has_observed = true;
    list.push_back(s);
  }
  const std::vector<Variation> vars = every_value_variations(dp, span);
  std::vector<size_t> hits(vars.size(), 0);
  size_t model_ok = 0;
  std::printf("preset %s%s: %zu single-parameter variations (every value of each numeric field; limits +-256)\n",
              dp.name().c_str(), dp.variant.empty() ? "" : (" (" + dp.variant + ")").c_str(), vars.size());
  for (const ExplainSample& s : list) {
    const Explanation e = explain_sample(dp, vars, s);
    std::printf("\nsample %llu: observed 0x%s %s, preset gives 0x%s %s%s\n",
                static_cast<unsigned long long>(s.index), to_hex_bits(sf, s.observed).c_str(),
                to_decimal(sf, s.observed).c_str(), to_hex_bits(sf, e.model).c_str(),
                to_decimal(sf, e.model).c_str(), e.model == s.observed ? " (the preset already agrees)" : "");
    if (e.model == s.observed) ++model_ok;
    if (!no_trace) {
      std::printf("  stages of the preset:\n");
      std::fputs(e.trace.text("    ").c_str(), stdout);
    }
    std::printf("  variations that reproduce the observed d: %zu%s%s\n", e.matching.size(), e.matching.empty() ? "" : ": ",
                compact_labels(vars, e.matching).c_str());
    for (size_t i : e.matching) ++hits[i];
  }
  return summarise(dp, list, vars, hits, model_ok);
}

/// The answers (changes that reproduce every sample), then the partial ones apart with their
/// counts, then pairs when no single change answers, and a plain statement when nothing does.
int ExplainCmd::summarise(const Datapath& dp, const std::vector<ExplainSample>& list, const std::vector<Variation>& vars,
                          const std::vector<size_t>& hits, size_t model_ok) const {
  const size_t n = list.size();
  std::vector<size_t> answers, partial;
  for (size_t i = 0; i < vars.size(); ++i) (hits[i] == n ? answers : partial).push_back(i);
  std::stable_sort(partial.begin(), partial.end(), [&](size_t x, size_t y) { return hits[x] > hits[y]; });
  while (!partial.empty() && hits[partial.back()] == 0 && !all) partial.pop_back();
  std::printf("\nover %zu sample%s (the preset reproduces %zu):\n", n, n == 1 ? "" : "s", model_ok);
  if (!answers.empty()) {
    std::printf("answers: single changes that reproduce all %zu:\n", n);
    for (size_t i : answers) std::printf("  %4zu/%zu  %s\n", hits[i], n, vars[i].label().c_str());
  }
  if (!partial.empty()) {
    std::printf("partial: changes that reproduce some samples only (not an answer on their own):\n");
    for (size_t k = 0; k < partial.size() && (k < 10 || all); ++k)
      std::printf("  %4zu/%zu  %s\n", hits[partial[k]], n, vars[partial[k]].label().c_str());
    if (partial.size() > 10 && !all) std::printf("  ... (%zu more; --all lists them)\n", partial.size() - 10);
  }
  if (!answers.empty()) return 0;
  // No single change explains every sample: the smallest set is searched among the pairs of
  // changes of two different fields, each within +-span of the preset.
  const std::vector<Variation> near = single_variations(dp, span);
  std::vector<PairVariation> pairs;
  const size_t n_pairs = pair_variations(dp, near, list, pairs);
  if (!pairs.empty()) {
    std::printf("answers: no single change reproduces all %zu; these pairs (of %zu tried, each change within +-%d) do:\n",
                n, n_pairs, span);
    for (size_t i = 0; i < pairs.size() && (i < 20 || all); ++i) std::printf("  %s\n", pairs[i].label.c_str());
    if (pairs.size() > 20 && !all) std::printf("  ... (%zu more; --all lists them)\n", pairs.size() - 20);
    return 0;
  }
  std::printf("nothing explains these %zu samples: no single change (%zu tried, every value of each numeric field) and no\n"
              "pair of changes within +-%d (%zu pairs tried) reproduces all of them.%s\n"
              "What to try: more or other mismatches (validate --show N); --span %d for wider pairs; another preset as\n"
              "the base (the unit may be a different structure); the operand layout of the collector (a transposed or\n"
              "shuffled operand gives unrelated d); a datapath file with a structural change (docs/datapath-files.md).\n",
              n, vars.size(), span, n_pairs,
              partial.empty() ? "" : (" The closest single change, " + vars[partial[0]].label() + ", reproduces " +
                                      std::to_string(hits[partial[0]]) + " of " + std::to_string(n) + ".").c_str(),
              std::min(span + 1, 16));
  return 1;
}

}  // namespace

void add_explain_command(cli::Program& p) {
  auto cmd = std::make_shared<ExplainCmd>();
  CLI::App* c = p.command(
      "explain",
      "which single-parameter change of a preset reproduces an observed d (section 5.3 of the paper)",
      "  matcore explain --arch h100 --type fp16 --a 1,2^-12 --b 1,2^-12 --c 0 --d 0x3f800000\n"
      "  matcore validate ... > log; matcore explain --arch h100 --type fp16 --mismatches log\n"
      "  Prints the preset's value at every stage and every single-parameter variation (every value of\n"
      "  each width, rounding modes, n_fma, c handling, subnormals, limits, orderings) that reproduces\n"
      "  the observed d; the answers (changes that reproduce every sample) apart from the partial ones;\n"
      "  pairs when no single change answers. Exit status: 0 an answer, 1 none, 2 bad input.",
      [cmd] { return cmd->run(); });
  cmd->dpa.add(c);
  cli::Program::text(c, "--a", cmd->a, "a values V,V,... (with --b, --c, --d)");
  cli::Program::text(c, "--b", cmd->b, "b values");
  c->add_option("--c", cmd->c, "c (default 0)");
  cli::Program::text(c, "--sa", cmd->sa, "block scales of a (block-scaled types; --file: DIR/sa.txt)");
  cli::Program::text(c, "--sb", cmd->sb, "block scales of b");
  c->add_option("--d", cmd->d, "the observed d as stored in d files: binary32 (binary64) pattern, binary16 results widened");
  CLI::Option* m = cli::Program::text(c, "--mismatches", cmd->mismatches, "the output of matcore validate (- for stdin)");
  CLI::Option* f = cli::Program::text(c, "--file", cmd->file, "directory with a.txt b.txt c.txt d.txt");
  cli::Program::text(c, "--samples", cmd->samples, "0-based sample indices I,J,... of --file (default 0)")->needs(f);
  m->excludes(f);
  c->add_option("--span", cmd->span, "the pairs' changes: widths +-1..N (default 1); single changes try every value")->check(cli::int_range(1, 16));
  c->add_flag("--no-trace", cmd->no_trace, "do not print the stages");
  c->add_flag("--all", cmd->all, "list the variations that reproduce no sample too");
}

}  // namespace mc
