#include "collect_common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>

#include "matcore/cli.hpp"
#include "matcore/model.hpp"
#include "matcore/output.hpp"
#include "matcore/vectors.hpp"

namespace mcc {

const char* to_string(Ty t) {
  switch (t) {
    case Ty::fp32: return "fp32";
    case Ty::xf32: return "xf32";
    case Ty::tf32: return "tf32";
    case Ty::fp16: return "fp16";
    case Ty::bf16: return "bf16";
    case Ty::bf16_1k: return "bf16_1k";
    case Ty::e4m3: return "e4m3";
    case Ty::e5m2: return "e5m2";
    case Ty::e4m3fnuz: return "e4m3fnuz";
    case Ty::e5m2fnuz: return "e5m2fnuz";
    case Ty::fp64: return "fp64";
    case Ty::e3m2: return "e3m2";
    case Ty::e2m3: return "e2m3";
    case Ty::e2m1: return "e2m1";
    case Ty::ue8m0: return "ue8m0";
    case Ty::ue4m3: return "ue4m3";
    case Ty::none: return "none";
  }
  return "?";
}

const mc::Format& format_of(Ty t) {
  switch (t) {
    case Ty::fp32:
    case Ty::xf32:
    case Ty::tf32: return mc::kBinary32;
    case Ty::fp16: return mc::kBinary16;
    case Ty::bf16:
    case Ty::bf16_1k: return mc::kBfloat16;
    case Ty::e4m3: return mc::kE4M3;
    case Ty::e5m2: return mc::kE5M2;
    case Ty::e4m3fnuz: return mc::kE4M3Fnuz;
    case Ty::e5m2fnuz: return mc::kE5M2Fnuz;
    case Ty::fp64: return mc::kBinary64;
    case Ty::e3m2: return mc::kE3M2;
    case Ty::e2m3: return mc::kE2M3;
    case Ty::e2m1: return mc::kE2M1;
    case Ty::ue8m0: return mc::kE8M0;
    case Ty::ue4m3: return mc::kUE4M3;
    case Ty::none: break;
  }
  return mc::kBinary32;
}

int bytes_of(Ty t) { return t == Ty::none ? 1 : (format_of(t).width() + 7) / 8; }

void check_operands(const Instr& in) {
  struct Ext { const char* what; const Operand* op; int rows, cols; };
  const Ext ops[3] = {{"A", &in.A, in.m, in.k}, {"B", &in.B, in.k, in.n}, {"C/D", &in.C, in.m, in.n}};
  for (const Ext& e : ops) {
    std::vector<uint8_t> seen(e.op->elems, 0);
    size_t hits = 0;
    for (int b = 0; b < in.blocks; ++b)
      for (int r = 0; r < e.rows; ++r)
        for (int c = 0; c < e.cols; ++c) {
          const size_t x = e.op->index(b, r, c);
          if (x >= seen.size() || seen[x]++)
            throw std::logic_error(in.name + ": operand " + e.what + " element (" + std::to_string(b) +
                                   "," + std::to_string(r) + "," + std::to_string(c) +
                                   ") maps to image index " + std::to_string(x) +
                                   (x >= seen.size() ? " (out of range)" : " (taken twice)"));
          ++hits;
        }
    if (hits != e.op->elems)
      throw std::logic_error(in.name + ": operand " + e.what + " image has " +
                             std::to_string(e.op->elems) + " elements but " + std::to_string(hits) +
                             " are used");
  }
}

void put_elem(Bytes& img, size_t index, int elem_bytes, uint64_t bits) {
  uint8_t* p = img.data() + index * static_cast<size_t>(elem_bytes);
  for (int i = 0; i < elem_bytes; ++i) p[i] = static_cast<uint8_t>(bits >> (8 * i));
}

uint64_t get_elem(const Bytes& img, size_t index, int elem_bytes) {
  const uint8_t* p = img.data() + index * static_cast<size_t>(elem_bytes);
  uint64_t v = 0;
  for (int i = 0; i < elem_bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

namespace {

size_t bit_pos(const Operand& op, size_t index) {
  if (op.group) return index / op.group * 128 + index % op.group * op.bits();
  return index * op.bits();
}

}  // namespace

void put_elem(Bytes& img, const Operand& op, size_t index, uint64_t bits) {
  if (!op.elem_bits && !op.group && !op.shift) return put_elem(img, index, op.elem_bytes, bits);
  const size_t at = bit_pos(op, index);
  const uint64_t v = bits << op.shift;
  for (int i = 0; i < op.bits(); ++i) {
    uint8_t& byte = img[(at + i) / 8];
    const uint8_t m = static_cast<uint8_t>(1u << ((at + i) % 8));
    byte = static_cast<uint8_t>((v >> i) & 1 ? byte | m : byte & ~m);
  }
}

uint64_t get_elem(const Bytes& img, const Operand& op, size_t index) {
  if (!op.elem_bits && !op.group && !op.shift) return get_elem(img, index, op.elem_bytes);
  const size_t at = bit_pos(op, index);
  uint64_t v = 0;
  for (int i = 0; i < op.bits(); ++i) v |= static_cast<uint64_t>((img[(at + i) / 8] >> ((at + i) % 8)) & 1) << i;
  return (v >> op.shift) & ((uint64_t{1} << (op.bits() - op.shift)) - 1);
}

Images blank_images(const Instr& in, size_t groups) {
  Images im;
  im.A.assign(in.A.image_bytes(groups * in.A.elems), 0);
  im.B.assign(in.B.image_bytes(groups * in.B.elems), 0);
  im.C.assign(in.C.image_bytes(groups * in.C.elems), 0);
  if (in.scale_block) {  // the unit scale everywhere (also where no sample's scale goes)
    const uint8_t one = static_cast<uint8_t>(mc::unit_scale_bits(format_of(in.scale)));
    im.SA.assign(groups * in.SA.elems, one);
    im.SB.assign(groups * in.SB.elems, one);
  }
  return im;
}

namespace {

// The input containers handed to the hardware unchanged: binary32 (fp32, and the fp32
// containers of xf32 / tf32, whose low bits the hardware ignores) and binary64.
bool container(Ty t) { return t == Ty::fp32 || t == Ty::xf32 || t == Ty::tf32 || t == Ty::fp64; }

uint64_t to_input(Ty t, const mc::AbFile& f, size_t i, const std::string& path, size_t sample,
                  int value) {
  const uint64_t stored = f.v[i];
  const int width = f.width;
  if (container(t) || f.native_bits) return stored;  // native: the pattern in t itself
  uint64_t v;
  if (mc::ingest_exact(format_of(t), mc::Rounding::RNE, stored, width, &v)) return v;
  return mc::ingest_value(format_of(t), mc::Rounding::RNE, stored, width,
                          path + ": sample " + std::to_string(sample + 1) + ": value " +
                              std::to_string(value + 1));
}

// c (stored as binary32 / binary64) in the accumulator format: f16 accumulators take c rounded
// to nearest even, exactly as matcore's fp16-output presets do (c_from_binary32).
uint64_t to_acc(Ty out, uint64_t c) {
  if (out == Ty::fp16) return mc::convert(mc::kBinary32, c, mc::kBinary16, mc::Rounding::RNE);
  return c;
}

int file_width(Ty t) { return t == Ty::fp64 ? 64 : 32; }

size_t bound_groups(const Instr& in) {
  // About 4 M accumulator elements per chunk (a few tens of MB of images).
  return std::max<size_t>(1, (size_t{1} << 22) / std::max<size_t>(1, in.C.elems));
}

}  // namespace

uint64_t d_to_file(Ty out, uint64_t d) {
  if (out != Ty::fp16) return d;
  if ((d & 0x7C00) == 0x7C00 && (d & 0x3FF))  // NaN: sign, all-ones exponent, payload on top
    return ((d & 0x8000) << 16) | 0x7F800000 | ((d & 0x3FF) << 13);
  return mc::convert(mc::kBinary16, d, mc::kBinary32, mc::Rounding::RNE);
}

Samples read_samples(const Instr& in, const std::string& a, const std::string& b,
                     const std::string& c, const std::string& sa, const std::string& sb) {
  const mc::AbFile A = mc::read_ab_file(a, 0, format_of(in.a));
  if (A.K != in.k)
    throw UsageError(a + ": samples have K = " + std::to_string(A.K) + " values but " + in.name +
                     " has k = " + std::to_string(in.k) + " (sample with matcore sample --k " +
                     std::to_string(in.k) + ")");
  const mc::AbFile B = mc::read_ab_file(b, A.K, format_of(in.b));
  const std::vector<uint64_t> C = mc::read_cd_file(c, file_width(in.out));
  const size_t n = A.samples();
  if (B.samples() != n || C.size() != n)
    throw UsageError("sample counts differ: " + a + " has " + std::to_string(n) + ", " + b + " " +
                     std::to_string(B.samples()) + ", " + c + " " + std::to_string(C.size()));
  Samples s;
  s.n = n;
  s.a.resize(A.v.size());
  s.b.resize(B.v.size());
  for (size_t i = 0; i < A.v.size(); ++i) {
    const size_t smp = i / A.K;
    const int val = static_cast<int>(i % A.K);
    s.a[i] = to_input(in.a, A, i, a, smp, val);
    s.b[i] = to_input(in.b, B, i, b, smp, val);
  }
  s.c.resize(n);
  for (size_t i = 0; i < n; ++i) s.c[i] = to_acc(in.out, C[i]);
  if (!in.scale_block) {
    if (!sa.empty() || !sb.empty()) throw UsageError(in.name + " takes no block scales (--sa, --sb)");
    return s;
  }
  if (sa.empty() || sb.empty())
    throw UsageError(in.name + " is block-scaled: give its scale files --sa and --sb (sa.txt, sb.txt)");
  const int per = in.scales_per_row();
  for (const auto& [path, dst] : {std::pair<const std::string&, std::vector<uint64_t>*>{sa, &s.sa}, {sb, &s.sb}}) {
    mc::ScaleFile f = mc::read_scale_file(path, per, format_of(in.scale));
    if (f.samples() != n)
      throw UsageError("sample counts differ: " + a + " has " + std::to_string(n) + ", " + path + " " +
                       std::to_string(f.samples()));
    *dst = std::move(f.v);
  }
  return s;
}

namespace {

/// Where sample `smp` of a chunk starting at instruction g0 lands: instruction g (in the
/// chunk), block and row/column i.
struct Slot {
  size_t g;
  int blk, i;
};
Slot slot_of(const Instr& in, size_t smp, size_t g0) {
  const size_t per = static_cast<size_t>(in.per_group());
  const int diag = std::min(in.m, in.n), r = static_cast<int>(smp % per);
  return {smp / per - g0, r / diag, r % diag};
}

}  // namespace

std::vector<uint64_t> run_samples(const Instr& in, const Samples& s, const Launch& launch) {
  const size_t per = static_cast<size_t>(in.per_group());
  const size_t groups = (s.n + per - 1) / per;
  const size_t chunk = bound_groups(in);
  const int ns = in.scales_per_row();
  std::vector<uint64_t> d(s.n);
  for (size_t g0 = 0; g0 < groups; g0 += chunk) {
    const size_t ng = std::min(chunk, groups - g0);
    Images im = blank_images(in, ng);
    Bytes D;
    const size_t s0 = g0 * per, s1 = std::min(s.n, (g0 + ng) * per);
    for (size_t smp = s0; smp < s1; ++smp) {
      const Slot at = slot_of(in, smp, g0);
      for (int k = 0; k < in.k; ++k) {
        put_elem(im.A, in.A, at.g * in.A.elems + in.A.index(at.blk, at.i, k), s.a[smp * in.k + k]);
        put_elem(im.B, in.B, at.g * in.B.elems + in.B.index(at.blk, k, at.i), s.b[smp * in.k + k]);
      }
      for (int kb = 0; kb < ns; ++kb) {
        im.SA[at.g * in.SA.elems + in.SA.index(at.blk, at.i, kb)] = static_cast<uint8_t>(s.sa[smp * ns + kb]);
        im.SB[at.g * in.SB.elems + in.SB.index(at.blk, kb, at.i)] = static_cast<uint8_t>(s.sb[smp * ns + kb]);
      }
      put_elem(im.C, in.C, at.g * in.C.elems + in.C.index(at.blk, at.i, at.i), s.c[smp]);
    }
    launch(ng, im, D);
    if (D.size() != im.C.size()) throw std::logic_error("launch returned a D image of the wrong size");
    for (size_t smp = s0; smp < s1; ++smp) {
      const Slot at = slot_of(in, smp, g0);
      d[smp] = d_to_file(in.out, get_elem(D, in.C, at.g * in.C.elems + in.C.index(at.blk, at.i, at.i)));
    }
  }
  return d;
}

namespace {

uint64_t int_bits(Ty t, long v) { return mc::parse_operand(format_of(t), std::to_string(v)); }

}  // namespace

namespace {

/// q / 4 in format t (q / 4 exact there).
uint64_t quarter_bits(Ty t, long q) {
  const long a = q < 0 ? -q : q;
  static const char* frac[] = {"", ".25", ".5", ".75"};
  return mc::parse_operand(format_of(t), (q < 0 ? "-" : "") + std::to_string(a / 4) + frac[a % 4]);
}

/// The bits of the scale 2^e (e in -1..1) in a scale format (e8m0: 127 + e; ue4m3: E4M3).
uint8_t scale_bits(Ty t, int e) {
  const mc::Format& f = format_of(t);
  return static_cast<uint8_t>(static_cast<uint64_t>(f.bias + e) << f.mbits);
}

}  // namespace

size_t self_test(const Instr& in, const Launch& launch, std::string* report) {
  // Integers, exact in every format here (fp8, fp6, fp4 and binary16 included) and in every
  // order of accumulation: a, b in -2..2 (|products| <= 4), c in -999..999 and distinct for
  // the first 1999 elements of the tile (so a misplaced D element is seen even where the dot
  // products agree). Block scales are 2^-1, 1 or 2, different for neighbouring rows, columns
  // and blocks (so a misplaced scale is seen): products are then multiples of 1/4, and
  // |d| <= 999 + 4*4*64 < 2048 stays exact in binary32.
  auto av = [](int b, int i, int k) { return static_cast<long>((131 * i + 71 * k + 29 * b + 7 * i * k) % 5) - 2; };
  auto bv = [](int b, int k, int j) { return static_cast<long>((61 * k + 113 * j + 17 * b + 3 * k * j) % 5) - 2; };
  auto cv = [&in](int b, int i, int j) {
    return static_cast<long>(((static_cast<size_t>(b) * in.m + i) * in.n + j) * 37 % 1999) - 999;
  };
  const bool scaled = in.scale_block > 0;
  auto sae = [scaled](int b, int i, int kb) { return scaled ? (7 * i + 3 * kb + b) % 3 - 1 : 0; };
  auto sbe = [scaled](int b, int kb, int j) { return scaled ? (5 * j + 11 * kb + 2 * b) % 3 - 1 : 0; };
  Images im = blank_images(in, 1);
  Bytes D;
  for (int b = 0; b < in.blocks; ++b) {
    for (int i = 0; i < in.m; ++i)
      for (int k = 0; k < in.k; ++k) put_elem(im.A, in.A, in.A.index(b, i, k), int_bits(in.a, av(b, i, k)));
    for (int k = 0; k < in.k; ++k)
      for (int j = 0; j < in.n; ++j) put_elem(im.B, in.B, in.B.index(b, k, j), int_bits(in.b, bv(b, k, j)));
    for (int i = 0; i < in.m; ++i)
      for (int j = 0; j < in.n; ++j) put_elem(im.C, in.C, in.C.index(b, i, j), int_bits(in.out, cv(b, i, j)));
    for (int kb = 0; kb < in.scales_per_row(); ++kb) {
      for (int i = 0; i < in.m; ++i) im.SA[in.SA.index(b, i, kb)] = scale_bits(in.scale, sae(b, i, kb));
      for (int j = 0; j < in.n; ++j) im.SB[in.SB.index(b, kb, j)] = scale_bits(in.scale, sbe(b, kb, j));
    }
  }
  launch(1, im, D);
  if (D.size() != im.C.size()) throw std::logic_error("launch returned a D image of the wrong size");
  size_t bad = 0;
  const mc::Format& of = format_of(in.out);
  for (int b = 0; b < in.blocks; ++b)
    for (int i = 0; i < in.m; ++i)
      for (int j = 0; j < in.n; ++j) {
        long want4 = 4 * cv(b, i, j);  // 4 d
        for (int k = 0; k < in.k; ++k) {
          const int kb = scaled ? k / in.scale_block : 0;
          want4 += av(b, i, k) * bv(b, k, j) * (1L << (2 + sae(b, i, kb) + sbe(b, kb, j)));
        }
        const uint64_t got = get_elem(D, in.C, in.C.index(b, i, j));
        if (got == quarter_bits(in.out, want4)) continue;
        if (++bad <= 5 && report)
          *report += "  D[" + std::to_string(i) + "][" + std::to_string(j) + "] of block " +
                     std::to_string(b) + ": got 0x" + mc::to_hex_bits(of, got) + " (" +
                     mc::to_decimal(of, got) + "), want 0x" +
                     mc::to_hex_bits(of, quarter_bits(in.out, want4)) + "\n";
      }
  return bad;
}

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

/// The usage lines and exit statuses, shown at the end of --help.
std::string usage_footer(const Backend& be) {
  const std::string p = be.program();
  return "\nusage:\n"
         "  " + p + " --list                    instructions this binary has (no GPU needed)\n"
         "  " + p + " --info [--device N]       the GPU, and which instructions it runs\n"
         "  " + p + " --self-test [--instr NAME] [--device N]\n"
         "        every (or one) instruction on an exact integer tile: checks the layouts\n"
         "  " + p + " --instr NAME --a A --b B --c C [--sa SA --sb SB] --d D [--device N]\n"
         "        self-test NAME, then run one dot product per sample (K = the instruction's k;\n"
         "        block-scaled instructions take the scale files too)\n"
         "        and write D with a provenance header ('#' lines); D appears only when complete\n"
         "\n"
         "exit status: 0 ok, 1 self-test failed (wrong layout: no d written), 2 bad usage or\n"
         "input, 3 no " + be.vendor() + " GPU or driver on this machine, 4 the GPU (or this binary) lacks the\n"
         "instruction, 5 a runtime call failed\n";
}

const Instr& find(const Backend& be, const std::string& name) {
  for (const Instr& in : be.instructions())
    if (in.name == name || in.name == "v_" + name) return in;
  throw UsageError("unknown instruction '" + name + "' (see --list)");
}

Launch bind(Backend& be, const Instr& in) {
  return [&be, &in](size_t groups, const Images& im, Bytes& D) { be.launch(in, groups, im, D); };
}

std::string shape(const Instr& in) {
  std::string s = std::to_string(in.m) + "x" + std::to_string(in.n) + "x" + std::to_string(in.k);
  if (in.blocks > 1) s += " x" + std::to_string(in.blocks) + " blocks";
  return s;
}

int run(Backend& be, int argc, char** argv) {
  // The command line on CLI11, as matcore's (typed values, stray words and unknown options
  // refused, --flag=value); errors are UsageError (exit 2).
  CLI::App app(std::string(be.program()) + ": runs " + be.vendor() +
                   " matrix instructions on samples in matcore's vector format",
               be.program());
  bool list = false, info = false, selftest = false;
  std::map<std::string, std::string> opt;
  int dev = 0;
  app.add_flag("--list", list, "the instructions this binary has (no GPU needed)");
  app.add_flag("--info", info, "the GPU, and which instructions it runs");
  app.add_flag("--self-test", selftest, "every (or one) instruction on an exact integer tile");
  for (const char* k : {"instr", "a", "b", "c", "d", "sa", "sb"})
    app.add_option(std::string("--") + k, opt[k], std::string(k) == "instr" ? "instruction name (see --list)"
                                                  : std::string(k) == "d" ? "output d file"
                                                  : k[0] == 's' ? std::string(k) + " file (block scales)"
                                                                : std::string(k) + " file")
        ->check(mc::cli::kNotAnOption);
  app.add_option("--device", dev, "device index (default 0)")->check(mc::cli::int_range(0, 1024));
  app.footer(usage_footer(be));
  if (argc < 2) {
    std::fputs(app.help().c_str(), stderr);
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  auto has = [&](const char* k) { return !opt[k].empty(); };
  if (list) {
    for (const Instr& in : be.instructions())
      std::printf("%-34s %-9s %-9s -> %-5s %-20s %s  [%s]\n", in.name.c_str(), to_string(in.a),
                  to_string(in.b), to_string(in.out), shape(in).c_str(), in.impl.c_str(), in.note.c_str());
    return kExitOk;
  }
  if (!selftest && !info) {
    for (const char* k : {"instr", "a", "b", "c", "d"})
      if (!has(k)) throw UsageError(std::string("missing --") + k + " (see --help)");
    mc::check_not_input(opt["d"], "--d", {opt["a"], opt["b"], opt["c"], opt["sa"], opt["sb"]});
  }
  const Instr* chosen = has("instr") ? &find(be, opt["instr"]) : nullptr;

  const DeviceInfo di = be.open(dev);
  std::fprintf(stderr, "%s: %s (%s), runtime %s, driver %s\n", be.program(), di.name.c_str(),
               di.arch.c_str(), di.runtime.c_str(), di.driver.c_str());

  if (info || selftest) {
    size_t failed = 0;
    for (const Instr& in : be.instructions()) {
      if (chosen && &in != chosen) continue;
      try {
        be.check(in);
      } catch (const Unsupported& e) {
        if (chosen) throw;
        std::printf("%-34s not on this GPU: %s\n", in.name.c_str(), e.what());
        continue;
      }
      if (info) {
        std::printf("%-34s runs here\n", in.name.c_str());
        continue;
      }
      std::string rep;
      const size_t bad = self_test(in, bind(be, in), &rep);
      std::printf("%-34s self-test %s\n%s", in.name.c_str(),
                  bad ? ("FAILED: " + std::to_string(bad) + " wrong D elements").c_str() : "ok", rep.c_str());
      failed += bad != 0;
    }
    return failed ? kExitSelfTest : kExitOk;
  }

  const Instr& in = *chosen;
  be.check(in);
  std::string rep;
  if (const size_t bad = self_test(in, bind(be, in), &rep)) {
    std::fprintf(stderr, "%s: self-test of %s FAILED (%zu wrong D elements); no d written:\n%s",
                 be.program(), in.name.c_str(), bad, rep.c_str());
    return kExitSelfTest;
  }
  const Samples s = read_samples(in, opt["a"], opt["b"], opt["c"], opt["sa"], opt["sb"]);
  const std::vector<uint64_t> d = run_samples(in, s, bind(be, in));
  std::string hdr = "# matcore hip_ref/" + std::string(be.program()) + ": gpu=\"" + di.name +
                    "\" arch=" + di.arch + " runtime=" + di.runtime + " driver=" + di.driver +
                    " instr=" + in.name + " impl=" + in.impl + " samples=" + std::to_string(s.n) +
                    " per_instr=" + std::to_string(in.per_group()) + " date=" + utc_now() +
                    " host=" + host_name() + "\n";
  hdr += "# inputs: a=" + opt["a"] + " b=" + opt["b"] + " c=" + opt["c"] +
         (in.scale_block ? " sa=" + opt["sa"] + " sb=" + opt["sb"] : "") + "\n";
  mc::write_cd_file(opt["d"], d, file_width(in.out), hdr);
  std::fprintf(stderr, "%s: wrote d of %zu samples (%s) to %s\n", be.program(), s.n,
               in.name.c_str(), opt["d"].c_str());
  return kExitOk;
}

}  // namespace

int collector_main(Backend& be, int argc, char** argv) {
  try {
    return run(be, argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\n", be.program(), e.what());
    return kExitUsage;
  } catch (const mc::InputError& e) {
    std::fprintf(stderr, "%s: input error: %s\n", be.program(), e.what());
    return kExitUsage;
  } catch (const NoDevice& e) {
    std::fprintf(stderr, "%s: no %s GPU: %s\n", be.program(), be.vendor(), e.what());
    return kExitNoDevice;
  } catch (const Unsupported& e) {
    std::fprintf(stderr, "%s: %s\n", be.program(), e.what());
    return kExitUnsupported;
  } catch (const RuntimeFailure& e) {
    std::fprintf(stderr, "%s: runtime error: %s\n", be.program(), e.what());
    return kExitRuntime;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", be.program(), e.what());
    return kExitRuntime;
  }
}

}  // namespace mcc
