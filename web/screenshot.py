"""The README's picture of the web page: docs/img/web.png (headless Chromium).

  make web && /usr/bin/python3 web/screenshot.py [build-web] [docs/img/web.png]
"""
import functools
import http.server
import os
import sys
import threading
import time

from selenium import webdriver

WEB = sys.argv[1] if len(sys.argv) > 1 else "build-web"
OUT = sys.argv[2] if len(sys.argv) > 2 else "docs/img/web.png"
QUERY = "?arch=mi300x&type=fp16&a=1,2^-24,2^-24&b=1,1,1&c=0&arch2=mi300x&type2=fp16&set2=frac_bits=23"


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=WEB))
srv.daemon_threads = True
threading.Thread(target=srv.serve_forever, daemon=True).start()
opts = webdriver.ChromeOptions()
for a in ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1500,1150", "--hide-scrollbars"]:
    opts.add_argument(a)
drv = webdriver.Chrome(options=opts)
drv.get("http://127.0.0.1:%d/index.html%s" % (srv.server_address[1], QUERY))
while not drv.execute_script("return document.body.dataset.ready"):
    time.sleep(0.05)
tmp = OUT + ".tmp.png"
drv.save_screenshot(tmp)
os.replace(tmp, OUT)  # complete or not at all
drv.quit()
srv.shutdown()
print("wrote", OUT)
