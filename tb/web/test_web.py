"""The web page (web/, docs/web.md) in a real browser: headless Chromium driven by selenium.

Run by ctest (web.browser) after `make web`:
  MATCORE_WEB=build-web MATCORE_CLI=build/matcore python3 -m pytest tb/web
Every d and trace the page shows is compared with the native command line on the same inputs.
"""
import functools
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

import pytest

webdriver = pytest.importorskip("selenium.webdriver")

WEB = os.environ.get("MATCORE_WEB", "build-web")
CLI = os.environ.get("MATCORE_CLI", "build/matcore")
# samples per preset in the comparison with the CLI (half exponent-mantissa, half random bits)
SAMPLES = int(os.environ.get("MATCORE_WEB_SAMPLES", "1000"))


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site():
    assert os.path.exists(os.path.join(WEB, "index.html")), "run make web first"
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=WEB))
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield "http://127.0.0.1:%d/index.html" % srv.server_address[1]
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def browser():
    opts = webdriver.ChromeOptions()
    for a in ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"]:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(options=opts)
    drv.set_script_timeout(600)
    yield drv
    drv.quit()


def load(browser, url):
    browser.get(url)
    for _ in range(300):
        if browser.execute_script("return document.body.dataset.ready"):
            return
        time.sleep(0.05)
    raise AssertionError("the page did not become ready: " + url)


def text(browser, el_id):
    return browser.find_element("id", el_id).text


def cli(*args):
    r = subprocess.run([CLI] + list(args), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def cli_d(*args):
    """The d pattern `matcore dot` prints ("d = 0x3f800001  1.0000001...")."""
    line = [x for x in cli("dot", *args).splitlines() if x.startswith("d = 0x")][0]
    return line.split()[2]


def test_loads_without_console_errors(browser, site):
    load(browser, site)
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == []
    # the default design: mi300x fp16, 1 + 2^-24 + 2^-24 (the extra alignment bit of section 4.3.1)
    assert text(browser, "d-hex") == "0x3f800001"
    assert text(browser, "d-hex") == cli_d("--arch", "mi300x", "--type", "fp16", "--a", "1,2^-24,2^-24", "--b", "1,1,1")
    assert len(browser.execute_script("return JSON.parse(matcore.lessons())")) >= 100


def catalog(browser, site):
    load(browser, site)
    return json.loads(browser.execute_script("return matcore.catalog()"))


def run_in_page(browser, design, files):
    req = dict(design)
    req.update(files)
    res = json.loads(browser.execute_script("return matcore.run_vectors(arguments[0])", req))
    assert res["ok"], res.get("error")
    return res["d"]


def sample_sets(arch, typ, out, tmp):
    """SAMPLES samples of the preset from `matcore sample` and their d from `matcore run`."""
    sets = []
    for strategy, seed in (("expmant", 11), ("bits", 12)):
        d = os.path.join(tmp, "%s_%s_%s_%s" % (arch, typ.replace(",", "_"), out or "def", strategy))
        dp = ["--arch", arch, "--type", typ] + (["--out", out] if out else [])
        cli("sample", "--arch", arch, "--type", typ, "--n", str(SAMPLES // 2), "--seed", str(seed),
            "--strategy", strategy, "--out", d, "--threads", "1")
        cli("run", *dp, "--a", d + "/a.txt", "--b", d + "/b.txt", "--c", d + "/c.txt", "--d", d + "/d.txt",
            "--threads", "1")
        files = {}
        for f in ("a", "b", "c", "sa", "sb"):
            p = os.path.join(d, f + ".txt")
            files[f] = open(p).read() if os.path.exists(p) else ""
        sets.append((files, [x for x in open(d + "/d.txt").read().splitlines() if not x.startswith("#")]))
    return sets


def test_every_preset_gives_the_cli_d(browser, site):
    """1000 random samples of every preset (and binary16 output) through the page's core = `matcore run`."""
    cat = catalog(browser, site)
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for a in cat["archs"]:
            for t in a["types"]:
                for out in t["outs"]:
                    design = {"arch": a["arch"], "type": t["type"], "out": out}
                    for files, want in sample_sets(a["arch"], t["type"], out, tmp):
                        got = run_in_page(browser, design, files).splitlines()
                        assert got == want, (design, [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w][:3])
                        checked += len(got)
    assert checked >= 300 * SAMPLES


def evaluate(browser, req):
    res = json.loads(browser.execute_script("return matcore.evaluate(arguments[0])", req))
    assert res["ok"], res.get("error")
    return res


def cli_trace_rows(args):
    """The stage rows of `matcore dot --trace` (between the pipeline line and d)."""
    lines = cli("dot", "--trace", *args).splitlines()
    start = [i for i, x in enumerate(lines) if x.startswith("pipeline:")][0] + 1
    end = [i for i, x in enumerate(lines) if x.startswith("d = 0x")][0]
    return lines[start:end]


def test_traces_equal_the_cli(browser, site):
    """Random operands of every architecture's types (the page's random button: matcore sample's
    streams) give the trace `matcore dot --trace` prints, row for row, and the same d."""
    cat = catalog(browser, site)
    checked = 0
    for a in cat["archs"]:
        types = a["types"]
        for t in [types[0], types[len(types) // 2], types[-1]]:
            for seed in (1, 2):
                design = {"arch": a["arch"], "type": t["type"], "seed": str(seed)}
                ops = json.loads(browser.execute_script("return matcore.random_operands(arguments[0])", design))
                assert ops["ok"], ops
                req = dict(design, a=ops["a"], b=ops["b"], c=ops["c"], sa=ops.get("sa", ""), sb=ops.get("sb", ""))
                res = evaluate(browser, req)
                args = ["--arch", a["arch"], "--type", t["type"], "--a", ops["a"], "--b", ops["b"], "--c", ops["c"]]
                if ops.get("sa"):
                    args += ["--sa", ops["sa"], "--sb", ops["sb"]]
                assert res["trace"].splitlines() == cli_trace_rows(args), (a["arch"], t["type"], seed)
                assert "0x" + res["designs"][0]["d_hex"] == cli_d(*args)
                checked += 1
    assert checked >= 100


def test_specials_and_errors(browser, site):
    """NaN/Inf operands give the CLI's d; bad operands an error in the page, never a d."""
    load(browser, site + "?arch=h100&type=fp16&a=inf,1&b=1,-inf&c=0")
    assert text(browser, "d-hex") == cli_d("--arch", "h100", "--type", "fp16", "--a", "inf,1", "--b", "1,-inf")
    load(browser, site + "?arch=mi300x&type=fp16&a=nan,1&b=1,1&c=1")
    assert text(browser, "d-hex") == cli_d("--arch", "mi300x", "--type", "fp16", "--a", "nan,1", "--b", "1,1", "--c", "1")
    load(browser, site + "?arch=mi300x&type=fp16&a=1,2&b=1&c=0")
    assert text(browser, "d-hex") == ""
    assert text(browser, "error") == "--a has 2 values but --b has 1"
    assert browser.find_element("id", "picture").text == ""  # no stale picture beside an error
    load(browser, site + "?arch=nosuch&type=fp16&a=1&b=1")
    assert "nosuch" in text(browser, "error") and text(browser, "d-hex") == ""
    # '+' typed into a link is the value syntax's plus, not a space
    load(browser, site + "?arch=mi300x&type=fp16&a=1+2^-10,1&b=1,1")
    assert text(browser, "d-hex") == cli_d("--arch", "mi300x", "--type", "fp16", "--a", "1+2^-10,1", "--b", "1,1")
    # a name that holds markup is text, never markup
    load(browser, site + "?arch=mi300x&type=fp16&a=1&b=1&arch2=mi300x&type2=fp16&set2=arch=<b id=injected>x</b>")
    assert browser.find_elements("id", "injected") == []
    many = ",".join(["1"] * 1025)
    load(browser, site + "?arch=mi300x&type=fp16&a=%s&b=%s" % (many, many))
    assert "at most 1024 products" in text(browser, "error") and text(browser, "d-hex") == ""
    load(browser, site + "?arch=mi300x&type=fp16&a=1&b=1&set=frac_bits=999")
    assert "frac_bits" in text(browser, "error")
    assert text(browser, "d-hex") == ""


def test_editing_a_field(browser, site):
    """A field control writes --set, the URL keeps it, d follows `matcore dot --set`."""
    ops = ["--a", "1,2^-24,2^-24", "--b", "1,1,1"]
    load(browser, site + "?arch=mi300x&type=fp16&a=1,2^-24,2^-24&b=1,1,1&c=0")
    before = text(browser, "d-hex")
    assert before == cli_d("--arch", "mi300x", "--type", "fp16", *ops)
    browser.execute_script("document.getElementById('fields-box').open = true")
    el = browser.find_element("id", "field-frac_bits")
    assert el.get_attribute("value") == "24"
    el.clear()
    el.send_keys("23")
    browser.execute_script("arguments[0].dispatchEvent(new Event('change'))", el)
    want = cli_d("--arch", "mi300x", "--type", "fp16", "--set", "frac_bits=23", *ops)
    assert text(browser, "d-hex") == want
    assert want != before
    assert browser.find_element("id", "set").get_attribute("value") == "frac_bits=23"
    assert "set=frac_bits=23" in browser.current_url
    assert "changed" in browser.find_element("id", "fieldrow-frac_bits").get_attribute("class")
    # a Choice field as a select; every field of the core's field table has its control and doc
    sel = browser.find_element("id", "field-prod_align")
    assert sel.tag_name == "select"
    fields = json.loads(browser.execute_script("return matcore.catalog()"))["fields"]
    assert len(fields) > 40
    missing = browser.execute_script(
        "return arguments[0].filter(n => !document.getElementById('field-' + n))", [f["name"] for f in fields])
    assert missing == []
    docs = browser.execute_script("return [...document.querySelectorAll('#fields .doc')].map(e => e.textContent)")
    assert len(docs) == len(fields) and all(f["doc"] in d for f, d in zip(fields, docs))


def test_permalink_round_trip(browser, site):
    """The URL in the command line's syntax sets the page; the page's own link reproduces it."""
    q = "?arch=a100&type=fp16&a=0x3c00,2^-24&b=1,1&c=0x3f800000&arch2=h100&type2=fp16&set2=frac_bits=26&step=2"
    load(browser, site + q)
    d = text(browser, "d-hex")
    assert d == cli_d("--arch", "a100", "--type", "fp16", "--a", "0x3c00,2^-24", "--b", "1,1", "--c", "0x3f800000")
    d2 = text(browser, "d2-hex")
    assert d2 == cli_d("--arch", "h100", "--type", "fp16", "--set", "frac_bits=26", "--a", "0x3c00,2^-24", "--b", "1,1",
                       "--c", "0x3f800000")
    assert browser.find_element("id", "step").get_attribute("value") == "2"
    link = browser.find_element("id", "permalink").get_attribute("href")
    load(browser, site)
    load(browser, link)
    assert text(browser, "d-hex") == d and text(browser, "d2-hex") == d2
    for el_id, v in (("arch", "a100"), ("a", "0x3c00,2^-24"), ("set2", "frac_bits=26"), ("arch2", "h100")):
        assert browser.find_element("id", el_id).get_attribute("value") == v
    assert browser.find_element("id", "step").get_attribute("value") == "2"


def test_second_design_marks_the_first_difference(browser, site):
    """mi300x (F = 24) against F = 27: the aligner's first value that differs is marked, as in
    `matcore dot --dp A --dp B`."""
    load(browser, site + "?arch=mi300x&type=fp16&a=1,2^-24,2^-25&b=1,1,1&c=0&arch2=mi300x&type2=fp16&set2=frac_bits=27")
    row = browser.find_element("id", "first-diff")
    name = row.find_elements("tag name", "td")[0].text
    with tempfile.TemporaryDirectory() as tmp:
        f = os.path.join(tmp, "f27.toml")
        with open(f, "w") as fh:
            fh.write(cli("show", "--arch", "mi300x", "--type", "fp16", "--set", "frac_bits=27"))
        side = cli("dot", "--arch", "mi300x", "--type", "fp16", "--dp", f, "--a", "1,2^-24,2^-25", "--b", "1,1,1")
    marked = [x for x in side.splitlines() if "first difference" in x][0]
    assert marked.split()[0] == name
    # the picture boxes, in both panels, the first record it draws whose value differs
    boxed = browser.execute_script("return [...document.querySelectorAll('#picture g.row.diff')].map(g => g.dataset.row)")
    assert len(boxed) == 2 and boxed[0] == boxed[1], boxed
    r0, r1 = (json.loads(browser.execute_script("return JSON.stringify(matcorePage.last().designs[%d].rows)" % i))
              for i in (0, 1))
    v = lambda rows: [r["value"] for r in rows if r["name"] == boxed[0]]
    assert v(r0) and v(r0) != v(r1)


def test_step_control_reveals_stages(browser, site):
    load(browser, site + "?arch=h100&type=fp16&a=1,2^-24&b=1,1&c=0")
    stages = json.loads(browser.execute_script("return JSON.stringify(matcorePage.last().designs[0].stages)"))
    hidden = lambda: browser.execute_script(
        "return document.querySelectorAll('#picture g.row.hidden').length")
    assert hidden() == 0
    browser.find_element("id", "step").send_keys("\ue012")  # left arrow: one stage back
    assert hidden() > 0
    for _ in stages:
        browser.find_element("id", "step-prev").click()
    assert browser.find_element("id", "step").get_attribute("value") == "0"
    browser.find_element("id", "step-next").click()  # stage 2: the multiplier
    assert stages[1] == "multiplier"
    shown = browser.execute_script(
        "return [...document.querySelectorAll('#records tbody tr:not(.hidden)')].map(r => r.cells[0].textContent)")
    assert shown and all(x.startswith("multiplier.") for x in shown), shown
    assert "step=1" in browser.current_url


def test_lessons_run_the_paper_vectors(browser, site):
    """A paper lesson sets its preset and operands; the page's d is the CLI's, and the paper's."""
    load(browser, site)
    lessons = json.loads(browser.execute_script("return matcore.lessons()"))
    groups = {l["group"] for l in lessons}
    assert any("CDNA3" in g for g in groups) and any("NVIDIA" in g for g in groups)
    first = [i for i, l in enumerate(lessons) if "CDNA3" in l["group"]][0]
    browser.find_element("id", "lesson-group").send_keys(lessons[first]["group"])
    browser.find_element("id", "lesson-" + str(first)).click()
    l = lessons[first]
    assert text(browser, "d-hex") == cli_d("--arch", l["arch"], "--type", l["type"], "--a", l["a"], "--b", l["b"],
                                           "--c", l["c"])
    assert l["title"] in text(browser, "lesson-text")
    assert "lesson=" in browser.current_url
    load(browser, browser.current_url)  # the lesson by its source survives a reload
    assert l["title"] in text(browser, "lesson-text") and l["source"] in text(browser, "lesson-text")
    # every lesson's outcome is the CLI's (the paper's own d: tb/test_paper_vectors)
    for l in lessons[::7]:
        res = evaluate(browser, {"arch": l["arch"], "type": l["type"], "a": l["a"], "b": l["b"], "c": l["c"]})
        assert "0x" + res["designs"][0]["d_hex"] == cli_d("--arch", l["arch"], "--type", l["type"], "--a", l["a"],
                                                  "--b", l["b"], "--c", l["c"])


def test_datapath_file_in_the_page(browser, site):
    """A datapath file pasted into the page is the design (as `matcore dot --datapath F`), and its
    link reproduces it."""
    toml = cli("show", "--arch", "mi300x", "--type", "fp16", "--set", "frac_bits=23")
    ops = ["--a", "1,2^-24,2^-24", "--b", "1,1,1"]
    load(browser, site + "?arch=mi300x&type=fp16&a=1,2^-24,2^-24&b=1,1,1")
    preset_d = text(browser, "d-hex")
    browser.execute_script("document.getElementById('toml-box').open = true;"
                           "document.getElementById('toml').value = arguments[0];"
                           "document.getElementById('toml-apply').click();", toml)
    with tempfile.TemporaryDirectory() as tmp:
        f = os.path.join(tmp, "dp.toml")
        with open(f, "w") as fh:
            fh.write(toml)
        want = cli_d("--datapath", f, *ops)
    assert text(browser, "d-hex") == want and want != preset_d
    assert "toml=" in browser.current_url
    load(browser, browser.current_url)
    assert text(browser, "d-hex") == want

def test_pasted_vector_file_lines(browser, site):
    """A line of an a/b file (native or widened to binary32, as hwdata holds them) and of a scale
    file, pasted in, are read by the vector readers: the same d as the values on the CLI."""
    want = cli_d("--arch", "h100", "--type", "fp16", "--a", "1,2^-24,-3", "--b", "1,1,0.5")
    load(browser, site + "?arch=h100&type=fp16&a=3f800000 33800000 c0400000&b=3c00 3c00 3800&c=0")
    assert text(browser, "d-hex") == want
    a = ",".join(["6"] + ["0"] * 32 + ["-1.5"])  # two scale blocks of 32
    b = ",".join(["0.5"] + ["0"] * 32 + ["4"])
    want = cli_d("--arch", "b200", "--type", "mxf4", "--a", a, "--b", b, "--sa", "0x80,0x80", "--sb", "0x7e,0x7f")
    assert want != cli_d("--arch", "b200", "--type", "mxf4", "--a", a, "--b", b)
    load(browser, site + "?arch=b200&type=mxf4&a=%s&b=%s&sa=80 80&sb=7e 7f" % (a, b))
    assert text(browser, "error") == "" and text(browser, "d-hex") == want
    load(browser, site + "?arch=h100&type=fp16&a=3f800000 3c00&b=1,1")
    assert "a (a vector-file line):1" in text(browser, "error")


class Reports(Quiet):
    """Takes the page's report (app.js, ?report=1): POST /report with d, the trace and errors."""
    got = []

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        Reports.got.append(json.loads(self.rfile.read(n)))
        self.send_response(204)
        self.end_headers()


FIREFOX = shutil.which("firefox-esr") or shutil.which("firefox")


@pytest.mark.skipif(not FIREFOX, reason="firefox-esr not installed (Debian: firefox-esr)")
def test_firefox_gives_the_cli_d_and_trace():
    """The same page in headless Firefox (Debian has no geckodriver: the page reports to the test's
    server when its URL has report=1): d and the trace rows equal the CLI's, with no script error."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Reports, directory=WEB))
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    ops = ["--a", "1,2^-24,2^-24,0x3555", "--b", "1,1,1,-3", "--c", "0x3f800000"]
    url = "http://127.0.0.1:%d/index.html?report=1&arch=mi300x&type=fp16&a=1,2^-24,2^-24,0x3555&b=1,1,1,-3&c=0x3f800000" % \
        srv.server_address[1]
    Reports.got.clear()
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HOME=home, MOZ_HEADLESS="1")
        ff = subprocess.Popen([FIREFOX, "--headless", "--no-remote", "--profile", home, url], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(1200):
                if Reports.got:
                    break
                time.sleep(0.1)
        finally:
            ff.kill()
            ff.wait()
    srv.shutdown()
    srv.server_close()
    assert Reports.got, "Firefox sent no report within 120 s"
    r = Reports.got[0]
    assert "Firefox" in r["ua"]
    assert r["errors"] == [] and r["error"] == ""
    assert r["d"] == cli_d("--arch", "mi300x", "--type", "fp16", *ops)
    assert r["trace"].splitlines() == cli_trace_rows(["--arch", "mi300x", "--type", "fp16"] + ops)


def test_traces_of_every_family_equal_the_native_core(browser, site):
    """1000 samples (matcore sample: 500 exponent-mantissa, 500 random bits) of the first preset of
    every family: each sample's trace rows in the page's core equal the native core's (the
    Python module, the CLI's core: python/matcore_module.cpp trace), row for row, and so does d."""
    mc = pytest.importorskip("matcore")
    np = pytest.importorskip("numpy")
    cat = catalog(browser, site)
    firsts = {}
    for a in cat["archs"]:
        for t in a["types"]:
            firsts.setdefault(t["family"], (a["arch"], t["type"]))
    assert len(firsts) >= 10
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for family, (arch, typ) in sorted(firsts.items()):
            dp = mc.preset(arch, typ)
            for files, want_d in sample_sets(arch, typ, "", tmp):
                req = dict(files, arch=arch, type=typ)
                res = json.loads(browser.execute_script("return matcore.trace_vectors(arguments[0])", req))
                assert res["ok"], res.get("error")
                assert len(res["samples"]) == len(want_d) == SAMPLES // 2
                for s in res["samples"]:
                    arr = lambda v: None if v is None else np.array(v, dtype=np.uint64)
                    rows, d = mc.trace(dp, arr(s["a"]), arr(s["b"]), s["c"], sa=arr(s["sa"]), sb=arr(s["sb"]))
                    assert s["rows"] == "".join("%s=%s\n" % r for r in rows), (family, arch, typ, s)
                    checked += 1
    assert checked >= len(firsts) * SAMPLES
