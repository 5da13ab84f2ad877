// The field table of a Datapath (see fields.hpp).
#include "matcore/fields.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "matcore/bits.hpp"

namespace mc {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool parse_ll(const std::string& s, long long& v) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  errno = 0;
  v = std::strtoll(s.c_str(), &end, 10);
  return !*end && errno != ERANGE;
}

const char* adder_word(AdderKind k) {
  switch (k) {
    case AdderKind::Exact: return "exact";
    case AdderKind::Pairwise: return "pairwise";
    default: return "fused";
  }
}
const char* align_word(AlignRound r) {
  switch (r) {
    case AlignRound::RD: return "rd";
    case AlignRound::RNE: return "rne";
    case AlignRound::RNA: return "rna";
    default: return "truncate";
  }
}
const std::vector<std::string> kRoundings = {"rne", "rtz", "rd", "ru", "rna"};
Rounding rounding_of(const std::string& s) {
  Rounding r = Rounding::RNE;
  parse_rounding(s, r);
  return r;
}

std::string num(int v, const std::string& none_word = "none", int none_value = kNone) {
  return v == none_value ? none_word : std::to_string(v);
}

// --- builders ---------------------------------------------------------------------------------

std::vector<std::string> pm(int v, int span, long long lo, long long hi) {
  std::vector<std::string> r;
  for (int d = -span; d <= span; ++d)
    if (d != 0 && v + d >= lo && v + d <= hi) r.push_back(std::to_string(v + d));
  return r;
}

/// A field's name, section, kind and doc; no neighbouring values until the builder sets them.
Field base_field(const char* name, const char* section, FieldKind kind, const char* doc) {
  Field f;
  f.name = name;
  f.section = section;
  f.kind = kind;
  f.doc = doc;
  f.near = [](const Datapath&, int) { return std::vector<std::string>{}; };
  return f;
}

Field int_field(const char* name, const char* section, int Datapath::*m, long long lo, long long hi,
                const char* doc) {
  Field f = base_field(name, section, FieldKind::Int, doc);
  f.lo = lo;
  f.hi = hi;
  f.get = [m](const Datapath& d) { return std::to_string(d.*m); };
  f.put = [m](Datapath& d, const std::string& s) { d.*m = std::atoi(s.c_str()); };
  f.near = [m, lo, hi](const Datapath& d, int span) { return pm(d.*m, span, lo, hi); };
  return f;
}

/// An integer that may be "no limit" (kNone, or -1 for out_prec); `dflt` is the value tried by
/// explain when the limit is absent.
Field limit_field(const char* name, const char* section, int Datapath::*m, long long lo, long long hi,
                  const char* none_word, int none_value, std::function<int(const Datapath&)> dflt,
                  const char* doc) {
  Field f = base_field(name, section, FieldKind::Limit, doc);
  f.lo = lo;
  f.hi = hi;
  f.none_word = none_word;
  const std::string nw = none_word;
  f.get = [m, nw, none_value](const Datapath& d) { return num(d.*m, nw, none_value); };
  f.put = [m, nw, none_value](Datapath& d, const std::string& s) {
    d.*m = lower(s) == nw ? none_value : std::atoi(s.c_str());
  };
  f.near = [m, nw, none_value, lo, hi, dflt](const Datapath& d, int span) {
    if (d.*m == none_value) return std::vector<std::string>{std::to_string(dflt(d))};
    std::vector<std::string> r = pm(d.*m, span, lo, hi);
    r.push_back(nw);
    return r;
  };
  return f;
}

Field bool_field(const char* name, const char* section, bool Datapath::*m, const char* doc) {
  Field f = base_field(name, section, FieldKind::Bool, doc);
  f.get = [m](const Datapath& d) { return std::string(d.*m ? "true" : "false"); };
  f.put = [m](Datapath& d, const std::string& s) { d.*m = lower(s) == "true"; };
  f.near = [m](const Datapath& d, int) { return std::vector<std::string>{d.*m ? "false" : "true"}; };
  return f;
}

Field choice_field(const char* name, const char* section, std::vector<std::string> choices,
                   std::function<std::string(const Datapath&)> get,
                   std::function<void(Datapath&, const std::string&)> put, const char* doc) {
  Field f = base_field(name, section, FieldKind::Choice, doc);
  f.choices = choices;
  f.get = get;
  f.put = put;
  f.near = [choices, get](const Datapath& d, int) {
    std::vector<std::string> r;
    for (const std::string& c : choices)
      if (c != get(d)) r.push_back(c);
    return r;
  };
  return f;
}

Field text_field(const char* name, const char* section, std::string Datapath::*m, const char* doc) {
  Field f = base_field(name, section, FieldKind::Text, doc);
  f.numeric = false;
  f.get = [m](const Datapath& d) { return d.*m; };
  f.put = [m](Datapath& d, const std::string& s) { d.*m = s; };
  return f;
}

Field format_field(const char* name, Format Datapath::*m, const char* doc) {
  Field f = base_field(name, "formats", FieldKind::Format, doc);
  f.choices = format_names();
  f.get = [m](const Datapath& d) { return (d.*m).name; };
  f.put = [m](Datapath& d, const std::string& s) { d.*m = *find_format(lower(s)); };  // set_field checked the name
  return f;
}

Field bits_field(const char* name, uint64_t Datapath::*m, const char* doc) {
  Field f = base_field(name, "specials", FieldKind::Bits, doc);
  f.get = [m](const Datapath& d) { return "0x" + to_hex(d.*m); };
  f.put = [m](Datapath& d, const std::string& s) { d.*m = std::strtoull(s.c_str() + 2, nullptr, 16); };
  return f;
}

/// The identity fields and the architecture facts (not numerical: they name the datapath).
void add_identity(std::vector<Field>& v) {
  // identity (not numerical: they name the datapath)
  v.push_back(text_field("arch", "identity", &Datapath::arch, "architecture or design name (the first part of the datapath's name)"));
  v.push_back(text_field("type", "identity", &Datapath::type, "input type name: TA or TA,TB (the second part of the name)"));
  v.push_back(text_field("family", "identity", &Datapath::family, "family label (cdna3, hopper, ...; free text for a custom design)"));
  v.push_back(text_field("variant", "identity", &Datapath::variant, "NVIDIA instruction class (mma.sync, wgmma, tcgen05) or empty"));
  {
    Field f = int_field("k_default", "identity", &Datapath::k_default, 1, 1 << 20,
                        "k of the instruction: the default dot length of dot, run, sample, features");
    f.numeric = false;
    f.near = [](const Datapath&, int) { return std::vector<std::string>{}; };
    v.push_back(f);
  }
  // architecture facts: data of the presets, read by list, mfma, layout and the checks
  v.push_back(text_field("layout", "identity", &Datapath::layout,
                         "GTKWave layout family (waves/LAYOUT.gtkw: cdna1, cdna2, cdna3, cdna4, nvidia); empty for a custom design"));
  {
    Field f = bool_field("half_out", "identity", &Datapath::half_out,
                         "the instruction set has a binary16-output form of this input type (--out fp16)");
    f.numeric = false;
    f.near = [](const Datapath&, int) { return std::vector<std::string>{}; };
    v.push_back(f);
  }
  v.push_back(text_field("instr_classes", "identity", &Datapath::instr_classes,
                         "instruction classes the architecture executes (mma, wgmma, tcgen05; comma list); empty: all of its family's"));
  v.push_back(text_field("hypothesis", "identity", &Datapath::hypothesis,
                         "a hypothesis, not a measured or published unit (CDNA4): the fields a probe must decide (comma list); empty: measured or published"));
}

/// The formats, the inputs and the multiplier.
void add_formats(std::vector<Field>& v) {
  // formats
  v.push_back(format_field("a_fmt", &Datapath::a_fmt, "format of the a operands"));
  v.push_back(format_field("b_fmt", &Datapath::b_fmt, "format of the b operands"));
  v.push_back(format_field("out_fmt", &Datapath::out_fmt, "output = accumulator format; c is taken in it"));
  v.push_back(choice_field("ingest", "formats", kRoundings,
                           [](const Datapath& d) { return std::string(to_string(d.ingest)); },
                           [](Datapath& d, const std::string& s) { d.ingest = rounding_of(s); },
                           "rounding of binary32/64 file values into a_fmt/b_fmt (tf32: rtz)"));
  v.back().numeric = false;  // how files enter the model, not the datapath's arithmetic
  v.back().near = [](const Datapath&, int) { return std::vector<std::string>{}; };
  // inputs
  v.push_back(bool_field("sub_in", "inputs", &Datapath::sub_in, "subnormal a, b, c supported; false: read as zero (DAZ)"));
  // multiplier
  v.push_back(limit_field("prod_overflow_exp", "multiplier", &Datapath::prod_overflow_exp, -4096, 4096, "none", kNone,
                          [](const Datapath& d) { return d.out_fmt.emax() + 1; },
                          "a product with |p| >= 2^this becomes Inf (CDNA3: 128); none: never"));
  v.push_back(bool_field("prod_round_out", "multiplier", &Datapath::prod_round_out,
                         "products rounded (RNE) to out_fmt before the adder (CDNA2)"));
}

/// The adder structure and the aligner.
void add_adder(std::vector<Field>& v) {
  // adder structure
  v.push_back(choice_field("adder", "adder", {"exact", "pairwise", "fused"},
                           [](const Datapath& d) { return std::string(adder_word(d.adder)); },
                           [](Datapath& d, const std::string& s) {
                             const std::string l = lower(s);
                             d.adder = l == "exact" ? AdderKind::Exact : l == "pairwise" ? AdderKind::Pairwise : AdderKind::Fused;
                           },
                           "how a group of products and c is summed: exact (Kulisch, one rounding), pairwise "
                           "(tree of roundings, CDNA2), fused (fixed-point multi-term adder, F bits)"));
  {
    Field f = int_field("n_fma", "adder", &Datapath::n_fma, 1, 64, "products per group (N_FMA); each group's result is the c of the next");
    f.near = [](const Datapath& d, int) {
      std::vector<std::string> r;
      for (int n = 1; n <= 64; n *= 2)
        if (n != d.n_fma) r.push_back(std::to_string(n));
      return r;
    };
    v.push_back(f);
  }
  v.push_back(int_field("interleave", "adder", &Datapath::interleave, 1, 2,
                        "2: odd- and even-indexed products summed separately (CDNA3 fp8)"));
  v.back().near = [](const Datapath& d, int) { return std::vector<std::string>{d.interleave == 2 ? "1" : "2"}; };
  // aligner
  v.push_back(int_field("frac_bits", "aligner", &Datapath::frac_bits, 0, 100,
                        "F: fraction bits kept below the maximum exponent when aligning (fused adder)"));
  v.push_back(choice_field("prod_align", "aligner", {"truncate", "rd", "rne", "rna"},
                           [](const Datapath& d) { return std::string(align_word(d.prod_align)); },
                           [](Datapath& d, const std::string& s) {
                             const std::string l = lower(s);
                             d.prod_align = l == "rd" ? AlignRound::RD : l == "rne" ? AlignRound::RNE
                                            : l == "rna" ? AlignRound::RNA : AlignRound::Truncate;
                           },
                           "rounding of the bits an aligned term loses: truncate (toward zero), rd (toward "
                           "-inf), rne / rna (nearest, ties to even / away, with guard and sticky bits)"));
  v.push_back(limit_field("emin_lim", "aligner", &Datapath::emin_lim, -4096, 4096, "none", kNone,
                          [](const Datapath& d) { return d.out_fmt.emin(); },
                          "the alignment exponent is never below this (NVIDIA); none: no floor"));
  v.push_back(limit_field("c_zero_exp", "aligner", &Datapath::c_zero_exp, -4096, 4096, "none", kNone,
                          [](const Datapath& d) { return d.out_fmt.emin(); },
                          "exponent given to c = 0 in the alignment (CDNA3: -126); none: c = 0 takes no part"));
  v.push_back(bool_field("late_c", "aligner", &Datapath::late_c,
                         "c added after the product sum by the c-aligner (Algorithms 1, 2); false: c is one more term"));
}

/// The odd/even sums, the c-aligner, the rounder and the specials.
void add_accumulation(std::vector<Field>& v) {
  // odd-even
  v.push_back(int_field("partial_frac", "odd_even", &Datapath::partial_frac, 0, 100,
                        "interleave 2: the partial sums are shifted to e_max and rounded down to this many fraction bits"));
  // c-aligner
  v.push_back(int_field("c_frac", "c_aligner", &Datapath::c_frac, 0, 100, "late c: shifted c rounded down to this many fraction bits"));
  v.push_back(int_field("sum_frac", "c_aligner", &Datapath::sum_frac, 0, 100, "late c: shifted product sum rounded down to this many"));
  v.push_back(int_field("acc_frac", "c_aligner", &Datapath::acc_frac, 0, 100, "late c: after the subnormal-aware normalisation, round-down to this many"));
  v.push_back(limit_field("c_drop_gap", "c_aligner", &Datapath::c_drop_gap, 0, 4096, "none", kNone,
                          [](const Datapath& d) { return d.c_frac + 1; },
                          "late c: c dropped (not rounded) when e_max - e_c exceeds this; none: never"));
  v.push_back(bool_field("late_norm_rd", "c_aligner", &Datapath::late_norm_rd,
                         "late c: normalise + round down (acc_frac) when c is above the products"));
  // rounder
  v.push_back(choice_field("out_round", "rounder", kRoundings,
                           [](const Datapath& d) { return std::string(to_string(d.out_round)); },
                           [](Datapath& d, const std::string& s) { d.out_round = rounding_of(lower(s)); },
                           "rounding of the result to out_fmt"));
  v.push_back(bool_field("sub_out", "rounder", &Datapath::sub_out, "false: subnormal results flush to zero (FTZ)"));
  v.push_back(limit_field("out_prec", "rounder", &Datapath::out_prec, 0, 52, "all", -1,
                          [](const Datapath& d) { return d.out_fmt.mbits - 1; },
                          "keep only this many fraction bits of out_fmt (e8m13: 13); all: the format's"));
  v.push_back(bool_field("overflow_to_inf", "rounder", &Datapath::overflow_to_inf,
                         "overflow gives Inf whatever the rounding (NVIDIA RTZ)"));
  // specials
  v.push_back(bits_field("nan_invalid", &Datapath::nan_invalid, "result bits for Inf - Inf and Inf * 0"));
  v.push_back(bits_field("nan_propagate", &Datapath::nan_propagate, "result bits when an input is NaN"));
  v.push_back(bool_field("nan_keep_sign", "specials", &Datapath::nan_keep_sign,
                         "NaN input: the result takes the sign of the first NaN (c, then the products; AMD)"));
}

/// The block scales, the k order and the addend.
void add_scales(std::vector<Field>& v) {
  // block scales
  {
    Field f = format_field("scale_fmt", &Datapath::scale_fmt, "format of the block scales: e8m0 (OCP MX) or ue4m3 (NVFP4)");
    f.section = "scales";
    f.choices = scale_format_names();
    f.near = [](const Datapath& d, int) {
      return d.scaled() ? std::vector<std::string>{d.scale_fmt == kE8M0 ? "ue4m3" : "e8m0"} : std::vector<std::string>{};
    };
    v.push_back(f);
  }
  v.push_back(limit_field("scale_block", "scales", &Datapath::scale_block, 1, 4096, "none", 0,
                          [](const Datapath&) { return 32; },
                          "elements of a and of b that share one scale (MX: 32, NVFP4: 16); none: no scales"));
  v.push_back(limit_field("group_size", "scales", &Datapath::group_size, 1, 64, "none", 0,
                          [](const Datapath& d) { return d.scale_block > 0 && d.scale_block < 16 ? d.scale_block : 16; },
                          "G: products summed exactly in groups of G, each group sum scaled and aligned at its scale "
                          "exponents only (GST-FDPA, mxf4/nvfp4: 16); none: each product scaled (ST-FDPA)"));
  v.push_back(choice_field("group_align", "scales", {"scale", "sum"},
                           [](const Datapath& d) { return std::string(d.group_by_sum ? "sum" : "scale"); },
                           [](Datapath& d, const std::string& s) { d.group_by_sum = lower(s) == "sum"; },
                           "group_size > 0: a group term's alignment exponent: scale (e_alpha + e_beta only, NVIDIA's "
                           "GST-FDPA) or sum (the exponent of the scaled group sum itself; a cancelled group reads e_zero)"));
  v.back().near = [](const Datapath& d, int) {
    return d.group_size ? std::vector<std::string>{d.group_by_sum ? "scale" : "sum"} : std::vector<std::string>{};
  };
  // k order and the addend
  v.push_back(bool_field("pair_interleave", "order", &Datapath::pair_interleave,
                         "products k mod 4 in {0,1} form the first groups, {2,3} the later (fp8 mma.sync as two HMMAs)"));
  v.push_back(bool_field("c_final_add", "order", &Datapath::c_final_add,
                         "groups start from +0 and c is added at the end by a separate two-term addition"));
  v.push_back(choice_field("c_final_round", "order", kRoundings,
                           [](const Datapath& d) { return std::string(to_string(d.c_final_round)); },
                           [](Datapath& d, const std::string& s) { d.c_final_round = rounding_of(lower(s)); },
                           "rounding of the final c addition (c_final_add)"));
  {
    auto base = v.back().near;
    v.back().near = [base](const Datapath& d, int s) {
      return d.c_final_add ? base(d, s) : std::vector<std::string>{};
    };
  }
}

std::vector<Field> build() {
  std::vector<Field> v;
  add_identity(v);
  add_formats(v);
  add_adder(v);
  add_accumulation(v);
  add_scales(v);
  return v;
}

std::string excerpt(const std::string& s) { return s.size() > 40 ? s.substr(0, 40) + "..." : s; }

}  // namespace

const std::vector<Field>& datapath_fields() {
  static const std::vector<Field> v = build();
  return v;
}

const Field* find_field(const std::string& name) {
  for (const Field& f : datapath_fields())
    if (f.name == name) return &f;
  return nullptr;
}

std::string field_allowed(const Field& f) {
  auto join = [](const std::vector<std::string>& c) {
    std::string s;
    for (const std::string& x : c) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  switch (f.kind) {
    case FieldKind::Int: return "an integer in " + std::to_string(f.lo) + ".." + std::to_string(f.hi);
    case FieldKind::Limit:
      return "an integer in " + std::to_string(f.lo) + ".." + std::to_string(f.hi) + " or \"" + f.none_word + "\"";
    case FieldKind::Bool: return "true or false";
    case FieldKind::Choice: return "one of: " + join(f.choices);
    case FieldKind::Format: return "a format name: " + join(f.choices);
    case FieldKind::Bits: return "a hex bit pattern 0x... (at most 16 digits)";
    case FieldKind::Text: return "printable ASCII text";
  }
  return "";
}

std::string get_field(const Datapath& dp, const std::string& name) {
  const Field* f = find_field(name);
  if (!f) throw FieldError("unknown field '" + excerpt(name) + "'");
  return f->get(dp);
}

void set_field(Datapath& dp, const std::string& name, const std::string& value) {
  const Field* f = find_field(name);
  if (!f) {
    std::string known;
    for (const Field& x : datapath_fields()) known += (known.empty() ? "" : ", ") + x.name;
    throw FieldError("unknown field '" + excerpt(name) + "' (fields: " + known + ")");
  }
  bool ok = true;
  const std::string l = lower(value);
  long long n = 0;
  switch (f->kind) {
    case FieldKind::Int: ok = parse_ll(value, n) && n >= f->lo && n <= f->hi; break;
    case FieldKind::Limit: ok = l == f->none_word || (parse_ll(value, n) && n >= f->lo && n <= f->hi); break;
    case FieldKind::Bool: ok = l == "true" || l == "false"; break;
    case FieldKind::Choice: ok = std::find(f->choices.begin(), f->choices.end(), l) != f->choices.end(); break;
    case FieldKind::Format: ok = std::find(f->choices.begin(), f->choices.end(), l) != f->choices.end(); break;
    case FieldKind::Bits:
      ok = value.size() > 2 && value.size() <= 18 && value[0] == '0' && (value[1] == 'x' || value[1] == 'X') &&
           value.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos;
      break;
    case FieldKind::Text:
      // printable ASCII only: what `show` writes must read back (no control characters, no
      // bytes that are not UTF-8)
      ok = std::all_of(value.begin(), value.end(), [](char ch) { return ch >= 0x20 && ch < 0x7f; });
      break;
  }
  if (!ok)
    throw FieldError("field '" + f->name + "': must be " + field_allowed(*f) + " (got '" + excerpt(value) + "')");
  f->put(dp, value);
}

void apply_settings(Datapath& dp, const std::string& settings) {
  std::vector<std::string> parts;
  std::string cur;
  std::istringstream in(settings);
  std::string piece;
  while (std::getline(in, piece, ',')) {
    if (!cur.empty() && piece.find('=') == std::string::npos) {
      cur += "," + piece;  // "type=e4m3,e5m2"
      continue;
    }
    if (!cur.empty()) parts.push_back(cur);
    cur = piece;
  }
  if (!cur.empty()) parts.push_back(cur);
  if (parts.empty()) throw FieldError("--set: empty setting (expected key=value[,key=value])");
  for (const std::string& p : parts) {
    const auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0)
      throw FieldError("--set: '" + excerpt(p) + "' is not key=value");
    set_field(dp, p.substr(0, eq), p.substr(eq + 1));
  }
}

std::string fields_markdown() {
  std::ostringstream os;
  os << "| field | section | values | meaning |\n|---|---|---|---|\n";
  for (const Field& f : datapath_fields())
    os << "| `" << f.name << "` | " << f.section << " | " << field_allowed(f) << " | " << f.doc << " |\n";
  os << "\nWidth relations (`show`, `explore` and every command that reads a datapath file or --set warn\n"
        "when one is broken):\n\n| field | bounded by | where | why |\n|---|---|---|---|\n";
  for (const WidthRelation& r : width_relations())
    os << "| `" << r.narrow << "` | `" << r.wide << "` >= it | " << r.when << " | " << r.why << " |\n";
  return os.str();
}

namespace {
bool fused_late_c(const Datapath& d) { return d.adder == AdderKind::Fused && d.late_c; }
bool fused_odd_even(const Datapath& d) { return fused_late_c(d) && d.interleave == 2; }
}  // namespace

const std::vector<WidthRelation>& width_relations() {
  static const std::vector<WidthRelation> v = {
      {"frac_bits", "c_frac", fused_late_c, "fused adder, late c",
       "when the products dominate, c (the running sum of a chained accumulation) is shifted to their "
       "e_max and keeps only c_frac fraction bits: the accumulation loses what the wider alignment keeps"},
      {"frac_bits", "acc_frac", fused_late_c, "fused adder, late c",
       "the normalised accumulator is rounded down to acc_frac fraction bits"},
      {"frac_bits", "partial_frac", fused_odd_even, "fused adder, late c, interleave 2",
       "the odd and even partial sums are rounded down to partial_frac fraction bits before they are added"},
  };
  return v;
}

std::vector<std::string> width_warnings(const Datapath& dp) {
  std::vector<std::string> w;
  for (const WidthRelation& r : width_relations()) {
    if (!r.applies(dp)) continue;
    const long n = std::stol(get_field(dp, r.narrow)), b = std::stol(get_field(dp, r.wide));
    if (b >= n) continue;
    w.push_back(std::string(r.narrow) + " = " + std::to_string(n) + " but " + r.wide + " = " + std::to_string(b) + ": " +
                r.why + "; the " + std::to_string(n - b) + " extra bits of " + r.narrow + " buy little. Raise " + r.wide +
                " with it (--set " + r.wide + "=" + std::to_string(n) + "; explore --sweep " + r.narrow + "," + r.wide + "=LO..HI)");
  }
  return w;
}

}  // namespace mc
