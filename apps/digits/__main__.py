"""A real workload: a small classifier of handwritten digits, trained in binary64 NumPy, whose
two layers' GEMMs then run through each datapath (docs/applications.md, section 3).

  data: the 1797 8x8 digits of UCI that Debian's python3-sklearn ships
        (sklearn/datasets/data/digits.csv.gz), pixels / 16; a fixed split, 1297 to train and
        500 to test
  net:  x (64) -> relu(x W1 + b1) (64) -> h W2 + b2 (10 logits), trained with Adam on the
        softmax cross-entropy in binary64 (seeded: the same weights every run)
  run:  each layer's Z = X W + b is `matcore.gemm(dp, X, W, C = b)`: X and W rounded into the
        datapath's input formats (RNE), b into the accumulator, the instruction's k order and
        its accumulator; block-scaled types take per-block scales along k: E8M0 (OCP MX: 2 to
        the floor(log2 max|x|) - emax of the element format) or UE4M3 (NVFP4: max|x| / 6,
        rounded to E4M3). The hidden layer's output is quantised again for the second GEMM.
  ideal: the same rounded inputs and scales, each dot product exact and rounded once
        (`matcore.exact`): what the input formats alone cost, the accumulator excluded.

For every design: the test accuracy, the predictions that differ from binary64's, and the rms
of the logit error against binary64 and against the ideal unit of the same formats.

usage: python3 -m apps.digits [--out DIR] [--dp ARCH/TYPE[/VARIANT] | --dp FILE.toml ...]
writes DIR/digits.csv and DIR/digits.png (default DIR = docs/img).
"""
import argparse
import gzip
import os
import sys

import numpy as np

import matcore

from apps.common import save_csv, save_figure

DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"

# (label, arch, type, variant): binary16, bfloat16, fp8 without scales, the block-scaled kinds
DESIGNS = [
    ("h100 fp16", "h100", "fp16", ""),
    ("mi300x fp16", "mi300x", "fp16", ""),
    ("b200 bf16", "b200", "bf16", ""),
    ("h100 e4m3", "h100", "e4m3", ""),
    ("mi300x e4m3fnuz", "mi300x", "e4m3fnuz", ""),
    ("b200 mxf8 e4m3", "b200", "mxf8f6f4.e4m3.e4m3", "tcgen05"),
    ("b200 mxf6 e2m3", "b200", "mxf8f6f4.e2m3.e2m3", "tcgen05"),
    ("b200 mxf4", "b200", "mxf4", "tcgen05"),
    ("b200 nvfp4", "b200", "nvfp4", "tcgen05"),
    ("b200 e2m1 (no scales)", "b200", "e2m1", "tcgen05"),
]


def load_digits(path=DIGITS):
    """The digits as (pixels / 16, labels); a clear error where python3-sklearn is missing."""
    if not os.path.exists(path):
        sys.exit(f"apps.digits: {path} not found: install Debian's python3-sklearn (scripts/install-deps.sh)")
    with gzip.open(path, "rt") as f:
        data = np.loadtxt(f, delimiter=",")
    return data[:, :64] / 16.0, data[:, 64].astype(int)


def train(x, y, hidden=64, epochs=150, batch=32, lr=3e-3, seed=0):
    """A 64-hidden-unit ReLU network trained with Adam in binary64; returns W1, b1, W2, b2."""
    rng = np.random.default_rng(seed)
    p = [rng.normal(0, np.sqrt(2 / 64), (64, hidden)), np.zeros(hidden),
         rng.normal(0, np.sqrt(2 / hidden), (hidden, 10)), np.zeros(10)]
    m = [np.zeros_like(w) for w in p]
    v = [np.zeros_like(w) for w in p]
    t = 0
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for i in range(0, len(x), batch):
            idx = order[i:i + batch]
            xb, yb = x[idx], y[idx]
            h = np.maximum(xb @ p[0] + p[1], 0)
            z = h @ p[2] + p[3]
            e = np.exp(z - z.max(axis=1, keepdims=True))
            g = e / e.sum(axis=1, keepdims=True)
            g[np.arange(len(yb)), yb] -= 1
            g /= len(yb)
            gh = (g @ p[2].T) * (h > 0)
            grads = [xb.T @ gh, gh.sum(0), h.T @ g, g.sum(0)]
            t += 1
            for j in range(4):
                m[j] = 0.9 * m[j] + 0.1 * grads[j]
                v[j] = 0.999 * v[j] + 0.001 * grads[j] ** 2
                p[j] -= lr * (m[j] / (1 - 0.9**t)) / (np.sqrt(v[j] / (1 - 0.999**t)) + 1e-8)
    return p


def block_scales(x, axis, dp):
    """Per-block scales of x along axis (the k axis) for dp's scale format: (scaled x, scale
    patterns with k blocks on the last axis). E8M0: 2^(floor(log2 amax) - emax of the element
    format); UE4M3: amax / 6 rounded to E4M3."""
    fields = dp.fields()
    blk = int(fields["scale_block"])
    fmt = dp.a_fmt
    xt = np.moveaxis(x, axis, -1)
    k = xt.shape[-1]
    nb = -(-k // blk)
    pad = np.zeros(xt.shape[:-1] + (nb * blk,))
    pad[..., :k] = xt
    amax = np.abs(pad.reshape(xt.shape[:-1] + (nb, blk))).max(axis=-1)
    if fields["scale_fmt"] == "e8m0":
        emax = {"e4m3": 8, "e5m2": 15, "e3m2": 4, "e2m3": 2, "e2m1": 2}[fmt]
        e = np.where(amax > 0, np.floor(np.log2(np.where(amax > 0, amax, 1))) - emax, 0)
        e = np.clip(e, -127, 127)
        scale, bits = np.exp2(e), (e + 127).astype(np.uint64)
    else:
        s = np.where(amax > 0, amax / 6.0, 1.0)
        bits = matcore.encode(s.ravel(), "e4m3", rounding="ru").reshape(s.shape)
        scale = matcore.decode(bits.ravel(), "e4m3").reshape(s.shape)
        scale = np.where(scale > 0, scale, 1.0)
    scaled = pad / np.repeat(scale, blk, axis=-1)
    return np.moveaxis(scaled[..., :k], -1, axis), bits


def fmax(fmt):
    """The largest finite value of a format."""
    return float(matcore.decode(matcore.encode(np.array([1e300]), fmt, rounding="rtz"), fmt)[0])


def layer(dp, x, w, b, ideal=False):
    """x w + b through dp (ideal: the exact dot products of the same rounded inputs). The
    operands saturate at the element format's largest finite value (the OCP conversion), so
    that a block's largest element never becomes Inf or NaN."""
    M, K = x.shape
    N = w.shape[1]
    sa = sb = None
    if dp["scale_block"] != "none":
        x, sa = block_scales(x, 1, dp)
        w, sb = block_scales(w, 0, dp)  # sb (N, blocks): the scales of w's columns
    x = np.clip(x, -fmax(dp.a_fmt), fmax(dp.a_fmt))
    w = np.clip(w, -fmax(dp.b_fmt), fmax(dp.b_fmt))
    if not ideal:
        return matcore.gemm(dp, np.ascontiguousarray(x), np.ascontiguousarray(w), np.tile(b, (M, 1)), sa=sa, sb=sb)
    a = matcore.encode(x.ravel(), dp.a_fmt).reshape(M, K)
    bt = matcore.encode(np.ascontiguousarray(w.T).ravel(), dp.b_fmt).reshape(N, K)
    A = np.repeat(a, N, axis=0)
    B = np.tile(bt, (M, 1))
    c = matcore.encode(np.tile(b, M), dp.out_fmt)
    SA = np.repeat(sa, N, axis=0) if sa is not None else None
    SB = np.tile(sb, (M, 1)) if sb is not None else None
    d = matcore.exact(dp, A, B, c, sa=SA, sb=SB)
    return matcore.decode(d, dp.out_fmt).reshape(M, N)


def forward(dp, x, p, ideal=False):
    h = np.maximum(layer(dp, x, p[0], p[1], ideal), 0)
    return layer(dp, h, p[2], p[3], ideal)


def rms(x):
    return float(np.sqrt(np.mean(np.square(x))))


def datapath(spec):
    if spec.endswith(".toml"):
        return os.path.basename(spec), matcore.load(spec)
    parts = spec.split("/")
    return spec, matcore.preset(parts[0], parts[1], "", parts[2] if len(parts) > 2 else "")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m apps.digits", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="docs/img", help="directory of digits.csv and digits.png")
    ap.add_argument("--dp", action="append", default=[], help="ARCH/TYPE[/VARIANT] or a datapath file (repeatable)")
    ap.add_argument("--epochs", type=int, default=150)
    args = ap.parse_args(argv)
    x, y = load_digits()
    order = np.random.default_rng(1).permutation(len(x))
    tr, te = order[:1297], order[1297:]
    p = train(x[tr], y[tr], epochs=args.epochs)
    xt, yt = x[te], y[te]
    z64 = np.maximum(xt @ p[0] + p[1], 0) @ p[2] + p[3]
    pred64 = z64.argmax(1)
    designs = [datapath(s) for s in args.dp] or [(lab, matcore.preset(a, t, "", v)) for lab, a, t, v in DESIGNS]
    rows = [("binary64 (NumPy)", "-", f"{np.mean(pred64 == yt):.4f}", 0, "0", "0")]
    print(f"binary64: test accuracy {np.mean(pred64 == yt):.4f} on {len(yt)} digits")
    for label, dp in designs:
        z = forward(dp, xt, p)
        zi = forward(dp, xt, p, ideal=True)
        acc = float(np.mean(z.argmax(1) == yt))
        flips = int(np.sum(z.argmax(1) != pred64))
        rows.append((label, dp.name, f"{acc:.4f}", flips, f"{rms(z - z64):.3e}", f"{rms(z - zi):.3e}"))
        print(f"{label:24s} accuracy {acc:.4f}  differs from binary64 on {flips:3d}  logit rms error "
              f"{rms(z - z64):.3e} (vs the ideal unit {rms(z - zi):.3e})")
    os.makedirs(args.out, exist_ok=True)
    save_csv(os.path.join(args.out, "digits.csv"),
             ["design", "datapath", "accuracy", "differs_from_binary64", "logit_rms_err", "logit_rms_vs_ideal"], rows)
    plot(rows, os.path.join(args.out, "digits.png"))
    return rows


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [r[0] for r in rows[1:]]
    err = [float(r[4]) for r in rows[1:]]
    ideal = [float(r[5]) for r in rows[1:]]
    acc = [float(r[2]) for r in rows[1:]]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 0.45 * len(labels) + 2.4))
    yy = np.arange(len(labels))
    a1.barh(yy + 0.2, err, 0.4, color="tab:blue", label="vs binary64 (formats + accumulator)")
    a1.barh(yy - 0.2, [max(v, 1e-12) for v in ideal], 0.4, color="tab:orange", label="vs the ideal unit (accumulator alone)")
    a1.set_xscale("log")
    a1.set_yticks(yy, labels)
    a1.invert_yaxis()
    a1.set_xlabel("rms logit error")
    a1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, fontsize=8)
    a2.barh(yy, acc, 0.6, color="tab:green")
    a2.axvline(float(rows[0][2]), color="k", ls="--", lw=1, label="binary64")
    a2.set_yticks(yy, [])
    a2.invert_yaxis()
    a2.set_xlim(min(acc + [float(rows[0][2])]) - 0.02, 1.0)
    a2.set_xlabel("test accuracy (500 digits)")
    a2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), fontsize=8)
    fig.suptitle("Digits classifier (64-64-10, trained in binary64): each layer's GEMM through the datapath")
    save_figure(fig, path)


if __name__ == "__main__":
    main()
