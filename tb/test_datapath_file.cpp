// Datapath files and the field table: every preset round-trips through its TOML file; the
// readers refuse bad files naming file, line and field; --set and --datapath reach every
// datapath command; the new aligner roundings (RNE, RNA) agree with an independent exact
// computation of the aligned terms.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <regex>
#include <set>

#include "matcore/datapath_file.hpp"
#include "matcore/explain.hpp"
#include "matcore/fields.hpp"
#include "matcore/model.hpp"
#include "matcore/presets.hpp"
#include "matcore/sample.hpp"
#include "matcore/svg.hpp"
#include "matcore/vectors.hpp"
#include "preset_refs.hpp"
#include "sampled.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

using namespace mc;

namespace {

/// Every field of two datapaths, through the table (the same list the files use).
void expect_same(const Datapath& x, const Datapath& y, const std::string& what) {
  for (const Field& f : datapath_fields()) EXPECT_EQ(f.get(x), f.get(y)) << what << ": field " << f.name;
}

std::string load_error(const std::string& text) {
  try {
    datapath_from_toml(text, "my.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// --- the field table -----------------------------------------------------------------------------

TEST(FieldTable, EveryFieldHasNameDocAndWorkingAccessors) {
  std::set<std::string> names;
  const Datapath dp = find_preset("mi300x", "e4m3fnuz");
  for (const Field& f : datapath_fields()) {
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate field " << f.name;
    EXPECT_FALSE(f.doc.empty()) << f.name;
    EXPECT_FALSE(field_allowed(f).empty()) << f.name;
    Datapath c = dp;
    set_field(c, f.name, f.get(dp));  // writing a field's own value changes nothing
    expect_same(c, dp, f.name);
  }
  EXPECT_EQ(names.size(), 44u);  // the members of Datapath (datapath.hpp)
}

TEST(FieldTable, ValuesOutsideTheRangeNameFieldAndAllowedValues) {
  Datapath dp = find_preset("mi300x", "fp16");
  auto err = [&](const std::string& k, const std::string& v) {
    try {
      set_field(dp, k, v);
    } catch (const FieldError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(err("frac_bits", "101"), "field 'frac_bits': must be an integer in 0..100 (got '101')");
  EXPECT_EQ(err("frac_bits", "2x"), "field 'frac_bits': must be an integer in 0..100 (got '2x')");
  EXPECT_EQ(err("prod_align", "up"), "field 'prod_align': must be one of: truncate, rd, rne, rna (got 'up')");
  EXPECT_EQ(err("late_c", "yes"), "field 'late_c': must be true or false (got 'yes')");
  EXPECT_EQ(err("emin_lim", "never"), "field 'emin_lim': must be an integer in -4096..4096 or \"none\" (got 'never')");
  EXPECT_NE(err("a_fmt", "fp17").find("must be a format name"), std::string::npos);
  EXPECT_NE(err("frac_bit", "3").find("unknown field 'frac_bit' (fields: arch, type"), std::string::npos);
  EXPECT_EQ(err("n_fma", "64"), "(no error)");
  EXPECT_EQ(dp.n_fma, 64);
}

// Width relations (issue 28): no preset breaks one; a wider alignment than the running sum keeps
// (the architect's frac_bits 24 -> 28 with c_frac 24) is named with both fields and the fix; the
// relation holds only where the stage exists (late c; odd/even sums).
TEST(FieldTable, WidthRelationsWarnWhereOneWidthWastesAnother) {
  for (const Datapath& d : all_presets()) EXPECT_TRUE(width_warnings(d).empty()) << d.name();
  Datapath d = find_preset("mi300x", "fp16");
  set_field(d, "frac_bits", "28");
  std::vector<std::string> w = width_warnings(d);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("frac_bits = 28 but c_frac = 24"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("--set c_frac=28"), std::string::npos) << w[0];
  set_field(d, "c_frac", "28");
  EXPECT_TRUE(width_warnings(d).empty());
  set_field(d, "frac_bits", "33");  // and c_frac 28, acc_frac 31: both relations
  set_field(d, "c_frac", "28");
  EXPECT_EQ(width_warnings(d).size(), 2u);
  Datapath f8 = find_preset("mi300x", "e4m3fnuz");
  set_field(f8, "frac_bits", "30");
  set_field(f8, "c_frac", "30");
  w = width_warnings(f8);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("partial_frac = 24"), std::string::npos) << w[0];
  Datapath nv = find_preset("h100", "fp16");  // early c: c is a term of the fused sum
  set_field(nv, "frac_bits", "40");
  EXPECT_TRUE(width_warnings(nv).empty());
  EXPECT_NE(fields_markdown().find("| `frac_bits` | `c_frac` >= it |"), std::string::npos);
}

TEST(FieldTable, SettingsListsAcceptCommaValues) {
  Datapath dp = find_preset("h100", "fp16");
  apply_settings(dp, "frac_bits=27,type=e4m3,e5m2,prod_align=rna,emin_lim=none");
  EXPECT_EQ(dp.frac_bits, 27);
  EXPECT_EQ(dp.type, "e4m3,e5m2");
  EXPECT_EQ(dp.prod_align, AlignRound::RNA);
  EXPECT_EQ(dp.emin_lim, kNone);
  EXPECT_THROW(apply_settings(dp, "frac_bits"), FieldError);
  EXPECT_THROW(apply_settings(dp, "=3"), FieldError);
}

// --- files -----------------------------------------------------------------------------------------

class RoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTrip, PresetWrittenAndReadBackIsTheSameDatapath) {
  const Datapath& dp = mc_test::preset_ref(GetParam()).dp;
  const std::string text = datapath_to_toml(dp);
  const Datapath back = datapath_from_toml(text, GetParam() + ".toml");
  expect_same(back, dp, GetParam());
  // and it computes the same on random samples with specials, at the preset's k
  for (const mc_test::Sample& x : mc_test::special_samples(dp, 200)) {
    const int K = static_cast<int>(x.a.size());
    ASSERT_EQ(dot(back, x.a.data(), x.b.data(), K, x.c), dot(dp, x.a.data(), x.b.data(), K, x.c));
  }
}
INSTANTIATE_TEST_SUITE_P(Presets, RoundTrip, ::testing::ValuesIn(mc_test::preset_keys()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(DatapathFile, BaseAndOverrides) {
  const Datapath d = datapath_from_toml(
      "# three more alignment bits, rounded to nearest\n"
      "base = \"mi300x/fp16\"\narch = \"mi300x-f27\"\nfrac_bits = 27\nprod_align = \"rne\"\nc_drop_gap = 30\n",
      "f27.toml");
  Datapath want = find_preset("mi300x", "fp16");
  want.arch = "mi300x-f27";
  want.frac_bits = 27;
  want.prod_align = AlignRound::RNE;
  want.c_drop_gap = 30;
  expect_same(d, want, "f27.toml");
  EXPECT_EQ(d.name(), "mi300x-f27/fp16");
  // a base with output and variant
  const Datapath h = datapath_from_toml("base = \"h100/e4m3/fp16+mma.sync\"\n", "h.toml");
  expect_same(h, find_preset("h100", "e4m3", "fp16", "mma.sync"), "h.toml");
}

TEST(DatapathFile, WithoutBaseStartsFromTheDefaults) {
  const Datapath d = datapath_from_toml("a_fmt = \"bf16\"\nb_fmt = \"bf16\"\nn_fma = 32\nfrac_bits = 40\n",
                                        "dir/wide-acc.toml");
  EXPECT_EQ(d.arch, "wide-acc");
  EXPECT_EQ(d.type, "bf16");
  EXPECT_EQ(d.family, "custom");
  EXPECT_EQ(d.n_fma, 32);
  EXPECT_EQ(d.frac_bits, 40);
  EXPECT_EQ(d.adder, Datapath{}.adder);
}

TEST(DatapathFile, ErrorsNameFileLineAndField) {
  EXPECT_EQ(load_error("base = \"mi300x/fp16\"\n\nfrac_bits = 200\n"),
            "my.toml:3:13: field 'frac_bits': must be an integer in 0..100 (got '200')");
  EXPECT_EQ(load_error("frac_bits = \"24\"\n"),
            "my.toml:1:13: field 'frac_bits': must be an integer in 0..100 (got a TOML string)");
  EXPECT_EQ(load_error("late_c = 1\n"), "my.toml:1:10: field 'late_c': must be true or false (got a TOML integer)");
  EXPECT_NE(load_error("\nfracbits = 3\n").find("my.toml:2:12: unknown field 'fracbits' (fields: base, arch"),
            std::string::npos);
  EXPECT_NE(load_error("base = \"mi999/fp16\"\n").find("my.toml:1:8: field 'base': unknown architecture 'mi999'"),
            std::string::npos);
  EXPECT_NE(load_error("frac_bits = \n").find("my.toml:1:"), std::string::npos);  // TOML syntax
  // combinations: validate_datapath names the field
  EXPECT_NE(load_error("base = \"mi250/fp16\"\nn_fma = 6\n").find("field 'n_fma' must be a power of two"),
            std::string::npos);
  EXPECT_NE(load_error("base = \"mi300x/fp16\"\nout_prec = 30\n").find("field 'out_prec'"), std::string::npos);
  EXPECT_NE(load_error("base = \"mi300x/fp16\"\nout_fmt = \"e4m3\"\n").find("field 'out_fmt'"), std::string::npos);
}

// --- every datapath command takes --datapath and --set -----------------------------------------------

TEST(DatapathFile, EveryDatapathCommandTakesTheFile) {
  const std::string cli = MATCORE_CLI;
  const std::string dir = mc_test::temp_dir();
  std::string out;
  ASSERT_EQ(mc_test::run_command(cli + " show --arch mi300x --type fp16 --set frac_bits=22 > " + dir + "/f22.toml", &out), 0);
  const std::string f = " --datapath " + dir + "/f22.toml";
  // 2^-24 below 1 is cut with F = 22 (kept with the preset's 24)
  out.clear();
  ASSERT_EQ(mc_test::run_command(cli + " dot" + f + " --a 1,2^-23 --b 1,1", &out), 0) << out;
  EXPECT_NE(out.find("d = 0x3f800000"), std::string::npos) << out;
  out.clear();
  ASSERT_EQ(mc_test::run_command(cli + " dot --arch mi300x --type fp16 --a 1,2^-23 --b 1,1", &out), 0);
  EXPECT_NE(out.find("d = 0x3f800001"), std::string::npos) << out;
  out.clear();
  ASSERT_EQ(mc_test::run_command(cli + " dot --arch mi300x --type fp16 --set frac_bits=22 --a 1,2^-23 --b 1,1", &out), 0);
  EXPECT_NE(out.find("d = 0x3f800000"), std::string::npos) << out;
  // the file beside its preset: the first stage that differs is the aligner's sticky bit
  out.clear();
  ASSERT_EQ(mc_test::run_command(cli + " dot --arch mi300x --type fp16 --dp " + dir + "/f22.toml --a 1,2^-23 --b 1,1", &out), 0);
  {
    const auto mark = out.find("<-- first difference");
    ASSERT_NE(mark, std::string::npos) << out;
    const std::string line = out.substr(out.rfind('\n', mark) + 1, mark - out.rfind('\n', mark));
    EXPECT_EQ(line.rfind("  aligner.sticky", 0), 0u) << out;
    EXPECT_NE(out.find("d = 0x3f800001  1.0000001192092896   (mi300x/fp16)\nd = 0x3f800000  1   (mi300x/fp16)\nd differs"),
              std::string::npos)
        << out;
  }
  out.clear();
  EXPECT_EQ(mc_test::run_command(cli + " dot --arch a100,h100 --type tf32 --a 1 --b 1 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("same d"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(mc_test::run_command(cli + " dot --arch a100 --type fp16 --dp a100/bf16 --a 1 --b 1 2>&1", &out), 2) << out;
  EXPECT_NE(out.find("different input formats"), std::string::npos) << out;
  // the picture: F = 22 drops the 12 digits of the product 2^-23 (sig 0x800, weights -23..-34)
  // below 2^-22, and only those
  out.clear();
  ASSERT_EQ(mc_test::run_command(cli + " dot" + f + " --a 1,2^-23 --b 1,1 --svg " + dir + "/p.svg 2>&1", &out), 0) << out;
  {
    std::ifstream sv(dir + "/p.svg");
    const std::string svg((std::istreambuf_iterator<char>(sv)), std::istreambuf_iterator<char>());
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
    EXPECT_NE(svg.find("aligner cut: F = 22 bits below e_max = 0"), std::string::npos);
    size_t cut = 0;
    for (size_t p = svg.find("class=\"cut\""); p != std::string::npos; p = svg.find("class=\"cut\"", p + 1)) ++cut;
    EXPECT_EQ(cut, 12u);
    EXPECT_NE(svg.find(">d = 0x3f800000  1<"), std::string::npos);
  }
  out.clear();
  ASSERT_EQ(mc_test::run_command(cli + " trace --arch mi300x --type fp16 --dp " + dir + "/f22.toml --a 1,2^-23 --b 1,1 --svg " +
                                     dir + "/t.svg",
                                 &out),
            0)
      << out;
  EXPECT_NE(out.find("(2 panels)"), std::string::npos) << out;
  // sample, run and validate
  ASSERT_EQ(mc_test::run_command(cli + " sample --arch mi300x --type fp16 --n 300 --out " + dir + " 2>&1", &out), 0) << out;
  const std::string files = " --a " + dir + "/a.txt --b " + dir + "/b.txt --c " + dir + "/c.txt";
  ASSERT_EQ(mc_test::run_command(cli + " run" + f + files + " --d " + dir + "/d22.txt 2>&1", &out), 0) << out;
  out.clear();
  EXPECT_EQ(mc_test::run_command(cli + " validate" + f + files + " --d " + dir + "/d22.txt", &out), 0) << out;
  out.clear();
  EXPECT_EQ(mc_test::run_command(cli + " validate --arch mi300x --type fp16" + files + " --d " + dir + "/d22.txt", &out), 1)
      << out;  // the preset differs from F = 22 on some of 300 samples
  // features of a file: F = 27 and N_FMA = 16 detected (the probes need F >= 24 for binary32)
  ASSERT_EQ(mc_test::run_command(cli + " show --arch mi300x --type fp16 --set frac_bits=27,n_fma=16 > " + dir + "/f27.toml", &out), 0);
  out.clear();
  EXPECT_EQ(mc_test::run_command(cli + " features --datapath " + dir + "/f27.toml", &out), 0) << out;
  EXPECT_NE(out.find("alignment bits F        27"), std::string::npos) << out;
  EXPECT_NE(out.find("detected parameters = preset parameters"), std::string::npos) << out;
  // gemm, rtl, explain --help-free runs
  std::ofstream(dir + "/A.txt") << "3c00 3c00\n";
  std::ofstream(dir + "/B.txt") << "3c00\n0001\n";
  out.clear();
  EXPECT_EQ(mc_test::run_command(cli + " gemm" + f + " --A " + dir + "/A.txt --B " + dir + "/B.txt", &out), 0) << out;
  out.clear();
  EXPECT_EQ(mc_test::run_command(cli + " rtl" + f + " | grep -c 'mc_aligner #(.N(8), .*, .F(22), '", &out), 0) << out;
  out.clear();
  EXPECT_EQ(mc_test::run_command(cli + " explain" + f + " --a 1,2^-23 --b 1,1 --d 0x3f800001 --no-trace", &out), 0) << out;
  EXPECT_NE(out.find("frac_bits 22 -> 23"), std::string::npos) << out;
  // bad combinations: exit 2 with the field named
  out.clear();
  EXPECT_EQ(mc_test::run_command(cli + " dot" + f + " --arch mi300x --a 1 --b 1 2>&1", &out), 2);
  EXPECT_NE(out.find("--datapath cannot be combined with --arch"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(mc_test::run_command(cli + " dot --arch mi250 --type fp16 --set n_fma=3 --a 1 --b 1 2>&1", &out), 2);
  EXPECT_NE(out.find("field 'n_fma' must be a power of two"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(mc_test::run_command(cli + " dot --datapath " + dir + "/none.toml --a 1 --b 1 2>&1", &out), 2);
  EXPECT_NE(out.find("none.toml: cannot open datapath file"), std::string::npos) << out;
}

// --- aligner rounding to nearest, against an independent computation --------------------------------
// The fused adder with early c = 0 discarded: d = round(sum_i align(p_i)), align(p) = the
// magnitude |p| * 2^(F - e_max) rounded to an integer (RNE / RNA), with its sign. Computed here
// from the products' exact values with plain integer arithmetic (no stage function), then rounded
// once by the exact adder (a Kulisch accumulator: a separate implementation from the fused one).

namespace {
i128 nearest(u128 mag, int s, bool even) {
  if (s <= 0) return static_cast<i128>(mag << -s);
  if (s >= 120) return 0;  // far below half an ulp of the window (|p| < 4 * 2^e_max)
  const u128 q = mag >> s, r = mag - (q << s), half = static_cast<u128>(1) << (s - 1);
  if (r > half || (r == half && (!even || (q & 1)))) return static_cast<i128>(q + 1);
  return static_cast<i128>(q);
}
}  // namespace

class AlignNearest : public ::testing::TestWithParam<std::tuple<std::string, int, int>> {};

TEST_P(AlignNearest, EqualsTheExactRoundingOfEachTerm) {
  const auto [mode, F, nfma] = GetParam();
  Datapath dp = find_preset("h100", "bf16");
  dp.emin_lim = kNone;
  dp.c_zero_exp = kNone;
  dp.out_round = Rounding::RNE;
  dp.overflow_to_inf = false;
  set_field(dp, "prod_align", mode);
  dp.frac_bits = F;
  dp.n_fma = nfma;
  validate_datapath(dp);
  const bool even = mode == "rne";
  std::mt19937_64 g(F * 131 + nfma);
  int rounded_up = 0;
  for (int it = 0; it < 20000; ++it) {
    std::vector<uint64_t> a(nfma), b(nfma);
    for (int i = 0; i < nfma; ++i) {
      // bf16: sign, exponent in a spread of 40 around 1, random fraction
      a[i] = (g() & 0x807F) | (static_cast<uint64_t>(127 + static_cast<int>(g() % 40) - 20) << 7);
      b[i] = (g() & 0x807F) | (static_cast<uint64_t>(127 + static_cast<int>(g() % 8) - 4) << 7);
    }
    // exact products sig * 2^(e - 14), e = ea + eb (unnormalised, as the hardware's multiplier)
    int e_max = INT_MIN;
    std::vector<u128> sig(nfma);
    std::vector<int> ex(nfma);
    std::vector<bool> neg(nfma);
    for (int i = 0; i < nfma; ++i) {
      const int ea = static_cast<int>((a[i] >> 7) & 0xFF) - 127, eb = static_cast<int>((b[i] >> 7) & 0xFF) - 127;
      sig[i] = static_cast<u128>((a[i] & 0x7F) | 0x80) * ((b[i] & 0x7F) | 0x80);
      ex[i] = ea + eb;
      neg[i] = ((a[i] ^ b[i]) >> 15) & 1;
      e_max = std::max(e_max, ex[i]);
    }
    i128 sum = 0;
    for (int i = 0; i < nfma; ++i) {
      // |p| * 2^(F - e_max) = sig * 2^(ex - 14 + F - e_max): shift right by s
      const int s = 14 - F + e_max - ex[i];
      const i128 m = nearest(sig[i], s, even);
      if (s > 0 && static_cast<u128>(m) << s > sig[i]) ++rounded_up;
      sum += neg[i] ? -m : m;
    }
    Product t{};
    t.cls = sum == 0 ? Class::Zero : Class::Normal;
    t.sign = sum < 0;
    t.sig = static_cast<u128>(sum < 0 ? -sum : sum);
    t.exp = e_max;
    t.frac = F;
    const uint64_t want = exact_sum_round(&t, 1, kBinary32, RoundOpts{}, false);
    const uint64_t got = dot(dp, a.data(), b.data(), nfma, 0);
    if (sum == 0) {
      ASSERT_EQ(got & 0x7FFFFFFF, 0u) << "sample " << it;
      continue;
    }
    ASSERT_EQ(got, want) << std::hex << "sample " << it << ": got 0x" << got << " want 0x" << want;
  }
  if (F <= 24) {
    EXPECT_GT(rounded_up, 100);  // the rounding up of the aligner was exercised
  }  // the rounding up of the aligner was exercised
}
INSTANTIATE_TEST_SUITE_P(
    Modes, AlignNearest,
    ::testing::Combine(::testing::Values("rne", "rna"), ::testing::Values(8, 24, 60), ::testing::Values(4, 16, 64)),
    [](const ::testing::TestParamInfo<std::tuple<std::string, int, int>>& i) {
      return std::get<0>(i.param) + "_F" + std::to_string(std::get<1>(i.param)) + "_n" + std::to_string(std::get<2>(i.param));
    });

TEST(DatapathFile, SvgLabelsAndValuesAreNeverCovered) {
  // the layout: a cut line's label has a line of its own (no row's name, bits or value at its
  // height), and the canvas reaches past the longest value text (nothing cut at the right)
  const Datapath dp = find_preset("mi300x", "fp16");
  const std::vector<uint64_t> a = {0x3c00, 0x0001, 0x3555}, b = {0x3c00, 0x3c00, 0xb555};
  SvgPanel p{dp, Trace{}, 0};
  p.d = dot(dp, a.data(), b.data(), 3, 0x3f800000, &p.trace);
  const std::string svg = trace_svg({p});
  std::set<int> label_y, row_y;
  double right = 0;
  const std::regex text_re("<text x=\"([0-9.]+)\" y=\"([0-9]+)\" class=\"(\\w+)\"[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_re); it != std::sregex_iterator(); ++it) {
    const std::string cls = (*it)[3];
    const int y = std::stoi((*it)[2]);
    if (cls == "cutlabel") label_y.insert(y);
    if (cls == "sig" || cls == "val" || cls == "bit") row_y.insert(y);
    if (cls == "val") right = std::max(right, std::stod((*it)[1]) + 6.0 * (*it)[4].length());
  }
  ASSERT_EQ(label_y.size(), 2u) << svg;  // the aligner's cut and the c-aligner's
  for (int y : label_y)  // rows are 18 px apart, their text 10-11 px high
    for (int r : row_y) EXPECT_GE(std::abs(y - r), 11) << "a cut label at y = " << y << " overlaps the row at y = " << r;
  std::smatch w;
  ASSERT_TRUE(std::regex_search(svg, w, std::regex("<svg [^>]*width=\"([0-9]+)\"")));
  EXPECT_GE(std::stod(w[1]), right) << "the longest value text ends past the canvas";
  EXPECT_NE(svg.find("(+normal sig=0xf1c8e4*2^-23)"), std::string::npos) << "rounder.d's value text cut";
  
}

TEST(AlignNearest, TiesGoToEvenOrAway) {
  // F = 2 below e_max = 0: 1 + 2^-3 (a tie between 1 and 1.25: RNE keeps 1, RNA gives 1.25) and
  // 1 + 3*2^-3 (a tie between 1.25 and 1.5: both give 1.5). bf16 inputs, binary32 output.
  Datapath dp = find_preset("h100", "bf16");
  dp.frac_bits = 2;
  dp.emin_lim = kNone;
  dp.out_round = Rounding::RNE;
  const uint64_t one = 0x3F80, onep = 0x3F90 /* 1.125 */, onep3 = 0x3FB0 /* 1.375 */;
  auto d = [&](const char* mode, uint64_t x) {
    Datapath v = dp;
    set_field(v, "prod_align", mode);
    const uint64_t a[2] = {one, x}, b[2] = {0x3F80, 0x3F80};
    return dot(v, a, b, 2, 0);
  };
  EXPECT_EQ(d("rne", onep), 0x40000000u);     // 1 + 1
  EXPECT_EQ(d("rna", onep), 0x40100000u);     // 1 + 1.25
  EXPECT_EQ(d("truncate", onep), 0x40000000u);
  EXPECT_EQ(d("rne", onep3), 0x40200000u);    // 1 + 1.5
  EXPECT_EQ(d("rna", onep3), 0x40200000u);
  EXPECT_EQ(d("truncate", onep3), 0x40100000u);  // 1 + 1.25
}

// --- explain: pairs of changes ---------------------------------------------------------------------
// h100 fp16 differs from a100 fp16 in two fields that matter on normal-range samples (n_fma 8 ->
// 16, frac_bits 24 -> 25; emin_lim differs too, below these samples' range). The d of h100 given
// as "observed" to explain on a100: no single change reproduces every mismatch, the pair does.
TEST(ExplainPairs, FindBothChangedFieldsOfA100AgainstH100) {
  const std::string cli = MATCORE_CLI, dir = mc_test::temp_dir();
  std::string out;
  const std::string files = " --a " + dir + "/a.txt --b " + dir + "/b.txt --c " + dir + "/c.txt --d " + dir + "/d.txt";
  ASSERT_EQ(mc_test::run_command(cli + " sample --arch h100 --type fp16 --n 400 --out " + dir, &out), 0) << out;
  ASSERT_EQ(mc_test::run_command(cli + " run --arch h100 --type fp16" + files + " 2>&1", &out), 0) << out;
  out.clear();
  ASSERT_EQ(mc_test::run_command(cli + " validate --arch a100 --type fp16" + files + " --show 400 > " + dir + "/m.txt", &out), 1);
  out.clear();
  EXPECT_EQ(mc_test::run_command(cli + " explain --arch a100 --type fp16 --no-trace --mismatches " + dir + "/m.txt", &out), 0)
      << out;
  EXPECT_NE(out.find("answers: no single change reproduces all "), std::string::npos) << out;
  EXPECT_EQ(out.find("answers: single changes"), std::string::npos) << out;
  EXPECT_NE(out.find("\n  n_fma 8 -> 16, frac_bits 24 -> 25\n"), std::string::npos) << out;
  // the core search, on the same list: every pair found contains both changes
  const Datapath a100 = find_preset("a100", "fp16");
  std::ifstream in(dir + "/m.txt");
  const std::vector<ExplainSample> list = parse_mismatch_list(a100, in);
  ASSERT_GT(list.size(), 20u);
  const std::vector<Variation> vars = single_variations(a100);
  std::vector<PairVariation> pairs;
  EXPECT_GT(pair_variations(a100, vars, list, pairs), 500u);
  ASSERT_FALSE(pairs.empty());
  for (const PairVariation& p : pairs) {
    EXPECT_EQ(p.dp.frac_bits, 25) << p.label;
    EXPECT_GE(p.dp.n_fma, 16) << p.label;
  }
}

TEST(FieldTable, TheDocsShowTheTable) {
  std::ifstream f(std::string(MATCORE_SOURCE_DIR) + "/docs/datapath-files.md");
  const std::string doc((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(doc.find(fields_markdown()), std::string::npos)
      << "docs/datapath-files.md: paste the output of `matcore show --fields`";
}
