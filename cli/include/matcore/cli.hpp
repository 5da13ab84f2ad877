// matcore: the command line of the programs (matcore, matcore-sc, explain), on CLI11.
//
// One Program holds the subcommands; each subcommand has its options (typed, range-checked),
// a one-line description, an example shown by `--help`, and an action. Program::run parses,
// runs the chosen action and maps every error to the exit-status contract of docs/cli.md:
//   0  success          (--help on any subcommand prints its options and an example)
//   1  mismatches       (validate; explain/features when nothing reproduces / parameters differ)
//   2  bad input or usage: unknown options, stray words, missing or malformed values,
//      conflicting options, malformed files (the message names file, line and field), failed
//      writes (the message names the output and the reason), out of memory.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "matcore/datapath.hpp"
#include "matcore/explain.hpp"

namespace mc {

/// A command-line error (bad option value, conflicting options); exit status 2.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

namespace cli {

/// The options that choose a datapath: a preset (--arch, --type, --out, --variant) or a datapath
/// file (--datapath FILE), then field changes (--set key=value[,key=value]).
struct DatapathArgs {
  std::string arch, type, out, variant, file, set;
  /// Adds the options to `app`; one of --arch/--type and --datapath is required unless
  /// `optional`.
  /// With `type_and_file` false only --arch, --out, --variant and --set (mfma: the instruction
  /// names the type).
  void add(CLI::App* app, bool optional = false, bool type_and_file = true);
  /// Whether a datapath was named (a preset or a file).
  bool given() const { return !arch.empty() || !type.empty() || !file.empty(); }
  /// The datapath they name (UsageError with the known names or the allowed values of the
  /// field; InputError for a malformed file). A design of the user's (a file, --set) whose widths
  /// make one another useless gets warnings on stderr (warn_widths).
  Datapath resolve() const;
  /// Applies --set (when given, even empty) to dp and validates the result; UsageError naming
  /// --set.
  void apply_set(Datapath& dp) const;
  /// Whether --set was given (an empty --set '' is given, and refused).
  bool set_given() const { return set_opt_ && set_opt_->count() > 0; }

 private:
  bool optional_ = false;
  CLI::Option* set_opt_ = nullptr;
};

/// "warning: WHAT: ..." on stderr (rank 0) for each broken width relation of dp (fields.hpp,
/// width_warnings).
void warn_widths(const Datapath& dp, const std::string& what);

/// An integer in [lo, hi] (decimal, nothing else on the line); UsageError naming `what`.
long long to_int(const std::string& what, const std::string& s, long long lo, long long hi);
/// Integer option check: "--k must be an integer in 1..1048576 (got 'abc')".
CLI::Validator int_range(long long lo, long long hi);
/// Refuses a value that is itself an option ("--a --b x": --a has no value).
extern const CLI::Validator kNotAnOption;

/// Flags take no value or a truth word ("--zero-c=2" is an error, "--zero-c=no" false), here and in every
/// subcommand of `app`.
void no_flag_values(CLI::App* app);

class Program {
 public:
  Program(const std::string& name, const std::string& description);
  /// A subcommand; `example` is printed at the end of its --help.
  CLI::App* command(const std::string& name, const std::string& description,
                    const std::string& example, std::function<int()> action);
  /// Adds a text option with kNotAnOption.
  static CLI::Option* text(CLI::App* cmd, const std::string& name, std::string& var,
                           const std::string& help);
  CLI::App& app() { return app_; }
  /// Parses argv (argv[0] is the program) and runs the chosen subcommand; returns the exit status.
  int run(int argc, char** argv);

 private:
  std::string name_;
  CLI::App app_;
  std::map<const CLI::App*, std::function<int()>> actions_;
};

}  // namespace cli

/// The samples a command line names (explain, matcore-sc trace): with `file`, the 0-based
/// indices `samples` ("I,J,...") of DIR/a.txt ... (load_dir_samples); otherwise one sample from
/// the --a/--b/--c texts (parse_text_operands). Notes on rounded values go to stderr.
std::vector<ExplainSample> command_line_samples(const Datapath& dp, const std::string& file,
                                                const std::string& samples, bool need_d,
                                                const std::string& a, const std::string& b,
                                                const std::string& c, const std::string& sa = "",
                                                const std::string& sb = "");

/// Adds `explain` to a program (matcore, matcore-sc; cli/commands_explain.cpp): its action
/// returns 0 when some variation reproduces every sample, 1 when none does; bad input is exit
/// status 2. Prints to stdout.
void add_explain_command(cli::Program& p);

}  // namespace mc
