#include "matcore/instructions.hpp"

#include <algorithm>
#include <functional>
#include <memory>
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

/// Whether the 32-bit batch() takes dp (a, b and out formats of at most 32 bits).
bool fits32(const Datapath& dp) {
  return dp.a_fmt.width() <= 32 && dp.b_fmt.width() <= 32 && dp.out_fmt.width() <= 32;
}

/// The rows r0..r1 of D = A B + C through the lane kernels: B is packed once per step of the
/// instruction's k (N rows of instr_k contiguous words, zero-padded past K), and each row of A
/// is repeated N times per step, so that one batch() call computes a whole row of one step; the
/// row's d of a step is the c of the next. Words of T (uint32_t: half the memory to read).
/// sc (block-scaled, T = uint64_t): the scales of each row of A and column of B, sc->per_row a
/// row covering every step's blocks (ik a multiple of scale_block), packed and repeated as A
/// and B are, so that batch() takes each sample's scales beside its operands.
template <class T>
std::function<void(int, int)> batched_rows(const FastDot& fd, int ik, const Matrix& A, const Matrix& B,
                                           const Matrix& C, Matrix& D, const Scales* sc = nullptr) {
  const int N = B.cols, K = A.cols, steps = (K + ik - 1) / ik;
  auto Bp = std::make_shared<std::vector<T>>(static_cast<size_t>(steps) * N * ik, T{0});
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j)
      (*Bp)[(static_cast<size_t>(k / ik) * N + j) * ik + k % ik] = static_cast<T>(B.at(k, j));
  const int ps = sc ? ik / fd.datapath().scale_block : 0;  // scales a sample of one step
  auto SBp = std::make_shared<std::vector<uint64_t>>(static_cast<size_t>(steps) * N * ps);
  for (int s = 0; s < steps && sc; ++s)
    for (int j = 0; j < N; ++j)
      for (int q = 0; q < ps; ++q) (*SBp)[(static_cast<size_t>(s) * N + j) * ps + q] = sc->b.at(j, s * ps + q);
  return [&fd, ik, &A, &C, &D, N, K, steps, Bp, sc, ps, SBp](int r0, int r1) {
    std::vector<T> arep(static_cast<size_t>(N) * ik), c(N), d(N);
    std::vector<uint64_t> sarep(static_cast<size_t>(N) * ps);
    for (int i = r0; i < r1; ++i) {
      for (int j = 0; j < N; ++j) c[j] = static_cast<T>(C.at(i, j));
      for (int s = 0; s < steps; ++s) {
        T* row = arep.data();
        for (int kk = 0; kk < ik; ++kk) {
          const int k = s * ik + kk;
          row[kk] = k < K ? static_cast<T>(A.at(i, k)) : T{0};
        }
        for (int j = 1; j < N; ++j) std::copy(row, row + ik, row + static_cast<size_t>(j) * ik);
        const T* bs = Bp->data() + static_cast<size_t>(s) * N * ik;
        if constexpr (sizeof(T) == 8) {
          if (sc) {
            for (int j = 0; j < N; ++j)
              for (int q = 0; q < ps; ++q) sarep[static_cast<size_t>(j) * ps + q] = sc->a.at(i, s * ps + q);
            fd.batch(arep.data(), bs, c.data(), d.data(), N, ik, sarep.data(), SBp->data() + static_cast<size_t>(s) * N * ps);
            c.swap(d);
            continue;
          }
        }
        fd.batch(arep.data(), bs, c.data(), d.data(), N, ik);
        c.swap(d);
      }
      for (int j = 0; j < N; ++j) D.at(i, j) = c[j];
    }
  };
}
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
  const FastDot fd(dp);
  // each block an independent M x N x K product through the lane kernels (block-scaled: with
  // the block's rows of the scale matrices)
  for (int blk = 0; blk < nb; ++blk) {
    auto part = [&](const Matrix& X, int r0, int rows) {
      return Matrix{rows, X.cols, std::vector<uint64_t>(X.v.begin() + static_cast<size_t>(r0) * X.cols,
                                                        X.v.begin() + static_cast<size_t>(r0 + rows) * X.cols)};
    };
    const Matrix Ab = part(A, blk * M, M), Bb = part(B, blk * K, K), Cb = part(C, blk * M, M);
    Matrix Db = Cb;
    if (sc.per_row) {
      Scales sb = sc;
      sb.a = part(sc.a, blk * M, M);
      sb.b = part(sc.b, blk * N, N);
      batched_rows<uint64_t>(fd, K, Ab, Bb, Cb, Db, &sb)(0, M);
    } else {
      (fits32(dp) ? batched_rows<uint32_t>(fd, K, Ab, Bb, Cb, Db) : batched_rows<uint64_t>(fd, K, Ab, Bb, Cb, Db))(0, M);
    }
    std::copy(Db.v.begin(), Db.v.end(), D.v.begin() + static_cast<size_t>(blk) * M * N);
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
  threads = std::min<unsigned>(thread_count(threads), static_cast<unsigned>(std::max(1, M)));
  const FastDot fd(dp);
  std::function<void(int, int)> work;
  if (Sp) {
    // block-scaled: the lane kernels with each sample's scales (FastDot::batch; the scales
    // padded to Kp's blocks above)
    sc.per_row = Sp;
    work = batched_rows<uint64_t>(fd, instr_k, A, B, C, D, &sc);
  } else if (fits32(dp)) {
    work = batched_rows<uint32_t>(fd, instr_k, A, B, C, D);
  } else {
    work = batched_rows<uint64_t>(fd, instr_k, A, B, C, D);
  }
  const int chunk = (M + static_cast<int>(threads) - 1) / static_cast<int>(threads);
  run_parallel(threads, [&](unsigned t) {
    const int r0 = std::min(M, static_cast<int>(t) * chunk), r1 = std::min(M, r0 + chunk);
    if (r0 < r1) work(r0, r1);
  });
  return D;
}

}  // namespace mc
