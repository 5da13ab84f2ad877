// dist.hpp: MPI when built with it (MATCORE_MPI), the one-process case otherwise.
#include "matcore/dist.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "matcore/output.hpp"
#include "matcore/vectors.hpp"

#ifdef MATCORE_MPI
#include <mpi.h>
#endif

namespace mc::dist {

namespace {
int g_rank = 0, g_size = 1;
[[maybe_unused]] bool g_started = false;  // MPI_Init called (MPI builds only)

/// Whether a launcher started this process (mpirun: OMPI_COMM_WORLD_SIZE; srun --mpi=pmix or
/// pmi2, MPICH's hydra: PMIX_RANK / PMI_RANK / PMI_SIZE), and the rank count where it says.
[[maybe_unused]] bool launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    const char* s = std::getenv(v);
    if (s && *s) return true;
  }
  return false;
}
[[maybe_unused]] int launched_size() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* s = std::getenv(v);
    if (s && *s) return std::atoi(s);
  }
  return 0;
}
}  // namespace

bool built_with_mpi() {
#ifdef MATCORE_MPI
  return true;
#else
  return false;
#endif
}

void init(int* argc, char*** argv) {
#ifdef MATCORE_MPI
  if (!launched()) return;  // not started by a launcher: one process, no MPI
  MPI_Init(argc, argv);
  g_started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  std::atexit(finalize);
#else
  (void)argc;
  (void)argv;
  const int launched = launched_size();
  if (launched > 1)
    throw std::runtime_error("this matcore was built without MPI (install libopenmpi-dev and rebuild: "
                             "docs/scale.md); started as one of " + std::to_string(launched) + " ranks");
#endif
}

void finalize() {
#ifdef MATCORE_MPI
  if (g_started) {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
    g_started = false;
  }
#endif
}

int rank() { return g_rank; }
int size() { return g_size; }

void barrier() {
#ifdef MATCORE_MPI
  if (g_size > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

bool any(bool mine) {
#ifdef MATCORE_MPI
  if (g_size > 1) {
    int in = mine ? 1 : 0, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return out != 0;
  }
#endif
  return mine;
}

std::string broadcast(const std::string& from_root) {
#ifdef MATCORE_MPI
  if (g_size > 1) {
    unsigned long long n = from_root.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    std::string s = g_rank == 0 ? from_root : std::string(n, '\0');
    if (n) MPI_Bcast(&s[0], static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
    return s;
  }
#endif
  return from_root;
}

std::vector<std::string> allgather(const std::string& mine) {
#ifdef MATCORE_MPI
  if (g_size > 1) {
    const int n = static_cast<int>(mine.size());
    std::vector<int> sizes(g_size), offs(g_size);
    MPI_Allgather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < g_size; ++r) { offs[r] = total; total += sizes[r]; }
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), n, MPI_CHAR, &all[0], sizes.data(), offs.data(), MPI_CHAR, MPI_COMM_WORLD);
    std::vector<std::string> out(g_size);
    for (int r = 0; r < g_size; ++r) out[r] = all.substr(offs[r], sizes[r]);
    return out;
  }
#endif
  return {mine};
}

void abort_all(int code) {
#ifdef MATCORE_MPI
  if (g_started && g_size > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  (void)code;
}

SharedOutput::SharedOutput(const std::string& target) {
  if (size() == 1) {
    root_.reset(new OutputFile(target));
    return;
  }
  struct stat st;
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw InputError(target + ": under mpirun an output must be a regular file on a filesystem every rank sees");
  if (rank() == 0) root_.reset(new OutputFile(target));
  temp_ = broadcast(rank() == 0 ? root_->temp_path() : std::string());
  if (rank() != 0) {
    fd_ = ::open(temp_.c_str(), O_WRONLY);
    if (fd_ < 0)
      throw InputError(target + ": rank " + std::to_string(rank()) + " cannot open rank 0's temporary " + temp_ +
                       " (" + std::strerror(errno) + "): the output must be on a filesystem every rank sees");
  }
}

SharedOutput::~SharedOutput() {
  if (fd_ >= 0) ::close(fd_);
}

void SharedOutput::pwrite(const void* p, size_t n, uint64_t off) {
  if (root_) {
    root_->pwrite(p, n, off);
    return;
  }
  const char* q = static_cast<const char*>(p);
  while (n) {
    const ssize_t w = ::pwrite(fd_, q, n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw InputError(temp_ + ": write failed (" + std::strerror(errno) + ")");
    q += w;
    n -= static_cast<size_t>(w);
    off += static_cast<uint64_t>(w);
  }
}

void SharedOutput::commit() { commit_all({this}); }

void SharedOutput::commit_all(const std::vector<SharedOutput*>& outs) {
  std::vector<OutputFile*> roots;
  for (SharedOutput* o : outs) {
    if (o->fd_ >= 0) {
      const int fd = o->fd_;
      o->fd_ = -1;
      if (::fsync(fd) != 0 || ::close(fd) != 0)
        throw InputError(o->temp_ + ": write failed (" + std::strerror(errno) + ")");
    }
    if (o->root_) roots.push_back(o->root_.get());
  }
  barrier();  // every rank's part is in the files
  if (!roots.empty()) mc::commit_all(roots);
  barrier();  // and they are in place before any rank reports
}

}  // namespace mc::dist
