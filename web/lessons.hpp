// matcore web: the page's lessons. Each is a preset, operands and a sentence on what the
// outcome reveals, drawn from the vector tables the tests use:
//   - the paper's feature-detection vectors of section 4 (tb/vectors/paper_cdna*.pvt, embedded
//     in the WebAssembly file system at /vectors): the first vector of each '# §' section,
//     with the paper's stated d;
//   - the NVIDIA probes of `matcore features` (features.hpp's feature_vectors): the first
//     sample of each probe family explained in docs/features.md, on V100, A100, H100 and B200.
// docs/web.md says how to add one.
#pragma once
#include <cstdint>
#include <string>

#include "matcore/format.hpp"

namespace mcweb {

/// Patterns of f as the command line writes a list of them: "0x3c00,0x0001" (n values at v).
std::string hex_list(const mc::Format& f, const uint64_t* v, size_t n);

/// Every lesson as JSON: [{group, title, text, arch, type, a, b, c, expect, source}, ...].
std::string lessons_json();

}  // namespace mcweb
