// Shared by the testbenches that drive the command-line programs (matcore, matcore-sc).
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace mc_test {

/// Runs a shell command and appends what it writes to stdout to *out (add "2>&1" to the
/// command for stderr too). Returns the exit status, or -1 when it did not exit normally.
inline int run_command(const std::string& cmd, std::string* out) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  const int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace mc_test
