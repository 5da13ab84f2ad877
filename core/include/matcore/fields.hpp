// matcore: the field table of a Datapath: one entry per field (name, kind, range, doc, how to
// read and write it as text). Everything that names datapath fields goes through it:
//   - datapath files (TOML, datapath_file.hpp) and `--set key=value`,
//   - `matcore show` and `matcore show --fields` (the reference table in docs/datapath-files.md),
//   - `explain` (the single and paired variations of a datapath),
//   - `features` (the comparison of expected and detected parameters).
// There is no second list of field names.
//
//   text values:  Int     "24"                    Limit  "-126" or the none word ("none" / "all")
//                 Bool    "true" / "false"        Choice one of the listed words ("truncate")
//                 Format  a format name ("fp16")  Bits   hex "0x7fc00000"      Text  any
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "matcore/datapath.hpp"

namespace mc {

enum class FieldKind : uint8_t { Text, Format, Int, Limit, Bool, Choice, Bits };

/// A bad field name or value; the message names the field and the allowed values.
struct FieldError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct Field {
  std::string name;      ///< the Datapath member ("frac_bits")
  std::string section;   ///< "identity", "inputs", "multiplier", "adder", "aligner", ...
  FieldKind kind = FieldKind::Int;
  std::string doc;       ///< one line: what the field does
  long long lo = 0, hi = 0;           ///< Int / Limit: the allowed range
  std::string none_word;              ///< Limit: the word of the "no limit" value
  std::vector<std::string> choices;   ///< Choice: the allowed words
  bool numeric = true;   ///< changes results (compared by `features`, varied by `explain`)
  std::function<std::string(const Datapath&)> get;
  std::function<void(Datapath&, const std::string&)> put;  ///< value already checked
  /// Candidate values near the current one for `explain` (span: +-span for widths); empty
  /// where the field cannot matter for this datapath.
  std::function<std::vector<std::string>(const Datapath&, int)> near;
};

/// Every field, in the order of datapath files (sections as in datapath.hpp).
const std::vector<Field>& datapath_fields();
/// The field called `name`, or nullptr.
const Field* find_field(const std::string& name);
/// "an integer in 0..100", "one of: exact, pairwise, fused", ... (for error messages and docs).
std::string field_allowed(const Field& f);
/// The value of a field as text.
std::string get_field(const Datapath& dp, const std::string& name);
/// Sets a field from text; FieldError ("field 'frac_bits': must be an integer in 0..100 (got
/// 'x')") for an unknown field or a value out of its range. Does not check combinations
/// (validate_datapath does).
void set_field(Datapath& dp, const std::string& name, const std::string& value);
/// Applies "key=value[,key=value...]" (a value may itself hold commas when the next part has no
/// '=': "type=e4m3,e5m2"). FieldError on a part without '='.
void apply_settings(Datapath& dp, const std::string& settings);

/// The reference table of the fields (markdown), as in docs/datapath-files.md, followed by the
/// width relations.
std::string fields_markdown();

/// A width relation between two fields: where `applies`, `wide` should keep at least as many
/// bits as `narrow` or the bits `narrow` keeps are cut later (`why`: where, in the datapath).
struct WidthRelation {
  const char* narrow;  ///< the field whose bits are lost (frac_bits)
  const char* wide;    ///< the field that bounds it (c_frac)
  bool (*applies)(const Datapath&);
  const char* when;    ///< the datapaths it applies to, in words
  const char* why;
};
const std::vector<WidthRelation>& width_relations();
/// Warnings for a design in which one width makes another useless: each names both fields with
/// their values, what is lost and the fix (raise both: explore --sweep A,B=...). Empty: none.
std::vector<std::string> width_warnings(const Datapath& dp);

}  // namespace mc
