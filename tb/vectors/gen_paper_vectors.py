#!/usr/bin/env python3
"""Generate tb/vectors/paper_cdna{1,2,3}.pvt from sections 4.1-4.3 of
"Accurate Models of AMD Matrix Cores" (shared/spec/amd-cdna-matrix-cores-paper.txt).

Format: docs/paper-vector-table.md.  Every line is one concrete input/output pair; every sweep
and permutation the paper names is expanded here.  Lines the paper does not pin down exactly
(unrepresentable operands, signs or results not stated, internal inconsistencies) go into the
block after the `# AMBIGUOUS` line at the end of each file, each with the reason.

Run:  python3 gen_paper_vectors.py           (writes the three .pvt files next to this script)
      python3 gen_paper_vectors.py --check   (also re-parses the files, checks that every
                                              operand is representable / splittable, and runs a
                                              small exact reference model of the paper's
                                              algorithms; prints disagreements)

Pure python, exact rational arithmetic (fractions.Fraction), no host floating point.

Modules (all in this folder): this file is the entry point and holds the --check reference model;
paper_vectors_sections.py holds the vectors of each paper subsection (gen_cdna1/2/3);
paper_vectors_common.py holds the Table class, expression helpers, formats and value parser.
"""
import os
import re
import sys
from fractions import Fraction as F

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:  # the helper modules live next to this script
    sys.path.insert(0, HERE)

from paper_vectors_common import (DEFAULT_K, FMT, FP8_PAIRS, IN_FMT, INF,  # noqa: E402
                                  Special, ilog2, parse_value, representable, split_product)
from paper_vectors_sections import gen_cdna1, gen_cdna2, gen_cdna3  # noqa: E402


# ============================================================================================
# --check: parse the files back, check representability, run a reference model
# ============================================================================================


def rne(x, emin=-126, p=24, emax_val=None):
    if x == 0:
        return F(0)
    q = max(ilog2(x), emin) - (p - 1)
    s = x / F(2) ** q
    n = s.numerator // s.denominator
    r = s - n
    if r > F(1, 2) or (r == F(1, 2) and n % 2 == 1):
        n += 1
    v = n * F(2) ** q
    if abs(v) >= F(2) ** 128:
        return Special(INF, v < 0)
    return v


def rd(x, q):
    s = x / F(2) ** q
    return F(s.numerator // s.denominator) * F(2) ** q


def trunc(x, q):
    s = x / F(2) ** q
    n = abs(s.numerator) // s.denominator
    return F(n if s >= 0 else -n) * F(2) ** q


def _sub(x, fmt):
    return x != 0 and ilog2(x) < FMT[fmt][1]


def prod_exp(a, b, fa, fb):
    ea = max(ilog2(a), FMT[fa][1])
    eb = max(ilog2(b), FMT[fb][1])
    return ea + eb


def model(fam, typ, c, prods):
    """prods: list of (index, value, exponent) nonzero products. Returns d or None (no model)."""
    k = max([i for i, _, _ in prods], default=1)
    if fam == "cdna1":
        n = {"fp32": 1, "fp16": 4, "bf16": 2}[typ]
        acc = c
        for blk in range(0, max(k, 1), n):
            s = sum(v for i, v, _ in prods if blk < i <= blk + n)
            if typ == "fp32":
                acc = rne(acc + s)
            else:
                acc = rne(acc + s) if blk + n < k else acc + s
        return rne(acc) if not isinstance(acc, Special) else acc
    if fam == "cdna2":
        if typ == "fp32":
            return model("cdna1", "fp32", c, prods)
        if typ not in ("fp16", "bf16_1k"):
            return None

        def fz(x):
            x = rne(x)
            return F(0) if (not isinstance(x, Special) and abs(x) < F(2) ** -126) else x
        pv = {i: fz(v) for i, v, _ in prods}
        acc = fz(c)
        for blk in range(0, max(k, 4), 4):
            g = [pv.get(blk + j, F(0)) for j in range(1, 5)]
            acc = fz(acc + fz(fz(g[0] + g[1]) + fz(g[2] + g[3])))
        return acc
    if fam == "cdna3" and typ in ("fp16", "bf16"):
        if k > 8 or any(abs(v) >= F(2) ** 128 for _, v, _ in prods):
            return None
        groups = [prods]
    elif fam == "cdna3" and typ in FP8_PAIRS:
        if k > 16:
            return None
        groups = [[x for x in prods if x[0] % 2 == 1], [x for x in prods if x[0] % 2 == 0]]
    else:
        return None
    sums, exps = [], []
    for g in groups:
        if not g:
            continue
        em = max(e for _, _, e in g)
        sums.append(sum(trunc(v, em - 24) for _, v, _ in g))
        exps.append(em)
    if exps:
        emax = max(exps)
        sp = sum(rd(s, emax - 24) for s in sums)  # (exact for the single-group case)
    else:
        emax, sp = None, F(0)
    ec = -126 if c == 0 else max(ilog2(c), -126)
    if emax is not None and emax >= ec:
        if typ in FP8_PAIRS and emax - ec > 25:
            sc = F(0)
        else:
            sc = rd(c, emax - 24)
        return rne(sp + sc)
    spp = rd(sp, ec - 32)
    sacc = spp + c
    if sacc == 0:
        return F(0)
    en = max(ilog2(sacc), -126)
    sacc = rd(sacc, en - 31)
    return rne(sacc)


def _parse_ctx(s, line):
    """An `@ fams type [k=N]` line -> (list of families, type, k or None)."""
    parts = s[1:].split()
    fams, typ = parts[0].split(","), parts[1]
    k = None
    for w in parts[2:]:
        assert w.startswith("k="), line
        k = int(w[2:])
    assert typ in IN_FMT, typ
    return (fams, typ, k)


def _check_operands(ops, typ, kk, problems):
    """Parse and check the operands of one vector; append problems. Returns (c, prods, special)
    with prods {index: (value, exponent, subnormal operand)} and special True if an operand is
    Inf/NaN."""
    fa, fb = IN_FMT[typ]
    c = F(0)
    prods = {}
    special = False
    abv = {}
    for name, val in ops.items():
        if name == "c":
            c = parse_value(val, "fp32")
            if isinstance(c, Special):
                special = True
            elif not representable(c, "fp32"):
                problems.append("c not fp32")
            continue
        m = re.match(r"([abp])(\d+)$", name)
        assert m, name
        i = int(m.group(2))
        if i > kk:
            problems.append("%s beyond k=%d" % (name, kk))
        fmt = fa if m.group(1) == "a" else fb
        v = parse_value(val, fmt if m.group(1) != "p" else "fp32")
        if isinstance(v, Special):
            special = True
            abv[name] = v
            continue
        if m.group(1) == "p":
            sp = split_product(v, typ)
            if sp is None:
                problems.append("%s=%s not splittable in %s" % (name, val, typ))
                prods[i] = (v, ilog2(v) if v else 0, False)
            else:
                prods[i] = (v, prod_exp(sp[0], sp[1], fa, fb) if v else 0,
                            _sub(sp[0], fa) or _sub(sp[1], fb))
        else:
            if typ != "xf32" and not representable(v, fmt):
                problems.append("%s=%s not representable in %s" % (name, val, fmt))
            abv[name] = v
    _pair_products(abv, typ, prods, problems)
    return c, prods, special


def _pair_products(abv, typ, prods, problems):
    """Form the products a_i*b_i of the finite a/b operands in abv into prods."""
    fa, fb = IN_FMT[typ]
    for i in range(1, 33):
        if ("a%d" % i in abv) != ("b%d" % i in abv):
            problems.append("a%d/b%d unpaired" % (i, i))
        if "a%d" % i in abv and "b%d" % i in abv:
            a, b = abv["a%d" % i], abv["b%d" % i]
            if isinstance(a, Special) or isinstance(b, Special):
                continue
            if typ == "xf32":
                a = trunc(a, ilog2(a) - 10) if a else a
                b = trunc(b, ilog2(b) - 10) if b else b
            prods[i] = (a * b, prod_exp(a, b, fa, fb) if a * b else 0,
                        _sub(a, fa) or _sub(b, fb))


def _check_model(fams, typ, c, prods, d, problems):
    """Run the reference model of every family on the vector; append disagreements."""
    for fam in fams:
        # CDNA2 flushes subnormal inputs (§4.2.1)
        pl = [(i, F(0) if (s_ and fam == "cdna2" and typ != "fp32") else v, e)
              for i, (v, e, s_) in sorted(prods.items()) if v != 0]
        pl = [x for x in pl if x[1] != 0]
        try:
            r = model(fam, typ, c, pl)
        except Exception as ex:  # pragma: no cover
            r = "model error %r" % ex
        if r is None:
            continue
        if isinstance(r, Special) or r != d:
            problems.append("model(%s) gives %r" % (fam, r))


def check_vector(s, line, ctx):
    """Check one vector line `s` (comment stripped) under context ctx; returns the problems."""
    lhs, rhs = s.split("=>")
    rhs = rhs.strip()
    assert rhs.startswith("d="), line
    fams, typ, k = ctx
    kk = k or min(DEFAULT_K[(f, typ)] for f in fams)
    ops = {}
    for w in lhs.split():
        name, val = w.split("=", 1)
        assert name not in ops, line
        ops[name] = val
    d = parse_value(rhs[2:], "fp32")
    problems = []
    c, prods, special = _check_operands(ops, typ, kk, problems)
    special = special or not isinstance(d, F)
    if isinstance(d, F) and not representable(d, "fp32"):
        problems.append("d not fp32")
    if not special and not problems:
        _check_model(fams, typ, c, prods, d, problems)
    return problems


def check_file(path, fam_of_file):
    bad = 0
    n = 0
    in_amb = False
    ctx = None
    for lineno, line in enumerate(open(path), 1):
        s = line.split("#", 1)[0].strip() if not line.startswith("#") else ""
        if line.strip() == "# AMBIGUOUS":
            in_amb = True
        if not s:
            continue
        if s.startswith("@"):
            ctx = _parse_ctx(s, line)
            continue
        n += 1
        problems = check_vector(s, line, ctx)
        if problems:
            bad += 1
            print("%s:%d%s: %s\n    %s" % (os.path.basename(path), lineno,
                                         " [AMBIGUOUS]" if in_amb else "", "; ".join(problems),
                                         line.rstrip()))
    return n, bad


def main():
    tables = {"paper_cdna1.pvt": gen_cdna1(), "paper_cdna2.pvt": gen_cdna2(),
              "paper_cdna3.pvt": gen_cdna3()}
    for name, t in tables.items():
        with open(os.path.join(HERE, name), "w") as f:
            f.write(t.text())
        m, a = t.counts()
        print("%s: %d vectors (%d main, %d ambiguous)" % (name, m + a, m, a))
    if "--check" in sys.argv:
        for name in tables:
            n, bad = check_file(os.path.join(HERE, name), None)
            print("check %s: %d vectors, %d flagged" % (name, n, bad))


if __name__ == "__main__":
    main()
