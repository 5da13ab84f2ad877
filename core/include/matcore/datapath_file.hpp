// matcore: datapath files. A datapath is a TOML file of the fields of the field table
// (fields.hpp), optionally starting from a preset:
//
//   # my accumulator: MI300X fp16 with 3 more alignment bits, rounded to nearest
//   base = "mi300x/fp16"          # a preset ("arch/type"; "arch/type/out" or "+variant" too)
//   arch = "mi300x-f27"
//   frac_bits = 27
//   prod_align = "rne"
//
// Integers are TOML integers, flags booleans, everything else strings (a limit may be "none",
// NaN bit patterns are "0x..." strings). Without `base` the fields start from the defaults of
// datapath.hpp (arch = the file's stem, type = the a/b format names). Every key must be a field
// (or `base`); errors name the file, line and field. docs/datapath-files.md documents the format.
#pragma once
#include <string>

#include "matcore/datapath.hpp"

namespace mc {

/// A datapath written as a file: every field, grouped by section, with its doc as a comment.
/// Reading it back gives the same datapath (the round trip is tested for every preset).
std::string datapath_to_toml(const Datapath& dp);

/// Parses datapath-file text; `source` names it in errors ("my.toml:4:13: field 'frac_bits':
/// must be an integer in 0..100 (got 200)"). The result passes validate_datapath. Throws
/// InputError.
Datapath datapath_from_toml(const std::string& text, const std::string& source);

/// Reads a datapath file (InputError when it cannot be read or is malformed).
Datapath load_datapath_file(const std::string& path);

/// A preset named "arch/type[/out][+variant]" (the `base` key of files).
Datapath preset_by_path(const std::string& name);

/// A datapath named on a command line (`--dp`, Python's matcore.datapath): a datapath file when
/// `name` is an existing file or ends in ".toml", else a preset name (preset_by_path).
Datapath datapath_by_name(const std::string& name);

}  // namespace mc
