"""Multi-word GEMM: emulate a binary64 product C = A*B (A m x n, B n x q) with p words of a
low-precision input format through a matrix-core model (Mary & Mikaitis 2025; the paper's
Figures 4-6). The set-up is that of ../shared/spec/applications.md:

  m = q = 10, n = floor(logspace(1, 6, 20)); elements 10^x, x uniform in [-10, 10], random signs
  theta = min(fmax, sqrt(Fmax / n)); L, M = powers of two scaling the rows of A / columns of B
  W_1 = round(LA), W_j = round(r_j / u^(j-1)), r_{j+1} = r_j - W_j u^(j-1)   (the same for BM)
  C' = sum over word pairs j + k - 2 < p of the model's GEMM C' <- (u^(j+k-2) A_j) B_k + C'
       (C' carried in binary32 from one call to the next)
  C = L^-1 C' M^-1; error = ||C - A B||_inf / (||A||_inf ||B||_inf)
  bound = 2u + n U + 4 n^2 fmin / theta + 4 n^2 Fmin / theta^2

usage: python3 -m apps.multiword [--out DIR] [--nmax N] [--points P] [--seed S] [--only TYPE]
       python3 -m apps.multiword --dp mi300x/fp16 --dp my.toml [--p 1,2,3] ...   (any datapaths)
writes DIR/multiword-<fmt>.csv and DIR/multiword-<fmt>.png (default DIR = docs/img).
"""
import argparse
import math
import os
import sys
import time

import numpy as np

import matcore

from apps.common import save_csv, save_figure

# (input type, word counts, models) of the paper's figures
# (the paper's curves: e5m2 on MI300X, L40S, H100 and B200; fp16 on V100, A100 and the CDNA and
# Hopper/Blackwell units, with B200 beside the same unit rounding its output to nearest)
B200_RN = ("b200", "fp16", {"arch": "b200rn", "out_round": "rne"})
FIGURES = [
    ("e5m2", [1, 4, 6], [("mi300x", "e5m2fnuz"), ("l40s", "e5m2"), ("h100", "e5m2"), ("b200", "e5m2")]),
    ("fp16", [1, 2, 3], [("mi100", "fp16"), ("mi250", "fp16"), ("mi300x", "fp16"), ("v100", "fp16"), ("a100", "fp16"),
                         ("h100", "fp16"), ("b200", "fp16"), B200_RN]),
    ("bf16", [1, 2, 3], [("mi100", "bf16"), ("mi250", "bf16"), ("mi300x", "bf16"), ("h100", "bf16"), ("b200", "bf16")]),
]

FORMAT_PARAMS = {  # t (precision incl. hidden bit), fmin (smallest normal), fmax (largest finite)
    "binary16": (11, 2.0**-14, 65504.0),
    "bf16": (8, 2.0**-126, (2 - 2.0**-7) * 2.0**127),
    "e5m2": (3, 2.0**-14, 57344.0),
    "e5m2fnuz": (3, 2.0**-15, 57344.0),
    "e4m3fnuz": (4, 2.0**-7, 240.0),
    "e4m3": (4, 2.0**-6, 448.0),
}
U32, FMIN32, FMAX32 = 2.0**-24, 2.0**-126, (2 - 2.0**-23) * 2.0**127


def pow2_floor(x):
    return np.exp2(np.floor(np.log2(x)))


def split(X, p, fmt, u):
    """p words of fmt: W_1 = round(X), W_j = round(r_j / u^(j-1)) (RNE), r_{j+1} = r_j - W_j u^(j-1)."""
    words, r = [], X.copy()
    for j in range(1, p + 1):
        w = matcore.decode(matcore.encode(r / u ** (j - 1), fmt), fmt)
        words.append(w)
        r = r - w * u ** (j - 1)
    return words


def multiword_error(dp, A, B, p):
    fmt = dp.a_fmt
    t, fmin, fmax = FORMAT_PARAMS[fmt]
    u = 2.0**-t
    n = A.shape[1]
    theta = min(fmax, math.sqrt(FMAX32 / n))
    L = pow2_floor(theta / np.max(np.abs(A), axis=1))
    M = pow2_floor(theta / np.max(np.abs(B), axis=0))
    Aw = split(L[:, None] * A, p, fmt, u)
    Bw = split(B * M[None, :], p, fmt, u)
    C = np.zeros((A.shape[0], B.shape[1]))
    for j in range(1, p + 1):
        for k in range(1, p + 1):
            if j + k - 2 < p:
                C = dp_gemm(dp, u ** (j + k - 2) * Aw[j - 1], Bw[k - 1], C)
    C = C / L[:, None] / M[None, :]
    ref = A @ B
    err = np.max(np.sum(np.abs(C - ref), axis=1)) / (np.max(np.sum(np.abs(A), axis=1)) * np.max(np.sum(np.abs(B), axis=1)))
    bound = 2 * u + n * U32 + 4 * n * n * fmin / theta + 4 * n * n * FMIN32 / theta**2
    return err, bound


def dp_gemm(dp, A, B, C):
    return matcore.gemm(dp, np.ascontiguousarray(A), np.ascontiguousarray(B), np.ascontiguousarray(C))


def matrices(rng, m, n, q, l=10.0):
    A = np.power(10.0, rng.uniform(-l, l, (m, n))) * rng.choice([-1.0, 1.0], (m, n))
    B = np.power(10.0, rng.uniform(-l, l, (n, q))) * rng.choice([-1.0, 1.0], (n, q))
    return A, B


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m apps.multiword", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="docs/img")
    ap.add_argument("--nmax", type=float, default=1e6, help="largest n (default 10^6)")
    ap.add_argument("--points", type=int, default=20, help="values of n, log-spaced from 10 (default 20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="", help="one input type: e5m2, fp16 or bf16")
    ap.add_argument("--dp", action="append", default=[],
                    help="instead of the paper's figures: a datapath (preset arch/type or a .toml file; repeatable, "
                         "all of one input format)")
    ap.add_argument("--p", default="1,2,3", help="word counts with --dp (default 1,2,3)")
    a = ap.parse_args(argv)
    figures = FIGURES
    if a.dp:
        dps = [matcore.datapath(x) for x in a.dp]
        if len({d.a_fmt for d in dps}) != 1:
            raise SystemExit("--dp: the datapaths must take the same input format")
        if dps[0].a_fmt not in FORMAT_PARAMS:
            raise SystemExit(f"--dp: no splitting parameters for {dps[0].a_fmt} (known: {', '.join(FORMAT_PARAMS)})")
        figures = [(dps[0].a_fmt, [int(x) for x in a.p.split(",")], dps)]
    ns = sorted(set(int(x) for x in np.floor(np.logspace(1, math.log10(a.nmax), a.points))))
    os.makedirs(a.out, exist_ok=True)
    for name, ps, models in figures:
        if a.only and a.only != name:
            continue
        rows = []
        t0 = time.time()
        for n in ns:
            rng = np.random.default_rng(a.seed * 1000003 + n)
            A, B = matrices(rng, 10, n, 10)
            for model in models:
                dp = model_datapath(model)
                for p in ps:
                    err, bound = multiword_error(dp, A, B, p)
                    rows.append({"type": name, "model": dp.name, "p": p, "n": n, "error": err, "bound": bound})
            print(f"{name}: n = {n} done ({time.time() - t0:.0f} s)", file=sys.stderr)
        save_csv(os.path.join(a.out, f"multiword-{name}.csv"), list(rows[0]), [list(r.values()) for r in rows])
        plot(rows, name, ps, os.path.join(a.out, f"multiword-{name}.png"))


def model_datapath(model):
    """A figure's model: a Datapath, a preset (arch, type), or a preset with fields changed."""
    if isinstance(model, matcore.Datapath):
        return model
    if len(model) == 3:
        return matcore.preset(model[0], model[1]).with_(**model[2])
    return matcore.preset(*model)


def plot(rows, name, ps, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(ps), figsize=(5 * len(ps), 4.5), sharey=True, squeeze=False)
    axes = axes[0]
    for ax, p in zip(axes, ps):
        sel = [r for r in rows if r["p"] == p]
        for model in dict.fromkeys(r["model"] for r in sel):
            rs = [r for r in sel if r["model"] == model]
            ax.loglog([r["n"] for r in rs], [max(r["error"], 1e-30) for r in rs], marker="o", ms=3, lw=1, label=model)
        rs = [r for r in sel if r["model"] == sel[0]["model"]]
        ax.loglog([r["n"] for r in rs], [r["bound"] for r in rs], "k--", lw=1, label="bound")
        ax.set_title(f"{name}, p = {p}")
        ax.set_xlabel("n")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("||C - AB|| / (||A|| ||B||)")
    axes[0].legend(fontsize=7)
    save_figure(fig, path)


if __name__ == "__main__":
    main()
