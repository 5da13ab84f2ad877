// matcore: named architecture presets (data only).
#pragma once
#include <string>
#include <vector>

#include "matcore/datapath.hpp"

namespace mc {

/// Every preset: one Datapath per (architecture, input type) with its default output.
const std::vector<Datapath>& all_presets();

/// Architecture names, in table order (mi100 ... rtxpro6000).
std::vector<std::string> arch_names();
/// Input type names an architecture supports.
std::vector<std::string> types_of(const std::string& arch);

/// Looks a preset up. `type` is one input type for a and b ("fp16") or a pair "ta,tb".
/// `out` is "" (the preset's default), "fp32", "fp16" or "fp64". `variant` picks an NVIDIA
/// instruction class where the datapath depends on it ("mma.sync", "wgmma", "tcgen05"); empty:
/// the default (the first in table order; for fp16 output the mma.sync one). Throws
/// std::invalid_argument with the list of valid choices when the combination does not exist.
Datapath find_preset(const std::string& arch, const std::string& type, const std::string& out = "",
                     const std::string& variant = "");
/// The instruction-class variants of a preset ("" entries omitted).
std::vector<std::string> variants_of(const std::string& arch, const std::string& type);

}  // namespace mc
