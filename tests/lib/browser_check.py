#!/usr/bin/env python3
"""Loads a cephmark HTML report in headless Chromium (through chromedriver's WebDriver HTTP
API, standard library only) and checks that it rendered: every SVG chart has a non-empty
layout box and drawn data marks with non-zero size, the console has no errors, and the
page made no network requests. Saves a full-page screenshot (the top of the page when the
renderer cannot paint it whole in time).

usage: browser_check.py REPORT.html SCREENSHOT.png MIN_CHARTS
Exit 0 when every check holds; 1 with one line per failed check otherwise."""

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"{}").get("value")


# Runs in the page: per chart, its box and the drawn marks (polylines with points, circles,
# bars) whose rendered boxes are non-empty.
MEASURE = """
const charts = Array.from(document.querySelectorAll('svg.chart'));
return charts.map(svg => {
  const box = svg.getBoundingClientRect();
  const marks = Array.from(svg.querySelectorAll('polyline.series, circle.point, rect.bar'));
  let drawn = 0;
  for (const m of marks) {
    const b = m.getBBox();
    if ((b.width > 0 || b.height > 0) && (m.tagName !== 'polyline' || m.points.numberOfItems > 0)) drawn++;
  }
  return {title: svg.getAttribute('aria-label'), width: box.width, height: box.height,
          declared: Number(svg.getAttribute('data-points')), drawn: drawn};
});
"""

RESOURCES = """
return performance.getEntriesByType('resource').map(e => e.name);
"""


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    report, screenshot, min_charts = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    for program in (CHROMEDRIVER, CHROMIUM):
        if not os.access(program, os.X_OK):
            print(f"FAIL: {program} not found; install it with `apt-get install chromium chromium-driver`")
            return 1
    port = free_port()
    log = tempfile.TemporaryFile()
    # the browser's scratch: its profile, and its TMPDIR (Chromium's own scoped_dir
    # folders, which it does not always remove), all removed at the end
    scratch = tempfile.mkdtemp(prefix="cephmark-browser-")
    env = dict(os.environ, TMPDIR=scratch)
    driver = subprocess.Popen([CHROMEDRIVER, f"--port={port}"], stdout=log, stderr=log, env=env)
    base = f"http://127.0.0.1:{port}"
    failures = []
    session = None
    try:
        for _ in range(100):
            try:
                call(base, "GET", "/status")
                break
            except OSError:
                time.sleep(0.1)
        profile = os.path.join(scratch, "profile")
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", f"--user-data-dir={profile}"]},
            "goog:loggingPrefs": {"browser": "ALL"}}}}
        created = call(base, "POST", "/session", caps)
        session = created["sessionId"]
        s = f"/session/{session}"
        call(base, "POST", s + "/url", {"url": "file://" + report})
        charts = call(base, "POST", s + "/execute/sync", {"script": MEASURE, "args": []})
        if len(charts) < min_charts:
            failures.append(f"{len(charts)} charts rendered, expected at least {min_charts}")
        for chart in charts:
            if chart["width"] <= 0 or chart["height"] <= 0:
                failures.append(f"chart '{chart['title']}' has an empty layout box")
            if chart["declared"] <= 0 or chart["drawn"] <= 0:
                failures.append(f"chart '{chart['title']}' drew no data marks "
                                f"(declared {chart['declared']}, drawn {chart['drawn']})")
        resources = call(base, "POST", s + "/execute/sync", {"script": RESOURCES, "args": []})
        for name in resources:
            failures.append(f"the page fetched {name}")
        logs = call(base, "POST", s + "/se/log", {"type": "browser"}) or []
        for entry in logs:
            if entry.get("level") in ("SEVERE", "WARNING"):
                failures.append(f"console {entry['level']}: {entry.get('message')}")
        # full-page screenshot: size the window to the document, then capture. The picture is
        # a by-product, not a check: when the renderer cannot paint a window that tall in time
        # (a long report on a loaded machine), the top of the page is kept instead.
        height = call(base, "POST", s + "/execute/sync",
                      {"script": "return document.documentElement.scrollHeight", "args": []})
        try:
            call(base, "POST", s + "/window/rect", {"width": 1400, "height": min(int(height) + 140, 16000)})
            png = base64.b64decode(call(base, "GET", s + "/screenshot"))
        except Exception as error:
            print(f"{report}: full-page screenshot failed ({error}); keeping the top 3000 px")
            call(base, "POST", s + "/window/rect", {"width": 1400, "height": 3000})
            png = base64.b64decode(call(base, "GET", s + "/screenshot"))
        with open(screenshot, "wb") as f:
            f.write(png)
        print(f"{report}: {len(charts)} charts, "
              f"{sum(c['drawn'] for c in charts)} data marks drawn, "
              f"{len(logs)} console entries; screenshot {screenshot} ({len(png)} bytes)")
    except Exception as error:  # a WebDriver failure is a test failure with its reason
        failures.append(f"browser check could not run: {error}")
        log.seek(0)
        sys.stdout.write(log.read().decode(errors="replace")[-2000:])
    finally:
        if session:
            try:
                call(base, "DELETE", f"/session/{session}")
            except Exception:
                pass
        driver.terminate()
        try:
            driver.wait(timeout=10)
        except subprocess.TimeoutExpired:
            driver.kill()
        # the scratch is ours alone: it goes however the check ended
        shutil.rmtree(scratch, ignore_errors=True)
    for failure in failures:
        print("FAIL: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
