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
    assert len(rows) == 3 * 8 * 3  # n values x models x word counts
    for r in rows:
        if r["model"].startswith("mi"):
            assert float(r["error"]) <= float(r["bound"]), r
    for model in ("mi100/fp16", "mi300x/fp16"):
        e = {int(r["p"]): float(r["error"]) for r in rows if r["model"] == model and r["n"] == "300"}
        # one word is limited by the input format; two reach the binary32 accumulation (n U)
        assert e[2] < e[1] / 100 and e[3] < e[1] / 100, (model, e)


def test_multiword_any_datapath():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "f27.toml"), "w") as f:
            f.write('base = "mi300x/fp16"\narch = "f27"\nfrac_bits = 27\n')
        multiword(["--out", d, "--nmax", "100", "--points", "2", "--dp", "h100/fp16", "--dp", os.path.join(d, "f27.toml"),
                   "--p", "1,2"])
        with open(os.path.join(d, "multiword-binary16.csv")) as f:
            rows = list(csv.DictReader(f))
    assert {r["model"] for r in rows} == {"h100/fp16", "f27/fp16"} and len(rows) == 2 * 2 * 2


def test_smd_reduced():
    from apps.smd.__main__ import main as smd
    with tempfile.TemporaryDirectory() as d:
        smd(["--out", d, "--iterations", "25"])
        curves = {}
        for typ in ("fp16", "bf16"):
            with open(os.path.join(d, f"smd-{typ}.csv")) as f:
                rows = list(csv.DictReader(f))
            assert len(rows) == 256
            assert os.path.getsize(os.path.join(d, f"smd-{typ}.png")) > 1000
            ref = [float(r["binary64"]) for r in rows]
            for model in ("mi100/" + typ, "mi250/" + typ, "mi300x/" + typ, "b200/" + typ):
                diff = max(abs(float(r[model]) - x) for r, x in zip(rows, ref))
                curves[model] = diff
                assert 0 < diff < 1.0, (model, diff)  # near the binary64 curve, not equal to it
        # bf16 (8 bits) strays further from binary64 than fp16 (11 bits) on every model
        for arch in ("mi100", "mi250", "mi300x", "b200"):
            assert curves[arch + "/bf16"] > curves[arch + "/fp16"], curves


def test_digits_reduced():
    """The digits classifier (apps/digits): binary16 keeps binary64's predictions with a logit
    error that is mostly the input rounding (the accumulator alone adds about 1e-6), NVFP4's
    4-bit elements lose far more than binary16, and a datapath file is a design like a preset."""
    from apps.digits.__main__ import main as digits
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "f12.toml"), "w") as f:
            f.write('base = "h100/fp16"\narch = "f12"\nfrac_bits = 12\n')
        rows = digits(["--out", d, "--epochs", "30", "--dp", "h100/fp16", "--dp", "b200/nvfp4/tcgen05",
                       "--dp", os.path.join(d, "f12.toml")])
        assert os.path.getsize(os.path.join(d, "digits.png")) > 1000
        with open(os.path.join(d, "digits.csv")) as f:
            assert len(list(csv.DictReader(f))) == 4
    ref, fp16, nvfp4, f12 = rows
    assert float(ref[2]) > 0.9  # the binary64 network classifies
    assert abs(float(fp16[2]) - float(ref[2])) <= 0.004 and fp16[3] <= 2
    assert 1e-4 < float(fp16[4]) < 1e-2 and float(fp16[5]) < 1e-4
    assert float(nvfp4[4]) > 50 * float(fp16[4])
    # 12 fraction bits in the aligner: the accumulator's own error is now visible
    assert float(f12[5]) > 100 * float(fp16[5])
