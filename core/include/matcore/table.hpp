// matcore: paper test-vector tables (docs/paper-vector-table.md) and their evaluation.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "matcore/datapath.hpp"

namespace mc {

struct TableCase {
  std::string file;
  int line = 0;
  std::string comment;              ///< the nearest preceding '#' comment
  std::vector<std::string> presets; ///< expanded architecture names
  std::string type;
  int k = 0;                        ///< 0: the preset's k_default
  std::vector<std::pair<int, std::string>> a, b, p;  ///< 1-based index, value text
  std::string c = "0", d;
  bool ambiguous = false;           ///< after a '# AMBIGUOUS' line
};

/// Reads a table; errors name file:line:field.
std::vector<TableCase> read_table(const std::string& path);

struct CaseResult {
  std::string preset;               ///< "mi300x/fp16"
  bool pass = false;
  uint64_t got = 0, want = 0;
  int out_width = 32;
  std::string detail;               ///< inputs in hex and the model trace when it fails
};

/// Evaluates one case on every preset it names. Products p_i are split into a_i * b_i with
/// b_i a power of two (both normal where possible). Expected NaN matches any NaN of that sign.
std::vector<CaseResult> run_case(const TableCase& tc, bool trace_on_fail = true);

/// Builds the operands of a case for one datapath (exposed for the CLI).
void build_operands(const TableCase& tc, const Datapath& dp, std::vector<uint64_t>& a,
                    std::vector<uint64_t>& b, uint64_t& c);

/// Families: "cdna1" -> {"mi100"}, "cdna2" -> {"mi210","mi250"}, "cdna3" -> {"mi300a","mi300x"};
/// any other name is returned as is.
std::vector<std::string> expand_family(const std::string& name);

}  // namespace mc
