"""Reports of a real run, read by the programs that consume them.

One `commcert run ci` under a real `mpirun -np 4` (each rank standing for a node) with node2
delayed by 100 ms per operation, judged against the localization copy of the CI baseline, so the
run holds node-scope and cluster-scope curves, a pairwise matrix and a quarantined node. Its
`--report` outputs and `commcert report` on a copy where node3 has an error record whose reason is
markup (plus the committed burn and membw records, which need a GPU to produce) are then checked
by:
headless Chromium (the DOM after the page's one script ran, and a screenshot), the JUnit schema
in tests/fixtures/junit/junit.xsd through xmllint, and `promtool check metrics`. A tool that is
missing skips its test and names the package (scripts/bootstrap installs all three)."""

import base64
import hashlib
import html.parser
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from commcert_testing import HAVE_MPI
from test_run_mpi import localization_baseline

BIN = os.environ["COMMCERT_BIN"]
SOURCE = os.environ["COMMCERT_SOURCE_DIR"]
MPIRUN = shutil.which("mpirun") or "mpirun"
FIXTURES = os.path.join(SOURCE, "tests", "fixtures")
HOSTILE = "<img src=x onerror=alert(1)>"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PROMTOOL = shutil.which("promtool")
XMLLINT = shutil.which("xmllint")
FORMATS = {"html": "report.html", "junit": "report.xml", "prom": "commcert.prom",
           "md": "report.md"}


class Dom(html.parser.HTMLParser):
    """The elements of a dumped DOM with their attributes and the text inside them."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.elements = []
        self.open = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        element = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(element)
        if tag not in ("br", "meta", "input", "line", "rect", "circle", "path"):
            self.open.append(element)

    def handle_endtag(self, tag):
        while self.open:
            if self.open.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        for element in self.open:
            element["text"] += data

    def find(self, tag=None, cls=None, **attrs):
        found = []
        for element in self.elements:
            classes = element["attrs"].get("class", "") or ""
            if tag and element["tag"] != tag:
                continue
            if cls and cls not in classes.split():
                continue
            if any(element["attrs"].get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            found.append(element)
        return found


def run_command(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kwargs)


@unittest.skipUnless(HAVE_MPI, "this build has no MPI backend")
class Reports(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="commcert-report-")
        baseline = localization_baseline(os.path.join(cls.tmp, "floor.yaml"))
        cls.run_reports = os.path.join(cls.tmp, "run-reports")
        os.makedirs(cls.run_reports)
        env = dict(os.environ, COMMCERT_FAULT="delay:2:100000")
        command = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", "4",
                   "-x", "COMMCERT_FAULT", BIN, "run", "ci", "--baseline", baseline,
                   "--node-name", "node{rank}", "--out", os.path.join(cls.tmp, "results"),
                   "--run-id", "report-run"]
        for name, file in FORMATS.items():
            command += ["--report", f"{name}={os.path.join(cls.run_reports, file)}"]
        cls.run_proc = run_command(command, env=env)
        cls.run_dir = os.path.join(cls.tmp, "results", "report-run")

        # The same run where node3 failed with markup as its reason, as an error string from any
        # library may read (a node name cannot: records.md; test_hostile_text has the rest).
        cls.hostile_dir = os.path.join(cls.tmp, "hostile")
        shutil.copytree(cls.run_dir, cls.hostile_dir)
        with open(os.path.join(cls.hostile_dir, "records.jsonl"), "a") as f:
            f.write(json.dumps({"schema": 1, "run_id": "report-run", "kind": "burn",
                                "status": "error", "time": "2026-11-21T10:00:00.000Z",
                                "host": "node3", "rank": 3, "local_rank": 0, "gpu": None,
                                "reason": HOSTILE, "kernel": "gemm_bf16"}) + "\n")
        os.remove(os.path.join(cls.hostile_dir, "verdict.json"))
        cls.reports = os.path.join(cls.tmp, "reports")
        os.makedirs(cls.reports)
        command = [BIN, "report", cls.hostile_dir,
                   os.path.join(FIXTURES, "records", "v1", "burn.jsonl"),
                   os.path.join(FIXTURES, "records", "v1", "membw.jsonl"),
                   os.path.join(FIXTURES, "records", "h200", "burn-timeline.jsonl"), "--format", "json"]
        for name, file in FORMATS.items():
            command += ["--report", f"{name}={os.path.join(cls.reports, file)}"]
        cls.report_proc = run_command(command)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def output(self, directory, name):
        with open(os.path.join(directory, FORMATS[name]), encoding="utf-8") as f:
            return f.read()

    def test_run_and_report_write_every_format(self):
        self.assertEqual(self.run_proc.returncode, 1, self.run_proc.stdout[-3000:] + self.run_proc.stderr[-3000:])
        self.assertEqual(self.report_proc.returncode, 0, self.report_proc.stderr[-3000:])
        for directory in (self.run_reports, self.reports):
            # Atomic writes leave no temporary file behind (the textfile collector reads *.prom).
            self.assertEqual(sorted(os.listdir(directory)), sorted(FORMATS.values()))
        # `report` judged the copy against the run's own baseline (from its suite.json): the
        # delayed node is quarantined by the pairs, as in the run's own verdict.
        verdict = json.loads(self.report_proc.stdout)
        states = {node["node"]: node["state"] for node in verdict["nodes"]}
        self.assertEqual(states["node2"], "quarantined")
        self.assertNotEqual(states["node3"], "certified")
        self.assertFalse(os.path.exists(os.path.join(self.hostile_dir, "verdict.json")))

    def chromium(self, *args, url):
        if not CHROMIUM:
            self.skipTest("chromium is not installed (scripts/bootstrap installs Debian's chromium)")
        profile = tempfile.mkdtemp(dir=self.tmp)
        proc = run_command([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                            "--no-first-run", f"--user-data-dir={profile}", *args, url])
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        return proc

    def test_html_in_a_browser(self):
        # Expectations come from the verdict `report` printed: on a loaded 2-core machine healthy
        # pairs can fall below the floor too, so which nodes are bad is the verdict's to say and
        # the page's to show faithfully; node2, delayed 100 ms per operation, is always among them.
        verdict = json.loads(self.report_proc.stdout)
        quarantined = {n["node"] for n in verdict["nodes"] if n["state"] == "quarantined"}
        self.assertIn("node2", quarantined)
        flagged_nodes = {n["node"] for n in verdict["nodes"] for r in n["reasons"]
                         if r["check"].startswith("collective.") and r["effect"] != "warn"}
        bad_nodes = {n["node"] for n in verdict["nodes"] for r in n["reasons"]
                     if r["code"] == "localization.bad_node"}

        path = os.path.join(self.reports, FORMATS["html"])
        # The fragment makes the page's filter script run on load: rows of other states hidden.
        # Were the script blocked (its hash not the one the page's policy allows), none would be.
        dom = Dom(self.chromium("--dump-dom", url=f"file://{path}#state=quarantined").stdout)
        rows = dom.find("tr", cls="node-row")
        names = [cell["text"] for cell in dom.find("td", cls="node")]
        # h200node: the committed H200 burn record, a node of its own in the report.
        self.assertEqual(sorted(names), sorted(["node0", "node1", "node2", "node3", "h200node"]))
        shown = {name for row, name in zip(rows, names) if "hidden" not in row["attrs"]}
        self.assertEqual(shown, quarantined)
        # The hostile reason is text in a cell, never an element; nothing could have run alert().
        self.assertTrue(any(HOSTILE in cell["text"] for cell in dom.find("td")))
        self.assertEqual(dom.find("img"), [])
        self.assertFalse([e for e in dom.elements if any(a.startswith("on") for a in e["attrs"])])
        # One plot per collective and scope the run measured, a curve per node of scope node,
        # red exactly for the nodes the verdict holds a collective reason against.
        plots = dom.find("svg", cls="busbw")
        self.assertEqual(sorted((p["attrs"]["data-collective"], p["attrs"]["data-scope"])
                                for p in plots),
                         [("allgather", "cluster"), ("allgather", "node"),
                          ("allreduce", "cluster"), ("allreduce", "node")])
        curves = {c["attrs"].get("data-node") for c in dom.find("polyline", cls="curve")}
        # (h200node has only burn evidence: its curves are the burn timeline's, checked below.)
        self.assertEqual(curves - {None, "h200node"}, {"node0", "node1", "node2", "node3"})
        flagged = {c["attrs"].get("data-node") for c in dom.find("polyline", cls="flagged")}
        # None: a cluster curve. h200node's collective reason is missing evidence: no curve.
        self.assertEqual(flagged - {None}, flagged_nodes - {"h200node"})
        self.assertEqual(len(dom.find("path", cls="band")), 2)
        # The pairwise matrices: 4 nodes, 12 cells each, a bad node's row and column marked.
        tables = dom.find("table", cls="heatmap")
        self.assertTrue(tables)
        cells = dom.find("td", cls="cell")
        self.assertEqual(len(cells), 12 * len(tables))
        marked = [(c["attrs"]["data-a"], c["attrs"]["data-b"]) for c in cells
                  if "bad-node" in c["attrs"]["class"].split()]
        self.assertTrue(all(set(pair) & bad_nodes for pair in marked), marked)
        self.assertEqual(sum("node2" in pair for pair in marked), 6 * len(tables))
        # Burn and membw from the committed GPU records; the run's meta and command lines.
        self.assertEqual(len(dom.find("svg", cls="burn")), 1)
        self.assertEqual(len(dom.find("svg", cls="membw")), 1)
        self.assertTrue(dom.find("tr", cls="burn-row"))
        # The real H200 burn's timeline: TFLOP/s, clock, power and temperature over time, and the
        # power cap it ran at the whole time as a throttle strip. The v1 records have no timeline.
        timelines = dom.find("svg", cls="burn-timeline")
        self.assertEqual(len(timelines), 4)
        lines = [p for p in dom.find("polyline") if p["attrs"].get("data-node") == "h200node"]
        self.assertEqual(len(lines), 4)
        strips = dom.find("svg", cls="burn-throttle")
        self.assertEqual(len(strips), 1)
        rows = dom.find("g", cls="strip-row")
        self.assertEqual([r["attrs"].get("data-node") for r in rows], ["h200node"])
        self.assertIn("sw_power_cap", [t["text"] for t in dom.find("title")])  # a span's hover title
        commands = [e["text"] for e in dom.find("code") if " sweep " in e["text"]]
        self.assertTrue(any("--scope node" in c for c in commands), commands)
        self.assertTrue(any("--scope pairs" in c for c in commands), commands)

    def test_html_screenshot(self):
        path = os.path.join(self.reports, FORMATS["html"])
        shot = os.path.join(self.tmp, "report.png")
        self.chromium(f"--screenshot={shot}", "--window-size=1280,1800", "--hide-scrollbars",
                      url=f"file://{path}")
        with open(shot, "rb") as f:
            png = f.read()
        self.assertTrue(png.startswith(b"\x89PNG\r\n\x1a\n"))
        self.assertGreater(len(png), 20000)  # a rendered page, not a blank one
        # docs/images/report-html.png is this screenshot: COMMCERT_REPORT_SCREENSHOT=PATH keeps it.
        keep = os.environ.get("COMMCERT_REPORT_SCREENSHOT")
        if keep:
            shutil.copy(shot, keep)

    def test_html_script_is_the_one_its_policy_allows(self):
        text = self.output(self.reports, "html")
        scripts = re.findall(r"<script>(.*?)</script>", text, re.S)
        self.assertEqual(len(scripts), 1)
        digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
        self.assertIn(f"script-src 'sha256-{digest}'", text)
        self.assertIn("default-src 'none'", text)
        self.assertNotRegex(text, r"(src|href)=\"(https?:)?//")

    def test_junit_validates_and_maps_states(self):
        if not XMLLINT:
            self.skipTest("xmllint is not installed (scripts/bootstrap installs libxml2-utils)")
        schema = os.path.join(FIXTURES, "junit", "junit.xsd")
        for directory in (self.run_reports, self.reports):
            path = os.path.join(directory, FORMATS["junit"])
            proc = run_command([XMLLINT, "--noout", "--schema", schema, path])
            self.assertEqual(proc.returncode, 0, proc.stderr)
        text = self.output(self.run_reports, "junit")
        suites = re.findall(r'<testsuite name="([^"]*)" tests="(\d+)" failures="(\d+)"', text)
        self.assertEqual([s[0] for s in suites], ["node0", "node1", "node2", "node3"])
        with open(os.path.join(self.run_dir, "verdict.json")) as f:
            verdict = json.load(f)
        failing = {s[0] for s in suites if s[2] != "0"}
        self.assertEqual(failing, {n["node"] for n in verdict["nodes"]
                                   if n["state"] == "quarantined"})
        self.assertIn("node2", failing)
        self.assertRegex(text, r'<failure message="[^"]*slow with \d of 3 partners[^"]*" '
                               r'type="localization.bad_node">')
        self.assertIn('&lt;img src=x onerror=alert(1)&gt;', self.output(self.reports, "junit"))

    def test_prometheus_textfile_passes_promtool(self):
        if not PROMTOOL:
            self.skipTest("promtool is not installed (scripts/bootstrap installs prometheus)")
        for directory in (self.run_reports, self.reports):
            with open(os.path.join(directory, FORMATS["prom"])) as f:
                proc = run_command([PROMTOOL, "check", "metrics"], stdin=f)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            self.assertEqual(proc.stdout + proc.stderr, "")
        text = self.output(self.run_reports, "prom")
        self.assertIn('commcert_node_state{node="node2",state="quarantined"} 1\n', text)
        self.assertRegex(text, r'commcert_nodes\{state="quarantined"\} [1-4]\n')
        # The cluster figure belongs to every node of the communicator (the 1-rank node-scope
        # communicators here have no bus, so no judged figure).
        for node in ("node0", "node3"):
            self.assertRegex(text, r'commcert_collective_busbw_bytes_per_second\{node="%s",'
                                   r'collective="allreduce",scope="cluster"\} \d' % node)
            self.assertIn('commcert_collective_judged_size_bytes{node="%s",'
                          'collective="allreduce",scope="cluster"} 1048576\n' % node, text)
        hostile = self.output(self.reports, "prom")
        self.assertIn('commcert_gpu_burn_flop_per_second{node="node0",gpu="0"', hostile)
        self.assertIn('commcert_node_state{node="node3",state="certified"} 0\n', hostile)

    def test_markdown_names_the_node_to_act_on(self):
        text = self.output(self.run_reports, "md")
        self.assertRegex(text, r"\| node2 \| quarantined \| \w+ \| localization\.bad\\_node: "
                               r"[^|]*slow with \d of 3 partners")
        # node3 is listed with its hostile reason; nothing of it may become markup.
        hostile = self.output(self.reports, "md")
        self.assertNotIn("<img", hostile)
        self.assertIn("&lt;img src=x onerror=alert(1)&gt;", hostile)

    def test_a_results_root_stands_for_its_runs(self):
        # `run --out DIR` writes DIR/<run-id>/: naming DIR finds the run's own baseline.
        proc = run_command([BIN, "report", os.path.join(self.tmp, "results"), "--format", "json"])
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        states = {node["node"]: node["state"] for node in json.loads(proc.stdout)["nodes"]}
        self.assertEqual(states["node2"], "quarantined")

    def test_runs_judged_against_different_baselines_need_one_named(self):
        root = os.path.join(self.tmp, "two-baselines")
        for run_id, baseline in (("a", None), ("b", "cpu-mpi-ci")):
            shutil.copytree(self.run_dir, os.path.join(root, run_id))
            if baseline is None:
                continue
            suite_log = os.path.join(root, run_id, "suite.json")
            with open(suite_log) as f:
                log = json.load(f)
            log["baseline_source"], log["baseline"] = "", baseline
            with open(suite_log, "w") as f:
                json.dump(log, f)
        proc = run_command([BIN, "report", root])
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("different baselines", proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        proc = run_command([BIN, "report", root, "--baseline", "cpu-mpi-ci"])
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])

    def test_report_without_a_baseline_to_find_is_a_usage_error(self):
        records = os.path.join(self.tmp, "records-only.jsonl")
        shutil.copy(os.path.join(self.run_dir, "records.jsonl"), records)
        proc = run_command([BIN, "report", records])
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--baseline", proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)


if __name__ == "__main__":
    unittest.main()
