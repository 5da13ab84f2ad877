// mfma_collect: runs samples in matcore's vector format through one AMD CDNA MFMA instruction
// (a __builtin_amdgcn_mfma_* intrinsic) and writes the hardware's d. One source for every
// instruction of core/mfma_instructions.def (X-macro); the register layouts, sample placement,
// file handling and self-test are host C++ (mfma_layout.hpp, tables.hpp, collect_common.cpp),
// so each kernel only loads its lane's operands, runs the instruction and stores D.
//
// Build (see hip_ref/README.md): hipcc -std=c++17 -O2 --offload-arch=gfx90a ... plus
// libmcc_common.a and libmatcore_core.a; CMake does it when hipcc is found.
// Exit status: see collect_common.hpp (3 = no AMD GPU / driver).
#include <hip/hip_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "collect_common.hpp"
#include "tables.hpp"

namespace {

using mcc::Ty;

// ---------------------------------------------------------------- which family this pass is
// The builtins exist (and the backend can select them) only on some targets: guard every kernel
// body by the instruction's families from the .def (toolchain notes: a builtin on the wrong
// target is a front-end error, a backend crash or, for smfmac, silently wrong code).
#if defined(__gfx908__)
constexpr int kFamily = 1;  // CDNA1 (MI100)
#elif defined(__gfx90a__)
constexpr int kFamily = 2;  // CDNA2 (MI210, MI250)
#elif defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
constexpr int kFamily = 3;  // CDNA3 (MI300A, MI300X)
#else
constexpr int kFamily = 0;  // host pass, or a target without a matcore preset
#endif

/// True when the comma list `archs` ("cdna1,cdna2,cdna3") names family `fam` (1..3).
constexpr bool has_family(const char* archs, int fam) {
  for (const char* p = archs; *p; ++p)
    if (p[0] == 'c' && p[1] == 'd' && p[2] == 'n' && p[3] == 'a' && p[4] - '0' == fam) return true;
  return false;
}

// ------------------------------------------------- operand types of the builtins (clang
// BuiltinsAMDGPU.def): f32 "f", f16 "V4h", bf16 "V2s", bf16_1k "V4s", xf32 "V2f", fp8/bf8 "Wi"
// (i64), f64 "d"; C/D: float or double vectors of m*n*blocks/64 elements.
typedef float f32x2 __attribute__((ext_vector_type(2)));
typedef float f32x4 __attribute__((ext_vector_type(4)));
typedef float f32x16 __attribute__((ext_vector_type(16)));
typedef float f32x32 __attribute__((ext_vector_type(32)));
typedef _Float16 f16x4 __attribute__((ext_vector_type(4)));
typedef short i16x2 __attribute__((ext_vector_type(2)));
typedef short i16x4 __attribute__((ext_vector_type(4)));
typedef double f64x4 __attribute__((ext_vector_type(4)));

template <Ty T> struct InOp;
template <> struct InOp<Ty::fp32> { using type = float; };
template <> struct InOp<Ty::fp16> { using type = f16x4; };
template <> struct InOp<Ty::bf16> { using type = i16x2; };
template <> struct InOp<Ty::bf16_1k> { using type = i16x4; };
template <> struct InOp<Ty::xf32> { using type = f32x2; };
template <> struct InOp<Ty::e4m3fnuz> { using type = long; };
template <> struct InOp<Ty::e5m2fnuz> { using type = long; };
template <> struct InOp<Ty::fp64> { using type = double; };

template <Ty T, int N> struct AccOp;
template <> struct AccOp<Ty::fp32, 4> { using type = f32x4; };
template <> struct AccOp<Ty::fp32, 16> { using type = f32x16; };
template <> struct AccOp<Ty::fp32, 32> { using type = f32x32; };
template <> struct AccOp<Ty::fp64, 1> { using type = double; };
template <> struct AccOp<Ty::fp64, 4> { using type = f64x4; };

// ----------------------------------------------------------- one traits struct per instruction
// run() is a member template so that the builtin is only instantiated (and checked by the
// compiler) on the targets where the kernel's `if constexpr` keeps it.
#define MFMA(nm, archs, at, bt, M, N, K, B, ot, bi)                                   \
  struct nm {                                                                         \
    using A = InOp<Ty::at>::type;                                                     \
    using Bop = InOp<Ty::bt>::type;                                                   \
    using C = AccOp<Ty::ot, (M) * (N) * (B) / 64>::type;                              \
    static constexpr bool here = has_family(archs, kFamily);                          \
    template <class X, class Y, class Z>                                              \
    __device__ static Z run(X a, Y b, Z c) {                                          \
      return bi(a, b, c, 0, 0, 0); /* cbsz = abid = blgp = 0: the plain layout */     \
    }                                                                                 \
  };
#include "../core/mfma_instructions.def"

/// One wavefront (64 lanes) per instruction: lane t of group g loads its packed A and B
/// operands and its C registers from the images, runs the instruction, stores its D registers.
/// status: set when this target has no code for the instruction (never launched then: the host
/// checks the family first).
template <class I>
__global__ void __launch_bounds__(64) k_mfma(const typename I::A* a, const typename I::Bop* b,
                                             const typename I::C* c, typename I::C* d, int* status) {
  const size_t t = static_cast<size_t>(blockIdx.x) * 64 + threadIdx.x;
  if constexpr (I::here) {
    d[t] = I::run(a[t], b[t], c[t]);
  } else {
    if (threadIdx.x == 0) *status = 1;
  }
}

// ------------------------------------------------------------------------------- host side
std::string hip_error(const char* what, hipError_t e) {
  const std::string name = hipGetErrorName(e), text = hipGetErrorString(e);
  return std::string(what) + ": " + name + (text != name ? " (" + text + ")" : "");
}

#define HIP_CHECK(call)                                                 \
  do {                                                                  \
    const hipError_t e_ = (call);                                       \
    if (e_ != hipSuccess) throw mcc::RuntimeFailure(hip_error(#call, e_)); \
  } while (0)

/// Device memory, freed on scope exit (a failing hipFree is reported, not thrown).
struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(size_t bytes) { HIP_CHECK(hipMalloc(&p, bytes ? bytes : 1)); }
  ~DevBuf() {
    if (p) {
      const hipError_t e = hipFree(p);
      if (e != hipSuccess) std::fprintf(stderr, "mfma_collect: %s\n", hip_error("hipFree", e).c_str());
    }
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

using LaunchFn = void (*)(size_t groups, const void* a, const void* b, const void* c, void* d,
                          int* status);

template <class I>
void launch_one(size_t groups, const void* a, const void* b, const void* c, void* d, int* status) {
  hipLaunchKernelGGL(k_mfma<I>, dim3(static_cast<unsigned>(groups)), dim3(64), 0, 0,
                     static_cast<const typename I::A*>(a), static_cast<const typename I::Bop*>(b),
                     static_cast<const typename I::C*>(c), static_cast<typename I::C*>(d), status);
}

int family_of(const std::string& gcn_arch) {
  const std::string base = gcn_arch.substr(0, gcn_arch.find(':'));  // "gfx90a:sramecc+:xnack-"
  if (base == "gfx908") return 1;
  if (base == "gfx90a") return 2;
  if (base == "gfx940" || base == "gfx941" || base == "gfx942") return 3;
  return 0;
}

class HipBackend : public mcc::Backend {
 public:
  const char* program() const override { return "mfma_collect"; }
  const char* vendor() const override { return "AMD"; }
  const std::vector<mcc::Instr>& instructions() const override { return table_; }

  mcc::DeviceInfo open(int device) override {
    int n = 0;
    const hipError_t e = hipGetDeviceCount(&n);
    if (e != hipSuccess)
      throw mcc::NoDevice(hip_error("hipGetDeviceCount", e) +
                          "; this program needs an AMD Instinct GPU (MI100, MI210/MI250, MI300A/X) "
                          "with the ROCm driver loaded");
    if (n == 0) throw mcc::NoDevice("hipGetDeviceCount found no device");
    if (device >= n)
      throw mcc::UsageError("--device " + std::to_string(device) + ": only " + std::to_string(n) +
                            " device(s)");
    HIP_CHECK(hipSetDevice(device));
    HIP_CHECK(hipGetDeviceProperties(&prop_, device));
    int rt = 0, drv = 0;
    HIP_CHECK(hipRuntimeGetVersion(&rt));
    HIP_CHECK(hipDriverGetVersion(&drv));
    arch_ = prop_.gcnArchName;
    family_ = family_of(arch_);
    return {prop_.name, arch_, std::to_string(rt), std::to_string(drv)};
  }

  void check(const mcc::Instr& in) override {
    if (family_ == 0)
      throw mcc::Unsupported(arch_ + " is not a CDNA1-3 GPU (gfx908, gfx90a, gfx940/941/942); "
                             "matcore has no preset for it");
    if (!has_family(in.note.c_str(), family_))
      throw mcc::Unsupported(in.name + " does not exist on " + arch_ + " (cdna" +
                             std::to_string(family_) + "); it is on " + in.note);
  }

  void launch(const mcc::Instr& in, size_t groups, const mcc::Images& im, mcc::Bytes& D) override {
    const mcc::Bytes &A = im.A, &B = im.B, &C = im.C;  // MFMA of CDNA1-3: no block scales
    const size_t idx = static_cast<size_t>(&in - table_.data());
    DevBuf da(A.size()), db(B.size()), dc(C.size()), dd(C.size()), ds(sizeof(int));
    const int zero = 0;
    HIP_CHECK(hipMemcpy(da.p, A.data(), A.size(), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(db.p, B.data(), B.size(), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dc.p, C.data(), C.size(), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(ds.p, &zero, sizeof zero, hipMemcpyHostToDevice));
    fns_[idx](groups, da.p, db.p, dc.p, dd.p, static_cast<int*>(ds.p));
    const hipError_t le = hipGetLastError();
    if (le == hipErrorNoBinaryForGpu || le == hipErrorInvalidDeviceFunction)
      throw mcc::Unsupported(hip_error("kernel launch", le) + ": this binary has no code for " +
                             arch_ + "; rebuild with --offload-arch=" +
                             arch_.substr(0, arch_.find(':')) + " (hip_ref/README.md)");
    if (le != hipSuccess) throw mcc::RuntimeFailure(hip_error("kernel launch", le));
    HIP_CHECK(hipDeviceSynchronize());
    int status = 0;
    HIP_CHECK(hipMemcpy(&status, ds.p, sizeof status, hipMemcpyDeviceToHost));
    if (status)
      throw mcc::Unsupported("the " + arch_ + " code of this binary lacks " + in.name +
                             " (compiled for a target outside its families)");
    D.resize(C.size());
    HIP_CHECK(hipMemcpy(D.data(), dd.p, D.size(), hipMemcpyDeviceToHost));
  }

 private:
  std::vector<mcc::Instr> table_ = mcc::mfma_table();
  std::vector<LaunchFn> fns_ = {
#define MFMA(nm, archs, at, bt, M, N, K, B, ot, bi) &launch_one<nm>,
#include "../core/mfma_instructions.def"
  };
  hipDeviceProp_t prop_{};
  std::string arch_;
  int family_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  HipBackend be;
  return mcc::collector_main(be, argc, argv);
}
