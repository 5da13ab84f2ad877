// A scratch directory of the running test, shared by the testbenches that write files.
#pragma once
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace mc_test {

/// TempDir()/matcore-<Suite>.<Test>-<pid>, created on first use. ctest runs each test in its own
/// process, two at a time: a fixed name under TempDir() (e.g. "strict.pvt" written by two tests)
/// made them overwrite each other's files when they happened to run together.
inline std::string temp_dir() {
  std::string dir = ::testing::TempDir();
  if (!dir.empty() && dir.back() == '/') dir.pop_back();
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  dir += "/matcore-";
  if (t) {
    std::string id = std::string(t->test_suite_name()) + "." + t->name();
    for (char& ch : id)
      if (ch == '/') ch = '_';  // parameterised tests are named Prefix/Suite.Test/N
    dir += id + "-";
  }
  dir += std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0777);
  return dir;
}

}  // namespace mc_test
