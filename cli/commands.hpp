// The parts of the matcore command line shared by cli/commands*.cpp.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "matcore/cli.hpp"

namespace mc {
namespace cli {

/// The stored format of c and d values (binary64 for fp64 datapaths, else binary32).
inline const Format& stored_out(const Datapath& dp) { return dp.out_fmt == kBinary64 ? kBinary64 : kBinary32; }

/// Parses the rest of a command line (reversed, as CLI11 leaves it) into a sub-application
/// (trace --engine rtl, trace --svg); false when it printed its help.
inline bool parse_sub_app(CLI::App& app, const std::vector<std::string>& rest, const std::string& what) {
  std::vector<std::string> args(rest.rbegin(), rest.rend());
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(what + ": " + e.what());
  }
  return true;
}

/// --threads N (default: every core).
inline CLI::Option* threads_option(CLI::App* cmd, unsigned& v) {
  return cmd->add_option("--threads", v, "worker threads (default: every core)")->check(int_range(1, 1024));
}

}  // namespace cli
}  // namespace mc

/// explore (cli/commands_explore.cpp).
void add_explore_command(mc::cli::Program& p);
/// features (cli/commands_tools.cpp).
void add_features_command(mc::cli::Program& p);
/// rtl, cost, check-table (cli/commands_tools.cpp).
void add_hardware_commands(mc::cli::Program& p);
/// gemm, mfma (cli/commands_matrix.cpp).
void add_matrix_commands(mc::cli::Program& p);
/// trace --engine rtl (cli/commands_rtl.cpp): the rest of the command line, reversed.
int rtl_trace(const std::vector<std::string>& rest);
