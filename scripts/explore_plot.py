#!/usr/bin/env python3
"""Plots of a `matcore explore` CSV (docs/explore.md).

usage: explore_plot.py RESULTS.csv PREFIX [--bound]

  PREFIX-k.png      vs k, one line per datapath (and swept value): the RMS normwise error
                    |d - exact| / (u sum|a_i b_i|) (with --bound: the classical bound k, dashed),
                    and the RMS relative error against the exact sum rounded once
  PREFIX-bias.png   vs k: the mean signed normwise error (in u) and the mean signed error in
                    ulps of the result (negative: toward zero)
  PREFIX-sweep.png  (with a swept field) RMS normwise error vs the swept value, one line per k
  PREFIX-cost.png   (with --cost) NAND2-equivalents vs RMS normwise error at the largest k

Error bars: 95% intervals (1.96 standard errors, the CSV's se_* columns). Every file is
written to a temporary name and renamed when complete. Needs matplotlib
(Debian python3-matplotlib).
"""
import csv
import os
import signal
import sys
import tempfile
from collections import OrderedDict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: E402
    from cycler import cycler  # noqa: E402  (comes with matplotlib)
    from matplotlib.ticker import MaxNLocator  # noqa: E402
except ImportError as e:  # matcore explore reports exit status 3 as "matplotlib is needed"
    print(f"explore_plot.py: {e}", file=sys.stderr)
    sys.exit(3)

# 20 distinct colours and two line styles: up to 40 lines stay apart
plt.rcParams["axes.prop_cycle"] = cycler(linestyle=["-", "--", ":"]) * cycler(color=plt.get_cmap("tab10").colors)


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"{path}: no rows")
    for r in rows:
        for key in ("k", "n", "finite"):
            r[key] = int(r[key])
        for key in ("rms_rel", "max_rel", "mean_rel", "mean_ulp", "mean_abs_ulp", "correct_frac",
                    "mono_frac", "max_bound_ratio", "k_u", "rms_nw_u", "mean_nw_u", "nand2"):
            r[key] = float(r[key])
        r["depth"] = float(r.get("depth") or -1)
        for key in ("se_rms_rel", "se_mean_rel", "se_mean_ulp", "se_rms_nw_u", "se_mean_nw_u"):
            r[key] = 1.96 * float(r.get(key) or 0)  # half-width of the 95% interval
    return rows


def label(r):
    parts = [r["datapath"], r["sweep1"], r["sweep2"]]
    return " ".join(p for p in parts if p)


def save(fig, path):
    shown = path
    path = os.path.realpath(path)  # a symbolic link stays one: the file it points to gets the plot
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".tmp-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format="png", dpi=110, bbox_inches="tight")
        os.chmod(tmp, 0o666 & ~umask())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    finally:
        plt.close(fig)
    print(f"wrote {shown}")


def umask():
    m = os.umask(0)
    os.umask(m)
    return m


def series(rows, key):
    out = OrderedDict()
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def plot_k(rows, lines, ks, workload, many, bound, prefix):
    """Error and bias against k (PREFIX-k.png, PREFIX-bias.png)."""
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 5.5))
    for name, rs in lines.items():
        rs = sorted(rs, key=lambda r: r["k"])
        x = [r["k"] for r in rs]
        ax.errorbar(x, [max(r["rms_nw_u"], 1e-6) for r in rs], yerr=[r["se_rms_nw_u"] for r in rs], marker="o",
                    ms=3, lw=1, capsize=2, label=None if many else name)
        ax2.errorbar(x, [max(r["rms_rel"], 1e-12) for r in rs], yerr=[r["se_rms_rel"] for r in rs], marker="o",
                     ms=3, lw=1, capsize=2)
    if bound:
        ax.plot(ks, ks, "k--", lw=1, label="classical bound k")
    for a in (ax, ax2):
        a.set_xscale("log")
        a.set_yscale("log")
    ax.set_xlabel("k (dot product length)")
    ax.set_ylabel("RMS |d - exact| / (u sum|a b|)")
    ax.set_title(f"normwise error vs k, {workload} inputs (u of the output)")
    ax2.set_xlabel("k (dot product length)")
    ax2.set_ylabel("RMS relative error vs exact sum rounded once")
    ax2.set_title("relative error (large where the sum cancels)")
    for a in (ax, ax2):
        a.grid(True, which="both", alpha=0.3)
    if not many:
        ax.legend(fontsize=7)
    save(fig, prefix + "-k.png")

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 5.5))
    for name, rs in lines.items():
        rs = sorted(rs, key=lambda r: r["k"])
        x = [r["k"] for r in rs]
        ax.errorbar(x, [r["mean_nw_u"] for r in rs], yerr=[r["se_mean_nw_u"] for r in rs], marker="o", ms=3,
                    lw=1, capsize=2, label=None if many else name)
        ax2.errorbar(x, [r["mean_ulp"] for r in rs], yerr=[r["se_mean_ulp"] for r in rs], marker="o", ms=3, lw=1,
                     capsize=2)
    for a in (ax, ax2):
        a.set_xscale("log")
        a.axhline(0, color="k", lw=0.8)
        a.set_xlabel("k (dot product length)")
        a.grid(True, which="both", alpha=0.3)
    ax.set_ylabel("mean (d - exact) sign(exact) / (u sum|a b|)")
    ax.set_title(f"bias vs k, {workload} inputs (< 0: toward zero)")
    ax2.set_ylabel("mean signed error in ulps of the result")
    ax2.set_title("the same in ulps of each result")
    if not many:
        ax.legend(fontsize=7)
    save(fig, prefix + "-bias.png")


def plot_sweep(rows, workload, prefix):
    """Error against the swept field (PREFIX-sweep.png)."""
    swept = [r for r in rows if r["sweep1"]]
    if swept:
        field = swept[0]["sweep1"].split("=")[0]
        numeric = all(r["sweep1"].split("=", 1)[1].lstrip("-").isdigit() for r in swept)
        fig, ax = plt.subplots(figsize=(8, 5.5))
        for (dp, s2, k), rs in series(swept, lambda r: (r["datapath"], r["sweep2"], r["k"])).items():
            xs = [r["sweep1"].split("=", 1)[1] for r in rs]
            x = [int(v) for v in xs] if numeric else list(range(len(xs)))
            ax.errorbar(x, [max(r["rms_nw_u"], 1e-6) for r in rs], yerr=[r["se_rms_nw_u"] for r in rs], marker="o",
                        ms=3, lw=1, capsize=2, label=f"{dp} {s2} k={k}".replace("  ", " "))
            if not numeric:
                ax.set_xticks(x, xs)
        ax.set_yscale("log")
        if numeric:  # integer fields: integer ticks
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(field)
        ax.set_ylabel("RMS |d - exact| / (u sum|a b|)")
        ax.set_title(f"normwise error vs {field}, {workload} inputs")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        save(fig, prefix + "-sweep.png")


def plot_cost(rows, ks, workload, prefix):
    """Accuracy against area and against logic depth (PREFIX-cost.png)."""
    costed = [r for r in rows if r["nand2"] > 0]
    if costed:  # accuracy against area and against logic depth (the deepest stage's gate levels)
        fig, axes = plt.subplots(1, 2, figsize=(13, 5.5))
        for ax, key, ylabel, log in ((axes[0], "nand2", "NAND2-equivalents (yosys, matcore cost)", True),
                                     (axes[1], "depth", "gate levels of the deepest stage (yosys ltp)", False)):
            for k in sorted({ks[0], ks[-1]}):
                rs = [r for r in costed if r["k"] == k and r[key] > 0]
                if not rs:
                    continue
                ax.plot([r["rms_nw_u"] for r in rs], [r[key] for r in rs], "o", label=f"k = {k}")
                for r in rs:
                    ax.annotate(r["sweep1"] or r["datapath"], (r["rms_nw_u"], r[key]), fontsize=7,
                                xytext=(3, 3), textcoords="offset points")
            ax.set_xscale("log")
            if log:
                ax.set_yscale("log")
            ax.set_xlabel("RMS normwise error |d - exact| / (u sum|a b|)")
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(f"cost vs error, {workload} inputs")
        save(fig, prefix + "-cost.png")


def main():
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "--bound"):
        raise SystemExit(__doc__)
    bound = len(sys.argv) == 4
    rows = load(sys.argv[1])
    prefix = sys.argv[2]
    workload = rows[0]["workload"]
    ks = sorted({r["k"] for r in rows})
    lines = series(rows, label)
    many = len(lines) > 12
    if len(ks) > 1:
        plot_k(rows, lines, ks, workload, many, bound, prefix)
    plot_sweep(rows, workload, prefix)
    plot_cost(rows, ks, workload, prefix)


if __name__ == "__main__":
    # a terminating signal raises, so that save() removes its temporary
    for _sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(_sig, lambda *_: sys.exit(128 + 15))
    main()
