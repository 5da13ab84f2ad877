"""Shared by the applications: outputs that appear complete or not at all (written to a
temporary name beside the target, then renamed), as every matcore output does."""
import csv
import os


def save_figure(fig, path):
    import matplotlib.pyplot as plt
    fig.tight_layout()
    fig.savefig(path + ".tmp.png", dpi=100)
    plt.close(fig)
    os.replace(path + ".tmp.png", path)
    print(f"wrote {path}")


def save_csv(path, header, rows):
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    os.replace(path + ".tmp", path)
    print(f"wrote {path}")
