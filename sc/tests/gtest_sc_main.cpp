// libsystemc.so calls sc_main: the GoogleTest runner lives there. Our main() (which takes
// precedence over the library's) only silences the SystemC banner first.
#include <gtest/gtest.h>

#include <cstdlib>
#include <systemc>

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
