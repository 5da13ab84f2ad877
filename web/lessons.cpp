// matcore web: the lessons (lessons.hpp).
#include "lessons.hpp"

#include <fstream>
#include <string>
#include <vector>

#include "json.hpp"
#include "matcore/features.hpp"
#include "matcore/format.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/table.hpp"

namespace mcweb {
namespace {


std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// One lesson: a preset, operands (K patterns of a and b, c in out_fmt), what they reveal, the
/// outcome expected and where the vector comes from.
std::string lesson(const std::string& group, const std::string& title, const std::string& text, const mc::Datapath& dp,
                   const uint64_t* a, const uint64_t* b, int K, uint64_t c, const std::string& expect,
                   const std::string& source) {
  return Obj()
      .s("group", group)
      .s("title", title)
      .s("text", text)
      .s("arch", dp.arch)
      .s("type", dp.type)
      .s("a", hex_list(dp.a_fmt, a, K))
      .s("b", hex_list(dp.b_fmt, b, K))
      .s("c", "0x" + mc::to_hex_bits(dp.out_fmt, c))
      .s("expect", expect)
      .s("source", source)
      .str();
}

/// The '# §' section lines of a table file: (line number, text after "# ").
std::vector<std::pair<int, std::string>> sections(const std::string& path) {
  std::vector<std::pair<int, std::string>> out;
  std::ifstream f(path);
  std::string line;
  for (int n = 1; std::getline(f, line); ++n)
    if (line.rfind("# \xc2\xa7", 0) == 0) out.emplace_back(n, line.substr(2));
  return out;
}

/// One lesson per section of a paper table: its first vector on its first preset.
void paper_lessons(const std::string& file, const std::string& group, std::vector<std::string>& out) {
  const std::string path = "/vectors/" + file;
  const std::vector<mc::TableCase> cases = mc::read_table(path);
  const auto secs = sections(path);
  for (size_t s = 0; s < secs.size(); ++s) {
    const int end = s + 1 < secs.size() ? secs[s + 1].first : 1 << 30;
    for (const mc::TableCase& tc : cases) {
      if (tc.line <= secs[s].first || tc.line >= end || tc.presets.empty()) continue;
      const mc::Datapath dp = mc::find_preset(tc.presets[0], tc.type);
      std::vector<uint64_t> a, b;
      uint64_t c = 0;
      mc::build_operands(tc, dp, a, b, c);
      const std::string& t = secs[s].second;
      // "§4.3.1 extra alignment bit: what the vectors show": the title, then the sentence; a
      // section line without ':' is its own sentence, titled by its first words
      size_t colon = t.find(':');
      if (colon == std::string::npos) colon = t.find('.', 4);
      out.push_back(lesson(group, colon == std::string::npos ? t : t.substr(0, colon),
                           colon == std::string::npos || trim(t.substr(colon + 1)).empty() ? t : trim(t.substr(colon + 1)),
                           dp, a.data(), b.data(), static_cast<int>(a.size()), c, "the paper: d = " + tc.d,
                           "tb/vectors/" + file + ":" + std::to_string(tc.line)));
      break;
    }
  }
}

struct ProbeLesson {
  const char* prefix;  ///< the probe name's beginning (features.hpp: "family/...")
  const char* title;
  const char* text;    ///< what the outcome reveals (docs/features.md)
};

const ProbeLesson kProbes[] = {
    {"nan/c+", "NaN in c", "c = NaN: which NaN pattern comes out tells whether the unit propagates the input NaN or writes its own default NaN."},
    {"inf/p+", "Inf in a product", "a product of +Inf: d shows whether an infinity passes the adder unchanged."},
    {"inv/p+p-", "Inf - Inf", "two products of opposite infinities: the invalid sum's NaN pattern (nan_invalid)."},
    {"subin/a", "subnormal inputs", "the smallest subnormal of A times a power of two, giving a normal output: zero means the unit flushes subnormal inputs (sub_in)."},
    {"prec/", "output precision", "p1 = 2^E, p2 = 2^(E-j): the last j that comes back exactly is the output precision."},
    {"tie/", "output rounding", "a tie below the output's last bit: RNE, RNA, RTZ and the directed roundings each answer differently (out_round)."},
    {"subout/p", "subnormal outputs", "a subnormal result from normal inputs: zero means the unit flushes its outputs (sub_out)."},
    {"fa/", "alignment bits F", "the cancellation test of 4.3.1: a big product, a small one and a cancelling term; the small term survives while it is within F bits of the largest exponent, then is truncated or rounded down (frac_bits, prod_align)."},
    {"cl/", "where c is added", "p1 = 2^E and p2 = -2^E cancel, but set the alignment maximum: c survives only as the c-aligner kept it, telling early from late c and c's own width (c_frac)."},
    {"ac/", "normalisation and the sum's width", "a tip far below the output precision, made visible by a tie: how many bits the accumulator keeps (sum_frac, acc_frac)."},
    {"po/", "product overflow", "p1 = 2^e and p2 = -2^e: 0 while the products are finite, NaN (Inf - Inf) once they overflow (prod_overflow_exp)."},
    {"ov/", "overflow of the sum", "c = the largest value plus a product: Inf or the largest finite value (overflow_to_inf)."},
};

void probe_lessons(const std::string& arch, const std::string& type, std::vector<std::string>& out) {
  const mc::Datapath dp = mc::find_preset(arch, type);
  const int K = dp.k_default > 64 ? 64 : dp.k_default;
  const mc::FeatureVectors v = mc::feature_vectors(dp.a_fmt, dp.b_fmt, dp.out_fmt, K, dp.type);
  for (const ProbeLesson& p : kProbes) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (v.probe[i].rfind(p.prefix, 0) != 0) continue;
      const uint64_t d = mc::dot(dp, &v.a[i * K], &v.b[i * K], K, v.c[i]);
      out.push_back(lesson("NVIDIA probes: " + arch + " " + type, p.title, p.text, dp, &v.a[i * K], &v.b[i * K], K,
                           v.c[i], "the model: d = 0x" + mc::to_hex_bits(dp.out_fmt, d) + " (" + mc::to_decimal(dp.out_fmt, d) + ")",
                           "matcore features probe " + v.probe[i]));
      break;
    }
  }
}

}  // namespace

std::string hex_list(const mc::Format& f, const uint64_t* v, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i ? "," : "") + std::string("0x") + mc::to_hex_bits(f, v[i]);
  return s;
}

std::string lessons_json() {
  static std::string cached;
  if (!cached.empty()) return cached;
  std::vector<std::string> out;
  try {
    paper_lessons("paper_cdna1.pvt", "CDNA1 (MI100): the paper, section 4.1", out);
    paper_lessons("paper_cdna2.pvt", "CDNA2 (MI250): the paper, section 4.2", out);
    paper_lessons("paper_cdna3.pvt", "CDNA3 (MI300): the paper, section 4.3", out);
    for (const char* a : {"v100", "a100", "h100", "b200"}) probe_lessons(a, "fp16", out);
    probe_lessons("h100", "e4m3", out);
  } catch (const std::exception& e) {
    return Obj().s("error", e.what()).str();
  }
  cached = jarr(out);
  return cached;
}

}  // namespace mcweb
