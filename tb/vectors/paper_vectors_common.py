"""Shared pieces of tb/vectors/gen_paper_vectors.py (the entry point, run that one): the .pvt
expression helpers, the Table that collects a file's lines, the input formats and their
representability / product-splitting rules, the .pvt value parser and the default k per
architecture and type.

Pure python, exact rational arithmetic (fractions.Fraction), no host floating point.
"""
import itertools
import re
from fractions import Fraction as F

# --------------------------------------------------------------------------------------------
# expression helpers (strings in the .pvt expression syntax)
# --------------------------------------------------------------------------------------------


def p2(e):
    return "1" if e == 0 else "2^%d" % e


def neg(s):
    """Negate an expression string."""
    if s in ("0",):
        return "-0"
    if s.startswith("-(") and s.endswith(")") and _balanced(s[2:-1]):
        return s[2:-1]
    if s.startswith("-") and not _has_top_addsub(s[1:]):
        return s[1:]
    if _has_top_addsub(s):
        return "-(%s)" % s
    return "-" + s


def _balanced(s):
    d = 0
    for ch in s:
        d += ch == "("
        d -= ch == ")"
        if d < 0:
            return False
    return d == 0


def _has_top_addsub(s):
    d = 0
    for i, ch in enumerate(s):
        if ch == "(":
            d += 1
        elif ch == ")":
            d -= 1
        elif ch in "+-" and d == 0 and i > 0 and s[i - 1] != "^":
            return True
    return False


def sgn(s, negative):
    return neg(s) if negative else s


X = "2^-23+2^-24"  # the paper's recurring 2^-23+2^-24 (= 1.5*2^-23)

# --------------------------------------------------------------------------------------------
# output collection
# --------------------------------------------------------------------------------------------

SLOT_ORDER = ["c"] + ["%s%d" % (x, i) for i in range(1, 33) for x in ("a", "b", "p")]


class Table:
    def __init__(self, title):
        self.main = []
        self.amb = []
        self.title = title
        self._ctx = {"main": None, "amb": None}

    def _buf(self, amb):
        return self.amb if amb else self.main

    def comment(self, text, amb=False):
        for ln in text.strip("\n").split("\n"):
            self._buf(amb).append("# " + ln if ln else "#")

    def ctx(self, fams, typ, k=None, amb=False):
        line = "@ %s %s" % (fams, typ) + (" k=%d" % k if k else "")
        self._buf(amb).append(line)
        self._ctx["amb" if amb else "main"] = line

    def vec(self, ops, d, amb=False, note=None):
        """ops: dict slot->expr. Zero products (p=0) are omitted; c=0 is omitted."""
        words = []
        for slot in SLOT_ORDER:
            if slot in ops:
                v = ops[slot]
                if slot.startswith("p") and v in ("0",):
                    continue
                if slot == "c" and v == "0":
                    continue
                words.append("%s=%s" % (slot, v))
        assert set(ops) <= set(SLOT_ORDER), ops
        line = "%s => d=%s" % (" ".join(words), d)
        if note:  # per-vector comment (swept value / assignment) on its own line
            self._buf(amb).append("#   " + note)
        # A product that no pair of inputs of this type can form is not a hardware vector:
        # keep it as a comment so that every case line of the table can run on a device.
        typ = (self._ctx["amb" if amb else "main"] or "@ - fp32").split()[2]
        for slot, v in ops.items():
            if slot.startswith("p") and v != "0":
                pv = parse_value(v, IN_FMT[typ][0])
                if not isinstance(pv, Special) and split_product(pv, typ) is None:
                    self._buf(amb).append("#! not expressible as %s inputs (%s): %s" % (typ, slot, line))
                    return
        self._buf(amb).append(line)

    def blank(self, amb=False):
        self._buf(amb).append("")

    def text(self):
        out = list(self.title) + [""] + self.main
        out += ["", "# AMBIGUOUS"] + self.amb
        return "\n".join(out).rstrip("\n") + "\n"

    def counts(self):
        n_main = sum(1 for l in self.main if "=>" in l and not l.startswith("#"))
        n_amb = sum(1 for l in self.amb if "=>" in l and not l.startswith("#"))
        return n_main, n_amb


def perms(values, slots):
    """Distinct assignments of `values` to `slots` (duplicates in values collapse)."""
    seen = []
    for perm in itertools.permutations(values):
        if perm not in seen:
            seen.append(perm)
    return [dict(zip(slots, perm)) for perm in seen]


def describe(assign):
    return ", ".join("%s=%s" % (k, v) for k, v in assign.items())


# --------------------------------------------------------------------------------------------
# representability (used to route lines, and by --check)
# --------------------------------------------------------------------------------------------

# name: (precision p incl. hidden bit, emin, max)
FMT = {
    "fp32": (24, -126, (2 - F(1, 2**23)) * F(2) ** 127),
    "fp16": (11, -14, F(65504)),
    "bf16": (8, -126, (2 - F(1, 2**7)) * F(2) ** 127),
    "e4m3fnuz": (4, -7, F(240)),
    "e5m2fnuz": (3, -15, F(57344)),
}
IN_FMT = {  # pvt type -> (a format, b format)
    "fp32": ("fp32", "fp32"),
    "xf32": ("fp32", "fp32"),
    "fp16": ("fp16", "fp16"),
    "bf16": ("bf16", "bf16"),
    "bf16_1k": ("bf16", "bf16"),
    "e4m3fnuz": ("e4m3fnuz", "e4m3fnuz"),
    "e5m2fnuz": ("e5m2fnuz", "e5m2fnuz"),
    "e4m3fnuz,e5m2fnuz": ("e4m3fnuz", "e5m2fnuz"),
    "e5m2fnuz,e4m3fnuz": ("e5m2fnuz", "e4m3fnuz"),
}
FP8_PAIRS = ["e4m3fnuz", "e5m2fnuz", "e4m3fnuz,e5m2fnuz", "e5m2fnuz,e4m3fnuz"]


def ilog2(x):
    """floor(log2(|x|)) for a nonzero Fraction."""
    x = abs(x)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if F(2) ** e > x:
        e -= 1
    if F(2) ** (e + 1) <= x:
        e += 1
    return e


def representable(x, fmt):
    if x == 0:
        return True
    p, emin, mx = FMT[fmt]
    if abs(x) > mx:
        return False
    q = max(ilog2(x), emin) - (p - 1)
    return (x / F(2) ** q).denominator == 1


def split_product(v, typ):
    """Find a (in A format) * 2^eb (in B format) == v; None if impossible."""
    fa, fb = IN_FMT[typ]
    if v == 0:
        return (F(0), F(1))
    best = None
    for eb in range(-160, 160):
        b = F(2) ** eb
        if representable(b, fb) and representable(v / b, fa):
            a = v / b
            # prefer a split with both operands normal (a subnormal operand moves the product's
            # exponent above its value, which changes CDNA3 alignment), then the most balanced
            key = (ilog2(a) < FMT[fa][1]) + (eb < FMT[fb][1]), abs(ilog2(a) - eb)
            if best is None or key < best[0]:
                best = (key, (a, b))
    if best:
        return best[1]
    # No split with a power of two: try a = d*2^x, b = (m/d)*2^y for the odd divisors d of the
    # odd part m of v (e.g. S(25,36) = 4095*2^-36 = (63*2^-18)*(65*2^-18)); the harness
    # (core/src/table.cpp) searches the same way.
    num, den = abs(v.numerator), v.denominator
    m = num
    while m % 2 == 0:
        m //= 2
    if m > 1 << 40:
        return None
    sign = -1 if v < 0 else 1
    for d in range(3, int(m ** 0.5) + 1, 2):
        if m % d:
            continue
        for x in range(-160, 160):
            a = F(d) * F(2) ** x
            b = v / a * sign
            if representable(a, fa) and representable(b, fb) and ilog2(a) >= FMT[fa][1] and ilog2(b) >= FMT[fb][1]:
                return (a * sign, b)
    return None


# --------------------------------------------------------------------------------------------
# expression parser (the .pvt value syntax)
# --------------------------------------------------------------------------------------------

INF = "inf"
NAN = "nan"


class Special:
    def __init__(self, kind, neg=False):
        self.kind, self.neg = kind, neg

    def __repr__(self):
        return ("-" if self.neg else "") + self.kind


def parse_value(s, fmt):
    s = s.strip()
    low = s.lower()
    if low in ("inf", "+inf"):
        return Special(INF)
    if low == "-inf":
        return Special(INF, True)
    if low in ("nan", "+nan"):
        return Special(NAN)
    if low == "-nan":
        return Special(NAN, True)
    if low in ("max", "-max"):
        v = FMT[fmt][2]
        return -v if low.startswith("-") else v
    if low.startswith("0x"):
        raise ValueError("hex not used here")
    toks = re.findall(r"S\(\s*\d+\s*,\s*\d+\s*\)|\d+\.\d+|\d+|\^|\*|\+|-|\(|\)", s)
    if "".join(toks) != s.replace(" ", ""):
        raise ValueError("bad expression %r" % s)
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else None

    def take():
        t = toks[pos[0]]
        pos[0] += 1
        return t

    def expr():
        v = term()
        while peek() in ("+", "-"):
            op = take()
            t = term()
            v = v + t if op == "+" else v - t
        return v

    def term():
        if peek() == "-":
            take()
            return -term()
        v = factor()
        while peek() == "*":
            take()
            v = v * factor()
        return v

    def factor():
        t = take()
        if t == "(":
            v = expr()
            assert take() == ")"
            return v
        m = re.match(r"S\(\s*(\d+)\s*,\s*(\d+)\s*\)", t)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            assert lo <= hi
            return sum(F(1, 2**l) for l in range(lo, hi + 1))
        if re.match(r"\d+\.\d+$", t):
            base = F(t)
        else:
            base = F(int(t))
        if peek() == "^":
            take()
            sign = 1
            if peek() == "-":
                take()
                sign = -1
            e = int(take())
            return base ** (sign * e)
        return base

    v = expr()
    assert pos[0] == len(toks), s
    return v


DEFAULT_K = {
    ("cdna1", "fp32"): 4, ("cdna1", "fp16"): 16, ("cdna1", "bf16"): 8,
    ("cdna2", "fp32"): 4, ("cdna2", "fp16"): 16, ("cdna2", "bf16"): 8, ("cdna2", "bf16_1k"): 16,
    ("cdna3", "fp32"): 4, ("cdna3", "fp16"): 16, ("cdna3", "bf16"): 16, ("cdna3", "xf32"): 8,
}
for _p in FP8_PAIRS:
    DEFAULT_K[("cdna3", _p)] = 32

