// matcore: the rule for every output file (docs/cli.md, "Outputs"): it appears complete or not
// at all.
//
//   * The data goes to a temporary file beside the target ("DIR/.NAME.tmp-XXXXXX", same
//     directory so that the final rename is atomic); commit() checks every write and the close
//     and renames the temporary onto the target. A failed write is an InputError naming the
//     target and the reason (e.g. "No space left on device"); the temporary is removed.
//   * A target that exists and is not a regular file (a pipe, /dev/full) gets the finished
//     temporary copied into it by commit(), which checks those writes as well; the temporary
//     then lives in $TMPDIR (or /tmp). "-", /dev/stdout, /dev/stderr and /proc/self/fd/N are
//     written into that file descriptor (never renamed onto). A symbolic link stays a link:
//     the file it points to gets the output.
//   * An OutputFile destroyed without commit() (an error, an exception) removes its temporary,
//     and so does SIGINT, SIGTERM or SIGHUP: an interrupted run leaves no file that passes for
//     complete, and the target keeps its old content.
//   * An output that is also an input of the same command is refused before anything is
//     written (check_not_input).
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace mc {

class OutputFile {
 public:
  explicit OutputFile(const std::string& target);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  const std::string& target() const { return target_; }
  /// The temporary file (for writers that open the file by name themselves, e.g. SystemC).
  const std::string& temp_path() const { return temp_; }
  int fd() const { return fd_; }

  /// Appends n bytes; throws InputError naming the target on failure.
  void write(const void* p, size_t n);
  void write(const std::string& s) { write(s.data(), s.size()); }
  /// Writes n bytes at byte offset off (thread-safe for disjoint ranges).
  void pwrite(const void* p, size_t n, uint64_t off);

  /// Checks the file and puts it in place of the target (rename, or copy for a target that is
  /// not a regular file). After commit() the object holds nothing.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& why, int err);
  std::string target_;  ///< as given
  std::string path_;    ///< where the output goes: the target, or the destination of its symlink
  std::string temp_;
  int fd_ = -1;
  bool copy_ = false;   ///< the target is not a regular file: commit copies into it
  int direct_fd_ = -1;  ///< "-", /dev/stdout, /proc/self/fd/N: commit writes into this fd
  int slot_ = -1;       ///< in the signal-cleanup registry
};

/// Commits several outputs as one: a signal that arrives during the renames is held until all
/// are done (e.g. the a, b and c files of `matcore sample`).
void commit_all(const std::vector<OutputFile*>& outs);

/// Throws InputError when `output` names the same file as one of `inputs` (same device and
/// inode, or the same path when the output does not exist yet): "--d c.txt: is also an input".
void check_not_input(const std::string& output, const std::string& what,
                     const std::vector<std::string>& inputs);

/// A temporary path registered for removal on SIGINT/SIGTERM/SIGHUP (files that another
/// library creates, e.g. the SystemC VCD writer); unregister when it has been renamed.
int register_temp(const std::string& path);
void unregister_temp(int slot);

/// s quoted for /bin/sh ('...' with embedded quotes escaped), for the commands matcore runs
/// (verilator, yosys, the plot script).
std::string shell_quote(const std::string& s);

}  // namespace mc
