// matcore web: the core's entry points for the page (web/app.js), compiled with emscripten and
// bound with embind. The page sends JavaScript objects and gets JSON text back; every answer is
// computed by the same core functions the command line calls (find_preset, apply_settings,
// parse_text_operands, dot, trace_svg), so a page and `matcore dot --trace --svg` agree bit for
// bit (tb/web/test_web.py checks it in a browser).
//
//   catalog()            presets (arch -> types, outputs, variants), the field table, formats
//   evaluate(request)    one or two designs on one set of operands: d, trace rows, SVG, the
//                        first row whose value differs
//   random_operands(r)   sample `seed` of `matcore sample --seed S --n 1` for the design
//   run_vectors(r)       a/b/c(/sa/sb) vector files' text -> the d file `matcore run` writes
//   trace_vectors(r)     the same files -> every sample's operands and trace rows (tests)
//   lessons()            web/lessons.cpp
#include <emscripten/bind.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "json.hpp"
#include "lessons.hpp"
#include "matcore/datapath_file.hpp"
#include "matcore/fields.hpp"
#include "matcore/format.hpp"
#include "matcore/model.hpp"
#include "matcore/plan.hpp"
#include "matcore/presets.hpp"
#include "matcore/sample.hpp"
#include "matcore/svg.hpp"
#include "matcore/validate.hpp"
#include "matcore/vectors.hpp"

using emscripten::val;
using namespace mcweb;

namespace {

/// The most products the page evaluates and draws at once (a picture of one row a product).
constexpr int kMaxPageK = 1024;

/// The longest text a request field may hold (a link is data: a decimal of a million digits
/// would take the parser minutes).
constexpr size_t kMaxText = 1 << 16;

std::string text_of(const val& r, const char* key) {
  const val v = r[key];
  return v.isString() ? v.as<std::string>() : std::string();
}

/// A field of a page request (operands, set, a datapath file): at most kMaxText characters.
std::string field_of(const val& r, const std::string& key) {
  std::string s = text_of(r, key.c_str());
  if (s.size() > kMaxText)
    throw std::invalid_argument(key + ": " + std::to_string(s.size()) + " characters, the page takes at most " +
                                std::to_string(kMaxText));
  return s;
}
/// The design a request names: keys arch, type, out, variant, set, toml, each suffixed by
/// `sfx` ("" for the first design, "2" for the second). A toml text is a datapath file.
mc::Datapath design_of(const val& r, const std::string& sfx) {
  auto t = [&](const char* k) { return field_of(r, k + sfx); };
  mc::Datapath dp;
  if (!t("toml").empty()) {
    dp = mc::datapath_from_toml(t("toml"), "datapath file");
  } else {
    if (t("arch").empty() || t("type").empty()) throw std::invalid_argument("choose an architecture and a type");
    dp = mc::find_preset(t("arch"), t("type"), t("out"), t("variant"));
  }
  if (!t("set").empty()) {
    try {
      mc::apply_settings(dp, t("set"));
      mc::validate_datapath(dp);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("set: ") + e.what());
    }
  }
  return dp;
}

std::string field_json(const mc::Field& f) {
  static const char* kinds[] = {"text", "format", "int", "limit", "bool", "choice", "bits"};
  return Obj()
      .s("name", f.name)
      .s("section", f.section)
      .s("kind", kinds[static_cast<int>(f.kind)])
      .s("doc", f.doc)
      .i("lo", f.lo)
      .i("hi", f.hi)
      .s("none", f.none_word)
      .raw("choices", jstrs(f.choices))
      .s("allowed", mc::field_allowed(f))
      .b("numeric", f.numeric)
      .str();
}

std::string catalog() {
  std::vector<std::string> archs;
  for (const std::string& a : mc::arch_names()) {
    std::vector<std::string> types;
    for (const std::string& t : mc::types_of(a)) {
      const mc::Datapath dp = mc::find_preset(a, t);
      std::vector<std::string> outs = {""};
      for (const char* o : {"fp16", "fp32", "fp64"}) {
        try {
          if (mc::find_preset(a, t, o).out_fmt.name != dp.out_fmt.name) outs.push_back(o);
        } catch (const std::exception&) {
        }
      }
      types.push_back(Obj()
                          .s("type", t)
                          .raw("outs", jstrs(outs))
                          .raw("variants", jstrs(mc::variants_of(a, t)))
                          .s("hypothesis", dp.hypothesis)
                          .s("family", dp.family)
                          .i("k", dp.k_default)
                          .str());
    }
    archs.push_back(Obj().s("arch", a).raw("types", jarr(types)).str());
  }
  std::vector<std::string> fields;
  for (const mc::Field& f : mc::datapath_fields()) fields.push_back(field_json(f));
  return Obj()
      .raw("archs", jarr(archs))
      .raw("fields", jarr(fields))
      .raw("formats", jstrs(mc::format_names()))
      .raw("scale_formats", jstrs(mc::scale_format_names()))
      .str();
}

struct Evaluated {
  mc::Datapath dp;
  mc::Trace trace;
  uint64_t d = 0;
  std::vector<std::string> notes;
};

void write_text(const std::string& path, const std::string& text);

/// a or b as the page took it: a line of a vector file pasted in (values separated by spaces,
/// no comma: hex in the format itself or widened to binary32/binary64, as the file readers take
/// them) becomes the command line's list of patterns; anything else is the command line's syntax.
std::string ab_text(const mc::Datapath& dp, const std::string& t, const mc::Format& f, const std::string& role) {
  const size_t b = t.find_first_not_of(" \t\r\n"), e = t.find_last_not_of(" \t\r\n");
  if (b == std::string::npos || t.find(',') != std::string::npos) return t;
  const std::string line = t.substr(b, e - b + 1);
  if (line.find_first_of(" \t") == std::string::npos) return t;
  const std::string path = role + " (a vector-file line)";
  write_text(path, line + "\n");
  const mc::AbFile af = mc::read_ab_file(path, 0, f);
  std::vector<uint64_t> v(af.v.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = mc::ab_operand(f, dp.ingest, af, i, role);
  return hex_list(f, v.data(), v.size());
}

/// Scales as the page took them: a line of a scale file pasted in ("7f 80": 2 hex digits each,
/// separated by spaces) becomes the command line's "0x7f,0x80".
std::string scale_text(const std::string& t) {
  if (t.find(',') != std::string::npos) return t;
  std::istringstream in(t);
  std::string w, s;
  int n = 0;
  while (in >> w) s += (n++ ? ",0x" : "0x") + w;
  return n > 1 ? s : t;
}

Evaluated evaluate_one(const mc::Datapath& dp, const val& r) {
  Evaluated e{dp, {}, 0, {}};
  const std::string c = field_of(r, "c");
  const mc::TextOperands op = mc::parse_text_operands(dp, ab_text(dp, field_of(r, "a"), dp.a_fmt, "a"),
                                                      ab_text(dp, field_of(r, "b"), dp.b_fmt, "b"), c.empty() ? "0" : c);
  e.notes = op.notes;
  const int K = static_cast<int>(op.a.size());
  if (K > kMaxPageK)
    throw std::invalid_argument("the page draws at most " + std::to_string(kMaxPageK) + " products (a has " +
                                std::to_string(K) + "); matcore dot --trace takes up to 1048576");
  const std::string sa = scale_text(field_of(r, "sa")), sb = scale_text(field_of(r, "sb"));
  if (!dp.scaled() && (!sa.empty() || !sb.empty()))
    throw std::invalid_argument("sa/sb: datapath " + dp.name() + " has no block scales");
  const std::vector<uint64_t> xa = dp.scaled() && !sa.empty() ? mc::parse_scale_list(dp, sa, K, "sa") : std::vector<uint64_t>{};
  const std::vector<uint64_t> xb = dp.scaled() && !sb.empty() ? mc::parse_scale_list(dp, sb, K, "sb") : std::vector<uint64_t>{};
  e.d = mc::dot(dp, op.a.data(), op.b.data(), K, op.c, mc::scale_refs(xa, xb), &e.trace);
  return e;
}

/// The stage a trace row belongs to: the part of its name before the first '.' ("aligner").
std::string stage_of(const std::string& row) { return row.substr(0, row.find('.')); }

std::string design_json(const Evaluated& e) {
  std::vector<std::string> rows, stages;
  int group = -1;
  for (const mc::TraceRow& row : e.trace.rows) {
    if (row.name == "group") ++group;
    rows.push_back(Obj()
                       .s("name", row.name)
                       .s("value", row.value)
                       .s("bits", row.bits())
                       .s("stage", stage_of(row.name))
                       .i("group", std::max(group, 0))
                       .str());
  }
  for (const mc::PlannedStage& s : mc::plan(e.dp)) stages.push_back(s.name);
  std::vector<std::string> values;
  for (const mc::Field& f : mc::datapath_fields()) values.push_back(jstr(f.name) + ":" + jstr(f.get(e.dp)));
  return Obj()
      .s("name", e.dp.name())
      .s("variant", e.dp.variant)
      .s("pipeline", mc::plan_diagram(e.dp))
      .raw("stages", jstrs(stages))
      .s("hypothesis", e.dp.hypothesis)
      .raw("warnings", jstrs(mc::width_warnings(e.dp)))
      .raw("fields", "{" + [&] {
        std::string s;
        for (size_t i = 0; i < values.size(); ++i) s += (i ? "," : "") + values[i];
        return s;
      }() + "}")
      .s("toml", mc::datapath_to_toml(e.dp))
      .s("d_hex", mc::to_hex_bits(e.dp.out_fmt, e.d))
      .s("d_dec", mc::to_decimal(e.dp.out_fmt, e.d))
      .s("out_fmt", e.dp.out_fmt.name)
      .s("a_fmt", e.dp.a_fmt.name)
      .s("b_fmt", e.dp.b_fmt.name)
      .i("k", e.dp.k_default)
      .i("scale_block", e.dp.scale_block)
      .s("scale_fmt", e.dp.scaled() ? e.dp.scale_fmt.name : "")
      .raw("rows", jarr(rows))
      .str();
}

/// The index (in the first trace's rows) of the first row whose value differs from the row of
/// the same name and group in the second trace (a row the second lacks differs), or -1: the
/// rule of `matcore dot --dp A --dp B`.
int first_difference(const mc::Trace& t0, const mc::Trace& t1) {
  struct Row {
    int g;
    const mc::TraceRow* r;
  };
  auto rows_of = [](const mc::Trace& t) {
    std::vector<Row> v;
    int g = -1;
    for (const mc::TraceRow& r : t.rows) {
      if (r.name == "group") ++g;
      v.push_back(Row{std::max(g, 0), &r});
    }
    return v;
  };
  const std::vector<Row> r0 = rows_of(t0), r1 = rows_of(t1);
  std::vector<bool> used(r1.size(), false);
  for (size_t i = 0; i < r0.size(); ++i) {
    if (r0[i].r->name == "group") continue;
    const std::string* other = nullptr;
    for (size_t j = 0; j < r1.size() && !other; ++j)
      if (!used[j] && r1[j].g == r0[i].g && r1[j].r->name == r0[i].r->name) {
        used[j] = true;
        other = &r1[j].r->value;
      }
    if (!other || *other != r0[i].r->value) return static_cast<int>(i);
  }
  return -1;
}

std::string evaluate(val r) {
  try {
    std::vector<mc::Datapath> dv = {design_of(r, "")};
    if (!text_of(r, "arch2").empty() || !text_of(r, "toml2").empty()) dv.push_back(design_of(r, "2"));
    if (dv.size() == 2 && (!(dv[0].a_fmt == dv[1].a_fmt) || !(dv[0].b_fmt == dv[1].b_fmt)))
      throw std::invalid_argument("the two designs take different input formats (" + dv[0].a_fmt.name + " x " +
                                  dv[0].b_fmt.name + ", " + dv[1].a_fmt.name + " x " + dv[1].b_fmt.name + ")");
    std::vector<Evaluated> ev;
    std::vector<std::string> designs;
    std::vector<mc::SvgPanel> panels;
    for (const mc::Datapath& dp : dv) {
      ev.push_back(evaluate_one(dp, r));
      designs.push_back(design_json(ev.back()));
      panels.push_back(mc::SvgPanel{dp, ev.back().trace, ev.back().d});
    }
    Obj o;
    o.b("ok", true).raw("designs", jarr(designs)).raw("notes", jstrs(ev[0].notes));
    o.i("first_diff", ev.size() == 2 ? first_difference(ev[0].trace, ev[1].trace) : -1);
    o.s("trace", ev[0].trace.text());
    if (!r["svg"].isUndefined() && r["svg"].as<bool>()) o.s("svg", mc::trace_svg(panels));
    return o.str();
  } catch (const std::exception& e) {
    return Obj().b("ok", false).s("error", e.what()).str();
  }
}

std::string random_operands(val r) {
  try {
    const mc::Datapath dp = design_of(r, "");
    mc::SampleSpec spec = mc::sample_spec_for(dp, text_of(r, "subnormal") == "1");
    const std::string k = text_of(r, "k");
    if (!k.empty()) spec.K = std::stoi(k);
    if (spec.K < 1 || spec.K > kMaxPageK)
      throw std::invalid_argument("k must be an integer in 1.." + std::to_string(kMaxPageK));
    const long long seed = std::stoll(text_of(r, "seed").empty() ? "0" : text_of(r, "seed"));
    spec.seed = static_cast<uint32_t>(seed);
    spec.N = 1;
    spec.scale_fmt = dp.scale_fmt;
    spec.scale_block = dp.scale_block;
    Obj o;
    mc::stream_samples(spec, [&](uint64_t, uint64_t, const uint64_t* a, const uint64_t* b, const uint64_t* c) {
      o.s("a", hex_list(spec.a_fmt, a, spec.K)).s("b", hex_list(spec.b_fmt, b, spec.K)).s("c", hex_list(spec.c_fmt, c, 1));
    }, 1);
    if (dp.scaled()) {
      std::vector<uint64_t> sa, sb;
      mc::sample_scales(spec, sa, sb);
      o.s("sa", hex_list(dp.scale_fmt, sa.data(), sa.size())).s("sb", hex_list(dp.scale_fmt, sb.data(), sb.size()));
    }
    return o.b("ok", true).str();
  } catch (const std::exception& e) {
    return Obj().b("ok", false).s("error", e.what()).str();
  }
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

/// Vector files given as text (the shared vector format: a, b, c, and sa, sb for a
/// block-scaled design), read by the vector files' own readers (through the module's in-memory
/// file system): each sample's operands as dot() takes them.
struct Vectors {
  mc::AbFile a, b;
  std::vector<uint64_t> c;
  mc::ScaleFile sa, sb;
  int width = 32, per = 0;
  size_t samples() const { return a.samples(); }
  /// Sample i's a, b (patterns of the input formats), c (in out_fmt) and scales.
  uint64_t operands(const mc::Datapath& dp, size_t i, std::vector<uint64_t>& x, std::vector<uint64_t>& y,
                    mc::ScaleRefs& refs) const {
    for (int j = 0; j < a.K; ++j) {
      x[j] = mc::ab_operand(dp.a_fmt, dp.ingest, a, i * a.K + j, "a");
      y[j] = mc::ab_operand(dp.b_fmt, dp.ingest, b, i * a.K + j, "b");
    }
    refs = dp.scaled() ? mc::ScaleRefs{&sa.v[i * per], &sb.v[i * per]} : mc::ScaleRefs{};
    bool rounded = false;
    return mc::c_operand(dp, c[i], width, &rounded);
  }
};

Vectors read_vectors(const mc::Datapath& dp, const val& r) {
  for (const char* f : {"a", "b", "c", "sa", "sb"}) write_text(std::string("/tmp/") + f + ".txt", text_of(r, f));
  Vectors v;
  v.a = mc::read_ab_file("/tmp/a.txt", 0, dp.a_fmt);
  v.b = mc::read_ab_file("/tmp/b.txt", v.a.K, dp.b_fmt);
  v.width = mc::stored_width(dp.out_fmt);
  v.c = mc::read_cd_file("/tmp/c.txt", v.width);
  if (v.b.samples() != v.a.samples() || v.c.size() != v.a.samples()) throw std::invalid_argument("a, b and c differ in length");
  v.per = mc::scales_per_sample(dp, v.a.K);
  if (dp.scaled()) {
    v.sa = mc::read_scale_file("/tmp/sa.txt", v.per, dp.scale_fmt);
    v.sb = mc::read_scale_file("/tmp/sb.txt", v.per, dp.scale_fmt);
    if (v.sa.samples() != v.a.samples() || v.sb.samples() != v.a.samples())
      throw std::invalid_argument("sa, sb and a differ in length");
  }
  return v;
}

/// The d file `matcore run` writes for vector files given as text, every sample through dot()
/// as the page runs it. For the browser tests: the same files through the native CLI must give
/// the same text.
std::string run_vectors(val r) {
  try {
    const mc::Datapath dp = design_of(r, "");
    const Vectors v = read_vectors(dp, r);
    std::string out;
    std::vector<uint64_t> x(v.a.K), y(v.a.K);
    char buf[24];
    for (size_t i = 0; i < v.samples(); ++i) {
      mc::ScaleRefs refs;
      const uint64_t ci = v.operands(dp, i, x, y, refs);
      const uint64_t d = mc::widen_result(dp, mc::dot(dp, x.data(), y.data(), v.a.K, ci, refs, nullptr));
      std::snprintf(buf, sizeof buf, v.width == 64 ? "%016llx\n" : "%08llx\n", static_cast<unsigned long long>(d));
      out += buf;
    }
    return Obj().b("ok", true).s("d", out).str();
  } catch (const std::exception& e) {
    return Obj().b("ok", false).s("error", e.what()).str();
  }
}

/// The trace of every sample of vector files given as text (for the browser tests: the rows,
/// "name=value" a line, against the native core's): [{a, b, c, sa, sb (patterns), rows}].
std::string trace_vectors(val r) {
  try {
    const mc::Datapath dp = design_of(r, "");
    const Vectors v = read_vectors(dp, r);
    std::vector<uint64_t> x(v.a.K), y(v.a.K);
    std::vector<std::string> out;
    auto nums = [](const uint64_t* p, size_t n) {
      std::vector<std::string> q;
      for (size_t i = 0; i < n; ++i) q.push_back(std::to_string(p[i]));
      return jarr(q);
    };
    for (size_t i = 0; i < v.samples(); ++i) {
      mc::ScaleRefs refs;
      const uint64_t ci = v.operands(dp, i, x, y, refs);
      mc::Trace t;
      mc::dot(dp, x.data(), y.data(), v.a.K, ci, refs, &t);
      std::string rows;
      for (const mc::TraceRow& row : t.rows) rows += row.name + "=" + row.value + "\n";
      out.push_back(Obj()
                        .raw("a", nums(x.data(), x.size()))
                        .raw("b", nums(y.data(), y.size()))
                        .raw("c", std::to_string(ci))
                        .raw("sa", refs.a ? nums(refs.a, v.per) : "null")
                        .raw("sb", refs.b ? nums(refs.b, v.per) : "null")
                        .s("rows", rows)
                        .str());
    }
    return Obj().b("ok", true).raw("samples", jarr(out)).str();
  } catch (const std::exception& e) {
    return Obj().b("ok", false).s("error", e.what()).str();
  }
}

}  // namespace

EMSCRIPTEN_BINDINGS(matcore) {
  emscripten::function("catalog", &catalog);
  emscripten::function("evaluate", &evaluate);
  emscripten::function("random_operands", &random_operands);
  emscripten::function("run_vectors", &run_vectors);
  emscripten::function("trace_vectors", &trace_vectors);
  emscripten::function("lessons", &mcweb::lessons_json);
}
