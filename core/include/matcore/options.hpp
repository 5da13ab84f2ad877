// matcore: the command-line options of the programs (matcore, matcore-sc, explain): one parser.
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace mc {

/// A command-line error (unknown option, missing value, bad number): the programs print it with
/// a pointer to --help and exit with status 2.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// The options of one subcommand.
struct Options {
  std::string prefix;                      ///< put before error messages, e.g. "validate: "
  std::map<std::string, std::string> opt;  ///< --key value / --key=value; a flag --key is "1"
  std::vector<std::string> pos;            ///< positional arguments

  bool has(const std::string& k) const { return opt.count(k) != 0; }
  std::string get(const std::string& k, const std::string& def = "") const;
  /// The value of --k; UsageError "missing --k" when it is absent or empty.
  std::string need(const std::string& k) const;
};

/// Parses argv[2..argc) (argv[1] is the subcommand): `flags` take no value, `valued` take one
/// (the next argument, or after '='). Any other "--" argument is an error; an argument without
/// "--" is positional, an error unless `positional`. Errors throw UsageError with `prefix`.
Options parse_options(int argc, char** argv, const std::vector<std::string>& flags,
                      const std::vector<std::string>& valued, bool positional = false,
                      const std::string& prefix = "");

/// An integer option value in [lo, hi]; UsageError naming --what otherwise.
int parse_int_option(const std::string& what, const std::string& s, int lo, int hi);

}  // namespace mc
