// The binary form of the vector format (.npy arrays of bit patterns, matcore/npy.hpp):
// validate / run read the arrays' blocks (pread), never parse them, and each thread widens its
// block of samples into 32- or 64-bit words and runs FastDot::batch (the lane kernels) on it;
// under mpirun each rank takes its share; sample --npy writes them.
#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>

#include "matcore/dist.hpp"
#include "matcore/fast.hpp"
#include "matcore/npy.hpp"
#include "matcore/output.hpp"
#include "matcore/sample.hpp"
#include "matcore/threads.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"
#include "../io/validate_stream.hpp"

namespace mc {

namespace {

// samples a thread evaluates at once: 4096, fewer for long rows (about 2^18 values a block, as
// the text engine), at least one lane block (16)
uint64_t block_of(int K) { return std::min<uint64_t>(4096, std::max<uint64_t>(16, (uint64_t{1} << 18) / static_cast<uint64_t>(K))); }

/// The arrays of one command, their shapes checked against each other.
struct NpySet {
  NpyArray A, B, C;
  std::unique_ptr<NpyArray> D, SA, SB;
  uint64_t n = 0;
  int K = 0, ns = 0;  // ns: scales a sample (block-scaled)
  NpySet(const std::string& pa, const std::string& pb, const std::string& pc, const std::string& pd, int expect_k)
      : A(pa), B(pb), C(pc), D(pd.empty() ? nullptr : std::make_unique<NpyArray>(pd)) {
    A.expect_dims(2, "a");
    B.expect_dims(2, "b");
    C.expect_dims(1, "c");
    if (D) D->expect_dims(1, "d");
    n = A.shape()[0];
    const uint64_t k = A.shape()[1];
    if (B.shape() != A.shape())
      throw InputError(pb + ": header field 'shape': (" + std::to_string(B.shape()[0]) + ", " + std::to_string(B.shape()[1]) +
                       ") differs from " + pa + "'s (" + std::to_string(n) + ", " + std::to_string(k) + ")");
    if (k < 1 || k > (uint64_t{1} << 20))
      throw InputError(pa + ": header field 'shape': K = " + std::to_string(k) + " (1 .. 2^20 values a sample)");
    K = static_cast<int>(k);
    if (expect_k && expect_k != K)
      throw InputError(pa + ": header field 'shape': K = " + std::to_string(K) + ", but --k " + std::to_string(expect_k) + " was given");
    if (n == 0) throw InputError(pa + ": header field 'shape': no samples");
    for (const NpyArray* x : {&C, D.get()})
      if (x && x->shape()[0] != n)
        throw InputError(x->path() + ": header field 'shape': " + std::to_string(x->shape()[0]) + " values, " + pa +
                         " has " + std::to_string(n) + " samples");
  }
  /// The block scales: (N, ceil(K / scale_block)) each.
  void scales(const Datapath& dp, const ScaleFiles& sf) {
    ns = scales_per_sample(dp, K);
    SA = std::make_unique<NpyArray>(sf.a);
    SB = std::make_unique<NpyArray>(sf.b);
    for (const NpyArray* x : {SA.get(), SB.get()}) {
      x->expect_dims(2, x == SA.get() ? "sa" : "sb");
      if (x->shape()[0] != n || x->shape()[1] != static_cast<uint64_t>(ns))
        throw InputError(x->path() + ": header field 'shape': (" + std::to_string(x->shape()[0]) + ", " +
                         std::to_string(x->shape()[1]) + "), the samples need (" + std::to_string(n) + ", " +
                         std::to_string(ns) + "): one " + dp.scale_fmt.name + " scale per " + std::to_string(dp.scale_block) +
                         " values");
    }
  }
};

/// The first bad value of a block (the lowest index wins across threads).
struct FirstError {
  std::mutex m;
  uint64_t at = ~uint64_t{0};
  std::string what;
  void note(uint64_t i, const std::string& w) {
    std::lock_guard<std::mutex> l(m);
    if (i < at) at = i, what = w;
  }
};

std::string bad_value(const NpyArray& x, uint64_t sample, int k, uint64_t v, const std::string& fmt, int bits) {
  return x.path() + ": sample " + std::to_string(sample) + (k >= 0 ? ", value " + std::to_string(k) : "") + ": 0x" +
         to_hex(v) + " is not a " + std::to_string(bits) + "-bit pattern of " + fmt;
}

/// One validate/run over the arrays: each block of block_of(K) samples is read, checked, widened to
/// words T (uint32_t where the formats allow: half the memory traffic) and run by FastDot::batch.
class NpyRun {
 public:
  using Sink = std::function<void(uint64_t first, uint64_t n, const uint64_t* d)>;
  /// Samples [lo, hi) (MPI: this rank's share); w: where the model's d goes (empty: nowhere).
  NpyRun(const Datapath& dp, const NpySet& s, Sink w, bool zero_c, size_t keep, uint64_t lo, uint64_t hi)
      : dp_(dp), s_(s), w_(std::move(w)), zero_c_(zero_c), keep_(keep), fd_(dp), sw_(stored_width(dp.out_fmt)),
        hi_(hi), next_(lo) {
    am_ = dp.a_fmt.width() >= 64 ? 0 : ~uint64_t{0} << dp.a_fmt.width();
    bm_ = dp.b_fmt.width() >= 64 ? 0 : ~uint64_t{0} << dp.b_fmt.width();
  }
  StreamResult run(unsigned threads) {
    // (an array of wider words than its format's goes the 64-bit way, where its bits are checked)
    const bool narrow = dp_.a_fmt.width() <= 32 && dp_.b_fmt.width() <= 32 && dp_.out_fmt.width() <= 32 &&
                        s_.A.word() <= 4 && s_.B.word() <= 4 && !s_.SA;  // (scaled: sample by sample)
    run_parallel(thread_count(threads), [&](unsigned) {
      Buffers<uint64_t> w64;
      Buffers<uint32_t> w32;
      for (uint64_t i0; (i0 = next_.fetch_add(block_of(s_.K))) < hi_;)
        if (!(narrow ? block(i0, w32) : block(i0, w64))) return;
    });
    if (err_.at != ~uint64_t{0}) throw InputError(err_.what);
    std::sort(kept_.begin(), kept_.end(), [](const StreamMismatch& x, const StreamMismatch& y) { return x.index < y.index; });
    if (kept_.size() > keep_) kept_.resize(keep_);
    StreamResult res;
    res.n = s_.n;
    res.K = s_.K;
    res.first = std::move(kept_);
    res.mismatches = mismatches_;
    res.c_rounded.count = rounded_;
    res.c_rounded.first_line = rounded_ ? first_rounded_ + 1 : 0;
    return res;
  }

 private:
  const Datapath& dp_;
  const NpySet& s_;
  Sink w_;
  bool zero_c_;
  size_t keep_;
  const FastDot fd_;
  int sw_;
  uint64_t am_, bm_;
  uint64_t hi_;
  FirstError err_;
  std::mutex mm_;
  std::atomic<uint64_t> next_, mismatches_{0}, rounded_{0};
  uint64_t first_rounded_ = ~uint64_t{0};  // (under mm_)
  std::vector<StreamMismatch> kept_;       // (under mm_)

  /// A thread's words: a, b, c and the kernel's d in words T; d as stored, the scales.
  template <class T>
  struct Buffers {
    std::vector<T> a, b, c, dv;
    std::vector<uint64_t> got, d, sa, sb;
  };

  /// Samples [i0, i0 + block_of(K)): false after a bad value (err_ holds it).
  template <class T>
  bool block(uint64_t i0, Buffers<T>& w) {
    const int K = s_.K;
    const uint64_t m = std::min(block_of(K), hi_ - i0), mk = m * static_cast<uint64_t>(K);
    std::vector<T>&a = w.a, &b = w.b, &c = w.c, &dv = w.dv;
    std::vector<uint64_t>&got = w.got, &d = w.d, &sa = w.sa, &sb = w.sb;
    a.resize(mk), b.resize(mk), c.resize(m), dv.resize(m), got.resize(m), d.resize(m);
    s_.A.get(i0 * K, mk, a.data());
    s_.B.get(i0 * K, mk, b.data());
    s_.C.get(i0, m, d.data());  // c as stored, widened
    uint64_t over = 0;  // bits above the formats' widths, looked for value by value when set
    for (uint64_t j = 0; j < mk; ++j) over |= (a[j] & am_) | (b[j] & bm_);
    for (uint64_t j = 0; over && j < mk; ++j) {
      if (a[j] & am_) err_.note(i0 + j / K, bad_value(s_.A, i0 + j / K, static_cast<int>(j % K), a[j], dp_.a_fmt.name, dp_.a_fmt.width()));
      if (b[j] & bm_) err_.note(i0 + j / K, bad_value(s_.B, i0 + j / K, static_cast<int>(j % K), b[j], dp_.b_fmt.name, dp_.b_fmt.width()));
    }
    for (uint64_t j = 0; j < m; ++j) {
      if (sw_ < 64 && (d[j] >> sw_)) err_.note(i0 + j, bad_value(s_.C, i0 + j, -1, d[j], "binary32", sw_));
      bool r = false;
      c[j] = static_cast<T>(zero_c_ ? 0 : c_operand(dp_, d[j], sw_, &r));
      if (r) {
        ++rounded_;
        std::lock_guard<std::mutex> l(mm_);
        first_rounded_ = std::min(first_rounded_, i0 + j);
      }
    }
    if constexpr (sizeof(T) == 8) {
      if (s_.SA) {  // block-scaled: the scalar kernel with each sample's scales
        const uint64_t ms = m * static_cast<uint64_t>(s_.ns);
        sa.resize(ms), sb.resize(ms);
        s_.SA->get(i0 * s_.ns, ms, sa.data());
        s_.SB->get(i0 * s_.ns, ms, sb.data());
        const uint64_t smask = ~uint64_t{0} << dp_.scale_fmt.width();
        for (uint64_t j = 0; j < ms; ++j)
          for (const auto& [x, v] : {std::pair{s_.SA.get(), sa[j]}, std::pair{s_.SB.get(), sb[j]}})
            if (v & smask) err_.note(i0 + j / s_.ns, bad_value(*x, i0 + j / s_.ns, static_cast<int>(j % s_.ns), v, dp_.scale_fmt.name, dp_.scale_fmt.width()));
        if (err_.at != ~uint64_t{0}) return false;
        for (uint64_t j = 0; j < m; ++j)
          dv[j] = fd_(a.data() + j * K, b.data() + j * K, K, c[j], ScaleRefs{&sa[j * s_.ns], &sb[j * s_.ns]});
      }
    }
    if (err_.at != ~uint64_t{0}) return false;
    if (!s_.SA) fd_.batch(a.data(), b.data(), c.data(), dv.data(), m, K);
    for (uint64_t j = 0; j < m; ++j) got[j] = widen_result(dp_, dv[j]);
    if (w_) w_(i0, m, got.data());
    if (s_.D) {
      s_.D->get(i0, m, d.data());
      for (uint64_t j = 0; j < m; ++j)
        if (got[j] != d[j])
          mismatch(i0 + j, got[j], d[j], a.data() + j * K, b.data() + j * K, c[j], s_.SA ? &sa[j * s_.ns] : nullptr,
                   s_.SA ? &sb[j * s_.ns] : nullptr);
    }
    return true;
  }

  template <class T>
  void mismatch(uint64_t i, uint64_t got, uint64_t want, const T* a, const T* b, T c, const uint64_t* sa,
                const uint64_t* sb) {
    ++mismatches_;
    std::lock_guard<std::mutex> l(mm_);
    StreamMismatch x;
    x.index = i;
    x.line = x.d_line = i + 1;
    x.got = got;
    x.want = want;
    x.a.assign(a, a + s_.K);
    x.b.assign(b, b + s_.K);
    x.c = c;
    if (sa) x.sa.assign(sa, sa + s_.ns), x.sb.assign(sb, sb + s_.ns);
    kept_.push_back(std::move(x));
    if (kept_.size() > 4 * keep_ + 64) {  // the lowest `keep` indices are all that is reported
      std::sort(kept_.begin(), kept_.end(), [](const StreamMismatch& p, const StreamMismatch& q) { return p.index < q.index; });
      kept_.resize(keep_);
    }
  }
};

}  // namespace

StreamResult stream_npy(const Datapath& dp, const std::string& pa, const std::string& pb, const std::string& pc,
                        const std::string& pd, const std::string& out, int expect_k, bool zero_c, unsigned threads,
                        size_t keep, const ScaleFiles& scales) {
  for (const std::string* p : {&pb, &pc, &pd, &out})
    if (!p->empty() && !is_npy_path(*p))
      throw InputError(*p + ": " + pa + " is the binary form (.npy): b, c, d and the output must be .npy arrays too");
  if (!dp.scaled() && (!scales.a.empty() || !scales.b.empty()))
    throw InputError("scale files (--sa/--sb) given, but datapath " + dp.name() + " has no block scales");
  const ScaleFiles sf = resolve_scale_files(dp, pa, scales);
  for (const std::string* p : {&sf.a, &sf.b})
    if (!p->empty() && !is_npy_path(*p)) throw InputError(*p + ": " + pa + " is the binary form (.npy): the scales must be .npy arrays too");
  if (!out.empty()) check_not_input(out, "output", {pa, pb, pc, pd, sf.a, sf.b});
  NpySet s(pa, pb, pc, pd, expect_k);
  if (dp.scaled()) s.scales(dp, sf);
  // MPI (mpirun -n R): each rank its share of the samples, the output written by all of them
  // into one file (rank 0 its header), the results merged as of one process.
  uint64_t lo = 0, hi = s.n;
  dist::share(s.n, lo, hi);
  const int word = npy_word(stored_width(dp.out_fmt));
  std::unique_ptr<dist::SharedOutput> so;
  size_t header = 0;
  if (!out.empty()) {
    so = std::make_unique<dist::SharedOutput>(out);
    const std::string head = npy_header(word, {s.n});
    header = head.size();
    if (dist::rank() == 0) so->pwrite(head.data(), head.size(), 0);
  }
  NpyRun::Sink sink;
  if (so)
    sink = [&](uint64_t first, uint64_t n, const uint64_t* d) {
      const std::vector<unsigned char> buf = npy_words(d, n, word);
      so->pwrite(buf.data(), buf.size(), header + first * static_cast<uint64_t>(word));
    };
  StreamResult r = NpyRun(dp, s, sink, zero_c, keep, lo, hi).run(threads);
  r = vstream::merge_ranks(r, keep);
  r.n = s.n;
  if (so) so->commit();
  return r;
}

uint64_t write_samples_npy(const SampleSpec& s, const std::string& dir, unsigned threads) {
  if (!s.native) throw InputError(dir + ": the binary form (.npy) holds the formats' own patterns (no --widen)");
  OutputDir od(dir, "--out");
  const uint64_t N = s.N, K = static_cast<uint64_t>(s.K);
  NpyWriter a(dir + "/a.npy", npy_word(s.a_fmt.width()), {N, K}), b(dir + "/b.npy", npy_word(s.b_fmt.width()), {N, K});
  NpyWriter c(dir + "/c.npy", npy_word(s.c_fmt.width()), {N});
  stream_samples(s, [&](uint64_t first, uint64_t n, const uint64_t* pa, const uint64_t* pb, const uint64_t* pc) {
    a.put(first * K, n * K, pa);
    b.put(first * K, n * K, pb);
    c.put(first, n, pc);
  }, threads);
  std::unique_ptr<NpyWriter> wa, wb;
  if (s.scale_block) {  // the block scales of sa.txt / sb.txt: (N, ceil(K / scale_block))
    std::vector<uint64_t> sa, sb;
    sample_scales(s, sa, sb);
    const uint64_t ns = (K + static_cast<uint64_t>(s.scale_block) - 1) / static_cast<uint64_t>(s.scale_block);
    wa = std::make_unique<NpyWriter>(dir + "/sa.npy", npy_word(s.scale_fmt.width()), std::vector<uint64_t>{N, ns});
    wb = std::make_unique<NpyWriter>(dir + "/sb.npy", npy_word(s.scale_fmt.width()), std::vector<uint64_t>{N, ns});
    wa->put(0, sa.size(), sa.data());
    wb->put(0, sb.size(), sb.data());
  }
  a.commit();
  b.commit();
  c.commit();
  if (wa) wa->commit(), wb->commit();
  od.keep();
  return N;
}

}  // namespace mc
