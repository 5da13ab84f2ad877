// The parts of the matcore command line shared by cli/commands*.cpp.
#pragma once
#include "matcore/cli.hpp"

namespace mc {
namespace cli {

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
