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
}  // namespace

Matrix mfma(const Datapath& dp, const Instruction& in, const Matrix& A, const Matrix& B,
            const Matrix& C) {
  check(!dp.scaled(), "mfma: " + dp.name() + " is block-scaled; scale matrices are not taken yet (issue 27): "
                      "run its samples with matcore run/validate and sa.txt/sb.txt");
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
        D.at(blk * M + i, j) = fd(a.data(), b.data(), K, C.at(blk * M + i, j));
      }
  return D;
}

Matrix gemm(const Datapath& dp, int instr_k, const Matrix& A, const Matrix& B, const Matrix& C,
            unsigned threads) {
  check(A.cols == B.rows, "gemm: A has " + std::to_string(A.cols) + " columns but B has " +
                              std::to_string(B.rows) + " rows");
  check(C.rows == A.rows && C.cols == B.cols,
        "gemm: C must be " + std::to_string(A.rows) + " x " + std::to_string(B.cols));
  check(instr_k >= 1, "gemm: instruction k must be positive");
  check(!dp.scaled(), "gemm: " + dp.name() + " is block-scaled; scale matrices are not taken yet (issue 27): "
                      "run its samples with matcore run/validate and sa.txt/sb.txt");
  const int M = A.rows, N = B.cols, K = A.cols;
  // K is processed in steps of the instruction's k, each step one dot() whose groups of n_fma
  // never straddle two instructions; the result of a step is the next step's c. A K that is
  // not a multiple of instr_k is zero-padded (zero products change nothing).
  const int Kp = (K + instr_k - 1) / instr_k * instr_k;
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
        for (int k0 = 0; k0 < Kp; k0 += instr_k) acc = fd(&a[k0], bj + k0, instr_k, acc);
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
