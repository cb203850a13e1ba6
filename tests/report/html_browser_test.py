#!/usr/bin/env python3
"""The HTML view in a real headless browser, and the Chrome trace checked as JSON.

usage: html_browser_test.py TACTUS_REPORT TACTUS_COMPILE MAKE_LOG SOURCE_ROOT

Compiles sample graphs with `tactus-compile --html`, simulates logs, renders `tactus-report --html`
pages (and one of 5,000 runnables), loads each in chromium (--dump-dom) and checks: no script
errors recorded, the page finished drawing, one lane per resource of every hyperepoch and one box
per scheduled instance of frame 0 (counted against the schedule file itself), executed runs drawn
with overruns marked, a multi-SoC plan's lanes in one group per SoC under its heading; takes a
screenshot; and checks the trace file's events against the log (check_trace.py).

Then it drives the pages through the DevTools protocol (chromium --remote-debugging-pipe, no
library needed): steps through every iteration with the next button, checking each against the
log (iteration number, runs, overruns), steps back with the button and the left arrow key, clicks a
cell of the iteration bands, counts the bands' overrun cells against the log, sorts the statistics
table; on the 5,000-runnable page: the graph collapsed per client, the search count, the filter,
opening one client.
Exits 77 (skipped) when no chromium is installed.
"""
import collections
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)
    if r.returncode != 0:
        fail(" ".join(cmd) + f" exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r


def browser(chromium, tmp, args):
    profile = tempfile.mkdtemp(dir=tmp)
    r = subprocess.run([chromium] + FLAGS + ["--user-data-dir=" + profile] + args,
                       capture_output=True, text=True, timeout=150)
    shutil.rmtree(profile, ignore_errors=True)
    return r


class Dom(html.parser.HTMLParser):
    """Collects the attributes of the elements the checks count."""

    def __init__(self):
        super().__init__()
        self.root = {}
        self.elements = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.root = a
        if tag in ("g", "rect"):
            self.elements.append((tag, set((a.get("class") or "").split()), a))


def schedule_facts(path):
    """From the schedule file itself: lanes per hyperepoch and frame-0 instances."""
    lanes = 0
    frame0 = 0
    for line in open(path):
        fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
        if line.startswith("hyperepoch "):
            lanes += len([r for r in fields.get("resources", "").split(",") if r])
        elif line.startswith("instance ") and fields.get("frame") == "0":
            frame0 += 1
    return lanes, frame0


def check_page(chromium, tmp, page, sched, executed):
    t0 = time.monotonic()
    r = browser(chromium, tmp, ["--dump-dom", "file://" + page])
    seconds = time.monotonic() - t0
    dom = Dom()
    dom.feed(r.stdout)
    name = os.path.basename(page)
    if dom.root.get("data-errors", None) != "":
        fail(f"{name}: script errors recorded: {dom.root.get('data-errors')!r}")
    if dom.root.get("data-ready") != "1":
        fail(f"{name}: the page did not finish drawing (stderr: {r.stderr[-500:]})")
    lanes, frame0 = schedule_facts(sched)
    plan_lanes = sum(1 for t, c, a in dom.elements if t == "g" and "plan-lane" in c)
    if plan_lanes != lanes:
        fail(f"{name}: {plan_lanes} plan lanes, expected one per resource: {lanes}")
    boxes = sum(1 for t, c, a in dom.elements
                if t == "rect" and "box" in c and "sw" not in c and "ghost" not in c and a.get("data-frame") == "0")
    if boxes != frame0:
        fail(f"{name}: {boxes} plan boxes of frame 0, expected one per scheduled instance: {frame0}")
    nodes = sum(1 for t, c, a in dom.elements if t == "rect" and "node" in c)
    groups = sum(1 for t, c, a in dom.elements if t == "rect" and "group" in c)
    runnables = sum(1 for line in open(sched) if line.startswith("runnable "))
    clients = sum(1 for line in open(sched) if line.startswith("client "))
    if runnables > 400:  # collapsed per client at first
        if groups != clients or nodes != 0:
            fail(f"{name}: {groups} client boxes and {nodes} runnable boxes, expected {clients} and 0 (collapsed)")
    elif nodes != runnables:
        fail(f"{name}: {nodes} graph nodes, expected {runnables}")
    if executed:
        exec_lanes = sum(1 for t, c, a in dom.elements if t == "g" and "exec-lane" in c)
        runs = [c for t, c, a in dom.elements if t == "rect" and "run" in c]
        if exec_lanes != lanes or not runs:
            fail(f"{name}: executed view has {exec_lanes} lanes (expected {lanes}) and {len(runs)} runs")
    print(f"ok: {name}: {plan_lanes} lanes, {boxes} frame-0 boxes, {nodes} graph nodes, loaded in {seconds:.1f} s")
    return dom


def check_soc_groups(dom, sched, name):
    """A multi-SoC plan: one lane group per SoC under its heading, holding exactly that SoC's lanes."""
    socs, res_soc, lanes = [], {}, []
    for line in open(sched):
        fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
        if line.startswith("soc "):
            socs.append(fields["name"])
        elif line.startswith("resource "):
            res_soc[fields["id"]] = fields.get("soc", "-")
        elif line.startswith("hyperepoch "):
            lanes += [r for r in fields.get("resources", "").split(",") if r]
    want = {}
    for r in lanes:
        want.setdefault(res_soc[r], set()).add(r)
    got, heads, current = {}, 0, None
    for t, c, a in dom.elements:
        if t == "g" and "soc-group" in c:
            current = a.get("data-soc")
        elif t == "g" and "soc-head" in c:
            heads += 1
            if a.get("data-soc") != current:
                fail(f"{name}: the heading of SoC {a.get('data-soc')} is outside its group")
        elif t == "g" and "plan-lane" in c:
            if a.get("data-soc") != current:
                fail(f"{name}: lane of resource {a.get('data-res')} (SoC {a.get('data-soc')}) in the group of SoC {current}")
            got.setdefault(current, set()).add(a.get("data-res"))
    if heads != len(socs) or got != want:
        fail(f"{name}: {heads} SoC headings and lanes {got}, expected {len(socs)} and {want}")
    print(f"ok: {name}: {heads} SoC lane groups ({', '.join(socs)}), each with its SoC's lanes")


class DevTools:
    """chromium driven over --remote-debugging-pipe: JSON messages ended by NUL on fds 3 and 4."""

    def __init__(self, chromium, tmp):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        self.profile = tempfile.mkdtemp(dir=tmp)

        def fds():
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen([chromium] + FLAGS + ["--remote-debugging-pipe", "--window-size=1400,1000",
                                      "--user-data-dir=" + self.profile, "about:blank"],
                                     preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b""
        self.next_id = 0
        self.session = None

    def call(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + 60
        while True:
            while b"\0" not in self.buf:
                if time.monotonic() > deadline:
                    fail(f"devtools: no answer to {method}")
                chunk = os.read(self.from_chrome, 1 << 16)
                if not chunk:
                    fail(f"devtools: chromium closed the pipe during {method}")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    fail(f"devtools: {method}: {answer['error']}")
                return answer["result"]

    def open(self, url):
        target = self.call("Target.createTarget", {"url": url}, session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        deadline = time.monotonic() + 90
        while self.eval("document.documentElement && document.documentElement.getAttribute('data-ready')") != "1":
            if time.monotonic() > deadline:
                fail(f"{url}: not drawn within 90 s")
            time.sleep(0.2)
        errors = self.eval("document.documentElement.getAttribute('data-errors')")
        if errors:
            fail(f"{url}: script errors: {errors}")

    def eval(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            fail(f"devtools: {expression[:80]}: {r['exceptionDetails'].get('exception', {}).get('description')}")
        return r["result"].get("value")

    def click_at(self, x, y):
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def key(self, key, code):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code})

    def close(self):
        try:
            self.call("Browser.close", session=False)
            self.proc.wait(timeout=20)
        except Exception:  # noqa: BLE001 - the browser is gone either way
            self.proc.kill()
        os.close(self.to_chrome)
        os.close(self.from_chrome)
        shutil.rmtree(self.profile, ignore_errors=True)


STATE = """(function(){var s=document.querySelector('#exec svg.timeline[data-hyperepoch="0"]');
  return [+s.getAttribute('data-iteration'), s.querySelectorAll('rect.run:not(.sw)').length,
          s.querySelectorAll('rect.run.over:not(.sw)').length];})()"""


def step_iterations(chromium, tmp, page, sched, log):
    """Steps the executed view through every iteration of hyperepoch 0 and checks each against the log."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import check_trace  # the log and schedule readers
    clients, runnables, epochs, instances, resources = check_trace.read_schedule(sched)
    per_it = collections.defaultdict(lambda: [0, 0])
    cells = {}  # (runnable, iteration) -> longest run / WCET
    ran = set()  # every runnable that ran (the statistics table's rows)
    for kind, inst, it, aux, start, end in check_trace.read_log(log):
        if kind == 1 and aux != check_trace.NONE:
            ran.add(aux)
        if kind != 1 or epochs[runnables[instances[inst][0]][2]] != 0:
            continue
        per_it[it][0] += 1
        if aux != check_trace.NONE:
            over = end - start > runnables[aux][3]
            per_it[it][1] += over
            cells[(aux, it)] = max(cells.get((aux, it), 0), (end - start) / max(1, runnables[aux][3]))
    iterations = sorted(per_it)
    dt = DevTools(chromium, tmp)
    try:
        dt.open("file://" + page)
        seen = []
        for _ in range(len(iterations)):
            it, runs, overs = dt.eval(STATE)
            if seen and it == seen[-1]:
                break
            seen.append(it)
            if [runs, overs] != per_it[it]:
                fail(f"iteration {it}: the page draws {runs} runs, {overs} overruns; the log has {per_it[it]}")
            dt.eval("document.querySelector('button.step[data-h=\"0\"][data-d=\"1\"]').click()")
        if seen != iterations:
            fail(f"stepping with 'next' showed iterations {seen}, the log has {iterations}")
        if dt.eval(STATE)[0] != iterations[-1]:
            fail("'next' on the last iteration did not stay there")
        dt.eval("document.querySelector('button.step[data-h=\"0\"][data-d=\"-1\"]').click()")
        dt.key("ArrowLeft", 37)
        if dt.eval(STATE)[0] != iterations[-3]:
            fail(f"'previous' and the left arrow key showed {dt.eval(STATE)[0]}, expected {iterations[-3]}")
        # The bands: one red cell per (runnable, iteration) whose longest run overran; a click shows its iteration.
        red = dt.eval("(document.querySelector('svg.band[data-h=\"0\"] path[data-b=\"3\"]')||{getAttribute:function(){return ''}})"
                      ".getAttribute('d').split('M').length-1")
        want_red = sum(1 for q in cells.values() if q > 1)
        if red != want_red:
            fail(f"the bands show {red} overrun cells, the log has {want_red}")
        x, y = dt.eval("""(function(){var s=document.querySelector('svg.band[data-h="0"]');s.scrollIntoView();
          var b=s.getBoundingClientRect(),lw=+s.dataset.lw,cw=+s.dataset.cw,ch=+s.dataset.ch;
          return [b.left+lw+3*cw+cw/2, b.top+ch/2];})()""")
        dt.click_at(x, y)
        if dt.eval(STATE)[0] != iterations[3]:
            fail(f"a click on the bands' fourth column showed iteration {dt.eval(STATE)[0]}, expected {iterations[3]}")
        # The statistics table: a row per measured runnable; a click on 'max' sorts by it, longest first.
        measured = len(ran)
        rows = dt.eval("document.querySelectorAll('#stats tr[data-r]').length")
        if rows != measured:
            fail(f"the statistics table has {rows} rows, {measured} runnables ran")
        dt.eval("document.querySelector('#stats th[data-c=\"6\"]').click()")
        col = dt.eval("Array.prototype.map.call(document.querySelectorAll('#stats tr[data-r] td:nth-child(7)'),"
                      "function(td){return +td.dataset.v;})")
        if col != sorted(col, reverse=True) or len(col) != measured:
            fail(f"sorting by max gave {col}")
        print(f"ok: {os.path.basename(page)}: stepped through {len(seen)} iterations, runs and overruns as logged; "
              f"back by button and key; {red} overrun cells in the bands, a click on them steps; table sorted")
    finally:
        dt.close()


def explore_big_graph(chromium, tmp, page, sched):
    """The 5,000-runnable graph: collapsed per client, search, filter, one client opened."""
    clients, runnables, epochs, instances, resources = (None,) * 5
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import check_trace
    clients, runnables, epochs, instances, resources = check_trace.read_schedule(sched)
    names = [f"{clients[c]}.{n}".lower() for n, c, e, w in runnables.values()]
    dt = DevTools(chromium, tmp)
    try:
        dt.open("file://" + page)
        count = lambda sel: dt.eval(f"document.querySelectorAll('{sel}').length")
        if count("#graph rect.group") != len(clients) or count("#graph rect.node") != 0:
            fail("the 5,000-runnable graph is not collapsed per client at first")
        dt.eval("var e=document.getElementById('search');e.value='run12';e.dispatchEvent(new Event('input'))")
        want = sum("run12" in n for n in names)
        said = dt.eval("document.getElementById('search-count').textContent")
        if said != f"{want} found" or count("#graph rect.group.hit") == 0:
            fail(f"searching 'run12' says {said!r}, expected '{want} found' and highlighted clients")
        dt.eval("var e=document.getElementById('group');e.value='none';e.dispatchEvent(new Event('change'))")
        dt.eval("var e=document.getElementById('filter');e.value='client3.';e.dispatchEvent(new Event('input'))")
        want = sum(n.startswith("client3.") for n in names)
        if count("#graph rect.node") != want:
            fail(f"filter 'client3.' shows {count('#graph rect.node')} runnables, expected {want}")
        if count("#stats tr[data-r]") != want:
            fail(f"filter 'client3.' leaves {count('#stats tr[data-r]')} statistics rows, expected {want}")
        dt.eval("var e=document.getElementById('filter');e.value='';e.dispatchEvent(new Event('input'))")
        dt.eval("var e=document.getElementById('group');e.value='client';e.dispatchEvent(new Event('change'))")
        dt.eval("document.querySelector('#graph rect.group[data-g=\"2\"]').dispatchEvent(new MouseEvent('click',{bubbles:true}))")
        want = sum(n.startswith("client2.") for n in names)
        if count("#graph rect.node") != want:
            fail(f"opening client 2 shows {count('#graph rect.node')} runnables, expected {want}")
        print(f"ok: 5,000 runnables: {len(clients)} client boxes, search, filter and opening a client")
    finally:
        dt.close()


def log_run_count(path):
    data = open(path, "rb").read()
    size = struct.unpack_from("<I", data, 16)[0]  # EventLogHeader::recordSize (40; 32 in version 1)
    body = data[64:]
    kinds = [struct.unpack_from("<H", body, k)[0] for k in range(0, len(body) - len(body) % size, size)]
    return sum(1 for k in kinds if k == 1)


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    report, compile_, make_log, root = sys.argv[1:5]
    chromium = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")
                     if shutil.which(b)), None)
    if not chromium:
        print("SKIP: no chromium installed (scripts/setup.sh installs Debian's chromium)")
        return 77
    tmp = tempfile.mkdtemp(prefix="tactus-html-test-")
    try:
        for graph in ("multi_rate", "cuda_two_client"):
            src = os.path.join(root, "schedules", graph + ".yaml")
            sched = os.path.join(tmp, graph + ".tsched")
            plan = os.path.join(tmp, graph + "-plan.html")
            run([compile_, "-i", src, "-o", sched, "--html", plan])
            check_page(chromium, tmp, plan, sched, executed=False)
            log = os.path.join(tmp, graph + ".tlog")
            run([make_log, sched, log, "30", "0.2"])
            page = os.path.join(tmp, graph + "-run.html")
            trace = os.path.join(tmp, graph + "-trace.json")
            run([report, log, sched, "--html", page, "--trace-out", trace])
            dom = check_page(chromium, tmp, page, sched, executed=True)
            step_iterations(chromium, tmp, page, sched, log)
            if not any(t == "rect" and "over" in c for t, c, a in dom.elements):
                fail(f"{graph}: a log with 20% overruns shows no overrun in its first iterations")
            # The trace against the trace format and the log (check_trace.py).
            check = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_trace.py")
            r = subprocess.run([sys.executable, check, trace, sched, log], capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                fail(f"{graph}: {r.stdout}")
            print(r.stdout.strip())
        # A multi-SoC schedule: the plan's lanes grouped per SoC.
        sched = os.path.join(tmp, "two_soc.tsched")
        plan = os.path.join(tmp, "two_soc-plan.html")
        run([compile_, "-i", os.path.join(root, "samples", "multisoc", "two_soc.yaml"), "-o", sched, "--html", plan])
        check_soc_groups(check_page(chromium, tmp, plan, sched, executed=False), sched, "two_soc-plan.html")
        # 5,000 runnables: the page must load and draw within the test's time.
        big, biglog, bigpage = (os.path.join(tmp, n) for n in ("big.tsched", "big.tlog", "big.html"))
        run([make_log, "--synthetic", "5000", big, biglog, "3"])
        run([report, biglog, big, "--html", bigpage])
        check_page(chromium, tmp, bigpage, big, executed=True)
        explore_big_graph(chromium, tmp, bigpage, big)
        # The screenshot for the README.
        shot = os.path.join(os.environ.get("TACTUS_BUILD_ROOT", tmp), "schedule.png")
        r = browser(chromium, tmp, ["--window-size=1400,1500", "--screenshot=" + shot,
                                    "file://" + os.path.join(tmp, "multi_rate-run.html")])
        if not os.path.exists(shot) or open(shot, "rb").read(8) != b"\x89PNG\r\n\x1a\n" or os.path.getsize(shot) < 10000:
            fail("no screenshot produced: " + r.stderr[-500:])
        print("ok: screenshot " + shot)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
