// matcore from Python (pybind11 + NumPy): the same core as the command line, bit for bit.
//
//   import matcore
//   dp = matcore.preset("mi300x", "fp16")              # or matcore.load("my.toml"), dp.with_(frac_bits=27)
//   a = matcore.encode(x, dp.a_fmt)                     # float64 array -> uint64 bit patterns
//   d = matcore.dot(dp, a, b, c)                        # (N, K) x (N, K) (+ (N,)) -> (N,) out_fmt bits
//   D = matcore.gemm(dp, A, B, C)                       # float64 matrices in, float64 (exact) out
//   D = matcore.mfma("mi300x", "v_mfma_f32_4x4x4f16", A, B, C)   # one instruction
//   matcore.validate(dp, a, b, c, d)                    # {"samples", "mismatches", "first"}
//   matcore.trace(dp, a_row, b_row, c)                  # [(signal, value), ...], d
//
// Arrays are checked, never silently converted: bit patterns must be uint64, values float64,
// C-contiguous, of the documented shapes (TypeError / ValueError naming the argument).
// Long calls release the GIL and use every core (threads=0) or the given number.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>

#include "matcore/datapath_file.hpp"
#include "matcore/fields.hpp"
#include "matcore/instructions.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/threads.hpp"
#include "matcore/fast.hpp"
#include "matcore/rtl_driver.hpp"
#include "matcore/explore.hpp"
#include "matcore/validate.hpp"
#include "matcore/svg.hpp"
#include "matcore/sample.hpp"
#include "matcore/vectors.hpp"

namespace py = pybind11;
using namespace mc;

namespace {

using U64 = py::array_t<uint64_t, py::array::c_style>;
using F64 = py::array_t<double, py::array::c_style>;

bool narrow_words(const py::handle& h);

/// The array as uint64 bit patterns: dtype uint64 and C-contiguous, else TypeError.
U64 bits_arg(const py::handle& h, const char* what) {
  if (!py::isinstance<py::array>(h)) throw py::type_error(std::string(what) + ": expected a numpy array of uint64 bit patterns");
  py::array a = py::reinterpret_borrow<py::array>(h);
  if (!a.dtype().is(py::dtype::of<uint64_t>()))
    throw py::type_error(std::string(what) + ": expected dtype uint64 (bit patterns; matcore.encode makes them), got " +
                         std::string(py::str(a.dtype())));
  if (!(a.flags() & py::array::c_style)) throw py::value_error(std::string(what) + ": the array must be C-contiguous (np.ascontiguousarray)");
  return py::reinterpret_borrow<U64>(a);
}

/// As bits_arg, but 8-, 16- and 32-bit unsigned words are taken too (widened: for 1-D d).
U64 words_arg(const py::handle& h, const char* what) {
  if (!narrow_words(h)) return bits_arg(h, what);
  return py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(h);
}

F64 values_arg(const py::handle& h, const char* what) {
  if (!py::isinstance<py::array>(h)) throw py::type_error(std::string(what) + ": expected a numpy array of float64 values");
  py::array a = py::reinterpret_borrow<py::array>(h);
  if (!a.dtype().is(py::dtype::of<double>()))
    throw py::type_error(std::string(what) + ": expected dtype float64, got " + std::string(py::str(a.dtype())));
  if (!(a.flags() & py::array::c_style)) throw py::value_error(std::string(what) + ": the array must be C-contiguous (np.ascontiguousarray)");
  return py::reinterpret_borrow<F64>(a);
}

void check_width(const U64& a, const Format& f, const char* what) {
  const uint64_t mask = f.width() >= 64 ? ~uint64_t{0} : (uint64_t{1} << f.width()) - 1;
  const uint64_t* p = a.data();
  for (py::ssize_t i = 0; i < a.size(); ++i)
    if (p[i] & ~mask)
      throw py::value_error(std::string(what) + "[" + std::to_string(i) + "] = 0x" + to_hex(p[i]) + " is not a " + f.name +
                            " bit pattern (" + std::to_string(f.width()) + " bits)");
}

uint64_t to_bits64(double x) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  return u;
}

const Format& fmt_arg(const std::string& name) {
  try {
    return format_by_name(name);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

Rounding rounding_arg(const std::string& s) {
  Rounding r;
  if (!parse_rounding(s, r)) throw py::value_error("rounding must be one of rne, rtz, rd, ru, rna (got '" + s + "')");
  return r;
}

/// Runs fn(i) for i in [0, n) on `threads` threads (0: every core) without the GIL.
template <class F>
void parallel_for(size_t n, unsigned threads, F&& fn) {
  py::gil_scoped_release release;
  const unsigned nt = static_cast<unsigned>(std::min<size_t>(thread_count(threads), std::max<size_t>(n, 1)));
  std::atomic<size_t> next{0};
  run_parallel(nt, [&](unsigned) {
    for (;;) {
      const size_t i0 = next.fetch_add(256);
      if (i0 >= n) break;
      for (size_t i = i0; i < std::min(n, i0 + 256); ++i) fn(i);
    }
  });
}

py::dict fields_of(const Datapath& dp) {
  py::dict d;
  for (const Field& f : datapath_fields()) d[py::str(f.name)] = f.get(dp);
  return d;
}

Datapath with_fields(const Datapath& dp, const py::kwargs& kw) {
  Datapath v = dp;
  try {
    for (const auto& item : kw) {
      const std::string k = py::str(item.first);
      std::string val;
      if (py::isinstance<py::bool_>(item.second)) val = item.second.cast<bool>() ? "true" : "false";
      else if (item.second.is_none()) val = find_field(k) && find_field(k)->kind == FieldKind::Limit ? find_field(k)->none_word : "none";
      else val = py::str(item.second);
      set_field(v, k, val);
    }
    validate_datapath(v);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
  return v;
}

/// The block scales of a block-scaled datapath: (N, ceil(K / scale_block)) patterns of scale_fmt,
/// or None (unit scales). Empty when dp has no scales (and then sa/sb must be None).
U64 scales_arg(const Datapath& dp, const py::handle& h, const char* what, size_t N, int K) {
  if (h.is_none()) return U64();
  if (!dp.scaled()) throw py::value_error(std::string(what) + ": datapath " + dp.name() + " has no block scales");
  const U64 s = bits_arg(h, what);
  const int per = scales_per_sample(dp, K);
  if (s.ndim() != 2 || static_cast<size_t>(s.shape(0)) != N || s.shape(1) != per)
    throw py::value_error(std::string(what) + " must be (" + std::to_string(N) + ", " + std::to_string(per) +
                          "): one " + dp.scale_fmt.name + " scale per " + std::to_string(dp.scale_block) + " elements");
  check_width(s, dp.scale_fmt, what);
  return s;
}

/// An unsigned array of 8-, 16- or 32-bit words, C-contiguous (the compact forms of bit
/// patterns: np.uint16 for fp16/bf16, np.uint8 for fp8, np.uint32 for binary32).
bool narrow_words(const py::handle& h) {
  if (!py::isinstance<py::array>(h)) return false;
  const py::array a = py::reinterpret_borrow<py::array>(h);
  return a.dtype().kind() == 'u' && a.itemsize() <= 4 && (a.flags() & py::array::c_style);
}

/// n words of a narrow (or uint64) array from element `at`, as 32-bit words (a pattern above
/// `width` bits: its index in *bad, the lowest one kept).
void load_words(const py::array& a, size_t at, size_t n, int width, uint32_t* dst, std::atomic<size_t>* bad) {
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  auto take = [&](const auto* p) {
    uint64_t over = 0;
    for (size_t i = 0; i < n; ++i) {
      dst[i] = static_cast<uint32_t>(p[at + i]);
      over |= static_cast<uint64_t>(p[at + i]) & ~mask;
    }
    if (!over) return;
    for (size_t i = 0; i < n; ++i)
      if (static_cast<uint64_t>(p[at + i]) & ~mask) {
        size_t cur = bad->load();
        while (at + i < cur && !bad->compare_exchange_weak(cur, at + i)) {
        }
        return;
      }
  };
  switch (a.itemsize()) {
    case 1: return take(static_cast<const uint8_t*>(a.data()));
    case 2: return take(static_cast<const uint16_t*>(a.data()));
    case 4: return take(static_cast<const uint32_t*>(a.data()));
    default: return take(static_cast<const uint64_t*>(a.data()));
  }
}

/// py_dot on narrow word arrays (formats of at most 32 bits, unscaled): blocks of 1024 samples
/// widened to 32-bit words in cache and run by the kernel's 32-bit batch, no copy of the arrays.
U64 py_dot_narrow(const Datapath& dp, const py::array& a, const py::array& b, const py::handle& ch, unsigned threads) {
  const size_t N = static_cast<size_t>(a.shape(0));
  const int K = static_cast<int>(a.shape(1));
  py::array c;
  const bool has_c = !ch.is_none();
  if (has_c) {
    if (!py::isinstance<py::array>(ch)) throw py::type_error("c: expected a numpy array of unsigned bit patterns");
    c = py::reinterpret_borrow<py::array>(ch);
    if (c.dtype().kind() != 'u' || !(c.flags() & py::array::c_style))
      throw py::type_error("c: expected a C-contiguous unsigned integer array, got " + std::string(py::str(c.dtype())));
    if (c.ndim() != 1 || static_cast<size_t>(c.shape(0)) != N)
      throw py::value_error("c must be 1-D with one value per sample (" + std::to_string(N) + ")");
  }
  U64 d(static_cast<py::ssize_t>(N));
  uint64_t* dout = d.mutable_data();
  const FastDot fd(dp);
  std::atomic<size_t> bad_a{N * K}, bad_b{N * K}, bad_c{N};
  const size_t chunks = (N + 1023) / 1024;
  parallel_for(chunks, threads, [&](size_t ch) {
    const size_t i = ch * 1024, m = std::min<size_t>(1024, N - i);
    // a worker's block buffers, kept from one block to the next up to 2^20 words each (not
    // cleared: every word used is loaded first); longer samples' blocks in buffers of their own
    thread_local std::vector<uint32_t> keep_a, keep_b, keep_c, keep_d;
    std::vector<uint32_t> own_a, own_b, own_c, own_d;
    const bool small = m * K <= (size_t{1} << 20);
    std::vector<uint32_t>& wa = small ? keep_a : own_a;
    std::vector<uint32_t>& wb = small ? keep_b : own_b;
    std::vector<uint32_t>& wc = small ? keep_c : own_c;
    std::vector<uint32_t>& wd = small ? keep_d : own_d;
    if (wa.size() < m * K) wa.resize(m * K), wb.resize(m * K);
    if (wc.size() < m) wc.resize(m), wd.resize(m);
    load_words(a, i * K, m * K, dp.a_fmt.width(), wa.data(), &bad_a);
    load_words(b, i * K, m * K, dp.b_fmt.width(), wb.data(), &bad_b);
    if (has_c) load_words(c, i, m, dp.out_fmt.width(), wc.data(), &bad_c);
    else std::fill(wc.begin(), wc.begin() + static_cast<std::ptrdiff_t>(m), 0u);
    fd.batch(wa.data(), wb.data(), wc.data(), wd.data(), m, K);
    for (size_t j = 0; j < m; ++j) dout[i + j] = wd[j];
  });
  const struct { const std::atomic<size_t>& at; size_t end; const py::array& arr; const Format& f; const char* what; } checks[] = {
      {bad_a, N * K, a, dp.a_fmt, "a"}, {bad_b, N * K, b, dp.b_fmt, "b"}, {bad_c, N, c, dp.out_fmt, "c"}};
  for (const auto& k : checks)
    if (k.at.load() < k.end)
      throw py::value_error(std::string(k.what) + "[" + std::to_string(k.at.load()) + "] is not a " + k.f.name +
                            " bit pattern (" + std::to_string(k.f.width()) + " bits)");
  return d;
}

/// a, b: (N, K) bit patterns (uint64, or for formats of at most 32 bits uint8/16/32); c: (N,) or
/// None (zeros); sa, sb: block scales or None. Returns (N,) out_fmt bit patterns.
U64 py_dot(const Datapath& dp, const py::handle& ah, const py::handle& bh, const py::handle& ch, unsigned threads,
           const py::handle& sah, const py::handle& sbh, bool exact = false) {
  if (narrow_words(ah) != narrow_words(bh))
    throw py::type_error("a and b: give both as uint64 bit patterns, or both as compact uint8/uint16/uint32 words");
  if (narrow_words(ah)) {  // compact words: the 32-bit kernel, no copy
    if (!sah.is_none() || !sbh.is_none()) throw py::value_error("sa, sb: " + dp.name() + " takes no block scales here");
    if (exact || dp.scaled() || dp.a_fmt.width() > 32 || dp.b_fmt.width() > 32 || dp.out_fmt.width() > 32)
      throw py::type_error("a, b: uint8/uint16/uint32 arrays are taken for unscaled datapaths of formats up to 32 bits "
                           "(dot, validate); pass uint64 bit patterns here");
    const py::array na = py::reinterpret_borrow<py::array>(ah), nb = py::reinterpret_borrow<py::array>(bh);
    if (na.ndim() != 2 || nb.ndim() != 2) throw py::value_error("a and b must be 2-D (samples, K)");
    if (na.shape(0) != nb.shape(0) || na.shape(1) != nb.shape(1)) throw py::value_error("a and b must have the same shape");
    if (na.shape(1) < 1) throw py::value_error("K (the second dimension) must be at least 1");
    return py_dot_narrow(dp, na, nb, ch, threads);
  }
  const U64 a = bits_arg(ah, "a"), b = bits_arg(bh, "b");
  if (a.ndim() != 2 || b.ndim() != 2) throw py::value_error("a and b must be 2-D (samples, K)");
  if (a.shape(0) != b.shape(0) || a.shape(1) != b.shape(1))
    throw py::value_error("a and b must have the same shape (got (" + std::to_string(a.shape(0)) + ", " + std::to_string(a.shape(1)) +
                          ") and (" + std::to_string(b.shape(0)) + ", " + std::to_string(b.shape(1)) + "))");
  const size_t N = static_cast<size_t>(a.shape(0));
  const int K = static_cast<int>(a.shape(1));
  if (K < 1) throw py::value_error("K (the second dimension) must be at least 1");
  check_width(a, dp.a_fmt, "a");
  check_width(b, dp.b_fmt, "b");
  U64 c;
  const uint64_t* cp = nullptr;
  if (!ch.is_none()) {
    c = bits_arg(ch, "c");
    if (c.ndim() != 1 || static_cast<size_t>(c.shape(0)) != N)
      throw py::value_error("c must be 1-D with one value per sample (" + std::to_string(N) + ")");
    check_width(c, dp.out_fmt, "c");
    cp = c.data();
  }
  U64 d(static_cast<py::ssize_t>(N));
  const uint64_t *ap = a.data(), *bp = b.data();
  uint64_t* dp_out = d.mutable_data();
  const U64 sa = scales_arg(dp, sah, "sa", N, K), sb = scales_arg(dp, sbh, "sb", N, K);
  if (exact) {  // the exact a.b + c rounded once (explore.hpp, exact_result)
    const int per = scales_per_sample(dp, K);
    const uint64_t *sap = sa.size() ? sa.data() : nullptr, *sbp = sb.size() ? sb.data() : nullptr;
    parallel_for(N, threads, [&](size_t i) {
      dp_out[i] = exact_result(dp, ap + i * K, bp + i * K, K, cp ? cp[i] : 0, sap ? sap + i * per : nullptr,
                               sbp ? sbp + i * per : nullptr);
    });
    return d;
  }
  const FastDot fd(dp);
  // the fast kernels' batch, 1024 samples a task (block-scaled: with each sample's scales;
  // ST-FDPA with E8M0 scales in the fused lanes)
  const int per = scales_per_sample(dp, K);
  const uint64_t *sap = sa.size() ? sa.data() : nullptr, *sbp = sb.size() ? sb.data() : nullptr;
  std::vector<uint64_t> zeros(cp ? 0 : std::min<size_t>(N, 1024), 0);
  const size_t chunks = (N + 1023) / 1024;
  parallel_for(chunks, threads, [&](size_t ch) {
    const size_t i = ch * 1024, m = std::min<size_t>(1024, N - i);
    const uint64_t* ci = cp ? cp + i : zeros.data();
    if (dp.scaled())
      fd.batch(ap + i * K, bp + i * K, ci, dp_out + i, m, K, sap ? sap + i * per : nullptr, sbp ? sbp + i * per : nullptr);
    else
      fd.batch(ap + i * K, bp + i * K, ci, dp_out + i, m, K);
  });
  return d;
}

Matrix matrix_of(const F64& x, const Format& f, Rounding r, const char* what, bool is_c) {
  if (x.ndim() != 2) throw py::value_error(std::string(what) + " must be 2-D");
  Matrix M{static_cast<int>(x.shape(0)), static_cast<int>(x.shape(1)), std::vector<uint64_t>(static_cast<size_t>(x.size()))};
  const double* p = x.data();
  for (size_t i = 0; i < M.v.size(); ++i) M.v[i] = f == kBinary64 ? to_bits64(p[i]) : convert(kBinary64, to_bits64(p[i]), f, is_c ? Rounding::RNE : r);
  return M;
}


/// One dot product of 1-D bit-pattern arrays (and its 1-D block scales), traced into t.
uint64_t one_dot(const Datapath& dp, const py::handle& ah, const py::handle& bh, uint64_t c, const py::handle& sah,
                 const py::handle& sbh, Trace* t) {
  const U64 a = bits_arg(ah, "a"), b = bits_arg(bh, "b");
  if (a.ndim() != 1 || b.ndim() != 1 || a.shape(0) != b.shape(0) || a.shape(0) < 1)
    throw py::value_error("a and b must be 1-D with the same length K >= 1 (one dot product)");
  check_width(a, dp.a_fmt, "a");
  check_width(b, dp.b_fmt, "b");
  const uint64_t mask = dp.out_fmt.width() >= 64 ? ~uint64_t{0} : (uint64_t{1} << dp.out_fmt.width()) - 1;
  if (c & ~mask) throw py::value_error("c is not a " + dp.out_fmt.name + " bit pattern");
  // block scales: 1-D, ceil(K / scale_block) patterns each (the (N, ...) check of dot with N = 1)
  const int K = static_cast<int>(a.shape(0));
  auto one_row = [&](const py::handle& h, const char* what) {
    if (h.is_none()) return U64();
    U64 s = bits_arg(h, what);
    if (s.ndim() != 1) throw py::value_error(std::string(what) + " must be 1-D (one dot product)");
    return scales_arg(dp, s.reshape({static_cast<py::ssize_t>(1), s.shape(0)}), what, 1, K);
  };
  const U64 sa = one_row(sah, "sa"), sb = one_row(sbh, "sb");
  const ScaleRefs r{sa.size() ? sa.data() : nullptr, sb.size() ? sb.data() : nullptr};
  return dot(dp, a.data(), b.data(), K, c, r, t);
}

py::int_ big_int(u128 x) { return py::reinterpret_steal<py::int_>(PyLong_FromString(to_hex(x).c_str(), nullptr, 16)); }

/// A vector handed over to NumPy without a copy, as an array of the given shape.
U64 array_of(std::vector<uint64_t>& v, py::ssize_t rows, py::ssize_t cols) {
  auto* own = new std::vector<uint64_t>(std::move(v));
  py::capsule free(own, [](void* q) { delete static_cast<std::vector<uint64_t>*>(q); });
  return cols ? U64({rows, cols}, own->data(), free) : U64({rows}, own->data(), free);
}

/// The sample set `matcore sample` writes for dp (the same mt19937 streams, the same bits), drawn
/// in memory: a, b (n, k) and c (n,) in the datapath's formats, and with block scales sa, sb.
py::tuple sample_arrays(const Datapath& dp, uint64_t n, int k, uint32_t seed, const std::string& strategy, bool subnormal,
                        unsigned threads) {
  if (n < 1) throw py::value_error("n must be at least 1");
  if (k < 0 || k > (1 << 16)) throw py::value_error("k must be in 1..65536 (0: the preset's)");
  if (strategy != "expmant" && strategy != "bits") throw py::value_error("strategy must be 'expmant' or 'bits'");
  SampleSpec s = sample_spec_for(dp, subnormal);
  s.N = n;
  if (k) s.K = k;
  s.seed = seed;
  s.strategy = strategy == "bits" ? Strategy::Bits : Strategy::ExpMant;
  const size_t K = static_cast<size_t>(s.K);
  std::vector<uint64_t> a(n * K), b(n * K), c(n), sa, sb;
  {
    py::gil_scoped_release release;
    const int w = stored_width(dp.a_fmt);
    stream_samples(s, [&](uint64_t first, uint64_t m, const uint64_t* xa, const uint64_t* xb, const uint64_t* xc) {
      std::memcpy(&a[first * K], xa, m * K * 8);
      std::memcpy(&b[first * K], xb, m * K * 8);
      for (uint64_t i = 0; i < m; ++i) {  // c as the files hold it, into the accumulator as validate takes it
        bool rounded = false;
        c[first + i] = c_operand(dp, xc[i], w, &rounded);
      }
    }, threads);
    if (dp.scaled()) sample_scales(s, sa, sb);
  }
  const py::ssize_t N = static_cast<py::ssize_t>(n), KK = s.K;
  if (!dp.scaled()) return py::make_tuple(array_of(a, N, KK), array_of(b, N, KK), array_of(c, N, 0));
  const py::ssize_t S = static_cast<py::ssize_t>(sa.size() / n);
  return py::make_tuple(array_of(a, N, KK), array_of(b, N, KK), array_of(c, N, 0), array_of(sa, N, S), array_of(sb, N, S));
}

/// The trace as records: per group and stage, each record's signals with their bits.
py::list trace_records(const Trace& t) {
  py::list out;
  int group = 0;
  for (const TraceRow& r : t.rows) {
    if (r.name == "group") group = std::stoi(r.value);
    if (r.signals.empty()) continue;
    py::dict d, bits, widths;
    d["group"] = group;
    d["stage"] = r.name.substr(0, r.name.find('.'));
    d["signal"] = r.name;
    d["value"] = r.value;
    for (const TraceSignal& sg : r.signals) {
      bits[sg.name.c_str()] = big_int(sg.bits);
      widths[sg.name.c_str()] = sg.width;
    }
    d["bits"] = bits;
    d["widths"] = widths;
    d["number"] = r.number.on ? py::object(py::make_tuple(r.number.neg ? -1 : 1, big_int(r.number.mag), r.number.lsb))
                              : py::object(py::none());
    out.append(d);
  }
  return out;
}

/// The bit-pattern formats: formats, encode, decode.
void bind_formats(py::module_& m) {
  m.def("formats", &format_names, "names of the formats (binary16, bf16, e4m3fnuz, ...)");
  m.def(
      "encode",
      [](const py::handle& x, const std::string& fmt, const std::string& rounding) {
        const F64 v = values_arg(x, "x");
        const Format& f = fmt_arg(fmt);
        const Rounding r = rounding_arg(rounding);
        U64 out(std::vector<py::ssize_t>(v.shape(), v.shape() + v.ndim()));
        const double* p = v.data();
        uint64_t* o = out.mutable_data();
        for (py::ssize_t i = 0; i < v.size(); ++i) o[i] = f == kBinary64 ? to_bits64(p[i]) : convert(kBinary64, to_bits64(p[i]), f, r);
        return out;
      },
      py::arg("x"), py::arg("fmt"), py::arg("rounding") = "rne",
      "float64 values rounded into a format: uint64 bit patterns (NaN -> the format's NaN, overflow -> Inf or NaN)");
  m.def(
      "decode",
      [](const py::handle& x, const std::string& fmt) {
        const U64 v = bits_arg(x, "bits");
        const Format& f = fmt_arg(fmt);
        check_width(v, f, "bits");
        F64 out(std::vector<py::ssize_t>(v.shape(), v.shape() + v.ndim()));
        const uint64_t* p = v.data();
        double* o = out.mutable_data();
        for (py::ssize_t i = 0; i < v.size(); ++i) o[i] = to_host_double(f, p[i]);
        return out;
      },
      py::arg("bits"), py::arg("fmt"), "bit patterns of a format as float64 values (exact: every format here fits binary64)");

}

/// Datapaths: the Datapath class, preset, load, datapath, presets.
void bind_datapaths(py::module_& m) {
  py::class_<Datapath>(m, "Datapath", "a datapath: a preset, a datapath file, or either with changed fields")
      .def_property_readonly("name", [](const Datapath& d) { return d.name() + (d.variant.empty() ? "" : "+" + d.variant); })
      .def_property_readonly("a_fmt", [](const Datapath& d) { return d.a_fmt.name; })
      .def_property_readonly("b_fmt", [](const Datapath& d) { return d.b_fmt.name; })
      .def_property_readonly("out_fmt", [](const Datapath& d) { return d.out_fmt.name; })
      .def_property_readonly("k", [](const Datapath& d) { return d.k_default; })
      .def("fields", &fields_of, "every field of the field table as text (docs/datapath-files.md)")
      .def("__getitem__", [](const Datapath& d, const std::string& k) {
        try {
          return get_field(d, k);
        } catch (const std::invalid_argument& e) {
          throw py::key_error(e.what());
        }
      })
      .def("with_", &with_fields, "a copy with fields changed: dp.with_(frac_bits=27, prod_align='rne', emin_lim=None)")
      .def("toml", &datapath_to_toml, "the datapath as a datapath file")
      .def("__repr__", [](const Datapath& d) { return "<matcore.Datapath " + d.name() + (d.variant.empty() ? "" : "+" + d.variant) + ">"; });

  m.def(
      "preset",
      [](const std::string& arch, const std::string& type, const std::string& out, const std::string& variant) {
        try {
          return find_preset(arch, type, out, variant);
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
      },
      py::arg("arch"), py::arg("type"), py::arg("out") = "", py::arg("variant") = "", "a preset, as --arch/--type/--out/--variant");
  m.def(
      "load",
      [](const std::string& path) {
        try {
          return load_datapath_file(path);
        } catch (const std::exception& e) {
          throw py::value_error(e.what());
        }
      },
      py::arg("path"), "a datapath file (TOML)");
  m.def(
      "datapath",
      [](const std::string& name) {
        try {
          return datapath_by_name(name);
        } catch (const std::exception& e) {
          throw py::value_error(e.what());
        }
      },
      py::arg("name"), "a preset by name, 'arch/type[/out][+variant]' (as matcore presets() lists them), or a .toml datapath file");
  m.def("presets", [] {
    std::vector<std::string> v;
    for (const Datapath& d : all_presets()) v.push_back(d.name() + (d.variant.empty() ? "" : "+" + d.variant));
    return v;
  });

}

/// Dot products: dot, exact, sample.
void bind_dots(py::module_& m) {
  m.def("sample", &sample_arrays, py::arg("dp"), py::arg("n"), py::arg("k") = 0, py::arg("seed") = 0,
        py::arg("strategy") = "expmant", py::arg("subnormal") = false, py::arg("threads") = 0,
        "random inputs as `matcore sample` draws them (section 5 of the paper: Algorithm 3 'expmant', or "
        "'bits'; the same mt19937 streams, so the same bits as the files): (a, b, c) uint64 arrays, a and b "
        "(n, k) in the datapath's a/b formats, c (n,) in its output format, and for a block-scaled type also "
        "sa, sb (n, ceil(k / scale_block)). k = 0: the preset's");
  m.def("dot",
        [](const Datapath& dp, const py::handle& a, const py::handle& b, const py::handle& c, unsigned threads,
           const py::handle& sa, const py::handle& sb) { return py_dot(dp, a, b, c, threads, sa, sb); },
        py::arg("dp"), py::arg("a"), py::arg("b"), py::arg("c") = py::none(), py::arg("threads") = 0,
        py::arg("sa") = py::none(), py::arg("sb") = py::none(),
        "d = a.b + c for every sample: a, b (N, K) uint64 bit patterns of a_fmt / b_fmt, c (N,) of out_fmt "
        "(None: +0); k chained in groups of n_fma as the hardware does; sa, sb: the block scales of a "
        "block-scaled type, (N, ceil(K / scale_block)) patterns of scale_fmt (None: 1). Returns (N,) out_fmt bit patterns.");

  m.def(
      "exact",
      [](const Datapath& dp, const py::handle& a, const py::handle& b, const py::handle& c, unsigned threads,
         const py::handle& sa, const py::handle& sb) { return py_dot(dp, a, b, c, threads, sa, sb, true); },
      py::arg("dp"), py::arg("a"), py::arg("b"), py::arg("c") = py::none(), py::arg("threads") = 0,
      py::arg("sa") = py::none(), py::arg("sb") = py::none(),
      "the exact a.b + c of every sample rounded once (RNE) to out_fmt: what an ideal unit of dp's formats gives "
      "(the reference of explore; arguments as for dot). Returns (N,) out_fmt bit patterns.");

}

/// Studies of a design: explore, cost.
void bind_studies(py::module_& m) {
  m.def(
      "explore",
      [](const Datapath& dp, int k, uint64_t n, const std::string& dist, uint64_t seed, unsigned threads,
         bool monotonic) {
        ExploreSpec spec;
        if (!parse_workload(dist, spec.workload))
          throw py::value_error("dist must be one of uniform01, uniform11, normal, loguniform, cancel");
        if (k < 1 || n < 1) throw py::value_error("k and n must be positive");
        spec.n = n;
        spec.seed = seed;
        spec.threads = threads;
        spec.monotonic = monotonic;
        ErrorStats e;
        {
          py::gil_scoped_release release;
          e = measure_error(dp, k, spec);
        }
        py::dict r;
        r["n"] = e.n;
        r["finite"] = e.finite;
        r["rms_rel"] = e.rms_rel;
        r["max_rel"] = e.max_rel;
        r["mean_rel"] = e.mean_rel;
        r["mean_ulp"] = e.mean_ulp;
        r["max_abs_ulp"] = e.max_abs_ulp;
        r["correct_frac"] = e.correct_frac();
        r["mono_frac"] = e.mono_frac();
        r["max_bound_ratio"] = e.max_bound;
        r["k_u"] = e.k_u;
        r["rms_nw_u"] = e.rms_nw;
        r["mean_nw_u"] = e.mean_nw;
        r["se_rms_nw_u"] = e.se_rms_nw;
        r["se_mean_nw_u"] = e.se_mean_nw;
        r["se_correct_frac"] = e.se_correct;
        r["ulp_q05"] = e.ulp_quantile(0.05);
        r["ulp_q50"] = e.ulp_quantile(0.5);
        r["ulp_q95"] = e.ulp_quantile(0.95);
        r["ulp_hist"] = std::vector<uint64_t>(e.ulp_hist.begin(), e.ulp_hist.end());
        return r;
      },
      py::arg("dp"), py::arg("k"), py::arg("n") = 10000, py::arg("dist") = "normal", py::arg("seed") = 1,
      py::arg("threads") = 0, py::arg("monotonic") = true,
      "accuracy of dp at dot length k on a workload against the exact sum rounded once, as one row of "
      "matcore explore (docs/explore.md): a dict of the CSV's figures (rms_nw_u, se_rms_nw_u, correct_frac, ...)");

  m.def(
      "cost",
      [](const Datapath& dp) {
        RtlCost c;
        try {
          py::gil_scoped_release release;
          c = rtl_cost(dp);
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
        py::dict r;
        r["nand2"] = c.nand2;
        r["nand2_per_product"] = c.nand2 / dp.n_fma;
        r["cells"] = c.cells;
        r["flops"] = c.flops;
        r["latency"] = c.latency;
        r["depth"] = c.depth;
        r["widest_adder"] = c.widest_adder;
        r["cached"] = c.cached;
        py::list stages;
        for (const StageCost& s : c.stages) {
          py::dict d;
          d["stage"] = s.stage;
          d["modules"] = s.modules;
          d["cells"] = s.cells;
          d["nand2"] = s.nand2;
          d["adder_bits"] = s.adder_bits;
          d["depth"] = s.depth;
          stages.append(d);
        }
        r["stages"] = stages;
        return r;
      },
      py::arg("dp"),
      "hardware cost of dp's RTL top (matcore cost: yosys generic gates, cached per design): NAND2-equivalents, "
      "cells, flip-flops, latency, gate levels, and the same per stage. Needs yosys.");

}

/// Matrix products: gemm, mfma.
void bind_matrices(py::module_& m) {
  m.def(
      "gemm",
      [](const Datapath& dp, const py::handle& Ah, const py::handle& Bh, const py::handle& Ch, int k, unsigned threads,
         bool bits, const py::handle& sah, const py::handle& sbh) -> py::object {
        const F64 A = values_arg(Ah, "A"), B = values_arg(Bh, "B");
        Matrix Am = matrix_of(A, dp.a_fmt, dp.ingest, "A", false), Bm = matrix_of(B, dp.b_fmt, dp.ingest, "B", false);
        if (Am.cols != Bm.rows)
          throw py::value_error("A has " + std::to_string(Am.cols) + " columns but B has " + std::to_string(Bm.rows) + " rows");
        Matrix Cm{Am.rows, Bm.cols, std::vector<uint64_t>(static_cast<size_t>(Am.rows) * Bm.cols, 0)};
        if (!Ch.is_none()) {
          Cm = matrix_of(values_arg(Ch, "C"), dp.out_fmt, Rounding::RNE, "C", true);
          if (Cm.rows != Am.rows || Cm.cols != Bm.cols) throw py::value_error("C must be A.rows x B.cols");
        }
        if (k < 0) throw py::value_error("k must be positive (0: the preset's)");
        // block scales: sa one row per row of A, sb one row per column of B
        const U64 sa = scales_arg(dp, sah, "sa", Am.rows, Am.cols), sb = scales_arg(dp, sbh, "sb", Bm.cols, Am.cols);
        const int per = scales_per_sample(dp, Am.cols);
        auto mat = [&](const U64& s, int rows) {
          return s.size() ? std::make_unique<Matrix>(Matrix{rows, per, std::vector<uint64_t>(s.data(), s.data() + s.size())}) : nullptr;
        };
        const std::unique_ptr<Matrix> SA = mat(sa, Am.rows), SB = mat(sb, Bm.cols);
        Matrix D;
        try {
          py::gil_scoped_release release;
          D = gemm(dp, k ? k : dp.k_default, Am, Bm, Cm, threads, SA.get(), SB.get());
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
        if (bits) {
          U64 out({static_cast<py::ssize_t>(D.rows), static_cast<py::ssize_t>(D.cols)});
          std::memcpy(out.mutable_data(), D.v.data(), D.v.size() * 8);
          return std::move(out);
        }
        F64 out({static_cast<py::ssize_t>(D.rows), static_cast<py::ssize_t>(D.cols)});
        double* o = out.mutable_data();
        for (size_t i = 0; i < D.v.size(); ++i) o[i] = to_host_double(dp.out_fmt, D.v[i]);
        return std::move(out);
      },
      py::arg("dp"), py::arg("A"), py::arg("B"), py::arg("C") = py::none(), py::arg("k") = 0, py::arg("threads") = 0,
      py::arg("bits") = false, py::arg("sa") = py::none(), py::arg("sb") = py::none(),
      "D = A*B + C as a sequence of the datapath's instructions (k of them chained through C in out_fmt). A, B, C: "
      "float64 matrices, rounded into the input formats with the datapath's ingest rounding (C: RNE into out_fmt). "
      "Block-scaled types: sa (M, ceil(K / scale_block)) and sb (N, ceil(K / scale_block)) scale_fmt patterns, the "
      "scales of A's rows and B's columns per k-block (None: 1). "
      "Returns D as float64 (exact), or its out_fmt bit patterns with bits=True.");

  m.def(
      "mfma",
      [](const std::string& arch, const std::string& name, const py::handle& Ah, const py::handle& Bh, const py::handle& Ch,
         const std::string& out, bool bits) -> py::object {
        const Instruction* in = nullptr;
        Datapath dp;
        try {
          in = &find_instruction(name);
          dp = instruction_datapath(arch, *in, out);
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
        const Matrix Am = matrix_of(values_arg(Ah, "A"), dp.a_fmt, dp.ingest, "A", false);
        const Matrix Bm = matrix_of(values_arg(Bh, "B"), dp.b_fmt, dp.ingest, "B", false);
        const int rows = in->blocks * in->m, cols = in->n;
        if (Am.rows != rows || Am.cols != in->k)
          throw py::value_error("A must be " + std::to_string(rows) + " x " + std::to_string(in->k) + " for " + name);
        if (Bm.rows != in->blocks * in->k || Bm.cols != cols)
          throw py::value_error("B must be " + std::to_string(in->blocks * in->k) + " x " + std::to_string(cols) + " for " + name);
        Matrix Cm{rows, cols, std::vector<uint64_t>(static_cast<size_t>(rows) * cols, 0)};
        if (!Ch.is_none()) {
          Cm = matrix_of(values_arg(Ch, "C"), dp.out_fmt, Rounding::RNE, "C", true);
          if (Cm.rows != rows || Cm.cols != cols)
            throw py::value_error("C must be " + std::to_string(rows) + " x " + std::to_string(cols) + " for " + name);
        }
        const Matrix D = mfma(dp, *in, Am, Bm, Cm);
        if (bits) {
          U64 o({static_cast<py::ssize_t>(D.rows), static_cast<py::ssize_t>(D.cols)});
          std::memcpy(o.mutable_data(), D.v.data(), D.v.size() * 8);
          return std::move(o);
        }
        F64 o({static_cast<py::ssize_t>(D.rows), static_cast<py::ssize_t>(D.cols)});
        for (size_t i = 0; i < D.v.size(); ++i) o.mutable_data()[i] = to_host_double(dp.out_fmt, D.v[i]);
        return std::move(o);
      },
      py::arg("arch"), py::arg("instr"), py::arg("A"), py::arg("B"), py::arg("C") = py::none(), py::arg("out") = "",
      py::arg("bits") = false,
      "one matrix instruction (matcore list instructions) on an architecture: A (blocks*m) x k, B (blocks*k) x n, "
      "C and D (blocks*m) x n, as matcore mfma");

}

/// Checks and pictures: validate, trace, svg.
void bind_checks(py::module_& m) {
  m.def(
      "validate",
      [](const Datapath& dp, const py::handle& a, const py::handle& b, const py::handle& c, const py::handle& dh,
         unsigned threads, size_t show, const py::handle& sa, const py::handle& sb) {
        const U64 got = py_dot(dp, a, b, c, threads, sa, sb);
        const U64 d = words_arg(dh, "d");
        if (d.ndim() != 1 || d.shape(0) != got.shape(0)) throw py::value_error("d must be 1-D with one value per sample");
        check_width(d, dp.out_fmt, "d");
        py::list first;
        size_t mism = 0;
        for (py::ssize_t i = 0; i < d.shape(0); ++i)
          if (got.data()[i] != d.data()[i]) {
            if (mism++ < show) first.append(py::make_tuple(i, got.data()[i], d.data()[i]));
          }
        py::dict r;
        r["samples"] = static_cast<size_t>(d.shape(0));
        r["mismatches"] = mism;
        r["first"] = first;  // (index, model, given)
        return r;
      },
      py::arg("dp"), py::arg("a"), py::arg("b"), py::arg("c"), py::arg("d"), py::arg("threads") = 0, py::arg("show") = 10,
      py::arg("sa") = py::none(), py::arg("sb") = py::none(),
      "the model's d against given d for every sample (bit for bit): {'samples', 'mismatches', 'first': [(i, model, given)]}; "
      "sa, sb: block scales as for dot");

  m.def(
      "trace",
      [](const Datapath& dp, const py::handle& ah, const py::handle& bh, uint64_t c, const py::handle& sah,
         const py::handle& sbh, bool records) {
        Trace t;
        const uint64_t d = one_dot(dp, ah, bh, c, sah, sbh, &t);
        if (records) return py::make_tuple(trace_records(t), d);
        py::list rows;
        for (const TraceRow& r : t.rows) rows.append(py::make_tuple(r.name, r.value));
        return py::make_tuple(rows, d);
      },
      py::arg("dp"), py::arg("a"), py::arg("b"), py::arg("c") = 0, py::arg("sa") = py::none(), py::arg("sb") = py::none(),
      py::arg("records") = false,
      "the stages of one dot product: ([(signal, value), ...], d) with the names of matcore dot --trace; "
      "sa, sb: its block scales (1-D) for a block-scaled type; records=True: each row a dict "
      "{'group', 'stage', 'signal', 'value', 'bits': {signal: int}, 'widths': {signal: int}, 'number'}, "
      "the bits those of the SystemC and RTL VCDs under the same names, the aligned terms (aligner.v<i>) "
      "included, number = (sign, magnitude, lsb) for a record that stands for a number (value = "
      "sign * magnitude * 2^lsb), else None");

  m.def(
      "svg",
      [](const Datapath& dp, const py::handle& ah, const py::handle& bh, uint64_t c, const py::handle& sah,
         const py::handle& sbh) {
        SvgPanel p{dp, Trace{}, 0};
        p.d = one_dot(dp, ah, bh, c, sah, sbh, &p.trace);
        return trace_svg({p});
      },
      py::arg("dp"), py::arg("a"), py::arg("b"), py::arg("c") = 0, py::arg("sa") = py::none(), py::arg("sb") = py::none(),
      "the stage-by-stage picture of one dot product (the SVG document of matcore dot --svg)");
}

}  // namespace

PYBIND11_MODULE(matcore, m) {
  m.doc() = "matcore: bit-exact models of GPU matrix-multiply units (AMD CDNA 1/2/3, NVIDIA). "
            "The same core as the matcore command line, bit for bit.";

  bind_formats(m);
  bind_datapaths(m);
  bind_dots(m);
  bind_studies(m);
  bind_matrices(m);
  bind_checks(m);
  // the name the issues and the docs of other tools use for the exact reference
  m.attr("exact_dot") = m.attr("exact");
}
