// The block-scaled datapaths over files (docs/vector-format.md, "Block scales"): a/b/c(/d) with
// the scale files sa.txt and sb.txt through FastDot::batch with the scales (ST-FDPA with E8M0
// scales: the fused lane kernels; GST-FDPA: the grouper's kernel). The files are read whole (the
// streaming engines of validate.cpp hold no scales).
#include <sys/stat.h>

#include <algorithm>

#include "matcore/fast.hpp"
#include "matcore/model.hpp"
#include "matcore/output.hpp"
#include "matcore/threads.hpp"
#include "matcore/validate.hpp"

namespace mc {

ScaleFiles resolve_scale_files(const Datapath& dp, const std::string& a_path, const ScaleFiles& given) {
  if (!dp.scaled()) return {};
  const size_t slash = a_path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : a_path.substr(0, slash + 1);
  const std::string ext = a_path.size() > 4 && a_path.compare(a_path.size() - 4, 4, ".npy") == 0 ? ".npy" : ".txt";
  ScaleFiles f{given.a.empty() ? dir + "sa" + ext : given.a, given.b.empty() ? dir + "sb" + ext : given.b};
  for (const std::string* p : {&f.a, &f.b}) {
    struct stat st;
    if (::stat(p->c_str(), &st) != 0)
      throw InputError(*p + ": missing scale file: " + dp.name() + " is block-scaled (" + dp.scale_fmt.name +
                       " per " + std::to_string(dp.scale_block) + " elements); give --sa and --sb, or put sa" + ext + " and "
                       "sb" + ext + " beside the a file");
  }
  return f;
}

StreamResult stream_scaled(const Datapath& dp, const std::string& pa, const std::string& pb,
                           const std::string& pc, const std::string& pd, const std::string& out,
                           const ScaleFiles& sf, int expect_k, bool zero_c, unsigned threads, size_t keep) {
  if (!out.empty()) check_not_input(out, "output", {pa, pb, pc, pd, sf.a, sf.b});
  check_header(pa, "a", dp.a_fmt);
  check_header(pb, "b", dp.b_fmt);
  // load_sample_set checks a, b, c (and d) and their counts; without d it reads c twice
  const SampleSet s = load_sample_set(dp, pa, pb, pc, pd.empty() ? pc : pd, expect_k);
  const int per = scales_per_sample(dp, s.K);
  check_header(sf.a, "sa", dp.scale_fmt);  // "# matcore sample sa=ue4m3 ...": the file's scale format
  check_header(sf.b, "sb", dp.scale_fmt);
  const ScaleFile SA = read_scale_file(sf.a, per, dp.scale_fmt), SB = read_scale_file(sf.b, per, dp.scale_fmt);
  for (const auto* x : {&SA, &SB})
    if (x->samples() != s.n)
      throw InputError("sample counts differ: " + pa + " has " + std::to_string(s.n) + ", " +
                       (x == &SA ? sf.a : sf.b) + " " + std::to_string(x->samples()));
  std::vector<uint64_t> got(s.n);
  threads = thread_count(threads);
  const size_t chunk = (s.n + threads - 1) / threads;
  // ST-FDPA with E8M0 scales: the fused lane kernels, 16 samples at once; GST-FDPA: the
  // grouper's kernel sample by sample (FastDot::batch with scales)
  const FastDot fd(dp);
  const std::vector<uint64_t> zeros(zero_c ? std::min<size_t>(s.n, 1024) : 0, 0);
  run_parallel(threads, [&](unsigned t) {
    const size_t i0 = std::min(s.n, t * chunk), i1 = std::min(s.n, i0 + chunk);
    for (size_t i = i0; i < i1; i += 1024) {
      const size_t m = std::min<size_t>(1024, i1 - i);
      fd.batch(&s.a[i * s.K], &s.b[i * s.K], zero_c ? zeros.data() : &s.c[i], &got[i], m, s.K,
               per ? &SA.v[i * per] : nullptr, per ? &SB.v[i * per] : nullptr);
      for (size_t j = i; j < i + m; ++j) got[j] = widen_result(dp, got[j]);
    }
  });
  StreamResult res;
  res.n = s.n;
  res.K = s.K;
  res.c_rounded = s.c_rounded;
  if (!out.empty()) {
    OutputFile f(out);
    f.write(cd_file_text(got, stored_width(dp.out_fmt)));
    f.commit();
  }
  if (pd.empty()) return res;
  for (size_t i = 0; i < s.n; ++i) {
    if (got[i] == s.d[i]) continue;
    if (res.mismatches++ >= keep) continue;
    StreamMismatch m;
    m.index = i;
    m.line = i < s.a_lines.size() ? s.a_lines[i] : i + 1;
    m.d_line = i < s.d_lines.size() ? s.d_lines[i] : i + 1;
    m.got = got[i];
    m.want = s.d[i];
    m.a.assign(s.a.begin() + i * s.K, s.a.begin() + (i + 1) * s.K);
    m.b.assign(s.b.begin() + i * s.K, s.b.begin() + (i + 1) * s.K);
    m.c = zero_c ? 0 : s.c[i];
    m.sa.assign(SA.v.begin() + i * per, SA.v.begin() + (i + 1) * per);
    m.sb.assign(SB.v.begin() + i * per, SB.v.begin() + (i + 1) * per);
    res.first.push_back(m);
  }
  return res;
}

}  // namespace mc
