"""The matcore Python module: bit for bit the command line's results (dot, run, gemm), the real
hardware sets reproduced through it, and clear exceptions for bad arrays."""
import os
import subprocess
import tempfile

import numpy as np
import pytest

import matcore

CLI = os.environ.get("MATCORE_CLI", "build/matcore")
SHARED = os.environ.get("MATCORE_SHARED_DIR", "../shared")


def cli(*args):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True).stdout


def read_hex(path):
    """A vector file of the shared format (docs/vector-format.md): hex patterns, '#' headers."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            rows.append([int(w, 16) if len(w) != 32 else int(w, 2) for w in line.split()])
    return np.array(rows, dtype=np.uint64)


def test_encode_decode_known_patterns():
    x = np.array([1.0, -2.0, 2.0**-24, 65504.0, 1e6, np.nan, 0.1], dtype=np.float64)
    b = matcore.encode(x, "binary16")
    assert b.dtype == np.uint64
    assert list(b[:5]) == [0x3C00, 0xC000, 0x0001, 0x7BFF, 0x7C00]   # 1e6 overflows to +Inf
    assert b[6] == 0x2E66                                              # 0.1 rounded to nearest even
    assert matcore.encode(np.array([0.1]), "binary16", "rtz")[0] == 0x2E66
    assert matcore.encode(np.array([1 + 2.0**-11]), "binary16", "ru")[0] == 0x3C01
    y = matcore.decode(b, "binary16")
    assert y[0] == 1.0 and y[2] == 2.0**-24 and np.isinf(y[4]) and np.isnan(y[5])
    assert list(matcore.encode(np.array([240.0, 1000.0]), "e4m3fnuz")) == [0x7F, 0x80]  # no Inf: NaN
    assert "bf16" in matcore.formats()


def cli_set(d, arch, typ, n=3000):
    """matcore sample (with subnormals) and run into d: the preset and a, b, c, the CLI's d."""
    cli("sample", "--arch", arch, "--type", typ, "--n", str(n), "--subnormal", "--out", d)
    cli("run", "--arch", arch, "--type", typ, "--a", d + "/a.txt", "--b", d + "/b.txt", "--c", d + "/c.txt",
        "--d", d + "/d.txt")
    a, b = read_hex(d + "/a.txt"), read_hex(d + "/b.txt")
    return matcore.preset(arch, typ), a, b, read_hex(d + "/c.txt")[:, 0], read_hex(d + "/d.txt")[:, 0]


def test_dot_is_the_cli_bit_for_bit():
    with tempfile.TemporaryDirectory() as d:
        for arch, typ in [("mi300x", "fp16"), ("h100", "e4m3"), ("mi250", "bf16"), ("mi250", "fp64")]:
            dp, a, b, c, want = cli_set(d, arch, typ)
            if dp.out_fmt == "binary32" or dp.out_fmt == "binary64":
                got = matcore.dot(dp, a, b, c)
                assert np.array_equal(got, want), (arch, typ)
            r = matcore.validate(dp, a, b, c, want)
            assert r["samples"] == 3000 and r["mismatches"] == 0
            # one thread gives the same bits
            assert np.array_equal(matcore.dot(dp, a, b, c, threads=1), matcore.dot(dp, a, b, c, threads=3))


def test_dot_takes_compact_words():
    """uint8/uint16/uint32 arrays (np.load of sample --npy, or a.astype) run the 32-bit kernel
    without a copy of the arrays: the same bits as uint64 and as matcore run; validate takes
    them and a uint32 d; patterns wider than the format, block-scaled and 64-bit datapaths are
    refused by name."""
    with tempfile.TemporaryDirectory() as d:
        for arch, typ, w in [("mi300x", "fp16", np.uint16), ("h100", "e4m3", np.uint8), ("mi250", "bf16", np.uint32),
                             ("mi300x", "e5m2fnuz", np.uint8)]:
            dp, a, b, c, want = cli_set(d, arch, typ)
            assert a.max() < (1 << (8 * np.dtype(w).itemsize)), (arch, typ)
            got = matcore.dot(dp, a.astype(w), b.astype(w), c.astype(np.uint32), threads=1)
            assert got.dtype == np.uint64
            assert np.array_equal(got, matcore.dot(dp, a, b, c)), (arch, typ)
            assert np.array_equal(got, want), (arch, typ)
            assert np.array_equal(matcore.dot(dp, a.astype(w), b.astype(w)), matcore.dot(dp, a, b))  # c = +0
            r = matcore.validate(dp, a.astype(w), b.astype(w), c.astype(np.uint32), want.astype(np.uint32))
            assert r["samples"] == 3000 and r["mismatches"] == 0
    dp = matcore.preset("h100", "e4m3")
    a = np.zeros((40, 32), dtype=np.uint16)
    a[17, 3] = 0x1FF  # 9 bits: not an e4m3 pattern
    with pytest.raises(ValueError, match=r"a\[547\] is not a e4m3"):
        matcore.dot(dp, a, np.zeros((40, 32), dtype=np.uint16))
    with pytest.raises(ValueError, match="same shape"):
        matcore.dot(dp, np.zeros((4, 32), dtype=np.uint8), np.zeros((4, 16), dtype=np.uint8))
    with pytest.raises(TypeError, match="uint64"):
        matcore.dot(matcore.preset("b200", "nvfp4"), np.zeros((2, 64), dtype=np.uint8), np.zeros((2, 64), dtype=np.uint8))
    with pytest.raises(TypeError, match="uint64"):
        matcore.dot(matcore.preset("mi250", "fp64"), np.zeros((2, 4), dtype=np.uint32), np.zeros((2, 4), dtype=np.uint32))
    with pytest.raises(TypeError, match="both"):  # one compact, one uint64
        matcore.dot(dp, np.zeros((2, 32), dtype=np.uint8), np.zeros((2, 32), dtype=np.uint64))
    with pytest.raises(ValueError, match="no block scales"):
        matcore.dot(dp, np.zeros((2, 32), dtype=np.uint8), np.zeros((2, 32), dtype=np.uint8), sa=np.zeros((2, 1), dtype=np.uint64))


def test_block_scaled_dot_is_the_cli_bit_for_bit():
    """dot(dp, a, b, c, sa=, sb=): the block scales as (N, K / scale_block) arrays, equal to
    matcore run over sa.txt / sb.txt; the spec's GST-FDPA example; bad scale arrays raise."""
    with tempfile.TemporaryDirectory() as d:
        for arch, typ in [("b200", "nvfp4"), ("rtxpro6000", "mxf8f6f4.e4m3.e2m1"), ("b200", "mxf4")]:
            cli("sample", "--arch", arch, "--type", typ, "--n", "500", "--out", d)
            cli("run", "--arch", arch, "--type", typ, "--a", d + "/a.txt", "--b", d + "/b.txt", "--c", d + "/c.txt",
                "--d", d + "/d.txt")
            dp = matcore.preset(arch, typ)
            a, b = read_hex(d + "/a.txt"), read_hex(d + "/b.txt")
            c, want = read_hex(d + "/c.txt")[:, 0], read_hex(d + "/d.txt")[:, 0]
            sa, sb = read_hex(d + "/sa.txt"), read_hex(d + "/sb.txt")
            assert np.array_equal(matcore.dot(dp, a, b, c, sa=sa, sb=sb), want), (arch, typ)
            assert matcore.validate(dp, a, b, c, want, sa=sa, sb=sb)["mismatches"] == 0
            assert matcore.validate(dp, a, b, c, want)["mismatches"] > 0  # unit scales differ
    dp = matcore.preset("b200", "mxf4nvf4.e8m0")
    a = np.zeros((1, 64), dtype=np.uint64)
    b = np.zeros((1, 64), dtype=np.uint64)
    a[0, [0, 16, 17, 18]] = [0xE, 0xA, 0xA, 0x9]   # -4, -1, -1, -0.5
    b[0, [0, 16, 17, 18]] = [0x6, 0x2, 0x1, 0x1]   # 4, 1, 0.5, 0.5
    sa = np.array([[127 + 11, 127, 127, 127]], dtype=np.uint64)
    sb = np.array([[127 + 8, 126, 127, 127]], dtype=np.uint64)
    assert matcore.dot(dp, a, b, np.array([0x4B000000], dtype=np.uint64), sa=sa, sb=sb)[0] == 0xBF600000  # -0.875
    rows, d = matcore.trace(dp, a[0], b[0], 0x4B000000, sa=sa[0], sb=sb[0])
    assert d == 0xBF600000
    assert ("grouper.e0", "19") in rows and ("grouper.e2", "-139 (e_zero)") in rows
    with pytest.raises(ValueError, match="sa must be"):
        matcore.dot(dp, a, b, None, sa=sa[:, :2], sb=sb)
    with pytest.raises(ValueError, match="no block scales"):
        matcore.dot(matcore.preset("b200", "e2m1"), a, b, None, sa=sa)


@pytest.mark.parametrize("gpu,fmt,arch,k", [("H100", "fp16", "h100", 16), ("A100", "bf16", "a100", 8),
                                            ("V100", "fp16", "v100", 4), ("B200", "E5M2", "b200", 32)])
def test_hardware_sets(gpu, fmt, arch, k):
    base = f"{SHARED}/hwdata/nvidia/{gpu}/{fmt}"
    if not os.path.isdir(base):
        pytest.skip(f"{base} not here")
    dp = matcore.preset(arch, fmt.lower(), "fp32", "mma.sync" if fmt.startswith("E") else "")
    a32 = read_hex(f"{base}/a_{gpu}_{fmt}.txt")
    b32 = read_hex(f"{base}/b_{gpu}_{fmt}.txt")
    c = read_hex(f"{base}/c_{gpu}_fp32.txt")[:, 0]
    d = read_hex(f"{base}/d_{gpu}_fp32.txt")[:, 0]
    assert a32.shape == (5000, k)
    # the files hold binary32 patterns of values exact in the input format
    a = matcore.encode(matcore.decode(a32, "binary32"), dp.a_fmt)
    b = matcore.encode(matcore.decode(b32, "binary32"), dp.b_fmt)
    r = matcore.validate(dp, a, b, c, d)
    assert r["mismatches"] == 0, r["first"]
    # and a one-field change of the datapath does not reproduce them
    assert dp["out_round"] == "rtz"
    wrong = dp.with_(out_round="rne")
    assert matcore.validate(dp=wrong, a=a, b=b, c=c, d=d)["mismatches"] > 0


def test_gemm_is_the_cli_bit_for_bit():
    rng = np.random.default_rng(3)
    C = rng.standard_normal((7, 5)).astype(np.float32).astype(np.float64)

    def write(path, M):
        with open(path, "w") as f:
            for row in M:
                f.write(" ".join("%08x" % v for v in np.asarray(row, dtype=np.float32).view(np.uint32)) + "\n")

    with tempfile.TemporaryDirectory() as d:
        for arch, typ in [("mi300x", "fp16"), ("h100", "bf16"), ("mi250", "bf16_1k"), ("a100", "tf32")]:
            dp = matcore.preset(arch, typ)
            # values of the input formats (the CLI takes a/b files exact in them)
            A = matcore.decode(matcore.encode(rng.standard_normal((7, 40)), dp.a_fmt), dp.a_fmt)
            B = matcore.decode(matcore.encode(rng.standard_normal((40, 5)), dp.b_fmt), dp.b_fmt)
            write(d + "/A.txt", A)
            write(d + "/B.txt", B)
            write(d + "/C.txt", C)
            out = cli("gemm", "--arch", arch, "--type", typ, "--A", d + "/A.txt", "--B", d + "/B.txt", "--C", d + "/C.txt")
            want = np.array([[int(w, 16) for w in line.split()] for line in out.splitlines() if not line.startswith("#")],
                            dtype=np.uint64)
            got = matcore.gemm(dp, A, B, C, bits=True)
            assert np.array_equal(got, want), (arch, typ)
            vals = matcore.gemm(dp, A, B, C)
            assert np.array_equal(matcore.encode(vals, dp.out_fmt), want)


def test_block_scaled_gemm_is_the_cli_bit_for_bit():
    """gemm(dp, A, B, C, sa=, sb=): A's row scales (M, K / block), B's column scales (N, K / block),
    equal to matcore gemm --SA/--SB; scales of the wrong shape are a ValueError."""
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as d:
        for arch, typ in [("b200", "mxf8f6f4.e4m3.e2m1"), ("mi355x", "scale.e5m2.e3m2"), ("rtxpro6000", "nvfp4")]:
            dp = matcore.preset(arch, typ)
            M, N, K = 5, 4, 2 * dp.k
            A = matcore.decode(matcore.encode(rng.standard_normal((M, K)), dp.a_fmt), dp.a_fmt)
            B = matcore.decode(matcore.encode(rng.standard_normal((K, N)), dp.b_fmt), dp.b_fmt)
            S = K // int(dp["scale_block"])
            sa = rng.integers(0x74, 0x8a, (M, S)).astype(np.uint64)
            sb = rng.integers(0x34, 0x48, (N, S)).astype(np.uint64) if typ == "nvfp4" else rng.integers(0x74, 0x8a, (N, S)).astype(np.uint64)
            for name, M_ in [("A", A), ("B", B)]:
                with open("%s/%s.txt" % (d, name), "w") as f:
                    for row in M_:
                        f.write(" ".join("%08x" % v for v in np.asarray(row, dtype=np.float32).view(np.uint32)) + "\n")
            for name, M_ in [("SA", sa), ("SB", sb)]:
                with open("%s/%s.txt" % (d, name), "w") as f:
                    for row in M_:
                        f.write(" ".join("%02x" % v for v in row) + "\n")
            out = cli("gemm", "--arch", arch, "--type", typ, "--A", d + "/A.txt", "--B", d + "/B.txt", "--SA", d + "/SA.txt",
                      "--SB", d + "/SB.txt")
            want = np.array([[int(w, 16) for w in line.split()] for line in out.splitlines() if not line.startswith("#")],
                            dtype=np.uint64)
            got = matcore.gemm(dp, A, B, None, bits=True, sa=sa, sb=sb)
            assert np.array_equal(got, want), (arch, typ)
            assert not np.array_equal(got, matcore.gemm(dp, A, B, None, bits=True)), (arch, typ)  # the scales count
            with pytest.raises(ValueError, match="sb must be"):
                matcore.gemm(dp, A, B, None, sa=sa, sb=np.ascontiguousarray(sb[:, :1]))


def test_mfma_is_the_cli_bit_for_bit():
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as d:
        # (blocks*m) x k times (blocks*k) x n: 4x4x4 with 16 blocks, 32x32x8 with one
        for arch, instr, ashape, bshape, fmt in [("mi300x", "v_mfma_f32_4x4x4f16", (64, 4), (64, 4), "binary16"),
                                                 ("mi250", "v_mfma_f32_32x32x8bf16_1k", (32, 8), (8, 32), "bf16")]:
            A = matcore.decode(matcore.encode(rng.standard_normal(ashape), fmt), fmt)
            B = matcore.decode(matcore.encode(rng.standard_normal(bshape), fmt), fmt)
            for name, M in (("A", A), ("B", B)):
                with open(f"{d}/{name}.txt", "w") as f:
                    for row in M:
                        f.write(" ".join("%08x" % v for v in np.asarray(row, dtype=np.float32).view(np.uint32)) + "\n")
            out = cli("mfma", "--arch", arch, "--instr", instr, "--A", d + "/A.txt", "--B", d + "/B.txt")
            want = np.array([[int(w, 16) for w in line.split()] for line in out.splitlines() if not line.startswith("#")],
                            dtype=np.uint64)
            got = matcore.mfma(arch, instr, A, B, bits=True)
            assert np.array_equal(got, want), (arch, instr)
    with pytest.raises(ValueError, match="A must be"):
        matcore.mfma("mi300x", "v_mfma_f32_4x4x4f16", np.zeros((3, 3)), np.zeros((3, 3)))
    with pytest.raises(ValueError):
        matcore.mfma("mi300x", "v_mfma_nothing", np.zeros((3, 3)), np.zeros((3, 3)))


def test_datapaths_fields_and_files():
    dp = matcore.preset("mi300x", "fp16")
    assert dp.name == "mi300x/fp16" and dp.k == 16 and dp["frac_bits"] == "24"
    f27 = dp.with_(frac_bits=27, prod_align="rne", c_drop_gap=None)
    assert f27["frac_bits"] == "27" and f27["prod_align"] == "rne" and f27["c_drop_gap"] == "none"
    assert dp["frac_bits"] == "24"  # unchanged
    with tempfile.TemporaryDirectory() as d:
        path = d + "/f27.toml"
        with open(path, "w") as f:
            f.write(f27.toml())
        back = matcore.load(path)
        assert back.fields() == f27.fields()
    assert "h100/e4m3+wgmma" in matcore.presets() and len(matcore.presets()) >= 80


def test_trace_names():
    dp = matcore.preset("mi300x", "fp16")
    a = matcore.encode(np.array([1.0, 2.0**-23]), "binary16")
    b = matcore.encode(np.array([1.0, 1.0]), "binary16")
    rows, d = matcore.trace(dp, a, b)
    names = [n for n, _ in rows]
    assert "aligner.e_max" in names and "cadd.s_acc" in names and names[-1] == "rounder.d"
    assert d == 0x3F800001


def test_trace_records_carry_the_bits():
    # h100 fp16 (F = 25 bits below e_max): 1*1 + 2^-20*1 + 3*(-1) + c = 1; e_max = 1 (the product
    # -3), every term aligned to 2^-24 units: the records hold those integers, the sum and d
    dp = matcore.preset("h100", "fp16")
    a = matcore.encode(np.array([1.0, 2.0**-20, 3.0]), "binary16")
    b = matcore.encode(np.array([1.0, 1.0, -1.0]), "binary16")
    rows, d = matcore.trace(dp, a, b, 0x3F800000, records=True)
    by = {r["signal"]: r for r in rows}
    assert by["aligner.e_max"]["bits"] == {"aligner.e_max": 1}
    assert by["aligner.v1"]["number"] == (1, 16, -24)           # 2^-20 = 16 * 2^-24
    assert by["aligner.v2"]["number"] == (-1, 3 << 24, -24)     # -3
    assert by["aligner.v2"]["bits"]["aligner.v2"] == (1 << 29) - (3 << 24)  # two's complement, 29 bits
    assert by["adder.s_acc"]["number"] == (-1, (1 << 24) - 16, -24)        # 1 + 2^-20 - 3 + 1
    assert by["adder.s_acc"]["widths"] == {"adder.s_acc": 35, "adder.s_acc_e": 32, "adder.s_acc_f": 32}
    assert by["rounder.d"]["bits"]["rounder.d"] == d == 0xBF7FFFF0
    assert [r["stage"] for r in rows][-1] == "rounder"
    svg = matcore.svg(dp, a, b, 0x3F800000)
    assert svg.startswith("<?xml") and "multiplier.p1" in svg and svg.rstrip().endswith("</svg>")


def test_sample_gives_the_bits_of_matcore_sample(tmp_path):
    # the same mt19937 streams as the command: the arrays hold the files' patterns, and the
    # model's d of them is what `matcore run` writes
    for arch, typ, n, strategy in (("mi300x", "fp16", 400, "expmant"), ("b200", "nvfp4", 60, "bits")):
        dp = matcore.preset(arch, typ)
        arrays = matcore.sample(dp, n, seed=5, strategy=strategy)
        out = tmp_path / typ
        cli("sample", "--arch", arch, "--type", typ, "--n", str(n), "--seed", "5", "--strategy", strategy,
            "--out", str(out))
        assert len(arrays) == (5 if typ == "nvfp4" else 3)
        for name, arr in zip(["a", "b", "c", "sa", "sb"], arrays):
            want = read_hex(out / (name + ".txt"))
            assert np.array_equal(arr, want.reshape(arr.shape)), name
        extra = ["--sa", str(out / "sa.txt"), "--sb", str(out / "sb.txt")] if len(arrays) == 5 else []
        cli("run", "--arch", arch, "--type", typ, "--a", str(out / "a.txt"), "--b", str(out / "b.txt"),
            "--c", str(out / "c.txt"), "--d", str(out / "d.txt"), *extra)
        d = read_hex(out / "d.txt").reshape(n)
        kw = {"sa": arrays[3], "sb": arrays[4]} if len(arrays) == 5 else {}
        assert np.array_equal(matcore.dot(dp, arrays[0], arrays[1], arrays[2], **kw), d)
    with pytest.raises(ValueError, match="strategy"):
        matcore.sample(matcore.preset("h100", "fp16"), 10, strategy="uniform")


def test_bad_arrays_raise_clear_errors():
    dp = matcore.preset("mi300x", "fp16")
    a = np.zeros((4, 16), dtype=np.uint64)
    with pytest.raises(TypeError, match="expected dtype uint64"):
        matcore.dot(dp, a.astype(np.int64), a)
    with pytest.raises(TypeError, match="numpy array"):
        matcore.dot(dp, [[1, 2]], a)
    with pytest.raises(ValueError, match="C-contiguous"):
        matcore.dot(dp, np.asfortranarray(np.zeros((4, 16), dtype=np.uint64)), a)
    with pytest.raises(ValueError, match="same shape"):
        matcore.dot(dp, a, np.zeros((4, 8), dtype=np.uint64))
    with pytest.raises(ValueError, match="not a binary16 bit pattern"):
        matcore.dot(dp, a + np.uint64(0x10000), a)
    with pytest.raises(ValueError, match="one value per sample"):
        matcore.dot(dp, a, a, np.zeros(3, dtype=np.uint64))
    with pytest.raises(ValueError, match="field 'frac_bits': must be an integer in 0..100"):
        dp.with_(frac_bits=200)
    with pytest.raises(ValueError, match="unknown architecture"):
        matcore.preset("mi999", "fp16")
    with pytest.raises(ValueError, match="A has 3 columns but B has 4 rows"):
        matcore.gemm(dp, np.zeros((2, 3)), np.zeros((4, 2)))
    with pytest.raises(TypeError, match="dtype float64"):
        matcore.gemm(dp, np.zeros((2, 3), dtype=np.float32), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="rounding must be one of"):
        matcore.encode(np.zeros(2), "binary16", "up")
    with pytest.raises(ValueError):
        matcore.load("/nonexistent.toml")


def test_exact_is_the_correctly_rounded_sum():
    """exact(dp, a, b, c): the exact a.b + c rounded once to binary32, checked against Python's
    Fraction arithmetic and a nearest-float search of its own (ties to even)."""
    from fractions import Fraction
    rng = np.random.default_rng(9)
    dp = matcore.preset("mi300x", "fp16")
    a = matcore.encode(rng.standard_normal((200, 16)) * 2.0 ** rng.integers(-12, 12, (200, 16)), "binary16")
    b = matcore.encode(rng.standard_normal((200, 16)), "binary16")
    c = matcore.encode(rng.standard_normal(200), "binary32")
    got = matcore.exact(dp, a, b, c)
    assert np.array_equal(matcore.exact_dot(dp, a, b, c), got)  # the same function under its other name
    A, B, C = matcore.decode(a, "binary16"), matcore.decode(b, "binary16"), matcore.decode(c, "binary32")

    def nearest32(x):
        f = np.float32(float(x))
        cands = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
        best = min(cands, key=lambda y: (abs(Fraction(float(y)) - x), int(np.array(y).view(np.uint32)) & 1))
        return int(np.array(best, dtype=np.float32).view(np.uint32))

    for i in range(200):
        s = sum(Fraction(float(A[i, j])) * Fraction(float(B[i, j])) for j in range(16)) + Fraction(float(C[i]))
        assert int(got[i]) == nearest32(s), i
    # the preset differs from it on some samples (truncating alignment), never by much
    d = matcore.dot(dp, a, b, c)
    assert 0 < np.count_nonzero(d != got) < 200


def test_explore_is_a_row_of_the_cli():
    dp = matcore.preset("h100", "fp16")
    r = matcore.explore(dp, 64, n=1500, dist="cancel", seed=3)
    with tempfile.TemporaryDirectory() as d:
        cli("explore", "--dp", "h100/fp16", "--k", "64", "--n", "1500", "--dist", "cancel", "--seed", "3", "--csv", d + "/e.csv")
        import csv
        with open(d + "/e.csv", newline="") as f:
            row = next(csv.DictReader(f))
    for key in ("rms_nw_u", "mean_nw_u", "correct_frac", "se_rms_nw_u"):
        assert abs(r[key] - float(row[key])) <= 1e-6 * max(1.0, abs(r[key])), key
    assert r["ulp_q50"] == int(row["ulp_q50"])
    with pytest.raises(ValueError, match="dist must be"):
        matcore.explore(dp, 16, dist="gaussian")


def test_cost_is_the_cli_cost():
    import shutil
    if shutil.which("yosys") is None:
        pytest.skip("yosys not installed (scripts/install-deps.sh)")
    r = matcore.cost(matcore.preset("v100", "fp16"))
    out = cli("cost", "--arch", "v100", "--type", "fp16")
    total = [line.split() for line in out.splitlines() if line.startswith("total")][0]
    assert int(total[1]) == r["cells"] and round(r["nand2"]) == int(total[2])
    assert r["depth"] == max(s["depth"] for s in r["stages"]) > 0
    assert r["nand2_per_product"] == pytest.approx(r["nand2"] / 4)


def test_npy_vector_files():
    """The binary form (docs/vector-format.md): NumPy reads what `sample --npy` and `run`
    write, the module's dot on those arrays gives run's d, and arrays NumPy writes are
    validated by the command line."""
    dp = matcore.preset("mi300x", "fp16")
    with tempfile.TemporaryDirectory() as d:
        cli("sample", "--arch", "mi300x", "--type", "fp16", "--n", "2000", "--seed", "4", "--npy", "--out", d)
        cli("run", "--arch", "mi300x", "--type", "fp16", "--a", d + "/a.npy", "--b", d + "/b.npy", "--c", d + "/c.npy",
            "--d", d + "/d.npy")
        a, b, c, dd = (np.load(os.path.join(d, f + ".npy"), mmap_mode="r") for f in "abcd")
        assert a.dtype == np.uint16 and a.shape == (2000, 16) and c.dtype == np.uint32 and dd.shape == (2000,)
        got = matcore.dot(dp, a.astype(np.uint64), b.astype(np.uint64), c.astype(np.uint64))
        assert np.array_equal(got, dd.astype(np.uint64))
        bad = np.array(dd, dtype=np.uint32)
        bad[7] ^= 1
        np.save(os.path.join(d, "bad.npy"), bad)
        r = subprocess.run([CLI, "validate", "--arch", "mi300x", "--type", "fp16", "--a", d + "/a.npy", "--b", d + "/b.npy",
                            "--c", d + "/c.npy", "--d", d + "/bad.npy"], capture_output=True, text=True)
        assert r.returncode == 1 and "mismatch sample 7 (a line 8, d line 8)" in r.stdout
        assert "samples=2000 mismatches=1" in r.stdout
