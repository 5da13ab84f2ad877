// The matcore program: the commands of cli/commands.cpp.
#include <cstdio>
#include <exception>

#include "matcore/dist.hpp"

int matcore_main(int argc, char** argv);

int main(int argc, char** argv) {
  try {
    mc::dist::init(&argc, &argv);  // MPI when started by mpirun (docs/scale.md)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matcore: error: %s\n", e.what());
    return 2;
  }
  // under mpirun rank 0 prints the report; every rank prints its own errors (stderr)
  if (mc::dist::rank() != 0 && !std::freopen("/dev/null", "w", stdout)) return 2;
  const int rc = matcore_main(argc, argv);
  if (rc == 2) mc::dist::abort_all(2);  // other ranks may be waiting for this one
  return rc;
}
