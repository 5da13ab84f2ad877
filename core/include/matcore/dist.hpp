// matcore: campaigns across processes and machines (MPI, docs/scale.md).
//
//   mpirun -n R matcore validate|run|sample|explore ...
//
// Each of the R processes (ranks) takes the samples [n*r/R, n*(r+1)/R) of the campaign, reads
// only its own byte ranges of the input files and writes only its own byte ranges of the
// output files (every line of a grid-shaped file has the same length, so sample i sits at a
// fixed offset). Rank 0 creates the temporary outputs, gathers the counts and the first
// mismatches and prints; the outputs are renamed into place when every rank has written its
// part. The result is the one of a single process, byte for byte.
//
// Built without MPI (no libopenmpi-dev), or run without mpirun, everything here is the one-
// process case: rank 0 of 1, collectives that return their argument.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mc::dist {

/// MPI_Init when this process was started by mpirun (and matcore was built with MPI); refuses
/// (std::runtime_error) a multi-rank launch of a matcore built without MPI. From main().
void init(int* argc, char*** argv);
/// MPI_Finalize (if init started MPI). Registered with atexit by init.
void finalize();
bool built_with_mpi();

int rank();
int size();

/// The first and one-past-the-last of this rank's share of n items.
inline void share(uint64_t n, uint64_t& lo, uint64_t& hi) {
  const uint64_t r = static_cast<uint64_t>(rank()), R = static_cast<uint64_t>(size());
  lo = static_cast<uint64_t>((static_cast<unsigned __int128>(n) * r) / R);
  hi = static_cast<uint64_t>((static_cast<unsigned __int128>(n) * (r + 1)) / R);
}

void barrier();
/// Whether any rank passes true.
bool any(bool mine);
/// Rank 0's string on every rank.
std::string broadcast(const std::string& from_root);
/// Every rank's bytes, in rank order, on every rank.
std::vector<std::string> allgather(const std::string& mine);
/// Ends a multi-rank run after an error on this rank (MPI_Abort: the other ranks may be
/// waiting in a collective); returns normally with one process.
void abort_all(int code);

}  // namespace mc::dist

namespace mc {
class OutputFile;
namespace dist {

/// An output file that every rank writes a part of (collective constructor and commit): rank 0
/// creates the temporary beside the target (output.hpp OutputFile) and tells the others its
/// name; each rank writes its own byte ranges; commit() waits for all, then rank 0 renames it
/// into place. With one process it is an OutputFile. Under mpirun the target must be a regular
/// file (or not exist yet) on a filesystem every rank sees.
class SharedOutput {
 public:
  explicit SharedOutput(const std::string& target);
  ~SharedOutput();
  SharedOutput(const SharedOutput&) = delete;
  SharedOutput& operator=(const SharedOutput&) = delete;
  void pwrite(const void* p, size_t n, uint64_t off);
  void commit();
  /// commit() of several outputs as one (output.hpp commit_all on rank 0).
  static void commit_all(const std::vector<SharedOutput*>& outs);

 private:
  std::unique_ptr<OutputFile> root_;
  int fd_ = -1;
  std::string temp_;
};

}  // namespace dist
}  // namespace mc
