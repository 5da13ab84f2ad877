// A picture of one dot product, drawn from its stage trace: see svg.hpp.
#include "matcore/svg.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <sstream>

#include "matcore/plan.hpp"

namespace mc {

namespace {

constexpr int kCell = 12, kRow = 18, kLabel = 200, kRight = 360, kMaxCols = 96;
// Advance of one monospace character at the value (10 px) and cut-label (9 px) sizes, with margin:
// the canvas grows to the longest text, so nothing is cut at the right.
constexpr double kValChar = 6.2, kCutChar = 5.6;
constexpr size_t kMaxVal = 120;  // value texts longer than this end in "..."

struct BitRow {
  std::string name, text;  ///< signal and its trace value
  bool has_bits = false;
  char sign = '+';
  std::vector<int> ones;   ///< weights of the 1 bits of the magnitude
  int lsb = 0, msb = 0;    ///< weights of the lowest and highest digit shown (zeros included)
  int cut = INT_MIN;       ///< digits below this weight are dropped by the aligner (grey)
};

struct Cut {
  int weight;              ///< the line is drawn between weight and weight - 1
  std::string label;
  const char* color;
};

struct Group {
  std::string title;
  std::vector<BitRow> rows;
  std::vector<Cut> cuts;
};

std::string esc(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '<') r += "&lt;";
    else if (c == '>') r += "&gt;";
    else if (c == '&') r += "&amp;";
    else if (c == '"') r += "&quot;";
    else r += c;
  }
  return r;
}

/// The digits of a row: the number its trace record stands for (products, sums, c and d).
void set_number(BitRow& r, const TraceNumber& n) {
  if (!n.on) return;
  r.has_bits = true;
  r.sign = n.neg ? '-' : '+';
  r.lsb = n.lsb;
  r.msb = n.msb;
  for (int i = 0; i < 128 && (n.mag >> i); ++i)
    if ((n.mag >> i) & 1) r.ones.push_back(n.lsb + i);
  if (!r.ones.empty()) r.msb = std::max(r.msb, r.ones.back());
}

std::vector<Group> groups_of(const SvgPanel& p) {
  const Datapath& dp = p.dp;
  std::vector<Group> g(1);
  g[0].title = "";
  int e_max = INT_MIN, e_odd = INT_MIN, e_even = INT_MIN, e_c = INT_MIN;
  for (const auto& row : p.trace.rows) {
    const std::string& name = row.name;
    if (name == "order" || name.rfind("aligner.v", 0) == 0) continue;  // the aligned terms: the products' grey digits show them
    if (name == "group") {
      if (!g.back().rows.empty() || !g.back().title.empty()) g.emplace_back();
      g.back().title = "group " + row.value + " (products " + std::to_string(std::stoi(row.value) * dp.n_fma) + ".., c = the previous group's d)";
      e_max = e_odd = e_even = e_c = INT_MIN;
      continue;
    }
    BitRow r;
    r.name = name;
    r.text = row.value;
    set_number(r, row.number);
    Group& G = g.back();
    auto num = [&]() { return std::stoi(row.value); };
    if (dp.adder == AdderKind::Fused && (name == "aligner.e_max" || name == "aligner.e_max_odd" || name == "aligner.e_max_even") &&
        row.value != "none") {
      const int e = num();
      (name == "aligner.e_max_even" ? e_even : name == "aligner.e_max_odd" ? e_odd : e_max) = e;
      const std::string set = name == "aligner.e_max_odd" ? " (odd set)" : name == "aligner.e_max_even" ? " (even set)" : "";
      G.cuts.push_back(Cut{e - dp.frac_bits, "aligner cut" + set + ": F = " + std::to_string(dp.frac_bits) + " bits below e_max = " + std::to_string(e), "#d62728"});
      // grey the dropped digits of the products (and of an early c) of this set
      int idx = 0;
      for (BitRow& b : G.rows) {
        const bool is_p = b.name.rfind("multiplier.p", 0) == 0;
        const bool is_c = b.name == "multiplier.c" && !dp.late_c;
        if (is_p) {
          const bool odd_set = idx % 2 == 0;
          ++idx;
          if (dp.interleave == 2 && dp.late_c && (name == "aligner.e_max_odd") != odd_set) continue;
        } else if (!is_c) {
          continue;
        }
        b.cut = e - dp.frac_bits;
      }
    } else if (name == "cadd.e_c") {
      e_c = num();
    } else if (name == "cadd.branch") {
      const int em = e_max != INT_MIN ? e_max : std::max(e_odd, e_even);
      if (row.value == "c_shifted" && em != INT_MIN)
        G.cuts.push_back(Cut{em - dp.c_frac, "c-aligner: c rounded down to c_frac = " + std::to_string(dp.c_frac) + " bits below e_max", "#9467bd"});
      else if (e_c != INT_MIN)
        G.cuts.push_back(Cut{e_c - dp.sum_frac, "c-aligner: sum rounded down to sum_frac = " + std::to_string(dp.sum_frac) + " bits below e_c", "#9467bd"});
    }
    G.rows.push_back(r);
  }
  return g;
}

}  // namespace

/// The digits of one row at height y, columns wmax (left) .. wmin; ones below wmin noted.
static void draw_bits(std::ostringstream& body, const BitRow& r, int y, int wmin, int wmax) {
  auto x_of = [&](int w) { return kLabel + (wmax - w) * kCell; };
  body << "<text x=\"" << kLabel - 6 << "\" y=\"" << y + 13 << "\" class=\"bit\" text-anchor=\"end\">" << r.sign << "</text>\n";
  bool below = false;
  for (int w = r.msb; w >= r.lsb; --w) {
    const bool one = std::binary_search(r.ones.begin(), r.ones.end(), w);
    if (w < wmin) {
      below |= one;
      continue;
    }
    if (w > wmax) continue;
    const bool cut = w < r.cut;
    body << "<rect x=\"" << x_of(w) << "\" y=\"" << y + 2 << "\" width=\"" << kCell - 1 << "\" height=\"" << kRow - 4
         << "\" class=\"" << (cut ? "cut" : one ? "one" : "zero") << "\"/>"
         << "<text x=\"" << x_of(w) + kCell / 2 << "\" y=\"" << y + 13 << "\" class=\"" << (cut ? "bitcut" : "bit")
         << "\">" << (one ? '1' : '0') << "</text>\n";
  }
  if (below)
    body << "<text x=\"" << x_of(wmin) + kCell + 2 << "\" y=\"" << y + 13 << "\" class=\"note\">+1s below 2^" << wmin << "</text>\n";
}

std::string trace_svg(const std::vector<SvgPanel>& panels) {
  std::vector<std::vector<Group>> all;
  int wmax = INT_MIN, wmin = INT_MAX;
  for (const SvgPanel& p : panels) {
    all.push_back(groups_of(p));
    for (const Group& g : all.back())
      for (const BitRow& r : g.rows)
        if (r.has_bits) {
          wmax = std::max(wmax, r.msb);
          wmin = std::min(wmin, r.ones.empty() ? r.lsb : std::min(r.lsb, r.ones.front()));
        }
  }
  if (wmax == INT_MIN) wmax = wmin = 0;
  for (const auto& gs : all)
    for (const Group& g : gs)
      for (const Cut& c : g.cuts)
        if (c.weight <= wmax && c.weight > wmax - kMaxCols) wmin = std::min(wmin, c.weight - 1);
  wmax += 1;  // room for a carry digit
  const int ncols = std::min(kMaxCols, wmax - wmin + 1);
  wmin = wmax - ncols + 1;
  int width = kLabel + ncols * kCell + kRight;  // grown below to the longest text
  auto reach = [&width](double x) { width = std::max(width, static_cast<int>(x) + 12); };
  auto x_of = [&](int w) { return kLabel + (wmax - w) * kCell; };

  std::ostringstream body;
  int y = 10;
  for (size_t pi = 0; pi < panels.size(); ++pi) {
    const SvgPanel& P = panels[pi];
    const std::string title = P.dp.name() + (P.dp.variant.empty() ? "" : " (" + P.dp.variant + ")");
    body << "<text x=\"8\" y=\"" << y + 14 << "\" class=\"title\">" << esc(title) << ": " << esc(plan_diagram(P.dp)) << "</text>\n";
    y += 24;
    // weight axis
    for (int w = wmax; w >= wmin; --w)
      if (w % 4 == 0)
        body << "<text x=\"" << x_of(w) + kCell / 2 << "\" y=\"" << y + 10 << "\" class=\"axis\">" << w << "</text>\n";
    body << "<text x=\"8\" y=\"" << y + 10 << "\" class=\"axislabel\">bit weight 2^w, w =</text>\n";
    y += 16;
    for (const Group& g : all[pi]) {
      if (!g.title.empty()) {
        body << "<text x=\"8\" y=\"" << y + 13 << "\" class=\"group\">" << esc(g.title) << "</text>\n";
        y += kRow;
      }
      // The cut lines' labels get lines of their own above the rows (never over the bits or the
      // values); each line runs from its label down through the rows.
      std::vector<const Cut*> shown;
      for (const Cut& c : g.cuts)
        if (c.weight <= wmax && c.weight > wmin) shown.push_back(&c);
      const int label_top = y;
      y += 11 * static_cast<int>(shown.size());
      for (const BitRow& r : g.rows) {
        // one <g> a row, named by its trace signal (the web page's step control reveals stages)
        body << "<g class=\"row\" data-row=\"" << esc(r.name) << "\">\n"
             << "<text x=\"8\" y=\"" << y + 13 << "\" class=\"sig\">" << esc(r.name) << "</text>\n";
        if (r.has_bits) draw_bits(body, r, y, wmin, wmax);
        const std::string t = r.text.size() > kMaxVal ? r.text.substr(0, kMaxVal) + "..." : r.text;
        const int vx = kLabel + ncols * kCell + 14;
        body << "<text x=\"" << vx << "\" y=\"" << y + 13 << "\" class=\"val\">" << esc(t) << "</text>\n";
        body << "</g>\n";
        reach(vx + kValChar * static_cast<double>(t.size()));
        y += kRow;
      }
      int ly = label_top + 9;
      for (const Cut* c : shown) {
        const int x = x_of(c->weight - 1);
        body << "<line x1=\"" << x << "\" y1=\"" << ly - 8 << "\" x2=\"" << x << "\" y2=\"" << y << "\" stroke=\"" << c->color
             << "\" stroke-width=\"2\" stroke-dasharray=\"4,2\"/>\n"
             << "<text x=\"" << x + 3 << "\" y=\"" << ly << "\" class=\"cutlabel\" fill=\"" << c->color << "\">" << esc(c->label) << "</text>\n";
        reach(x + 3 + kCutChar * static_cast<double>(c->label.size()));
        ly += 11;
      }
      y += 6;
    }
    body << "<text x=\"8\" y=\"" << y + 14 << "\" class=\"title\">d = 0x" << to_hex_bits(P.dp.out_fmt, P.d) << "  "
         << esc(to_decimal(P.dp.out_fmt, P.d)) << "</text>\n";
    y += 34;
  }
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << y + 10 << "\" viewBox=\"0 0 " << width
     << " " << y + 10 << "\" font-family=\"monospace\">\n"
     << "<style>.title{font-size:13px;font-weight:bold}.group{font-size:12px;font-style:italic}.sig{font-size:11px}"
     << ".axis{font-size:9px;fill:#666;text-anchor:middle}.axislabel{font-size:9px;fill:#666}.bit{font-size:10px;text-anchor:middle}"
     << ".bitcut{font-size:10px;text-anchor:middle;fill:#999;text-decoration:line-through}"
     << ".one{fill:#ffd27f}.zero{fill:#f2f2f2}.cut{fill:#ddd}.val{font-size:10px;fill:#333}.note{font-size:9px;fill:#d62728}"
     << ".cutlabel{font-size:9px}</style>\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << body.str() << "</svg>\n";
  return os.str();
}

}  // namespace mc
