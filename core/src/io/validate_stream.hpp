// Internal to the streaming validation (validate.cpp: the grid engine for well-formed files and
// the dispatch; validate_general.cpp: the general line-by-line engine with precise errors).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "matcore/validate.hpp"
#include "hex.hpp"

namespace mc::vstream {

/// MPI: the ranks' results of their sample ranges merged into the result of one process
/// (counts summed, first mismatches in sample order); the result itself in one process.
StreamResult merge_ranks(const StreamResult& mine, size_t keep);

using hex::hexval;
using hex::kHex;

/// Length of the first token of a line.
inline size_t first_token_len(const char* s, size_t n) {
  size_t i = 0;
  while (i < n && (s[i] == ' ' || s[i] == '\t')) ++i;
  size_t j = i;
  while (j < n && s[j] != ' ' && s[j] != '\t') ++j;
  return j - i;
}

inline int count_tokens(const char* s, size_t n) {
  int k = 0;
  bool in = false;
  for (size_t i = 0; i < n; ++i) {
    const char ch = s[i];
    const bool sp = ch == ' ' || ch == '\t';
    if (!sp && !in) ++k;
    in = !sp;
  }
  return k;
}

/// The general engine: any line lengths, comment lines anywhere, precise errors (file, line,
/// field). The arguments are stream_files'.
StreamResult stream_general(const Datapath& dp, const std::string& pa, const std::string& pb,
                            const std::string& pc, const std::string& pd, const std::string& out,
                            int expect_k, bool zero_c, unsigned threads, size_t keep, bool progress);

}  // namespace mc::vstream
