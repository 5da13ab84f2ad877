#include "matcore/npy.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "matcore/vectors.hpp"

namespace mc {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw InputError(path + ": not a .npy array of bit patterns: " + what);
}

/// The value of key `key` in the header dictionary text ("'descr': '<u4', ..."), as written.
std::string dict_value(const std::string& path, const std::string& h, const std::string& key) {
  const size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) bad(path, "header field '" + key + "' missing");
  size_t v = h.find(':', k);
  if (v == std::string::npos) bad(path, "header field '" + key + "' has no value");
  ++v;
  while (v < h.size() && h[v] == ' ') ++v;
  size_t e = v;
  if (v < h.size() && h[v] == '(') {
    e = h.find(')', v);
    if (e == std::string::npos) bad(path, "header field 'shape' is not closed");
    return h.substr(v, e + 1 - v);
  }
  while (e < h.size() && h[e] != ',' && h[e] != '}') ++e;
  return h.substr(v, e - v);
}

std::vector<uint64_t> parse_shape(const std::string& path, const std::string& s) {
  std::vector<uint64_t> r;
  size_t i = 1;
  while (i < s.size() && s[i] != ')') {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
    if (i >= s.size() || s[i] == ')') break;
    if (s[i] < '0' || s[i] > '9') bad(path, "header field 'shape' = " + excerpt(s) + ": not a tuple of sizes");
    uint64_t v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (v > (uint64_t{1} << 50)) bad(path, "header field 'shape' = " + excerpt(s) + ": too large");
      v = v * 10 + static_cast<uint64_t>(s[i++] - '0');
    }
    r.push_back(v);
  }
  return r;
}

}  // namespace

bool is_npy_path(const std::string& path) {
  return path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
}

int npy_word(int bits) { return bits <= 8 ? 1 : bits <= 16 ? 2 : bits <= 32 ? 4 : 8; }

NpyArray::NpyArray(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw InputError(path + ": cannot open (" + std::strerror(errno) + ")");
  note_input(path);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    bad(path, "not a regular file");
  }
  map_size_ = static_cast<size_t>(st.st_size);
  if (map_size_ < 10) {
    ::close(fd);
    bad(path, map_size_ == 0 ? "the file is empty" : "the file is shorter than a .npy header");
  }
  map_ = ::mmap(nullptr, map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map_ == MAP_FAILED) {
    ::close(fd);
    map_ = nullptr;
    bad(path, std::string("cannot map it (") + std::strerror(errno) + ")");
  }
  fd_ = fd;  // kept for get()'s reads
  ::madvise(map_, map_size_, MADV_SEQUENTIAL);
  ::madvise(map_, map_size_, MADV_WILLNEED);
  try {
    parse_header();
  } catch (...) {  // no destructor runs for a constructor that throws
    ::munmap(map_, map_size_);
    ::close(fd_);
    throw;
  }
}

void NpyArray::parse_header() {
  const std::string& path = path_;
  const unsigned char* p = static_cast<const unsigned char*>(map_);
  if (std::memcmp(p, kMagic, 6) != 0) bad(path, "no \\x93NUMPY magic");
  const int major = p[6];
  size_t hl, start;
  if (major == 1) { hl = p[8] | (size_t{p[9]} << 8); start = 10; }
  else if (major == 2 || major == 3) {
    if (map_size_ < 12) bad(path, "the file is shorter than a .npy header");
    hl = p[8] | (size_t{p[9]} << 8) | (size_t{p[10]} << 16) | (size_t{p[11]} << 24);
    start = 12;
  } else {
    bad(path, "format version " + std::to_string(major) + " (1, 2 or 3 expected)");
  }
  if (start + hl > map_size_) bad(path, "the header is longer than the file");
  const std::string h(reinterpret_cast<const char*>(p + start), hl);
  const std::string descr = dict_value(path, h, "descr");
  if (descr.size() != 5 || (descr[1] != '<' && descr[1] != '|') || descr[2] != 'u' || descr[3] == '\0' || std::strchr("1248", descr[3]) == nullptr)
    bad(path, "header field 'descr' = " + excerpt(descr) + ": unsigned little-endian integers expected ('<u1', '<u2', '<u4', '<u8')");
  word_ = descr[3] - '0';
  if (dict_value(path, h, "fortran_order") != "False") bad(path, "header field 'fortran_order': C order expected (False)");
  shape_ = parse_shape(path, dict_value(path, h, "shape"));
  data_ = p + start + hl;
  uint64_t need = static_cast<uint64_t>(word_);
  for (uint64_t d : shape_)
    if (__builtin_mul_overflow(need, d, &need)) bad(path, "header field 'shape': more elements than a file can hold");
  if (need != map_size_ - start - hl)
    bad(path, "the data is " + std::to_string(map_size_ - start - hl) + " bytes, the header's shape needs " + std::to_string(need));
}

NpyArray::~NpyArray() {
  if (map_) ::munmap(map_, map_size_);
  if (fd_ >= 0) ::close(fd_);
}

uint64_t NpyArray::size() const {
  uint64_t n = 1;
  for (uint64_t s : shape_) n *= s;
  return n;
}

uint64_t NpyArray::at(uint64_t i) const {
  const unsigned char* q = data_ + i * static_cast<uint64_t>(word_);
  uint64_t v = 0;
  std::memcpy(&v, q, static_cast<size_t>(word_));  // little-endian host
  return v;
}

namespace {

/// Elements [first, first + n) of `word`-byte words at data, widened (or cut) to T. The data
/// starts at a multiple of 64 bytes of a page-aligned mapping (the header pads to it), so the
/// elements are aligned; a header of another length goes the byte-wise way.
template <class T>
void widen_words(const unsigned char* data, int word, uint64_t first, uint64_t n, T* out) {
  if (n == 0) return;  // (an empty array: out may be null)
  const uint64_t w = static_cast<uint64_t>(word);
  const unsigned char* q = data + first * w;
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0 || w > sizeof(T)) {
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t v = 0;
      std::memcpy(&v, q + i * w, static_cast<size_t>(w));  // little-endian host
      out[i] = static_cast<T>(v);
    }
    return;
  }
  if (w == sizeof(T)) { std::memcpy(out, q, n * sizeof(T)); return; }
  auto widen = [&](const auto* x) { for (uint64_t i = 0; i < n; ++i) out[i] = x[i]; };
  if (w == 4) widen(reinterpret_cast<const uint32_t*>(q));
  else if (w == 2) widen(reinterpret_cast<const uint16_t*>(q));
  else widen(q);
}

}  // namespace

namespace {

/// Blocks of at least this many bytes are read with pread into a thread's buffer: the kernel's
/// copy out of the page cache streams at several times the rate of loads through the mapping's
/// 4 KiB pages (validate of 4e6 fp16 samples: 0.25 s -> 0.14 s, docs/performance.md).
constexpr uint64_t kReadBytes = 16384;

template <class T>
void get_words(int fd, const unsigned char* map, const unsigned char* data, int word, uint64_t first, uint64_t n, T* out,
               const std::string& path) {
  const uint64_t bytes = n * static_cast<uint64_t>(word);
  if (fd < 0 || bytes < kReadBytes) return widen_words(data, word, first, n, out);
  thread_local std::vector<unsigned char> buf;
  buf.resize(bytes + 8);
  unsigned char* aligned = buf.data() + (8 - reinterpret_cast<uintptr_t>(buf.data()) % 8) % 8;
  const off_t at = static_cast<off_t>((data - map) + first * static_cast<uint64_t>(word));
  for (uint64_t got = 0; got < bytes;) {
    const ssize_t r = ::pread(fd, aligned + got, bytes - got, at + static_cast<off_t>(got));
    if (r <= 0) throw InputError(path + ": cannot read (" + (r < 0 ? std::strerror(errno) : "the file was cut short") + ")");
    got += static_cast<uint64_t>(r);
  }
  widen_words(aligned, word, 0, n, out);
  if (buf.capacity() > (size_t{1} << 24)) std::vector<unsigned char>().swap(buf);  // keep at most 16 MiB a thread
}

}  // namespace

void NpyArray::get(uint64_t first, uint64_t n, uint32_t* out) const {
  get_words(fd_, static_cast<const unsigned char*>(map_), data_, word_, first, n, out, path_);
}

void NpyArray::get(uint64_t first, uint64_t n, uint64_t* out) const {
  get_words(fd_, static_cast<const unsigned char*>(map_), data_, word_, first, n, out, path_);
}

void NpyArray::expect_dims(size_t dims, const std::string& role) const {
  if (shape_.size() != dims)
    throw InputError(path_ + ": header field 'shape': the " + role + " array must have " + std::to_string(dims) +
                     (dims == 1 ? " dimension (one value a sample)" : " dimensions (samples, K)") + ", not " +
                     std::to_string(shape_.size()));
}

std::string npy_header(int word, const std::vector<uint64_t>& shape) {
  std::string s = "(";  // Python's repr of the tuple: (N,) or (N, K)
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  s += shape.size() == 1 ? ",)" : ")";
  std::string h = "{'descr': '<u" + std::to_string(word) + "', 'fortran_order': False, 'shape': " + s + ", }";
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string head(kMagic, 6);
  head += '\x01';
  head += '\x00';
  head += static_cast<char>(h.size() & 0xff);
  head += static_cast<char>(h.size() >> 8);
  head += h;
  return head;
}

std::vector<unsigned char> npy_words(const uint64_t* v, uint64_t n, int word) {
  std::vector<unsigned char> buf(n * static_cast<uint64_t>(word));
  for (uint64_t i = 0; i < n; ++i) std::memcpy(&buf[i * static_cast<uint64_t>(word)], &v[i], static_cast<size_t>(word));
  return buf;
}

NpyWriter::NpyWriter(const std::string& path, int word, const std::vector<uint64_t>& shape) : f_(path), word_(word) {
  const std::string head = npy_header(word, shape);
  f_.write(head);
  header_ = head.size();
}

void NpyWriter::put(uint64_t first, uint64_t n, const uint64_t* v) {
  const std::vector<unsigned char> buf = npy_words(v, n, word_);
  f_.pwrite(buf.data(), buf.size(), header_ + first * static_cast<uint64_t>(word_));
}

}  // namespace mc
