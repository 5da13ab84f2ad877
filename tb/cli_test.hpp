// Shared by the testbenches that run the matcore command line on files (test_robust,
// test_robust_outputs): a run with its exit status and output, a scratch directory of the
// test, files written and read back whole.
#pragma once
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "run_command.hpp"
#include "temp_dir.hpp"

namespace mc_test {

struct CliRun {
  int status;
  std::string out;  // stdout and stderr together
};

/// `matcore ARGS` with `prefix` before it (environment, ulimit, cd).
inline CliRun run_cli(const std::string& args, const std::string& prefix = "") {
  CliRun r{-1, ""};
  r.status = run_command(prefix + std::string(MATCORE_CLI) + " " + args + " 2>&1", &r.out);
  return r;
}

/// temp_dir()/TAG-PID, created.
inline std::string scratch_dir(const std::string& tag) {
  std::string p = temp_dir() + "/" + tag + "-" + std::to_string(::getpid());
  ::mkdir(p.c_str(), 0777);
  return p;
}

inline std::string write_file(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

inline std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace mc_test

#define EXPECT_HAS(out, text) EXPECT_NE((out).find(text), std::string::npos) << (out)
