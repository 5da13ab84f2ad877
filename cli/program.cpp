#include "matcore/cli.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>

#include "matcore/datapath_file.hpp"
#include "matcore/fields.hpp"
#include "matcore/output.hpp"
#include "matcore/presets.hpp"
#include "matcore/vectors.hpp"

namespace mc {
namespace cli {

void DatapathArgs::add(CLI::App* app, bool optional, bool type_and_file) {
  optional_ = optional;
  Program::text(app, "--arch", arch, "architecture preset (matcore list archs)");
  if (type_and_file) Program::text(app, "--type", type, "input type TA or pair TA,TB (matcore list types)");
  Program::text(app, "--out", out, "output / accumulator format: fp32 (default), fp16 (NVIDIA fp16/fp8 inputs), fp64");
  Program::text(app, "--variant", variant, "NVIDIA instruction class where it matters: mma.sync, wgmma, tcgen05");
  if (type_and_file)
    Program::text(app, "--datapath", file, "a datapath file (TOML, docs/datapath-files.md) instead of --arch/--type");
  set_opt_ = Program::text(app, "--set", set, "change fields of the datapath: key=value[,key=value] (matcore show --fields)");
}

void DatapathArgs::apply_set(Datapath& dp) const {
  if (!set_given() && set.empty()) return;
  try {
    apply_settings(dp, set);
    validate_datapath(dp);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--set: ") + e.what());
  }
}

Datapath DatapathArgs::resolve() const {
  Datapath dp;
  if (!file.empty()) {
    if (!arch.empty() || !type.empty() || !out.empty() || !variant.empty())
      throw UsageError("--datapath cannot be combined with --arch, --type, --out or --variant "
                       "(set those in the file, or with --set)");
    dp = load_datapath_file(file);
  } else {
    if (arch.empty() || type.empty()) {
      if (!optional_ || !arch.empty() || !type.empty() || set_given())
        throw UsageError("a datapath is needed: --arch A --type T (a preset) or --datapath FILE");
    }
    try {
      dp = find_preset(arch, type, out, variant);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  apply_set(dp);
  if (!file.empty() || set_given()) warn_widths(dp, dp.name());  // a design of the user's
  return dp;
}

void warn_widths(const Datapath& dp, const std::string& what) {
  // under mpirun only the first rank warns (read from the launcher's environment: the tools
  // that link this file without MPI, the collectors, must not need the MPI library)
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* r = std::getenv(v))
      if (std::atoi(r) != 0) return;
  for (const std::string& w : width_warnings(dp)) std::fprintf(stderr, "warning: %s: %s\n", what.c_str(), w.c_str());
}

namespace {
bool parse_int(const std::string& s, long long lo, long long hi, long long& v) {
  char* end = nullptr;
  errno = 0;
  v = std::strtoll(s.c_str(), &end, 10);
  return !s.empty() && !std::isspace(static_cast<unsigned char>(s[0])) && !*end && errno != ERANGE &&
         v >= lo && v <= hi;
}
std::string int_message(const std::string& s, long long lo, long long hi) {
  return "must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + " (got '" +
         excerpt(s) + "')";
}
}  // namespace

long long to_int(const std::string& what, const std::string& s, long long lo, long long hi) {
  long long v;
  if (!parse_int(s, lo, hi, v)) throw UsageError(what + ": " + int_message(s, lo, hi));
  return v;
}

CLI::Validator int_range(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        long long v;
        return parse_int(s, lo, hi, v) ? std::string() : int_message(s, lo, hi);
      },
      "INT in " + std::to_string(lo) + ".." + std::to_string(hi));
}

const CLI::Validator kNotAnOption(
    [](std::string& s) -> std::string {
      if (s.size() > 2 && s[0] == '-' && s[1] == '-')
        return "needs a value (got the option '" + excerpt(s) + "')";
      return std::string();
    },
    "");

Program::Program(const std::string& name, const std::string& description)
    : name_(name), app_(description, name) {
  app_.require_subcommand(1);
  app_.fallthrough(false);
}

CLI::App* Program::command(const std::string& name, const std::string& description,
                           const std::string& example, std::function<int()> action) {
  CLI::App* c = app_.add_subcommand(name, description);
  if (!example.empty()) c->footer("\nexample:\n" + example);
  actions_[c] = std::move(action);
  return c;
}

CLI::Option* Program::text(CLI::App* cmd, const std::string& name, std::string& var,
                           const std::string& help) {
  return cmd->add_option(name, var, help)->check(kNotAnOption);
}

void no_flag_values(CLI::App* app) {
  static const CLI::Validator kFlagWord(
      [](std::string& s) -> std::string {
        std::string l;
        for (char ch : s) l += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        for (const char* w : {"true", "false", "yes", "no", "on", "off", "1", "0"})
          if (l == w) return std::string();
        return "a flag takes no value, or one of true, false, yes, no, on, off, 1, 0 (got '" + excerpt(s) + "')";
      },
      "");
  for (CLI::Option* o : app->get_options())
    if (o->nonpositional() && o->get_expected_min() == 0 && o->get_expected_max() == 0) o->check(kFlagWord);
  for (CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) no_flag_values(sub);
}

namespace {

/// The exit status after standard output has been checked (a write that failed is a failure).
int checked(int rc, const std::string& prefix) {
  try {
    finish_stdout();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", prefix.c_str(), e.what());
    return 2;
  }
  return rc;
}
}  // namespace

int Program::run(int argc, char** argv) {
  install_output_signals();
  IoScope io;  // the files this command reads and writes (output.hpp)
  no_flag_values(&app_);
  const CLI::App* chosen = nullptr;
  auto sub_name = [&]() -> std::string {
    const auto subs = app_.get_subcommands();
    return subs.empty() ? std::string() : subs[0]->get_name();
  };
  try {
    app_.parse(argc, argv);
    const auto subs = app_.get_subcommands();
    chosen = subs.empty() ? nullptr : subs[0];
  } catch (const CLI::CallForHelp&) {
    std::cout << app_.help();
    return checked(0, name_);
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app_.help("", CLI::AppFormatMode::All);
    return checked(0, name_);
  } catch (const CLI::ParseError& e) {
    const std::string sub = sub_name();
    if (argc < 2) {
      std::cerr << app_.help();
      return 2;
    }
    std::string msg = e.what();
    if (sub.empty() && argv[1][0] != '-') {
      msg = "unknown command '" + excerpt(argv[1]) + "' (commands:";
      const CLI::App& all = app_;
      for (const CLI::App* c : all.get_subcommands([](const CLI::App*) { return true; })) msg += " " + c->get_name();
      msg += ")";
    }
    std::fprintf(stderr, "%s%s%s: %s\n(run '%s%s%s --help' for usage)\n", name_.c_str(),
                 sub.empty() ? "" : " ", sub.c_str(), msg.c_str(), name_.c_str(), sub.empty() ? "" : " ",
                 sub.c_str());
    return 2;
  }
  const std::string prefix = name_ + " " + chosen->get_name();
  try {
    const int rc = actions_.at(chosen)();
    finish_stdout();
    return rc;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\n(run '%s --help' for usage)\n", prefix.c_str(), e.what(), prefix.c_str());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", prefix.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", prefix.c_str(), e.what());
  }
  return 2;
}

}  // namespace cli
}  // namespace mc
