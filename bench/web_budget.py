"""The web page's budget (issue 30, docs/web.md): a benchmark, not a test.

  make web && /usr/bin/python3 bench/web_budget.py [build-web]

Prints the site's size (goal: under 3 MB), the time from navigation to the first picture
(goal: under 1 s on the project's machine; median of 5 loads) and the time of a new picture after
an edit (goal: under 50 ms; median over edits of several presets), in headless Chromium.
"""
import functools
import http.server
import os
import statistics
import sys
import threading
import time

from selenium import webdriver

WEB = sys.argv[1] if len(sys.argv) > 1 else "build-web"


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def painted(drv):
    """The last edit's time from its event to the new picture painted (app.js: paintMs)."""
    while True:
        v = drv.execute_script("return document.body.dataset.paintMs")
        if v:
            return float(v)
        time.sleep(0.005)


def main():
    size = sum(os.path.getsize(os.path.join(WEB, f)) for f in ("index.html", "matcore.js", "matcore.wasm"))
    print("site: %.2f MB (index.html, matcore.js, matcore.wasm; goal < 3 MB)" % (size / 2**20))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=WEB))
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/index.html" % srv.server_address[1]
    opts = webdriver.ChromeOptions()
    for a in ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"]:
        opts.add_argument(a)
    drv = webdriver.Chrome(options=opts)
    first = []
    for _ in range(5):
        drv.get(url + "?arch=mi300x&type=fp16&a=1,2^-24,2^-24&b=1,1,1")
        while not drv.execute_script("return document.body.dataset.ready"):
            time.sleep(0.01)
        # navigation start -> the first picture laid out and painted (two animation frames after render())
        while not drv.execute_script("return document.body.dataset.firstPaintMs"):
            time.sleep(0.01)
        first.append(drv.execute_script("return document.body.dataset.firstPaintMs"))
    print("first picture: median %.0f ms after navigation (goal < 1000 ms); loads: %s" %
          (statistics.median(float(x) for x in first), ", ".join("%.0f" % float(x) for x in first)))
    edits, dom = [], []
    # each edit: new random operands (seed 1..3), then frac_bits one up and one down; timed from
    # the edit's event to the new picture painted (two animation frames after the core's answer)
    for arch, typ in (("mi300x", "fp16"), ("h100", "fp16"), ("a100", "tf32"), ("b200", "nvfp4"),
                      ("mi100", "fp32"), ("h100", "e4m3")):
        drv.get(url + "?arch=%s&type=%s&seed=0" % (arch, typ))
        while not drv.execute_script("return document.body.dataset.ready"):
            time.sleep(0.01)
        drv.find_element("id", "random").click()  # seed 0: operands of the preset's k
        painted(drv)
        f = int(drv.find_element("id", "field-frac_bits").get_attribute("value"))
        for seed in range(1, 4):
            drv.execute_script("document.getElementById('seed').value = arguments[0];"
                               "document.getElementById('random').click()", str(seed))
            edits.append(painted(drv))
            dom.append(float(drv.execute_script("return document.body.dataset.renderMs")))
        for v in (f + 1, f):
            drv.execute_script("const e = document.getElementById('field-frac_bits'); e.value = arguments[0];"
                               "e.dispatchEvent(new Event('change'))", str(v))
            edits.append(painted(drv))
            dom.append(float(drv.execute_script("return document.body.dataset.renderMs")))
    print("new picture after an edit, %d edits (random operands and frac_bits up and down on six presets; "
          "goal < 50 ms):" % len(edits))
    print("  core + page update (render(): the core's answer, the SVG and the records in the page): median %.1f ms, "
          "max %.1f ms" % (statistics.median(dom), max(dom)))
    print("  to the frame after it is painted (two animation frames: includes the wait for the display's "
          "next frame): median %.1f ms, max %.1f ms" % (statistics.median(edits), max(edits)))
    drv.quit()
    srv.shutdown()


if __name__ == "__main__":
    main()
