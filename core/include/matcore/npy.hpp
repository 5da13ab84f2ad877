// matcore: the binary form of the shared vector format (docs/vector-format.md, "Binary form"):
// NumPy .npy files (format version 1.0) of unsigned bit patterns, little-endian, C order:
//
//   a.npy, b.npy  (N, K)  the patterns of the input formats themselves (uint8 for fp8/fp6/fp4,
//                         uint16 for fp16/bf16, uint32 for binary32/tf32, uint64 for binary64)
//   c.npy, d.npy  (N,)    the stored patterns of c and d files: binary32 (uint32) or binary64
//                         (uint64), as in c.txt / d.txt
//
// A reader maps the file for its header and reads blocks of elements with pread (no parsing);
// any unsigned integer dtype of 1-8 bytes is taken. Errors are InputErrors naming the file and the header field (descr, fortran_order,
// shape) or the element (sample i, value k) that is wrong.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "matcore/output.hpp"

namespace mc {

/// Whether a vector path names the binary form (ends in .npy).
bool is_npy_path(const std::string& path);

/// A read-only .npy array of unsigned integers (mapped; large blocks read with pread).
class NpyArray {
 public:
  explicit NpyArray(const std::string& path);
  ~NpyArray();
  NpyArray(const NpyArray&) = delete;
  NpyArray& operator=(const NpyArray&) = delete;
  const std::string& path() const { return path_; }
  const std::vector<uint64_t>& shape() const { return shape_; }
  int word() const { return word_; }  ///< bytes per element: 1, 2, 4 or 8
  uint64_t size() const;              ///< number of elements
  uint64_t at(uint64_t i) const;      ///< element i (C order)
  /// Elements [first, first + n) widened into out.
  void get(uint64_t first, uint64_t n, uint64_t* out) const;
  /// The same into 32-bit words (elements of at most 4 bytes; wider ones are cut).
  void get(uint64_t first, uint64_t n, uint32_t* out) const;
  /// Throws naming the file unless the array has this many dimensions (rows: shape[0]).
  void expect_dims(size_t dims, const std::string& role) const;

 private:
  std::string path_;
  std::vector<uint64_t> shape_;
  int word_ = 8;
  const unsigned char* data_ = nullptr;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  int fd_ = -1;  ///< kept open: large blocks are read (get), small ones and at() mapped
  void parse_header();  ///< shape_, word_, data_ from the mapped header (throws naming the file)
};

/// The unsigned dtype word (1, 2, 4, 8 bytes) that holds patterns of `bits` bits.
int npy_word(int bits);
/// The header of a .npy array of `word`-byte unsigned integers of this shape (version 1.0,
/// padded to 64 bytes).
std::string npy_header(int word, const std::vector<uint64_t>& shape);
/// Elements cut to `word` bytes, little endian, as the array's data holds them.
std::vector<unsigned char> npy_words(const uint64_t* v, uint64_t n, int word);

/// Writes a .npy array of `word`-byte unsigned integers of the given shape, complete or not at
/// all (an OutputFile: temporary, then renamed). Rows may be written in any order and from
/// several threads (disjoint ranges).
class NpyWriter {
 public:
  NpyWriter(const std::string& path, int word, const std::vector<uint64_t>& shape);
  /// Elements [first, first + n) in C order, cut to the word.
  void put(uint64_t first, uint64_t n, const uint64_t* v);
  void commit() { f_.commit(); }

 private:
  OutputFile f_;
  int word_;
  uint64_t header_ = 0;
};

}  // namespace mc
