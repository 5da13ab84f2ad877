// The benchmarks' clock: seconds of CPU time of the calling thread, so that a run the scheduler
// interrupts (other processes on a 2-core machine) is not charged for the time it did not run.
#pragma once
#include <ctime>

inline double cpu_now() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
