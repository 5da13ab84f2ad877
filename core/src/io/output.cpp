#include "matcore/output.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <algorithm>

#include "matcore/vectors.hpp"

namespace mc {

namespace {

// ---- removal of temporaries on a terminating signal (async-signal-safe: fixed slots).
constexpr int kSlots = 64;
constexpr size_t kPathMax = 4096;
char g_paths[kSlots][kPathMax];
std::atomic<bool> g_used[kSlots];
std::atomic<int> g_kind[kSlots];  ///< 0 a file, 1 a directory tree, 2 a directory removed if empty
std::atomic<pid_t> g_child{0};  ///< the process group of the running external tool (run_tool)
std::mutex g_mutex;
bool g_installed = false;

constexpr int kCleanSignals[] = {SIGINT,  SIGTERM,   SIGHUP,  SIGQUIT, SIGPIPE, SIGUSR1,
                                 SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU};

/// rm -rf of a temporary directory from the signal handler (fork and exec are async-signal-safe).
void remove_dir_now(const char* path) {
  const pid_t p = ::fork();
  if (p == 0) {
    ::execl("/bin/rm", "rm", "-rf", "--", path, static_cast<char*>(nullptr));
    ::_exit(127);
  }
  if (p > 0) ::waitpid(p, nullptr, 0);
}

extern "C" void remove_temps_and_die(int sig) {
  const pid_t child = g_child.load();
  if (child > 0) {
    ::kill(-child, SIGKILL);
    ::waitpid(child, nullptr, 0);
  }
  for (int i = 0; i < kSlots; ++i) {
    if (!g_used[i].load() || g_kind[i].load() == 2) continue;
    if (g_kind[i].load() == 1) remove_dir_now(g_paths[i]);
    else ::unlink(g_paths[i]);
  }
  for (int i = 0; i < kSlots; ++i)  // then the output directories the command created
    if (g_used[i].load() && g_kind[i].load() == 2) ::rmdir(g_paths[i]);
  ::signal(sig, SIG_DFL);
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, sig);
  pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
  ::raise(sig);
}

void install_handlers() {
  if (g_installed) return;
  g_installed = true;
  // A file-size limit (ulimit -f, a quota) makes write() fail with EFBIG, reported as a failed
  // write, instead of killing the process with SIGXFSZ.
  ::signal(SIGXFSZ, SIG_IGN);
  for (int sig : kCleanSignals) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup
    if (old.sa_handler != SIG_DFL) continue;  // a handler of the embedding program (Python, MPI)
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_temps_and_die;
    sigemptyset(&sa.sa_mask);
    for (int other : kCleanSignals) sigaddset(&sa.sa_mask, other);
    ::sigaction(sig, &sa, nullptr);
  }
}

// ---- the files of the running command (IoScope)
struct FileId {
  dev_t dev;
  ino_t ino;
  std::string name;  ///< as the command was given it
};
bool g_scope = false;
std::vector<FileId> g_inputs;
std::vector<std::pair<std::string, std::string>> g_outputs;  ///< canonical path, name as given

std::string dir_of(const std::string& p) {
  const size_t s = p.rfind('/');
  if (s == std::string::npos) return ".";
  return s == 0 ? "/" : p.substr(0, s);
}
std::string base_of(const std::string& p) {
  const size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

std::string reason(int err) { return std::strerror(err); }

/// The file descriptor a path stands for: "-" is standard output, and so is any chain of
/// symbolic links that ends in /proc/self/fd/N or /dev/fd/N (/dev/stdout, /dev/stderr); -1 for
/// other paths.
int fd_of_path(const std::string& path) {
  if (path == "-") return STDOUT_FILENO;
  std::string p = path;
  for (int depth = 0; depth < 16; ++depth) {
    for (const char* pre : {"/proc/self/fd/", "/dev/fd/"}) {
      const size_t n = std::strlen(pre);
      if (p.compare(0, n, pre) == 0 && p.size() > n && p.size() < n + 6 &&
          p.find_first_not_of("0123456789", n) == std::string::npos)
        return std::atoi(p.c_str() + n);
    }
    char buf[4096];
    const ssize_t len = ::readlink(p.c_str(), buf, sizeof buf - 1);
    if (len <= 0) return -1;
    buf[len] = '\0';
    const std::string next(buf);
    p = next[0] == '/' ? next : dir_of(p) + "/" + next;
  }
  return -1;
}

struct SignalsHeld {
  sigset_t old;
  SignalsHeld() {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : kCleanSignals) sigaddset(&s, sig);
    pthread_sigmask(SIG_BLOCK, &s, &old);
  }
  ~SignalsHeld() { pthread_sigmask(SIG_SETMASK, &old, nullptr); }
};

/// Where a path leads: the canonical path of its directory and its last name (after following
/// symbolic links; the file itself need not exist). Empty when the directory does not exist.
std::string canonical_target(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real) {
    std::string r(real);
    std::free(real);
    return r;
  }
  char* dir = ::realpath(dir_of(path).c_str(), nullptr);
  if (!dir) return std::string();
  std::string r(dir);
  std::free(dir);
  return (r == "/" ? "" : r) + "/" + base_of(path);
}

/// The input of the running command that `path` names, or nullptr.
const FileId* input_named(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return nullptr;
  for (const FileId& f : g_inputs)
    if (f.dev == st.st_dev && f.ino == st.st_ino) return &f;
  return nullptr;
}

}  // namespace

void install_output_signals() {
  std::lock_guard<std::mutex> lock(g_mutex);
  install_handlers();
}

IoScope::IoScope() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_scope = true;
  g_inputs.clear();
  g_outputs.clear();
}

IoScope::~IoScope() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_scope = false;
  g_inputs.clear();
  g_outputs.clear();
}

void note_input(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_scope) return;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;  // devices, pipes: no identity to lose
  for (const FileId& f : g_inputs)
    if (f.dev == st.st_dev && f.ino == st.st_ino) return;
  g_inputs.push_back(FileId{st.st_dev, st.st_ino, path});
}

void check_output_target(const std::string& output, const std::string& what) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_scope || fd_of_path(output) >= 0) return;
  if (const FileId* f = input_named(output))
    throw InputError(what + " " + output + ": is also an input of this command (" + f->name +
                     "); write the output to another file");
  const std::string key = canonical_target(output);
  if (key.empty()) return;  // a missing directory: reported when the file is created
  for (const auto& o : g_outputs)
    if (o.first == key)
      throw InputError(what + " " + output + ": is also another output of this command (" + o.second +
                       "); give each output its own file");
}

namespace {
/// Records an output of the running command (after check_output_target); whether it did.
bool note_output(const std::string& output) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_scope || fd_of_path(output) >= 0) return false;
  const std::string key = canonical_target(output);
  if (key.empty()) return false;
  g_outputs.emplace_back(key, output);
  return true;
}

/// Forgets the last record of `output` (an output dropped before it was complete).
void forget_output(const std::string& output) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (size_t i = g_outputs.size(); i-- > 0;)
    if (g_outputs[i].second == output) {
      g_outputs.erase(g_outputs.begin() + static_cast<long>(i));
      return;
    }
}
}  // namespace

namespace {
int register_slot(const std::string& path, int kind) {
  std::lock_guard<std::mutex> lock(g_mutex);
  install_handlers();
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    if (g_used[i].load()) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_kind[i].store(kind);
    g_used[i].store(true);
    return i;
  }
  return -1;  // more than 64 open outputs: not removed on a signal (never the case in matcore)
}
}  // namespace

int register_temp(const std::string& path, bool dir) { return register_slot(path, dir ? 1 : 0); }

void unregister_temp(int slot) {
  if (slot < 0) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_used[slot].store(false);
}

OutputFile::OutputFile(const std::string& target) : target_(target), path_(target) {
  if (target.empty()) throw InputError("output: empty file name");
  check_output_target(target);
  direct_fd_ = fd_of_path(target);  // "-", /dev/stdout, /proc/self/fd/N: written into that fd
  copy_ = direct_fd_ >= 0;
  struct stat st;
  if (!copy_ && ::lstat(target.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    // a symbolic link stays one: its destination gets the output
    char* real = ::realpath(target.c_str(), nullptr);
    if (!real) {
      const int e = errno;
      throw InputError(target + ": the symbolic link cannot be followed (" + reason(e) + ")");
    }
    path_ = real;
    std::free(real);
  }
  if (!copy_ && ::stat(path_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw InputError(target + ": is a directory (a file name is expected)");
    copy_ = !S_ISREG(st.st_mode);
  }
  std::string tmpl;
  if (copy_) {
    const char* t = std::getenv("TMPDIR");
    tmpl = std::string(t && *t ? t : "/tmp") + "/.matcore-out.tmp-XXXXXX";
  } else {
    tmpl = dir_of(path_) + "/." + base_of(path_) + ".tmp-XXXXXX";
  }
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  {
    SignalsHeld hold;  // no window in which the temporary exists unregistered
    fd_ = ::mkstemp(buf.data());
    if (fd_ < 0) {
      const int e = errno;
      throw InputError(target + ": cannot create the output (" + reason(e) + ")");
    }
    temp_ = buf.data();
    slot_ = register_temp(temp_);
  }
  noted_ = note_output(target);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) {
    ::unlink(temp_.c_str());
    if (noted_) forget_output(target_);
  }
  unregister_temp(slot_);
}

void OutputFile::fail(const std::string& why, int err) {
  throw InputError(target_ + ": " + why + " (" + reason(err) + ")");
}

void OutputFile::write(const void* p, size_t n) {
  const char* q = static_cast<const char*>(p);
  while (n) {
    const ssize_t w = ::write(fd_, q, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("write failed", w < 0 ? errno : ENOSPC);
    q += w;
    n -= static_cast<size_t>(w);
  }
}

void OutputFile::pwrite(const void* p, size_t n, uint64_t off) {
  const char* q = static_cast<const char*>(p);
  while (n) {
    const ssize_t w = ::pwrite(fd_, q, n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("write failed", w < 0 ? errno : ENOSPC);
    q += w;
    n -= static_cast<size_t>(w);
    off += static_cast<uint64_t>(w);
  }
}

void OutputFile::commit() {
  if (fd_ < 0) return;
  if (copy_) {
    // A device or pipe: copy the finished temporary into it, checking every write.
    if (::lseek(fd_, 0, SEEK_SET) != 0) fail("cannot read back the temporary output", errno);
    if (direct_fd_ == STDOUT_FILENO) std::fflush(stdout);  // what the program printed comes first
    const int out = direct_fd_ >= 0 ? direct_fd_ : ::open(path_.c_str(), O_WRONLY | O_TRUNC);
    if (out < 0) fail("cannot open for writing", errno);
    auto close_out = [&] { return direct_fd_ >= 0 ? 0 : ::close(out); };
    char buf[1 << 16];
    for (;;) {
      const ssize_t r = ::read(fd_, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) { const int e = errno; close_out(); fail("cannot read back the temporary output", e); }
      if (r == 0) break;
      for (ssize_t at = 0; at < r;) {
        const ssize_t w = ::write(out, buf + at, static_cast<size_t>(r - at));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { const int e = w < 0 ? errno : ENOSPC; close_out(); fail("write failed", e); }
        at += w;
      }
    }
    if (close_out() != 0) fail("write failed", errno);
    ::close(fd_);
    fd_ = -1;
    return;  // the destructor removes the temporary
  }
  {
    // an input read after the output was opened (the command reads as it goes)
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_scope)
      if (const FileId* f = input_named(path_))
        throw InputError("output " + target_ + ": is also an input of this command (" + f->name +
                         "); write the output to another file");
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("write failed", errno);
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail("cannot put the output in place", errno);
  temp_.clear();
  unregister_temp(slot_);
  slot_ = -1;
}

OutputDir::OutputDir(const std::string& path, const std::string& what) : path_(path) {
  if (::mkdir(path.c_str(), 0777) == 0) {
    created_ = true;
    slot_ = register_slot(path, 2);
  } else if (errno != EEXIST)
    throw InputError(path + ": cannot create the directory of " + what + " (" + std::strerror(errno) + ")");
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError(path + ": is not a directory (" + what + " names a directory)");
}

OutputDir::~OutputDir() {
  if (created_) ::rmdir(path_.c_str());  // fails harmlessly when something is in it
  unregister_temp(slot_);
}

void OutputDir::keep() {
  created_ = false;
  unregister_temp(slot_);
  slot_ = -1;
}

void commit_all(const std::vector<OutputFile*>& outs) {
  SignalsHeld hold;
  for (OutputFile* o : outs) o->commit();
}

void check_not_input(const std::string& output, const std::string& what,
                     const std::vector<std::string>& inputs) {
  struct stat so;
  const bool exists = ::stat(output.c_str(), &so) == 0;
  for (const std::string& in : inputs) {
    if (in.empty()) continue;
    struct stat si;
    bool same = in == output;
    if (!same && exists && ::stat(in.c_str(), &si) == 0)
      same = S_ISREG(so.st_mode) && si.st_dev == so.st_dev && si.st_ino == so.st_ino;
    if (same)
      throw InputError(what + " " + output + ": is also an input (" + in +
                       "); write the output to another file");
  }
}

void finish_stdout() {
  std::cout.flush();
  errno = 0;
  const bool bad = !std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (bad) {
    const int e = errno;
    std::clearerr(stdout);
    throw InputError(std::string("standard output: write failed") + (e ? " (" + reason(e) + ")" : std::string()));
  }
}

int tool_timeout(int dflt) {
  const char* e = std::getenv("MATCORE_TOOL_TIMEOUT");
  if (!e || !*e) return dflt;
  char* end = nullptr;
  const long v = std::strtol(e, &end, 10);
  if (*end || v < 1 || v > 86400)
    throw InputError(std::string("MATCORE_TOOL_TIMEOUT: must be a number of seconds in 1..86400 (got '") +
                     excerpt(e) + "')");
  return static_cast<int>(v);
}

int run_tool(const std::string& cmd, int seconds, const std::string& what) {
  install_output_signals();
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid;
  {
    SignalsHeld hold;  // the child is known to the handler before a signal can arrive
    pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      for (int sig : kCleanSignals) ::signal(sig, SIG_DFL);
      ::signal(SIGXFSZ, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      pthread_sigmask(SIG_SETMASK, &none, nullptr);
      const int in = ::open("/dev/null", O_RDONLY);
      if (in >= 0) ::dup2(in, STDIN_FILENO);
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (pid < 0) throw InputError(what + ": cannot start (" + reason(errno) + ")");
    ::setpgid(pid, pid);
    g_child.store(pid);
  }
  struct timespec t0;
  ::clock_gettime(CLOCK_MONOTONIC, &t0);
  long nap_us = 200;
  int st = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) { st = 0; break; }
    struct timespec t;
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >= seconds * 1000000000L) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      g_child.store(0);
      throw InputError(what + ": stopped after its time limit of " + std::to_string(seconds) +
                       " s (MATCORE_TOOL_TIMEOUT sets another limit; docs/cli.md)");
    }
    struct timespec nap{0, nap_us * 1000};
    ::nanosleep(&nap, nullptr);
    nap_us = std::min(nap_us * 2, 50000L);
  }
  ::kill(-pid, SIGKILL);  // anything the tool left behind in its group
  g_child.store(0);
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return 255;
}

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char ch : s) r += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return r + "'";
}

}  // namespace mc
