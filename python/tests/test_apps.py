"""The applications (apps/, docs/applications.md) in a reduced run: the multi-word GEMM errors
lie under the bound of the spec and fall with more words for a round-to-nearest model."""
import csv
import os
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)

from apps.multiword.__main__ import main as multiword  # noqa: E402


def test_multiword_reduced():
    with tempfile.TemporaryDirectory() as d:
        multiword(["--out", d, "--nmax", "300", "--points", "3", "--only", "fp16"])
        with open(os.path.join(d, "multiword-fp16.csv")) as f:
            rows = list(csv.DictReader(f))
        assert os.path.getsize(os.path.join(d, "multiword-fp16.png")) > 1000
    assert len(rows) == 3 * 5 * 3  # n values x models x word counts
    for r in rows:
        if r["model"].startswith("mi"):
            assert float(r["error"]) <= float(r["bound"]), r
    for model in ("mi100/fp16", "mi300x/fp16"):
        e = {int(r["p"]): float(r["error"]) for r in rows if r["model"] == model and r["n"] == "300"}
        # one word is limited by the input format; two reach the binary32 accumulation (n U)
        assert e[2] < e[1] / 100 and e[3] < e[1] / 100, (model, e)
