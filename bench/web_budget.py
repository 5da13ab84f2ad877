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
        # navigation start -> the first picture drawn (performance.now() at the end of render())
        first.append(drv.execute_script("return document.body.dataset.readyMs"))
    print("first picture: median %.0f ms after navigation (goal < 1000 ms); loads: %s" %
          (statistics.median(float(x) for x in first), ", ".join("%.0f" % float(x) for x in first)))
    edits = []
    for arch, typ, k in (("mi300x", "fp16", 16), ("h100", "fp16", 16), ("a100", "tf32", 8), ("b200", "nvfp4", 64),
                         ("mi100", "fp32", 4), ("h100", "e4m3", 32)):
        drv.get(url + "?arch=%s&type=%s" % (arch, typ))
        while not drv.execute_script("return document.body.dataset.ready"):
            time.sleep(0.01)
        for seed in range(1, 6):
            drv.find_element("id", "seed").clear()
            drv.find_element("id", "seed").send_keys(str(seed))
            drv.find_element("id", "random").click()
            edits.append(float(drv.execute_script("return document.body.dataset.renderMs")))
    print("new picture after an edit: median %.1f ms, max %.1f ms over %d edits (goal < 50 ms)" %
          (statistics.median(edits), max(edits), len(edits)))
    drv.quit()
    srv.shutdown()


if __name__ == "__main__":
    main()
