#!/usr/bin/env python3
"""The project's size rules: no source file over 800 lines, no function over 100.

    scripts/check_sizes.py [REPO]     exit 0 when every tracked source keeps them, 1 otherwise

Source files: the C++, CUDA, HIP, Python, shell and Verilog files git tracks. Python functions
are measured from their syntax tree; C++ functions (lambdas inside them counted with them) from
universal-ctags' end lines (Debian: universal-ctags). Without ctags the C++ function check is
skipped with a message, and the exit status says only what was checked.
"""
import ast
import os
import shutil
import subprocess
import sys

MAX_FILE, MAX_FUNCTION = 800, 100
CXX = (".cpp", ".hpp", ".h", ".cc", ".cu", ".hip")
SOURCES = CXX + (".py", ".sh", ".sv", ".v")


FOLDERS = ("core", "cli", "sc", "rtl_model", "hip_ref", "tb", "python", "apps", "bench", "fuzz", "scripts", "web")


def tracked(repo):
    """The sources git tracks; without git (an exported tree), those of the project's folders."""
    r = subprocess.run(["git", "-C", repo, "ls-files"], capture_output=True, text=True)
    if r.returncode == 0 and r.stdout:
        return [f for f in r.stdout.split("\n") if f.endswith(SOURCES) and os.path.exists(os.path.join(repo, f))]
    files = []
    for top in FOLDERS:
        for d, _, names in os.walk(os.path.join(repo, top)):
            files += [os.path.relpath(os.path.join(d, n), repo) for n in names if n.endswith(SOURCES)]
    return sorted(files)


def long_python_functions(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = n.end_lineno - n.lineno + 1
            if length > MAX_FUNCTION:
                yield n.name, n.lineno, length


def long_cxx_functions(repo, files):
    ctags = shutil.which("ctags")
    if not ctags or b"Universal Ctags" not in subprocess.run([ctags, "--version"], capture_output=True).stdout:
        print("check_sizes: universal-ctags not found: the C++ function lengths are not checked")
        return
    cmd = [ctags, "--language-force=C++", "--fields=+neK", "--c++-kinds=+fl", "--extras=-q", "-f", "-"] + files
    out = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, check=True).stdout
    for line in out.split("\n"):
        cols = line.split("\t")
        fields = dict(c.split(":", 1) for c in cols[3:] if ":" in c)
        if "function" not in cols[3:] or "end" not in fields:
            continue
        length = int(fields["end"]) - int(fields["line"]) + 1
        if length > MAX_FUNCTION:
            yield cols[1], cols[0], int(fields["line"]), length


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = tracked(repo)
    bad = []
    for f in files:
        with open(os.path.join(repo, f), encoding="utf-8", errors="replace") as h:
            n = sum(1 for _ in h)
        if n > MAX_FILE:
            bad.append(f"{f}: {n} lines (the limit is {MAX_FILE})")
        if f.endswith(".py"):
            for name, line, length in long_python_functions(os.path.join(repo, f)):
                bad.append(f"{f}:{line}: function {name} is {length} lines (the limit is {MAX_FUNCTION})")
    for f, name, line, length in long_cxx_functions(repo, [f for f in files if f.endswith(CXX)]):
        bad.append(f"{f}:{line}: function {name} is {length} lines (the limit is {MAX_FUNCTION})")
    for b in bad:
        print(b)
    print(f"check_sizes: {len(files)} source files, {len(bad)} over the limits")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
