// fuzz_cli: the command line itself (cli/commands.cpp on CLI11): option parsing, value checks,
// datapath selection (--arch/--type/--out/--variant), operand text and the model, through the
// real `matcore` commands that take no files: dot, explain (operands on the command line) and
// list.
//   byte 0: the subcommand (dot, explain, list, or none: the word comes from the input)
//   rest  : the arguments, separated by NUL bytes or spaces
// Words that name files or standard input (--mismatches, --file, --svg, --datapath, --dp, "-")
// are dropped so that the
// target never reads or writes outside its own process. Every outcome must be an exit status of
// 0, 1 or 2; a crash, a hang or another status is a bug.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_common.hpp"

int matcore_main(int argc, char** argv);

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (!std::freopen("/dev/null", "w", stdout)) std::abort();  // the commands print their results
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kCommands[] = {"dot", "explain", "list", nullptr};
  mc_fuzz::Input in{data, size};
  const uint8_t b0 = in.byte();
  std::vector<std::string> words{"matcore"};
  if (const char* c = kCommands[b0 % 4]) words.push_back(c);
  const std::string rest = in.rest();
  std::string cur;
  for (size_t i = 0; i <= rest.size(); ++i) {
    if (i == rest.size() || rest[i] == '\0' || rest[i] == ' ') {
      if (!cur.empty()) words.push_back(cur);
      cur.clear();
    } else {
      cur += rest[i];
    }
  }
  if (words.size() > 64) return 0;
  std::vector<std::string> kept{words[0]};
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "-" || w.rfind("--mismatches", 0) == 0 || w.rfind("--file", 0) == 0 || w.rfind("--samples", 0) == 0 ||
        w.rfind("--svg", 0) == 0 || w.rfind("--datapath", 0) == 0 || w.rfind("--dp", 0) == 0)
      continue;
    // a first word that is a subcommand reading or writing files is not run
    if (i == 1 && kept.size() == 1 && w != "dot" && w != "explain" && w != "list" && w[0] != '-') return 0;
    kept.push_back(w);
  }
  std::vector<char*> argv;
  for (std::string& w : kept) argv.push_back(&w[0]);
  argv.push_back(nullptr);
  const int rc = matcore_main(static_cast<int>(kept.size()), argv.data());
  if (rc < 0 || rc > 2) __builtin_trap();
  return 0;
}
