// matcore hardware collectors: the host side shared by the HIP (mfma_collect) and CUDA
// (nv_collect) programs. Plain C++17 built with the host compiler; the device programs only add
// kernels and the runtime API calls (a Backend).
//
// A collector reads a/b/c files in the shared vector format (core/include/matcore/vectors.hpp),
// places each sample where one dot product of the instruction lands (sample s: row i of A and
// column j = i of B of one block, so that D[i][i] is its dot product plus C[i][i] = c; every
// other element of A, B and C is +0), runs the instruction on the device and writes the d file
// with a provenance header.
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "matcore/format.hpp"

namespace mcc {

/// Exit status of the collector programs (also printed by --help).
enum Exit : int {
  kExitOk = 0,
  kExitSelfTest = 1,     ///< the self-test (exact integer tile) gave a wrong D: layout error
  kExitUsage = 2,        ///< bad command line or input file
  kExitNoDevice = 3,     ///< no GPU of this vendor (or no driver) on this machine
  kExitUnsupported = 4,  ///< the GPU lacks the instruction, or the binary has no code for it
  kExitRuntime = 5,      ///< a runtime API call failed
};

struct UsageError : std::runtime_error { using std::runtime_error::runtime_error; };
struct NoDevice : std::runtime_error { using std::runtime_error::runtime_error; };
struct Unsupported : std::runtime_error { using std::runtime_error::runtime_error; };
struct RuntimeFailure : std::runtime_error { using std::runtime_error::runtime_error; };

/// Operand element types, by their names in core/mfma_instructions.def and the PTX ISA.
/// e3m2, e2m3, e2m1: OCP MX fp6/fp4 elements; ue8m0, ue4m3: block scales; none: no scale.
enum class Ty { fp32, xf32, tf32, fp16, bf16, bf16_1k, e4m3, e5m2, e4m3fnuz, e5m2fnuz, fp64,
                e3m2, e2m3, e2m1, ue8m0, ue4m3, none };

const char* to_string(Ty t);
/// The format of the value the instruction reads (xf32 and tf32: the binary32 container).
const mc::Format& format_of(Ty t);
/// Bytes of one element in registers / shared memory (fp6/fp4: their 8-bit container).
int bytes_of(Ty t);

/// Where the elements of one operand of one instruction ("group") go in the image that the
/// kernel copies verbatim: image index of element (b, r, c) (A: b, i, k; B: b, k, j; C/D:
/// b, i, j). Every index in [0, elems) must be hit exactly once.
/// Sub-byte operands: elem_bits 4 packs two elements a byte (low nibble first); group > 0
/// packs `group` elements contiguously into each 16-byte unit, the rest of it padding (tcgen05
/// shared memory: fp4 "b4x16_p64", fp6 "b6x16_p32"); shift places the value inside its
/// element (mma.sync's 8-bit containers hold e2m1 in bits 5:2: shift 2).
struct Operand {
  size_t elems = 0;
  int elem_bytes = 4;
  std::function<size_t(int b, int r, int c)> index;
  int elem_bits = 0;  ///< 0: 8 * elem_bytes
  int group = 0;
  int shift = 0;
  int bits() const { return elem_bits ? elem_bits : 8 * elem_bytes; }
  /// Bytes of the image of `n` elements (n a multiple of group).
  size_t image_bytes(size_t n) const { return group ? n / group * 16 : (n * bits() + 7) / 8; }
};

/// One instruction as a collector runs it.
struct Instr {
  std::string name;   ///< as matcore names it; fp16-output variants use the ".f16." dtype
  std::string impl;   ///< clang builtin or PTX instruction
  std::string note;   ///< where it runs (families / sm_*), for --list
  Ty a = Ty::fp32, b = Ty::fp32, out = Ty::fp32;  ///< out: fp32, fp16 or fp64
  int m = 0, n = 0, k = 0, blocks = 1;
  Operand A, B, C;    ///< C also describes D
  /// Block-scaled instructions: scale format, elements per scale, and where the scales go
  /// (SA: (b, i, kb) of A's row i; SB: (b, kb, j) of B's column j; one byte each). Positions no
  /// sample uses hold the unit scale.
  Ty scale = Ty::none;
  int scale_block = 0;
  Operand SA, SB;
  int scales_per_row() const { return scale_block ? k / scale_block : 0; }
  /// Samples one instruction holds (one per row/column pair of each block).
  int per_group() const { return blocks * (m < n ? m : n); }
};

/// Checks that every Operand index function is a bijection onto [0, elems). Throws
/// std::logic_error naming the instruction and operand otherwise.
void check_operands(const Instr& in);

using Bytes = std::vector<uint8_t>;

/// Samples converted to the instruction's element bit patterns (c already in the output
/// format, e.g. rounded to binary16 for f16 accumulators, as matcore's model does).
struct Samples {
  size_t n = 0;
  std::vector<uint64_t> a, b;    ///< n*k
  std::vector<uint64_t> c;       ///< n
  std::vector<uint64_t> sa, sb;  ///< n * scales_per_row() (block-scaled instructions)
};

/// Reads a/b/c files (shared vector format), and for a block-scaled instruction the scale
/// files sa/sb (docs/vector-format.md). K must equal the instruction's k. Values must be
/// exactly representable in the input format (binary32/xf32/tf32 containers are passed as
/// given). Throws mc::InputError (file and sample named) or UsageError.
Samples read_samples(const Instr& in, const std::string& a, const std::string& b,
                     const std::string& c, const std::string& sa = "", const std::string& sb = "");

/// The images of one chunk of instructions: A, B, C and (block-scaled) the scales.
struct Images {
  Bytes A, B, C, SA, SB;
};

/// Runs one chunk of `groups` instructions: images in, D image out (same layout as C).
using Launch = std::function<void(size_t groups, const Images& im, Bytes& D)>;

/// A result as stored in d files: binary32 / binary64 as is; binary16 (f16 accumulators)
/// widened exactly to binary32, a NaN keeping its payload in the top fraction bits as a
/// hardware conversion does (0x7fff -> 0x7fffe000), so the file records every bit the device
/// returned.
uint64_t d_to_file(Ty out, uint64_t d);

/// Runs every sample through `launch` (in chunks of bounded memory) and returns d as stored in
/// d files (d_to_file).
std::vector<uint64_t> run_samples(const Instr& in, const Samples& s, const Launch& launch);

/// Self-test: one instruction on a full tile of small integers (exact in every format and
/// every accumulation order) against the exact D. Returns the number of wrong D elements and
/// describes the first ones in *report. Detects misplaced rows, columns, blocks and C/D
/// elements (not a permutation of k shared by A and B, which leaves every dot product's value
/// unchanged).
size_t self_test(const Instr& in, const Launch& launch, std::string* report);

/// Packs / unpacks element bit patterns (little endian) into an image.
void put_elem(Bytes& img, size_t index, int elem_bytes, uint64_t bits);
uint64_t get_elem(const Bytes& img, size_t index, int elem_bytes);
/// The same for an operand's image, sub-byte, grouped and shifted elements included.
void put_elem(Bytes& img, const Operand& op, size_t index, uint64_t bits);
uint64_t get_elem(const Bytes& img, const Operand& op, size_t index);
/// The images of `groups` instructions, zero (scales: the unit scale).
Images blank_images(const Instr& in, size_t groups);

/// Facts about the device for the provenance header.
struct DeviceInfo {
  std::string name, arch, runtime, driver;
};

/// What a device program provides; collector_main does everything else.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* program() const = 0;  ///< "mfma_collect"
  virtual const char* vendor() const = 0;   ///< "AMD" / "NVIDIA"
  virtual const std::vector<Instr>& instructions() const = 0;
  /// Opens the device. Throws NoDevice when there is none (or no driver), RuntimeFailure.
  virtual DeviceInfo open(int device) = 0;
  /// Throws Unsupported (with the reason) when the open device cannot run `in`.
  virtual void check(const Instr& in) = 0;
  virtual void launch(const Instr& in, size_t groups, const Images& im, Bytes& D) = 0;
};

/// The whole command line of a collector program (see --help). Returns the exit status.
int collector_main(Backend& be, int argc, char** argv);

/// UTC time as 2026-12-02T10:00:00Z.
std::string utc_now();

}  // namespace mcc
