"""Hostile text through every output (issue 34): text commcert does not choose (error strings,
paths, host names from other tools' logs, suite and baseline names) carried through every
record field that holds it, rendered in every format and read back by what reads that format.

Each string of HOSTILE goes into a run of its own: a burn and a collective error record's reason
(the nodes' reason messages), the run record's host names, a GPU's name and UUID and a burn
kernel, meta.json (command line, argv, environment, versions, warnings, fault injection), the
paths of the run directory, baseline and history, the baseline's `sku` and the suite's name. A
node name refuses it (records.md): a record naming one so is lost as unreadable, one note naming
file:line, the field and the name escaped.

`certify` writes every format at once; `history add`, `history show` and `compare` read the same
run. Then: html in headless Chromium (the DOM has the same elements and attribute names as the
run with plain text, so none came from data, and every text node that showed the plain text
shows the hostile one, C0 controls as `\\xNN`), junit with xmllint and its schema and an XML
parser (the text back), prom with `promtool check metrics` (label values back through the
format's escapes), md (every table keeps its columns, the text escaped as documented), nhc,
text, nodes, history and compare (as many lines as with plain text, no control character), json
(every string back exactly). docs/reports.md, "Characters a format cannot hold", says what each
format does. A missing tool skips its test and names the package."""

import concurrent.futures
import html.parser
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

BIN = os.environ["COMMCERT_BIN"]
SOURCE = os.environ["COMMCERT_SOURCE_DIR"]
FIXTURES = os.path.join(SOURCE, "tests", "fixtures")
BASELINE = os.path.join(SOURCE, "suites", "baselines", "cpu-mpi-ci.yaml")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PROMTOOL = shutil.which("promtool")
XMLLINT = shutil.which("xmllint")

PLAIN = "plain text"
HOSTILE = {
    "script": "<script>alert(1)</script>",
    "img": "<img src=x onerror=alert(1)>",
    "ampersand": "AT&T &amp; &lt;b&gt; &#60;",
    "quotes": "\"double\" and 'single'",
    "backtick": "`code` ``more``",
    "pipe": "a | b || c |",
    "braces": "{{template}} {0} {} {:>9}",
    "percent": "%s %n %x %%",
    "newline": "first\nsecond",
    "carriage_return": "first\rsecond",
    "crlf": "first\r\nsecond",
    "tab": "a\tb",
    "controls": "\x01\x1b[31mred\x1b[0m\x7f\x00end",
    "rlo": "safe\u202etxt.exe",
    "separators": "next\u0085line\u2028line\u2029paragraph",
    "combining": "e\u0301\u0301\u0301 Z\u0336\u0335\u0334",
    "long_line": "x" * 65536,
    "shell": "$(id); `id` | rm -rf ~ && echo ${HOME} > /tmp/x",
    "backslash": "C:\\path\\n \\x01 \\",
}
NODES = ["node0", "node1", "node2", "node3"]
TEXT_FORMATS = ("nhc", "text", "nodes")
REPORTS = {"html": "report.html", "md": "report.md", "junit": "report.xml",
           "prom": "commcert.prom", "nhc": "report.nhc", "text": "report.txt",
           "nodes": "report.nodes"}
# A control character a one-line output must not carry: C0, DEL, C1, and the Unicode line and
# paragraph separators and bidirectional overrides (a line that reads differently than it is).
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
ESCAPED = re.compile("[\n" + RAW_CONTROL.pattern[1:])


def record(kind, host, **fields):
    r = {"schema": 1, "run_id": "hostile-run", "kind": kind, "status": "ok",
         "time": "2026-11-21T10:00:00.000Z", "host": host, "rank": 0, "local_rank": 0, "gpu": None}
    r.update(fields)
    return r


def records(text, busbw=2e8):
    ranks = [{"rank": i, "process": i, "node": node, "hostname": text, "local_rank": i,
              "pid": 100 + i, "device": "host", "gpu": None} for i, node in enumerate(NODES)]
    collective = record("collective", "node0", backend="mpi", collective="allreduce",
                        dtype="float", redop="sum", root=None, bytes=1 << 20, count=1 << 18,
                        nranks=4, nodes=4, scope="cluster", in_place=False, cycle=0, check=True,
                        busbw_bytes_per_s=busbw, rank_time={"median_s": 0.005},
                        straggler={"rank": 1, "host": "node1", "time_s": 0.004, "lead_s": 0.001},
                        wrong_elements=0, wrong_ranks=[])
    failed = record("collective", "node2", status="error", rank=2, backend="mpi", reason=text)
    burn = record("burn", "node1", status="error", rank=1, reason=text, kernel="gemm_bf16")
    gpu = {"index": 0, "uuid": text, "pci_bus_id": "0000:1b:00.0", "name": text}
    measured = record("burn", "node3", rank=3, gpu=gpu, kernel=text, duration_s=60.0,
                      tflops=700.0, miscompares=0, datasheet_peak_tflops=989.4)
    return [record("run", "node0", command="sweep", backend="mpi", ranks=ranks), collective,
            failed, burn, measured]


def meta(text):
    return {"run_id": "hostile-run", "status": "complete", "start_time": "2026-11-21T10:00:00Z",
            "end_time": "2026-11-21T10:01:00Z", "command": text, "argv": ["commcert", text],
            "commcert": {"version": text, "git": text}, "versions": {"nccl": text},
            "environment": {"NCCL_DEBUG": text}, "warnings": [text], "fault_injection": text}


def yaml_string(text):
    """A YAML double-quoted scalar: JSON's escapes, and DEL and C1 escaped (YAML allows neither
    raw)."""
    return re.sub("[\x7f-\x9f]", lambda m: "\\u%04x" % ord(m.group()), json.dumps(text))


def path_part(text):
    """The string as one path component: no '/' or NUL, at most 200 bytes."""
    part = text.replace("/", "_").replace("\x00", "_")
    return part.encode()[:200].decode(errors="ignore") or "_"


def printable(text):
    """What core/printable.hpp makes of text: one line, no control character."""
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    def escape(match):
        c = match.group()
        return named.get(c) or ("\\x%02x" % ord(c) if ord(c) < 0x80 else "\\u%04x" % ord(c))

    return ESCAPED.sub(escape, text)


def markup_text(text):
    """The text an HTML or XML reader gets back (escape_markup): tab, LF and CR as themselves,
    other C0 controls as the text \\xNN (XML 1.0 cannot hold them)."""
    return re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f]", lambda m: "\\x%02x" % ord(m.group()), text)


def markdown_text(text):
    """The text as docs/reports.md says Markdown writes it: a backslash before | \\ ` * _ [ ] ~,
    < > & as references, a line break (CRLF one) as <br>, a tab as a space, other C0 controls and
    DEL as \\xNN."""
    named = {"<": "&lt;", ">": "&gt;", "&": "&amp;", "\t": " ", "\r\n": "<br>", "\r": "<br>",
             "\n": "<br>"}

    def escape(match):
        c = match.group()
        if c in named:
            return named[c]
        return "\\" + c if c in "|\\`*_[]~" else "\\x%02x" % ord(c)

    return re.sub(r"\r\n|[<>&\t\r\n|\\`*_\[\]~\x00-\x1f\x7f]", escape, text)


class Dom(html.parser.HTMLParser):
    """Elements (tag, attribute names) and text nodes of a dumped DOM."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.shape = []
        self.text = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.shape.append((tag, tuple(sorted(name for name, _ in attrs))))

    def handle_data(self, data):
        self.text.append(data)


def prom_samples(text):
    """(name, {label: value}) of every sample, label values unescaped as the format defines."""
    samples = []
    for line in text.split("\n"):
        if not line or line.startswith("#"):
            continue
        match = re.match(r"([a-z_]+)(?:\{(.*)\})? \S+$", line)
        assert match, f"not a sample line: {line[:200]!r}"
        labels = {}
        for name, value in re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', match.group(2) or ""):
            labels[name] = re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)),
                                  value)
        samples.append((match.group(1), labels))
    return samples


def table_columns(markdown):
    """The cell count of every table row: unescaped '|' separators."""
    return [len(re.findall(r"(?<!\\)\|", line)) - 1
            for line in markdown.split("\n") if line.startswith("|")]


def run_command(args):
    return subprocess.run(args, capture_output=True, timeout=120)


class Case:
    """One string's run, certified into every format, added to a history and compared."""

    def __init__(self, root, name, text):
        self.name, self.text = name, text
        path_text = path_part(text)
        self.dir = os.path.join(root, name)
        self.run = os.path.join(self.dir, "run " + path_text)
        os.makedirs(self.run)
        with open(os.path.join(self.run, "records.jsonl"), "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in records(text))
        self.write_json(os.path.join(self.run, "meta.json"), meta(text))
        self.other = os.path.join(self.dir, "other")
        os.makedirs(self.other)
        with open(os.path.join(self.other, "records.jsonl"), "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in records(text, busbw=1e8))
        self.baseline = os.path.join(self.dir, "baseline " + path_text + ".yaml")
        with open(BASELINE, encoding="utf-8") as f:
            baseline = re.sub(r"(?m)^sku: .*$", lambda _: "sku: " + yaml_string(text), f.read())
        with open(self.baseline, "w", encoding="utf-8") as f:
            f.write(baseline)
        # The same records with node3's burn record naming the string as its host.
        self.named = os.path.join(self.dir, "named.jsonl")
        with open(self.named, "w", encoding="utf-8") as f:
            lines = records(text)
            lines[-1]["host"] = text
            f.writelines(json.dumps(r) + "\n" for r in lines)
        self.suite = os.path.join(self.dir, "suite.yaml")
        with open(self.suite, "w", encoding="utf-8") as f:
            f.write(f"schema: 1\nname: {yaml_string(text)}\nrequired: [collective.allreduce]\n")
        self.outputs = {}

    @staticmethod
    def write_json(path, value):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(value, f)

    def produce(self):
        args = [BIN, "certify", self.run, "--baseline", self.baseline, "--suite", self.suite,
                "--format", "json"]
        for name, file in REPORTS.items():
            args += ["--report", f"{name}={os.path.join(self.dir, file)}"]
        self.certify = run_command(args)
        history = os.path.join(self.dir, os.path.basename(self.run) + ".db")
        self.history_add = run_command([BIN, "history", "add", self.run, "--history", history])
        self.history_show = run_command([BIN, "history", "show", "node3", "--history", history])
        self.compare = run_command([BIN, "compare", self.other, self.run, "--all"])
        self.certify_named = run_command([BIN, "certify", self.named, "--baseline", BASELINE])
        for name, file in REPORTS.items():
            with open(os.path.join(self.dir, file), "rb") as f:
                self.outputs[name] = f.read().decode("utf-8")
        return self


class HostileText(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="commcert-hostile-")
        cases = [Case(cls.tmp, "plain", PLAIN)]
        cases += [Case(cls.tmp, name, text) for name, text in HOSTILE.items()]
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            done = list(pool.map(Case.produce, cases))
        cls.plain = done[0]
        cls.cases = done[1:]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_certify_writes_every_format(self):
        for case in [self.plain, *self.cases]:
            with self.subTest(string=case.name):
                # node1 (burn error) and node2 (collective error) are inconclusive: exit 3.
                self.assertEqual(case.certify.returncode, 3, case.certify.stderr[-2000:])
                # One line per file written, its path escaped.
                stderr = case.certify.stderr.decode("utf-8")
                self.assertEqual(stderr.count("\n"), len(REPORTS) + 1, stderr[-2000:])
                self.assertIsNone(RAW_CONTROL.search(stderr), stderr[-2000:])

    def test_json_round_trips_every_string(self):
        for case in self.cases:
            with self.subTest(string=case.name):
                verdict = json.loads(case.certify.stdout.decode("utf-8"))
                self.assertEqual(verdict["baseline"], {"sku": case.text, "path": case.baseline})
                self.assertEqual(verdict["suite"]["name"], case.text)
                messages = [r["message"] for n in verdict["nodes"] for r in n["reasons"]]
                self.assertEqual(sum(m.endswith("): " + case.text) for m in messages), 2)
                self.assertEqual([n["node"] for n in verdict["nodes"]], NODES)

    def test_html_dom_has_no_element_or_attribute_from_data(self):
        if not CHROMIUM:
            self.skipTest("chromium is not installed (scripts/bootstrap installs Debian's chromium)")
        cases = [self.plain, *self.cases]
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            doms = dict(zip((c.name for c in cases), pool.map(self.dump_dom, cases)))
        plain = doms["plain"]
        shown = [i for i, chunk in enumerate(plain.text) if PLAIN in chunk]
        self.assertGreater(len(shown), 10)
        for case in self.cases:
            with self.subTest(string=case.name):
                dom = doms[case.name]
                self.assertEqual(dom.shape, plain.shape)
                # Every text node that showed the plain text (reasons, sku, suite, paths, GPU,
                # kernel, command lines, versions, environment) shows the hostile text instead,
                # as characters, and nothing else changed.
                self.assertEqual(len(dom.text), len(plain.text))
                for i in shown:
                    self.assertEqual(dom.text[i], self.expected_text(plain.text[i], case))

    @staticmethod
    def expected_text(plain, case):
        """A plain run's text node with the case's text in its place: paths hold path_part(text),
        the fault injection note quotes meta.json's value as JSON; C0 controls as \\xNN."""
        text = case.text
        subs = {f"/plain/run {PLAIN}": f"/{case.name}/run " + path_part(text),
                f"/plain/baseline {PLAIN}": f"/{case.name}/baseline " + path_part(text),
                f'"{PLAIN}"': json.dumps(text, ensure_ascii=False), PLAIN: text}
        pattern = re.compile("|".join(re.escape(key) for key in subs))
        return markup_text(pattern.sub(lambda match: subs[match.group()], plain))

    def dump_dom(self, case):
        profile = tempfile.mkdtemp(dir=self.tmp)
        proc = run_command([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                            "--no-first-run", f"--user-data-dir={profile}", "--dump-dom",
                            "file://" + os.path.join(case.dir, REPORTS["html"])])
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        return Dom(proc.stdout.decode("utf-8"))

    def test_junit_validates_and_gives_the_text_back(self):
        if not XMLLINT:
            self.skipTest("xmllint is not installed (scripts/bootstrap installs libxml2-utils)")
        schema = os.path.join(FIXTURES, "junit", "junit.xsd")
        for case in self.cases:
            with self.subTest(string=case.name):
                path = os.path.join(case.dir, REPORTS["junit"])
                proc = run_command([XMLLINT, "--noout", "--schema", schema, path])
                self.assertEqual(proc.returncode, 0, proc.stderr.decode()[-2000:])
                root = ElementTree.parse(path).getroot()
                self.assertEqual(root.get("name"), "commcert certify " + markup_text(case.text))
                self.assertEqual([s.get("name") for s in root.iter("testsuite")], NODES)
                errors = [e for e in root.iter("error")]
                self.assertEqual(len(errors), 2)
                for error in errors:
                    self.assertTrue(error.get("message").endswith("): " + markup_text(case.text)))
                    self.assertIn(markup_text(case.text), error.text)

    def test_prometheus_passes_promtool_and_labels_round_trip(self):
        if not PROMTOOL:
            self.skipTest("promtool is not installed (scripts/bootstrap installs prometheus)")
        for case in self.cases:
            with self.subTest(string=case.name):
                text = case.outputs["prom"]
                proc = subprocess.run([PROMTOOL, "check", "metrics"], input=text.encode(),
                                      capture_output=True, timeout=60)
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                self.assertEqual(proc.stdout + proc.stderr, b"")
                samples = prom_samples(text)
                info = [labels for name, labels in samples if name == "commcert_report_info"]
                self.assertEqual(info, [{"sku": case.text, "baseline": case.baseline,
                                         "suite": case.text}])
                burn = [labels for name, labels in samples
                        if name == "commcert_gpu_burn_flop_per_second"]
                self.assertEqual(burn, [{"node": "node3", "gpu": "0", "uuid": case.text,
                                         "kernel": case.text}])

    def test_markdown_tables_keep_their_columns(self):
        plain = table_columns(self.plain.outputs["md"])
        for case in self.cases:
            with self.subTest(string=case.name):
                text = case.outputs["md"]
                self.assertEqual(table_columns(text), plain)
                self.assertNotRegex(text, "[\x00-\x09\x0b-\x1f\x7f]")
                self.assertNotIn("<script", text)
                self.assertNotIn("<img", text)
                # node1's and node2's reasons end in the record's, escaped; so does the row of
                # node1's burn among the GPU stages that did not pass.
                escaped = markdown_text(case.text)
                rows = [row for row in text.split("\n") if "| evidence.error: " in row]
                self.assertEqual(len(rows), 2)
                for row in rows:
                    self.assertIn("): " + escaped + " |", row)
                self.assertIn("| node1 | -1 | burn gemm\\_bf16 | error | " + escaped + " |", text)

    def test_line_formats_keep_one_line_per_node(self):
        for name in TEXT_FORMATS:
            plain = self.plain.outputs[name].count("\n")
            for case in self.cases:
                with self.subTest(string=case.name, format=name):
                    text = case.outputs[name]
                    self.assertEqual(text.count("\n"), plain, text[:2000])
                    self.assertIsNone(RAW_CONTROL.search(text), text[:2000])
        for case in self.cases:
            with self.subTest(string=case.name, format="nhc"):
                lines = case.outputs["nhc"].split("\n")
                # node1's and node2's lines end in the record's reason, escaped.
                ends = [line for line in lines if line.endswith(printable(case.text) + " [evidence.error]")]
                self.assertEqual(len(ends), 2, lines)

    def test_a_host_that_is_no_node_name_is_one_note_naming_file_and_line(self):
        # "plain text" (a space) is no node name either: the plain run has the same note.
        plain = self.plain.certify_named.stdout.decode("utf-8").count("\n")
        for case in self.cases:
            with self.subTest(string=case.name):
                proc = case.certify_named
                self.assertEqual(proc.returncode, 3, proc.stderr[-2000:])
                out = proc.stdout.decode("utf-8")
                self.assertEqual(out.count("\n"), plain, out[-2000:])
                self.assertIsNone(RAW_CONTROL.search(out), out[-2000:])
                shown = case.text.encode()[:64].decode(errors="ignore")
                cut = "..." if len(shown) < len(case.text) else ""
                notes = [line for line in out.split("\n") if line.startswith("note:")]
                self.assertEqual(notes, [f"note: {case.named}:5: host: invalid node name "
                                         f"'{printable(shown)}{cut}': "
                                         f"{self.why_refused(case.text)} [input.unparsable]"])

    @staticmethod
    def why_refused(name):
        if len(name.encode()) > 64:
            return "longer than 64 characters"
        return "only letters, digits, '.', '_' and '-' are allowed"

    def test_history_and_compare_keep_their_lines(self):
        for kind in ("history_add", "history_show", "compare"):
            plain = getattr(self.plain, kind)
            self.assertEqual(plain.returncode, 0, plain.stdout + plain.stderr)
            for case in self.cases:
                with self.subTest(string=case.name, output=kind):
                    proc = getattr(case, kind)
                    self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
                    out = proc.stdout.decode("utf-8")
                    self.assertEqual(out.count("\n"), plain.stdout.decode().count("\n"), out)
                    self.assertIsNone(RAW_CONTROL.search(out), out[:2000])
        for case in self.cases:
            with self.subTest(string=case.name, output="compare"):
                # The burn kernel is the figure's variant: shown, escaped.
                self.assertIn(f"({printable(case.text)})", case.compare.stdout.decode("utf-8"))


if __name__ == "__main__":
    unittest.main()
