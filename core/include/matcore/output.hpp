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
//   * An output that is also an input of the same command is refused (check_not_input, and
//     for every file the command reads through note_input: when the output is created and
//     again before it is put in place), and so are two outputs of one command that name the
//     same file (by identity, through symbolic links).
//   * Every catchable terminating signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1,
//     SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU) removes the temporaries and temporary
//     directories and stops the external tool that is running (run_tool) before the process
//     dies of it; SIGXFSZ is ignored so that a file-size limit is a failed write.
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
  bool noted_ = false;  ///< among the outputs of the running command (IoScope); an output
                        ///< dropped without commit() leaves them (a retry may write it again)
};

/// An output directory (`sample --out`, `features --emit`): created when missing (one level),
/// and removed again when the command fails before keep() (only if it is still empty), so that
/// a failed or interrupted command leaves nothing behind. InputError when the path exists and is not a
/// directory.
class OutputDir {
 public:
  OutputDir(const std::string& path, const std::string& what);
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  void keep();

 private:
  std::string path_;
  bool created_ = false;
  int slot_ = -1;  ///< removed (if empty) on a terminating signal too
};

/// Commits several outputs as one: a signal that arrives during the renames is held until all
/// are done (e.g. the a, b and c files of `matcore sample`).
void commit_all(const std::vector<OutputFile*>& outs);

/// Throws InputError when `output` names the same file as one of `inputs` (same device and
/// inode, or the same path when the output does not exist yet): "--d c.txt: is also an input".
void check_not_input(const std::string& output, const std::string& what,
                     const std::vector<std::string>& inputs);

/// A temporary path registered for removal on a signal (files that another library creates,
/// e.g. the SystemC VCD writer); unregister when it has been renamed. A directory (`dir`) is
/// removed with everything in it.
int register_temp(const std::string& path, bool dir = false);
void unregister_temp(int slot);

/// The files one command reads and writes. While an IoScope is alive (Program::run opens one
/// for every command), note_input records each file the command reads and every OutputFile is
/// checked against them and against the other outputs of the command.
class IoScope {
 public:
  IoScope();
  ~IoScope();
  IoScope(const IoScope&) = delete;
  IoScope& operator=(const IoScope&) = delete;
};
/// Records `path` as an input of the running command (no-op outside an IoScope, or when the
/// path does not exist).
void note_input(const std::string& path);
/// Throws InputError when `output` (the name as the user gave it, `what` the option) is a file
/// the command reads or another of its outputs: the check OutputFile makes, for outputs that
/// other programs write (the plot script, the simulators).
void check_output_target(const std::string& output, const std::string& what = "output");

/// Installs the signal handlers of the output rule and ignores SIGXFSZ (done lazily by the
/// first output; Program::run calls it first thing).
void install_output_signals();

/// Flushes standard output and checks that everything printed was written (a full disk, a
/// closed pipe, /dev/full): InputError "standard output: write failed (...)".
void finish_stdout();

/// Runs `/bin/sh -c cmd` (an external tool: verilator, make, a Verilated simulator, yosys,
/// the plot script) in a process group of its own, its standard input from /dev/null. It is
/// stopped (SIGKILL to the group) when it runs past `seconds` (InputError naming `what` and the
/// limit) and when matcore gets a terminating signal. Returns the tool's exit status (128 + N
/// when it died of signal N).
int run_tool(const std::string& cmd, int seconds, const std::string& what);

/// The time limit of external tools in seconds: $MATCORE_TOOL_TIMEOUT when set (1..86400),
/// else `dflt` (docs/cli.md, "Limits").
int tool_timeout(int dflt);

/// s quoted for /bin/sh ('...' with embedded quotes escaped), for the commands matcore runs
/// (verilator, yosys, the plot script).
std::string shell_quote(const std::string& s);

}  // namespace mc
