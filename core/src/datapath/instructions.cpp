#include "matcore/instructions.hpp"

#include <stdexcept>

#include "matcore/presets.hpp"

namespace mc {

namespace {

#define STR_(x) #x
#define STR(x) STR_(x)

std::vector<Instruction> build() {
  std::vector<Instruction> v;
  // AMD CDNA MFMA (core/mfma_instructions.def: sources and register layouts are listed there).
#define MFMA(nm, archs, at, bt, M, N, K, B, ot, bi) \
  v.push_back(Instruction{"v_" STR(nm), "amd", archs, STR(at), STR(bt), STR(ot), M, N, K, B, STR(bi)});
#include "mfma_instructions.def"
#undef MFMA
  // AMD CDNA4 (gfx950) new MFMAs (../shared/spec/block-scaled.md; LLVM gfx950 assembler tests).
  // f8f6f4: one opcode, the formats of A and B chosen by CBSZ and BLGP (0 e4m3, 1 e5m2,
  // 2 e2m3, 3 e3m2, 4 e2m1): one entry per choice, named <mnemonic>.<a>.<b>.
  auto amd4 = [&](const std::string& mnem, const std::string& sfx, const std::string& at, const std::string& bt, int m,
                  int k) {
    v.push_back(Instruction{mnem + sfx, "amd", "cdna4", at, bt, "fp32", m, m, k, 1, "__builtin_amdgcn_" + mnem.substr(2)});
  };
  for (const char* t : {"f16", "bf16"}) {
    const std::string ty = std::string(t) == "f16" ? "fp16" : "bf16";
    amd4(std::string("v_mfma_f32_16x16x32_") + t, "", ty, ty, 16, 32);
    amd4(std::string("v_mfma_f32_32x32x16_") + t, "", ty, ty, 32, 16);
  }
  const char* f8f6f4[] = {"e4m3", "e5m2", "e3m2", "e2m3", "e2m1"};
  for (const char* a : f8f6f4)
    for (const char* b : f8f6f4) {
      const std::string sfx = std::string(".") + a + "." + b, sc = std::string("scale.") + a + "." + b;
      amd4("v_mfma_f32_16x16x128_f8f6f4", sfx, a, b, 16, 128);
      amd4("v_mfma_f32_32x32x64_f8f6f4", sfx, a, b, 32, 64);
      amd4("v_mfma_scale_f32_16x16x128_f8f6f4", sfx, sc, sc, 16, 128);
      amd4("v_mfma_scale_f32_32x32x64_f8f6f4", sfx, sc, sc, 32, 64);
    }
  // NVIDIA tensor-core instructions (PTX ISA): the shapes the presets model.
  auto nv = [&](const std::string& name, const std::string& fam, const std::string& at,
                const std::string& bt, int m, int n, int k) {
    v.push_back(Instruction{name, "nvidia", fam, at, bt, "fp32", m, n, k, 1, name});
  };
  nv("mma.m8n8k4.f32.f16", "volta", "fp16", "fp16", 8, 8, 4);
  nv("mma.m8n8k4.f64", "ampere,hopper,blackwell", "fp64", "fp64", 8, 8, 4);
  v.back().out_type = "fp64";
  for (const char* t : {"f16", "bf16"}) {
    const std::string ty = std::string(t) == "f16" ? "fp16" : "bf16";
    nv(std::string("mma.m16n8k8.f32.") + t, "turing,ampere,ada,hopper,blackwell", ty, ty, 16, 8, 8);
    nv(std::string("mma.m16n8k16.f32.") + t, "ampere,ada,hopper,blackwell", ty, ty, 16, 8, 16);
    nv(std::string("wgmma.m64n256k16.f32.") + t, "hopper", ty, ty, 64, 256, 16);
    nv(std::string("tcgen05.mma.kind::f16.k16.") + t, "blackwell", ty, ty, 128, 256, 16);
  }
  nv("mma.m16n8k4.f32.tf32", "ampere,ada,hopper,blackwell", "tf32", "tf32", 16, 8, 4);
  nv("mma.m16n8k8.f32.tf32", "ampere,ada,hopper,blackwell", "tf32", "tf32", 16, 8, 8);
  nv("wgmma.m64n256k8.f32.tf32", "hopper", "tf32", "tf32", 64, 256, 8);
  nv("tcgen05.mma.kind::tf32.k8", "blackwell", "tf32", "tf32", 128, 256, 8);
  for (const char* a : f8f6f4)
    for (const char* b : f8f6f4) {
      const std::string sfx = std::string(a) + "." + b;
      const bool f8 = sfx.find("e3") == std::string::npos && sfx.find("e2") == std::string::npos;
      if (f8) {
        nv("mma.m16n8k32.f32." + sfx, "ada,hopper,blackwell", a, b, 16, 8, 32);
        nv("wgmma.m64n256k32.f32." + sfx, "hopper", a, b, 64, 256, 32);
      } else {  // sm_120a: mma.sync kind::f8f6f4 with fp6/fp4 operands
        nv("mma.m16n8k32.kind::f8f6f4.f32." + sfx, "rtxpro6000", a, b, 16, 8, 32);
      }
      nv("tcgen05.mma.kind::f8f6f4.k32." + sfx, "blackwell", a, b, 128, 256, 32);
      // block-scaled (E8M0 per 32): the type names the scaled preset, mxf8f6f4.<a>.<b>
      const std::string mx = "mxf8f6f4." + sfx;
      nv("tcgen05.mma.kind::mxf8f6f4.block_scale.block32." + sfx + ".ue8m0", "blackwell", mx, mx, 128, 256, 32);
      nv("mma.m16n8k32.kind::mxf8f6f4.block_scale.scale_vec::1X.f32." + sfx + ".ue8m0", "rtxpro6000", mx, mx, 16, 8, 32);
    }
  // fp4 block-scaled kinds, K = 64
  nv("tcgen05.mma.kind::mxf4.block_scale.block32.e2m1.ue8m0", "blackwell", "mxf4", "mxf4", 128, 256, 64);
  nv("tcgen05.mma.kind::mxf4nvf4.block_scale.block16.e2m1.ue8m0", "blackwell", "mxf4nvf4.e8m0", "mxf4nvf4.e8m0", 128, 256, 64);
  nv("tcgen05.mma.kind::mxf4nvf4.block_scale.block16.e2m1.ue4m3", "blackwell", "nvfp4", "nvfp4", 128, 256, 64);
  nv("mma.m16n8k64.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.ue8m0", "rtxpro6000", "mxf4", "mxf4", 16, 8, 64);
  nv("mma.m16n8k64.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue8m0", "rtxpro6000", "mxf4nvf4.e8m0",
     "mxf4nvf4.e8m0", 16, 8, 64);
  nv("mma.m16n8k64.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue4m3", "rtxpro6000", "nvfp4", "nvfp4", 16, 8, 64);
  return v;
}

bool has_family(const std::string& list, const std::string& fam) {
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t e = list.find(',', pos);
    const std::string item = list.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
    if (item == fam) return true;
    if (e == std::string::npos) break;
    pos = e + 1;
  }
  return false;
}

const Datapath& first_preset(const std::string& arch) {
  for (const Datapath& d : all_presets())
    if (d.arch == arch) return d;
  throw std::invalid_argument("unknown architecture '" + arch + "'");
}

std::string family_of(const std::string& arch) { return first_preset(arch).family; }

/// Whether the architecture has a preset of the instruction's input type (the _1k bf16
/// instructions of CDNA3 run on its bf16 preset).
bool has_type(const std::string& arch, const std::string& type) {
  for (const Datapath& d : all_presets())
    if (d.arch == arch && (d.type == type || (type == "bf16_1k" && d.type == "bf16"))) return true;
  return false;
}

}  // namespace

const std::vector<Instruction>& all_instructions() {
  static const std::vector<Instruction> v = build();
  return v;
}

const Instruction& find_instruction(const std::string& name) {
  for (const Instruction& i : all_instructions())
    if (i.name == name || i.name == "v_" + name) return i;
  throw std::invalid_argument("unknown instruction '" + name + "' (see 'matcore list')");
}

std::vector<const Instruction*> instructions_for(const std::string& arch) {
  const Datapath& p = first_preset(arch);
  std::vector<const Instruction*> r;
  for (const Instruction& i : all_instructions()) {
    // an instruction names the families it exists on, or single architectures (sm_120a)
    if (!has_family(i.families, p.family) && !has_family(i.families, arch)) continue;
    // the architecture's own restrictions (presets): its instruction classes, its input types
    if (!p.instr_classes.empty() && !has_family(p.instr_classes, i.name.substr(0, i.name.find('.')))) continue;
    if (!has_type(arch, i.type())) continue;
    r.push_back(&i);
  }
  return r;
}

Datapath instruction_datapath(const std::string& arch, const Instruction& instr,
                              const std::string& out) {
  const std::string fam = family_of(arch);
  if (!has_family(instr.families, fam) && !has_family(instr.families, arch))
    throw std::invalid_argument("instruction " + instr.name + " does not exist on " + arch +
                                " (" + fam + "; it is on " + instr.families + ")");
  std::string variant;
  const std::string cls = instr.name.substr(0, instr.name.find('.'));
  const std::string want = cls == "mma" ? "mma.sync" : cls;  // "wgmma", "tcgen05"
  for (const std::string& v : variants_of(arch, instr.type()))
    if (v == want) variant = v;
  Datapath d = find_preset(arch, instr.type(), out, variant);
  d.k_default = instr.k;
  if (d.n_fma > instr.k) d.n_fma = instr.k;  // e.g. tf32 K=4 on Hopper: one group of 4
  return d;
}

}  // namespace mc
