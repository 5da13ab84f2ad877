#include "matcore/instructions.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "matcore/fast.hpp"
#include "matcore/model.hpp"
#include "matcore/threads.hpp"

namespace mc {

namespace {
void check(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

/// The scale matrices of a block-scaled datapath, checked (rows: one per row of A / column of
/// B; columns: ceil(K / scale_block)); nullptr gives unit scales. Empty for an unscaled datapath.
struct Scales {
  Matrix a, b;
  int per_row = 0;  ///< scales per row (0: unscaled)
  Scales(const Datapath& dp, int K, int rows_a, int rows_b, const Matrix* SA, const Matrix* SB, const char* who) {
    if (!dp.scaled()) {
      check(!SA && !SB, std::string(who) + ": " + dp.name() + " has no block scales (SA/SB given)");
      return;
    }
    per_row = (K + dp.scale_block - 1) / dp.scale_block;
    const uint64_t one = unit_scale_bits(dp.scale_fmt);
    auto take = [&](const Matrix* S, int rows, const char* name, Matrix& out) {
      if (!S) {
        out = Matrix{rows, per_row, std::vector<uint64_t>(static_cast<size_t>(rows) * per_row, one)};
        return;
      }
      check(S->rows == rows && S->cols == per_row,
            std::string(who) + ": " + name + " must be " + std::to_string(rows) + " x " + std::to_string(per_row) +
                " (ceil(K / " + std::to_string(dp.scale_block) + ") scales per row; got " + std::to_string(S->rows) +
                " x " + std::to_string(S->cols) + ")");
      const uint64_t mask = (uint64_t{1} << dp.scale_fmt.width()) - 1;
      for (uint64_t v : S->v) check((v & ~mask) == 0, std::string(who) + ": " + name + " holds a value wider than " + dp.scale_fmt.name);
      out = *S;
    };
    take(SA, rows_a, "SA", a);
    take(SB, rows_b, "SB", b);
  }
};
}  // namespace

Matrix mfma(const Datapath& dp, const Instruction& in, const Matrix& A, const Matrix& B,
            const Matrix& C, const Matrix* SA, const Matrix* SB) {
  const int M = in.m, N = in.n, K = in.k, nb = in.blocks;
  check(A.rows == nb * M && A.cols == K,
        "A must be " + std::to_string(nb * M) + " x " + std::to_string(K) + " for " + in.name +
            " (got " + std::to_string(A.rows) + " x " + std::to_string(A.cols) + ")");
  check(B.rows == nb * K && B.cols == N,
        "B must be " + std::to_string(nb * K) + " x " + std::to_string(N) + " for " + in.name +
            " (got " + std::to_string(B.rows) + " x " + std::to_string(B.cols) + ")");
  check(C.rows == nb * M && C.cols == N,
        "C must be " + std::to_string(nb * M) + " x " + std::to_string(N) + " for " + in.name +
            " (got " + std::to_string(C.rows) + " x " + std::to_string(C.cols) + ")");
  const Scales sc(dp, K, nb * M, nb * N, SA, SB, "mfma");
  Matrix D{nb * M, N, std::vector<uint64_t>(static_cast<size_t>(nb) * M * N)};
  std::vector<uint64_t> a(K), b(K);
  const FastDot fd(dp);
  for (int blk = 0; blk < nb; ++blk)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        for (int k = 0; k < K; ++k) {
          a[k] = A.at(blk * M + i, k);
          b[k] = B.at(blk * K + k, j);
        }
        const uint64_t c = C.at(blk * M + i, j);
        D.at(blk * M + i, j) = sc.per_row ? dot(dp, a.data(), b.data(), K, c,
                                                ScaleRefs{&sc.a.v[static_cast<size_t>(blk * M + i) * sc.per_row],
                                                          &sc.b.v[static_cast<size_t>(blk * N + j) * sc.per_row]})
                                          : fd(a.data(), b.data(), K, c);
      }
  return D;
}

Matrix gemm(const Datapath& dp, int instr_k, const Matrix& A, const Matrix& B, const Matrix& C,
            unsigned threads, const Matrix* SA, const Matrix* SB) {
  check(A.cols == B.rows, "gemm: A has " + std::to_string(A.cols) + " columns but B has " +
                              std::to_string(B.rows) + " rows");
  check(C.rows == A.rows && C.cols == B.cols,
        "gemm: C must be " + std::to_string(A.rows) + " x " + std::to_string(B.cols));
  check(instr_k >= 1, "gemm: instruction k must be positive");
  check(!dp.scaled() || instr_k % dp.scale_block == 0,
        "gemm: the instruction's k (" + std::to_string(instr_k) + ") must be a multiple of scale_block (" +
            std::to_string(dp.scale_block) + ")");
  const int M = A.rows, N = B.cols, K = A.cols;
  // K is processed in steps of the instruction's k, each step one dot() whose groups of n_fma
  // never straddle two instructions; the result of a step is the next step's c. A K that is
  // not a multiple of instr_k is zero-padded (zero products change nothing; their blocks' scales
  // are 1).
  const int Kp = (K + instr_k - 1) / instr_k * instr_k;
  Scales sc(dp, K, M, N, SA, SB, "gemm");
  const int S = sc.per_row, Sp = dp.scaled() ? Kp / dp.scale_block : 0;
  if (Sp > S) {  // pad each row's scales to Kp's blocks
    for (Matrix* m : {&sc.a, &sc.b}) {
      Matrix p{m->rows, Sp, std::vector<uint64_t>(static_cast<size_t>(m->rows) * Sp, unit_scale_bits(dp.scale_fmt))};
      for (int r = 0; r < m->rows; ++r)
        for (int j = 0; j < S; ++j) p.at(r, j) = m->at(r, j);
      *m = std::move(p);
    }
  }
  Matrix D{M, N, std::vector<uint64_t>(static_cast<size_t>(M) * N)};
  // B transposed once so that each dot reads contiguous memory.
  std::vector<uint64_t> Bt(static_cast<size_t>(N) * Kp, 0);
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) Bt[static_cast<size_t>(j) * Kp + k] = B.at(k, j);
  threads = std::min<unsigned>(thread_count(threads), static_cast<unsigned>(std::max(1, M)));
  const FastDot fd(dp);
  auto work = [&](int r0, int r1) {
    std::vector<uint64_t> a(Kp, 0);
    for (int i = r0; i < r1; ++i) {
      for (int k = 0; k < K; ++k) a[k] = A.at(i, k);
      for (int j = 0; j < N; ++j) {
        const uint64_t* bj = &Bt[static_cast<size_t>(j) * Kp];
        uint64_t acc = C.at(i, j);
        for (int k0 = 0; k0 < Kp; k0 += instr_k)
          acc = Sp ? dot(dp, &a[k0], bj + k0, instr_k, acc,
                         ScaleRefs{&sc.a.v[static_cast<size_t>(i) * Sp + k0 / dp.scale_block],
                                   &sc.b.v[static_cast<size_t>(j) * Sp + k0 / dp.scale_block]})
                   : fd(&a[k0], bj + k0, instr_k, acc);
        D.at(i, j) = acc;
      }
    }
  };
  const int chunk = (M + static_cast<int>(threads) - 1) / static_cast<int>(threads);
  run_parallel(threads, [&](unsigned t) {
    const int r0 = std::min(M, static_cast<int>(t) * chunk), r1 = std::min(M, r0 + chunk);
    if (r0 < r1) work(r0, r1);
  });
  return D;
}

}  // namespace mc
