"""Sequential matrix diagonalisation (SMD, Redif, Weiss & McWhirter 2015) of a parahermitian
8 x 8 polynomial matrix, with every product of step 3 through a matrix-core model (the paper's
section 8, Figures 7-9; ../shared/spec/applications.md).

  R(z) = sum_t R[t] z^-t, R[-t] = R[t]^T: real, 8 x 8, order 8 (lags -4..4), made as
         A(z) A~(z) from a random A(z) of order 4 (seeded: the paper's matrix is not published)
  one iteration: 1. the column (k, t) with the largest off-diagonal norm over all lags is
                    moved to lag 0 (row k the opposite way);
                 2. Q^T R[0] Q = diag (ordered eigendecomposition, binary64);
                 3. R[t] <- Q^T R[t] Q for every lag, H(z) <- Q^T H(z): THE GEMMS, through the model
                    (operands rounded into its input format, products accumulated as it does);
                 4. outer lags with less than mu of the energy are cut;
                 stop when the off-diagonal energy is below epsilon of the total, or after 250.
  output:  the dominant eigenvalue on the unit circle (the first diagonal entry of D(e^{jW}),
           an FFT over the lags) per model and in binary64; |difference| to binary64 per model;
           pairwise |differences| between models.

usage: python3 -m apps.smd [--out DIR] [--iterations N] [--seed S]
writes DIR/smd-<type>.csv and DIR/smd-<type>.png (default DIR = docs/img).
"""
import argparse
import os
import sys

import numpy as np

import matcore

from apps.common import save_csv, save_figure

MODELS = [("mi100", "{t}"), ("mi250", "{t}"), ("mi300x", "{t}"), ("b200", "{t}")]
EPS, MU, NFFT = 1e-4, 1e-4, 256


def parahermitian(rng, m=8, order=4):
    A = rng.standard_normal((order + 1, m, m)) / np.sqrt(m)
    R = np.zeros((2 * order + 1, m, m))
    for i in range(order + 1):
        for j in range(order + 1):
            R[i - j + order] += A[i] @ A[j].T
    return R  # lags -order..order at index t + order


def energy_offdiag(R):
    return sum(np.sum(Rt**2) - np.sum(np.diag(Rt) ** 2) for Rt in R)


def shift(R, H, k, tau, zero):
    """Moves column k of R by -tau lags and row k by +tau (R keeps its lags symmetric), and row
    k of H by +tau: afterwards the column found at lag tau sits at lag 0."""
    if tau == 0:
        return R, H, zero
    pad = abs(tau)
    R = np.concatenate([np.zeros((pad,) + R.shape[1:]), R, np.zeros((pad,) + R.shape[1:])])
    zero += pad
    col = R[:, :, k].copy()
    R[:, :, k] = np.roll(col, -tau, axis=0)
    row = R[:, k, :].copy()
    R[:, k, :] = np.roll(row, tau, axis=0)
    Hp = np.concatenate([np.zeros((pad,) + H.shape[1:]), H, np.zeros((pad,) + H.shape[1:])])
    Hp[:, k, :] = np.roll(Hp[:, k, :].copy(), tau, axis=0)
    return R, Hp, zero


def trim(R, zero):
    """Cuts outer lags (both ends alike) holding less than MU of the energy."""
    total = np.sum(R**2)
    n = len(R)
    cut = 0
    while cut < zero and np.sum(R[:cut + 1] ** 2) + np.sum(R[n - cut - 1:] ** 2) < MU * total:
        cut += 1
    return (R[cut:n - cut], zero - cut) if cut else (R, zero)


def smd(R0, product, iterations):
    m = R0.shape[1]
    R, zero = R0.copy(), (len(R0) - 1) // 2
    H = np.eye(m)[None, :, :]
    for it in range(iterations):
        if energy_offdiag(R) < EPS * np.sum(R**2):
            break
        best, bk, bt = -1.0, 0, 0
        for t in range(len(R)):
            off = R[t].copy()
            np.fill_diagonal(off, 0)
            norms = np.sum(off**2, axis=0)
            k = int(np.argmax(norms))
            if norms[k] > best:
                best, bk, bt = norms[k], k, t - zero
        R, H, zero = shift(R, H, bk, bt, zero)
        w, Q = np.linalg.eigh(R[zero])
        Q = Q[:, np.argsort(w)[::-1]]
        Qt = np.ascontiguousarray(Q.T)
        R = np.array([product(product(Qt, Rt), Q) for Rt in R])
        H = np.array([product(Qt, Ht) for Ht in H])
        R, zero = trim(R, zero)
    return R, zero, it


def dominant(R, zero):
    """The first diagonal entry of D(e^{jW}) on NFFT points of the unit circle (real: R is
    parahermitian and D its diagonal)."""
    d = np.zeros(NFFT, dtype=complex)
    for t in range(len(R)):
        d[(t - zero) % NFFT] += R[t][0, 0]
    return np.real(np.fft.fft(d))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m apps.smd", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="docs/img")
    ap.add_argument("--iterations", type=int, default=250)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    R0 = parahermitian(np.random.default_rng(a.seed))
    Rr, zr, itr = smd(R0, lambda X, Y: X @ Y, a.iterations)
    ref = dominant(Rr, zr)
    print(f"binary64: {itr} iterations", file=sys.stderr)
    for typ in ("fp16", "bf16"):
        curves = {"binary64": ref}
        for arch, t in MODELS:
            dp = matcore.preset(arch, t.format(t=typ))
            Rm, zm, itm = smd(R0, lambda X, Y: matcore.gemm(dp, np.ascontiguousarray(X), np.ascontiguousarray(Y)),
                              a.iterations)
            curves[dp.name] = dominant(Rm, zm)
            print(f"{dp.name}: {itm} iterations, max |difference| to binary64 {np.max(np.abs(curves[dp.name] - ref)):.3e}",
                  file=sys.stderr)
        save_csv(os.path.join(a.out, f"smd-{typ}.csv"), ["omega"] + list(curves),
                 [[2 * np.pi * i / NFFT] + [f"{curves[c][i]:.17g}" for c in curves] for i in range(NFFT)])
        plot(curves, typ, os.path.join(a.out, f"smd-{typ}.png"))


def plot(curves, typ, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    om = 2 * np.pi * np.arange(NFFT) / NFFT
    names = [c for c in curves if c != "binary64"]
    fig, ax = plt.subplots(1, 3, figsize=(16, 4.5))
    colour = {c: f"C{i}" for i, c in enumerate(curves)}  # one colour a model in every panel
    for c in curves:
        ax[0].plot(om, curves[c], lw=1, label=c, color=colour[c])
    ax[0].set_title(f"dominant eigenvalue, {typ} inputs")
    ax[0].set_xlabel("normalised angular frequency")
    ax[0].legend(fontsize=7)
    for c in names:
        ax[1].semilogy(om, np.maximum(np.abs(curves[c] - curves["binary64"]), 1e-17), lw=1, label=c, color=colour[c])
    ax[1].set_title("|model - binary64|")
    ax[1].set_xlabel("normalised angular frequency")
    ax[1].legend(fontsize=7)
    pairs = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    for x, y in pairs:  # a pair: the first model's colour, the line style of the second
        ax[2].semilogy(om, np.maximum(np.abs(curves[x] - curves[y]), 1e-17), lw=1, color=colour[x],
                       linestyle=["-", "--", ":", "-."][names.index(y) % 4], label=f"{x.split('/')[0]} - {y.split('/')[0]}")
    ax[2].set_title("|model - model|")
    ax[2].set_xlabel("normalised angular frequency")
    ax[2].legend(fontsize=7)
    for x in ax:
        x.grid(True, alpha=0.3)
    save_figure(fig, path)


if __name__ == "__main__":
    main()
