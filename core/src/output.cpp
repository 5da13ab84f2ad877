#include "matcore/output.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "matcore/vectors.hpp"

namespace mc {

namespace {

// ---- removal of temporaries on SIGINT / SIGTERM / SIGHUP (async-signal-safe: fixed slots).
constexpr int kSlots = 64;
constexpr size_t kPathMax = 4096;
char g_paths[kSlots][kPathMax];
std::atomic<bool> g_used[kSlots];
std::mutex g_mutex;
bool g_installed = false;

extern "C" void remove_temps_and_die(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_used[i].load()) ::unlink(g_paths[i]);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_handlers() {
  if (g_installed) return;
  g_installed = true;
  // A file-size limit (ulimit -f, a quota) makes write() fail with EFBIG, reported as a failed
  // write, instead of killing the process with SIGXFSZ.
  ::signal(SIGXFSZ, SIG_IGN);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_temps_and_die;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

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
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &s, &old);
  }
  ~SignalsHeld() { pthread_sigmask(SIG_SETMASK, &old, nullptr); }
};

}  // namespace

int register_temp(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  install_handlers();
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    if (g_used[i].load()) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_used[i].store(true);
    return i;
  }
  return -1;  // more than 64 open outputs: not removed on a signal (never the case in matcore)
}

void unregister_temp(int slot) {
  if (slot < 0) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_used[slot].store(false);
}

OutputFile::OutputFile(const std::string& target) : target_(target), path_(target) {
  if (target.empty()) throw InputError("output: empty file name");
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
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
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
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("write failed", errno);
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail("cannot put the output in place", errno);
  temp_.clear();
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

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char ch : s) r += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return r + "'";
}

}  // namespace mc
