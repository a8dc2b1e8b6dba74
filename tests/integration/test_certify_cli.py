"""`commcert certify` and `commcert baseline` from the outside: exit statuses, one-line errors
naming file and line, nothing overwritten on bad input. Runs in every configuration (no MPI)."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

BIN = os.environ["COMMCERT_BIN"]
SOURCE = os.environ["COMMCERT_SOURCE_DIR"]
BASELINE = os.path.join(SOURCE, "suites", "baselines", "cpu-mpi-ci.yaml")


def record(kind, host, **fields):
    r = {"schema": 1, "run_id": "r1", "kind": kind, "status": "ok", "time": "2026-11-21T10:00:00.000Z",
         "host": host, "rank": 0, "local_rank": 0, "gpu": None}
    r.update(fields)
    return r


def sweep_records(wrong_rank=None, nodes=4):
    ranks = [{"rank": i, "process": i, "node": f"node{i}", "hostname": "vm", "local_rank": i,
              "pid": 100 + i, "device": "host", "gpu": None} for i in range(nodes)]
    wrong = [] if wrong_rank is None else [
        {"rank": wrong_rank, "host": f"node{wrong_rank}", "wrong_elements": 7, "wrong_iterations": 1}]
    coll = record("collective", "node0", status="fail" if wrong else "ok", backend="mpi",
                  collective="allreduce", dtype="float", redop="sum", root=None, bytes=1 << 20,
                  count=1 << 18, nranks=nodes, nodes=nodes, scope="cluster", in_place=False, cycle=0,
                  check=True, busbw_bytes_per_s=2e8, rank_time={"median_s": 0.005},
                  straggler={"rank": 1, "host": "node1", "time_s": 0.004, "lead_s": 0.001},
                  wrong_elements=7 if wrong else 0, wrong_ranks=wrong)
    if wrong:
        coll["reason"] = "wrong elements"
    return [record("run", "node0", command="sweep", backend="mpi", ranks=ranks), coll]


class CertifyFiles(unittest.TestCase):
    """A scratch directory and the helpers of the classes below."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="commcert-certify-cli-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_dir(self, records, name="run", tail=""):
        self.write(f"{name}/records.jsonl", "".join(json.dumps(r) + "\n" for r in records) + tail)
        return os.path.join(self.tmp, name)

    def commcert(self, *args):
        return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)

    def assert_usage_error(self, proc, *fragments):
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout, "")
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])


class CertifyCli(CertifyFiles):
    def test_exit_statuses_follow_the_verdict(self):
        clean = self.run_dir(sweep_records(), "clean")
        self.assertEqual(self.commcert("certify", clean, "--baseline", BASELINE).returncode, 0)
        bad = self.run_dir(sweep_records(wrong_rank=3), "bad")
        proc = self.commcert("certify", bad, "--baseline", BASELINE, "--format", "json")
        self.assertEqual(proc.returncode, 1)
        verdict = json.loads(proc.stdout)
        self.assertEqual([n["node"] for n in verdict["nodes"] if n["state"] == "quarantined"], ["node3"])
        # A truncated last line: that evidence is lost, so its nodes are inconclusive (3).
        line = json.dumps(sweep_records()[1])
        cut = self.run_dir(sweep_records()[:1], "cut", tail=line[: len(line) // 2])
        proc = self.commcert("certify", cut, "--baseline", BASELINE)
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        self.assertIn("truncated last record", proc.stdout)

    def test_quarantine_wins_over_inconclusive(self):
        records = sweep_records(wrong_rank=2)
        records[0]["ranks"].append(dict(records[0]["ranks"][0], rank=4, node="node4"))
        both = self.run_dir(records + [record("burn", "node9", status="skipped", reason="no GPU")], "both")
        proc = self.commcert("certify", both, "--baseline", BASELINE)
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertIn("quarantined 1, inconclusive 1", proc.stdout)

    def test_malformed_baselines_name_file_and_line_and_write_nothing(self):
        run = self.run_dir(sweep_records())
        verdict = self.write("run/verdict.json", "previous verdict\n")
        cases = {
            "syntax.yaml": ("schema: 1\nsku: x\nrequired: [collective.allreduce\n", ":4:"),
            "type.yaml": ("schema: 1\nsku: x\nrequired: [collective.allreduce]\nchecks:\n"
                          "  collective.allreduce:\n    min_bytes: lots\n", "type.yaml:6:"),
            "check.yaml": ("schema: 1\nsku: x\nrequired: [collective.allreduce]\nchecks:\n"
                           "  collective.allreduse: {}\n", "check.yaml:5:"),
        }
        for name, (text, where) in cases.items():
            with self.subTest(name):
                path = self.write(name, text)
                self.assert_usage_error(self.commcert("certify", run, "--baseline", path), path, where)
        with open(verdict) as f:
            self.assertEqual(f.read(), "previous verdict\n")

    def test_empty_or_missing_results_are_errors_not_passes(self):
        empty = self.run_dir([], "empty")
        self.assert_usage_error(self.commcert("certify", empty, "--baseline", BASELINE), "nothing to certify")
        self.assert_usage_error(self.commcert("certify", os.path.join(self.tmp, "nope"), "--baseline", BASELINE),
                                "no such file or directory")
        os.makedirs(os.path.join(self.tmp, "no-runs"))
        self.assert_usage_error(self.commcert("certify", os.path.join(self.tmp, "no-runs"), "--baseline", BASELINE),
                                "no records.jsonl")

    def test_bad_flags_are_usage_errors(self):
        run = self.run_dir(sweep_records())
        self.assertEqual(self.commcert("certify", run, "--baseline", BASELINE, "--frobnicate").returncode, 2)
        self.assertEqual(self.commcert("certify", run).returncode, 2)  # --baseline is required
        self.assertEqual(self.commcert("certify", run, "--baseline", BASELINE, "--format", "xml").returncode, 2)

    def test_suite_file_sets_the_required_checks(self):
        run = self.run_dir(sweep_records())
        suite = self.write("suite.yaml", "schema: 1\nname: gpu\nrequired: [collective.allreduce, burn]\n")
        proc = self.commcert("certify", run, "--baseline", BASELINE, "--suite", suite)
        self.assertEqual(proc.returncode, 3, proc.stdout)  # nobody ran burn
        self.assertIn("burn: no evidence", proc.stdout)
        bad = self.write("bad-suite.yaml", "schema: 1\nname: gpu\nrequired: [burnz]\n")
        self.assert_usage_error(self.commcert("certify", run, "--baseline", BASELINE, "--suite", bad), "bad-suite.yaml:3:")

    def test_baseline_derivation_writes_a_loadable_file_and_never_overwrites(self):
        runs = [self.run_dir(sweep_records(), f"good{i}") for i in range(3)]
        out = os.path.join(self.tmp, "derived.yaml")
        proc = self.commcert("baseline", "--from", *runs, "--out", out, "--min-bytes", "1M", "--sku", "ci-derived")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("collective.allreduce.busbw.cluster", proc.stdout)
        with open(out) as f:
            text = f.read()
        self.assertIn("sku: ci-derived", text)
        self.assertIn("fix_threshold", text)
        self.assertEqual(self.commcert("certify", runs[0], "--baseline", out).returncode, 0)
        again = self.commcert("baseline", "--from", runs[0], "--out", out, "--min-bytes", "1M")
        self.assert_usage_error(again, "exists")
        with open(out) as f:
            self.assertEqual(f.read(), text)


class CertifyBoundedInputs(CertifyFiles):
    """Inputs are read up to a limit named in the error: nothing hangs or fills memory (issue 10)."""

    MIB = 1 << 20

    def padded_record_line(self, length):
        """A valid records line of exactly `length` bytes before its newline (trailing blanks)."""
        line = json.dumps(sweep_records()[1])  # a repeat of a line before it: read once
        return line + " " * (length - len(line))

    def test_baseline_or_suite_from_a_device_or_fifo_is_refused_or_read_not_hung(self):
        run = self.run_dir(sweep_records())
        # /dev/zero was read without bound: now refused at 4 MiB, naming the limit.
        self.assert_usage_error(self.commcert("certify", run, "--baseline", "/dev/zero"),
                                "baseline /dev/zero is larger than 4 MiB")
        self.assert_usage_error(
            self.commcert("certify", run, "--baseline", BASELINE, "--suite", "/dev/zero"),
            "suite /dev/zero is larger than 4 MiB")
        fifo = os.path.join(self.tmp, "fifo.yaml")
        os.mkfifo(fifo)
        # No writer: read as an empty file at once (it used to wait for a writer forever).
        self.assert_usage_error(self.commcert("certify", run, "--baseline", fifo), "empty")

    def test_baseline_at_its_size_limit_is_read_one_byte_more_is_refused(self):
        run = self.run_dir(sweep_records())
        with open(BASELINE) as f:
            text = f.read()
        for size, accepted in ((4 * self.MIB - 1, True), (4 * self.MIB, True), (4 * self.MIB + 1, False)):
            with self.subTest(size=size):
                padding = size - len(text) - 2
                path = self.write("big.yaml", text + "#" + "x" * padding + "\n")
                self.assertEqual(os.path.getsize(path), size)
                proc = self.commcert("certify", run, "--baseline", path)
                if accepted:
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                else:
                    self.assert_usage_error(proc, path, "larger than 4 MiB, the most a baseline file may hold")

    def test_meta_json_at_its_size_limit_is_read_one_byte_more_is_refused(self):
        for size, accepted in ((16 * self.MIB, True), (16 * self.MIB + 1, False)):
            with self.subTest(size=size):
                run = self.run_dir(sweep_records(), f"meta-{size}")
                meta = json.dumps({"run_id": "r1", "status": "ok"})
                path = self.write(f"meta-{size}/meta.json", meta + " " * (size - len(meta)))
                self.assertEqual(os.path.getsize(path), size)
                proc = self.commcert("certify", run, "--baseline", BASELINE)
                if accepted:
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                else:
                    self.assert_usage_error(proc, path, "larger than 16 MiB, the most a meta.json file may hold")

    def test_records_from_dev_zero_are_refused_at_the_line_limit(self):
        # One endless line: the chunks grew with it until memory ran out.
        proc = self.commcert("certify", "/dev/zero", "--baseline", BASELINE)
        self.assert_usage_error(proc, "/dev/zero:1: a line longer than 64 MiB")

    def test_a_record_line_at_its_limit_is_read_one_byte_more_is_refused(self):
        for length, accepted in ((64 * self.MIB, True), (64 * self.MIB + 1, False)):
            with self.subTest(length=length):
                records = "".join(json.dumps(r) + "\n" for r in sweep_records())
                path = self.write("long/records.jsonl", records + self.padded_record_line(length) + "\n")
                proc = self.commcert("certify", path, "--baseline", BASELINE)
                if accepted:
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                else:
                    self.assert_usage_error(proc, f"{path}:3: a line longer than 64 MiB")

    def test_a_records_file_over_16_gib_is_refused_by_its_size(self):
        # Sparse: no disk is used. At the limit the file is read (and its first line, 16 GiB of
        # NULs, is refused as too long); one byte more is refused before reading.
        path = os.path.join(self.tmp, "huge.jsonl")
        for size, error in ((16 << 30, f"{path}:1: a line longer than 64 MiB"),
                            ((16 << 30) + 1, f"records file {path} is larger than 16 GiB")):
            with self.subTest(size=size):
                with open(path, "wb") as f:
                    f.truncate(size)
                self.assert_usage_error(self.commcert("certify", path, "--baseline", BASELINE), error)

    def test_a_host_that_is_no_node_name_is_refused_naming_file_and_line(self):
        # records.md: node names are letters, digits, '.', '_' and '-'. A record naming a node
        # otherwise is lost as unreadable (its nodes inconclusive), one note naming file:line,
        # the name escaped; no output names it as a node.
        evil = "evil\nnode\x1b[2J"
        text = "".join(json.dumps(r) + "\n" for r in sweep_records(wrong_rank=3))
        path = self.write("run/records.jsonl", text.replace('"node3"', json.dumps(evil)))
        proc = self.commcert("certify", os.path.dirname(path), "--baseline", BASELINE)
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        self.assertNotIn("\x1b", proc.stdout)
        notes = [line for line in proc.stdout.splitlines() if "invalid node name" in line]
        self.assertEqual(len(notes), 2, proc.stdout)
        # Line 1, the run record, names it in its rank map; line 2, the collective, as a wrong rank.
        for number, (line, field) in enumerate(zip(notes, ("ranks[].node", "wrong_ranks[].host")), 1):
            self.assertIn(f"{path}:{number}: {field}: invalid node name 'evil\\nnode\\x1b[2J'", line)
        nhc = self.commcert("certify", os.path.dirname(path), "--baseline", BASELINE, "--format", "nhc")
        self.assertNotIn("evil", nhc.stdout)
        verdict = self.commcert("certify", os.path.dirname(path), "--baseline", BASELINE, "--format", "json")
        self.assertNotIn(evil, [n["node"] for n in json.loads(verdict.stdout)["nodes"]])


class CertifyFailClosed(CertifyFiles):
    """Issue 10, items 5 and 6, from the outside: a run that never finished certifies nobody
    unless --allow-partial says so (and the verdict says it did); a meta.json field of the wrong
    type is one line naming the file and the field, exit status 2."""

    def meta(self, run, **fields):
        self.write(f"{os.path.basename(run)}/meta.json", json.dumps({"run_id": "r1", **fields}))

    def test_an_unfinished_run_certifies_nobody_unless_allowed(self):
        run = self.run_dir(sweep_records())
        self.meta(run, status="ok")
        self.assertEqual(self.commcert("certify", run, "--baseline", BASELINE).returncode, 0)
        self.meta(run, status="running")
        proc = self.commcert("certify", run, "--baseline", BASELINE)
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        self.assertIn("certified 0, quarantined 0, inconclusive 4", proc.stdout)
        self.assertIn("run r1 never finished (meta.json still says running)", proc.stdout)
        proc = self.commcert("certify", run, "--baseline", BASELINE, "--allow-partial",
                             "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        verdict = json.loads(proc.stdout)
        self.assertEqual({n["state"] for n in verdict["nodes"]}, {"certified"})
        for node in verdict["nodes"]:
            self.assertEqual([r["code"] for r in node["reasons"]], ["input.run_partial"])
            self.assertIn("--allow-partial", node["reasons"][0]["message"])
        # --allow-partial relaxes nothing else: a quarantine stays a quarantine.
        bad = self.run_dir(sweep_records(wrong_rank=3), "bad")
        self.meta(bad, status="running")
        proc = self.commcert("certify", bad, "--baseline", BASELINE, "--allow-partial")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)

    def test_a_running_suite_certifies_nobody(self):
        run = self.run_dir(sweep_records())
        self.meta(run, status="ok")
        self.write("run/suite.json", json.dumps({"run_id": "r1", "status": "running", "stages": []}))
        proc = self.commcert("certify", run, "--baseline", BASELINE)
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        self.assertIn("suite.json still says running", proc.stdout)

    def test_meta_fields_of_the_wrong_type_are_one_line_errors(self):
        run = self.run_dir(sweep_records())
        verdict = self.write("run/verdict.json", "previous verdict\n")
        for fields, field in (({"status": 5}, "status"), ({"status": ["ok"]}, "status"),
                              ({"run_id": 7, "status": "ok"}, "run_id")):
            with self.subTest(field=field, value=fields):
                self.write("run/meta.json", json.dumps({"run_id": "r1", **fields}))
                self.assert_usage_error(self.commcert("certify", run, "--baseline", BASELINE),
                                        os.path.join(run, "meta.json"), f"{field}: expected a string")
        with open(verdict) as f:
            self.assertEqual(f.read(), "previous verdict\n")


class CertifyApply(CertifyFiles):
    """`certify --apply slurm [--dry-run]`: what is decided before Slurm is asked. Drains, resumes
    and refusals against a real Slurm are in test_slurm_pool."""

    def certify(self, run, *args, env=None):
        return subprocess.run([BIN, "certify", run, "--baseline", BASELINE, *args], capture_output=True,
                              text=True, timeout=60, env=env)

    def test_apply_flags_are_checked_before_anything_is_written(self):
        run = self.run_dir(sweep_records(wrong_rank=2))
        for args, fragment in ((["--dry-run"], "--apply"), (["--apply", "bogus"], "bogus"),
                               (["--apply"], "--apply")):
            with self.subTest(args=args):
                self.assert_usage_error(self.certify(run, *args), fragment)
        self.assertFalse(os.path.exists(os.path.join(run, "verdict.json")))

    def test_missing_slurm_configuration_is_one_line_and_status_3_with_the_verdict_written(self):
        run = self.run_dir(sweep_records(wrong_rank=2))
        env = dict(os.environ, SLURM_CONF=os.path.join(self.tmp, "no", "slurm.conf"))
        for fmt in ("text", "json"):
            with self.subTest(format=fmt):
                verdict = os.path.join(self.tmp, f"verdict-{fmt}.json")
                proc = self.certify(run, "--apply", "slurm", "--format", fmt, "--verdict", verdict, env=env)
                self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
                errors = [line for line in proc.stderr.splitlines() if "error" in line]
                self.assertEqual(len(errors), 1, proc.stderr)
                self.assertIn("SLURM_CONF", errors[0])
                with open(verdict) as f:
                    self.assertEqual(json.load(f)["exit_status"], 1)  # nothing lost
                if fmt == "json":
                    self.assertEqual(json.loads(proc.stdout)["exit_status"], 1)
                else:
                    self.assertIn("quarantined 1", proc.stdout)


class CertifyReports(CertifyFiles):
    """`--report NAME=PATH` (repeatable) beside `--format NAME`: several outputs of one verdict,
    each to stdout or a file written atomically; bad names and places refused before judging."""

    def certify(self, run, *args):
        return self.commcert("certify", run, "--baseline", BASELINE, *args)

    @staticmethod
    def without_time(verdict):
        verdict = dict(verdict)
        verdict.pop("time", None)
        return verdict

    def test_a_file_and_stdout_in_one_run(self):
        run = self.run_dir(sweep_records(wrong_rank=2))
        report = os.path.join(self.tmp, "reports", "verdict.json")
        os.makedirs(os.path.dirname(report))
        proc = self.certify(run, "--report", f"json={report}", "--report", "nhc=-")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        # stdout holds the NHC lines alone, as `--format nhc` prints them.
        self.assertEqual(proc.stdout, self.certify(run, "--format", "nhc").stdout)
        self.assertIn("ERROR: commcert: node2: quarantined", proc.stdout)
        with open(report) as f, open(os.path.join(run, "verdict.json")) as g:
            self.assertEqual(self.without_time(json.load(f)), self.without_time(json.load(g)))
        self.assertIn(f"json report written to {report}", proc.stderr)

    def test_without_a_stdout_report_the_summary_stays_on_stdout(self):
        run = self.run_dir(sweep_records())
        report = os.path.join(self.tmp, "v.nhc")
        # Each --report takes one value: the results directory after it stays positional.
        proc = self.commcert("certify", "--report", f"nhc={report}", run, "--baseline", BASELINE)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, self.certify(run).stdout)
        self.assertIn("certified 4, quarantined 0, inconclusive 0", proc.stdout)
        with open(report) as f:
            self.assertEqual(f.read(), "SUCCESS: commcert: 4 node(s) certified against cpu-mpi-ci\n")

    def test_a_missing_directory_or_unknown_name_is_refused_before_judging(self):
        run = self.run_dir(sweep_records(wrong_rank=2))
        missing = os.path.join(self.tmp, "no", "such", "v.json")
        cases = [(["--report", f"json={missing}"], ["--report", missing, "does not exist"]),
                 (["--report", "xml=-"], ["--report", "unknown format 'xml'", "text, json, nhc"]),
                 (["--format", "xml"], ["--format", "unknown format 'xml'", "text, json, nhc"]),
                 (["--report", "json"], ["--report", "NAME=PATH"]),
                 (["--report", f"json={self.tmp}"], ["--report", "is a directory"]),
                 (["--report", "json=-", "--report", "nhc=-"], ["--report nhc=-", "stdout"]),
                 (["--format", "json", "--report", "nhc=-"], ["--report nhc=-", "stdout"])]
        for args, fragments in cases:
            with self.subTest(args=args):
                self.assert_usage_error(self.certify(run, *args), *fragments)
        self.assertFalse(os.path.exists(os.path.join(run, "verdict.json")), "judged anyway")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "no")))

    def test_an_existing_report_is_replaced_whole_by_a_rename(self):
        run = self.run_dir(sweep_records(wrong_rank=2))
        reports = os.path.join(self.tmp, "reports")
        os.makedirs(reports)
        report = os.path.join(reports, "node.nhc")
        with open(report, "w") as f:
            f.write("SUCCESS: an old verdict\n")
        # A reader holding the old file (a second name for it) keeps reading the old contents:
        # the new report is a new file renamed over the path, not the old one rewritten.
        os.link(report, os.path.join(self.tmp, "held-by-a-reader"))
        proc = self.certify(run, "--report", f"nhc={report}")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        with open(report) as f:
            self.assertIn("ERROR: commcert: node2: quarantined", f.read())
        with open(os.path.join(self.tmp, "held-by-a-reader")) as f:
            self.assertEqual(f.read(), "SUCCESS: an old verdict\n")
        self.assertEqual(os.listdir(reports), ["node.nhc"])  # no temporary file left behind


if __name__ == "__main__":
    unittest.main()
