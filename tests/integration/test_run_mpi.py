"""`commcert run SUITE` end to end: the built-in `ci` suite under a real `mpirun -np 4`, each rank
standing for a node (--node-name 'node{rank}'), with injected faults; suite errors before anything
runs; a stage that outlives its budget. Localization needs a cluster-scope shortfall, which the
CI baseline's generous floors never see: those tests judge against a copy whose cluster floor
(50 MB/s) a 50 ms injected delay falls below and a healthy loaded 2-core box clears fourfold, and
whose pairs are judged by an absolute floor (100 MB/s: a delayed pair makes about 40) instead of
against each other: under a parallel ctest, healthy pairs of one round on this box spread over
more than a factor of ten."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from commcert_testing import mpirun_launch, read_records, validate_records

BIN = os.environ["COMMCERT_BIN"]
SOURCE = os.environ["COMMCERT_SOURCE_DIR"]
CI_BASELINE = os.path.join(SOURCE, "suites", "baselines", "cpu-mpi-ci.yaml")
NODES = [f"node{i}" for i in range(4)]


def localization_baseline(path):
    """cpu-mpi-ci with a cluster-scope and a pairs floor of 0.05 GB/s for both collectives of the
    ci suite. Healthy pairs here move 1 MiB in 1-2 ms (0.5-1 GB/s) but in 10 ms or more when
    the 2-core machine is loaded; the faults below add 100 ms per operation (about 0.01 GB/s),
    so the floor sits between the two with room on both sides."""
    with open(CI_BASELINE) as f:
        text = f.read()
    text, count = re.subn(r"(      cluster:\n        floor: )0\.001", r"\g<1>0.05", text)
    assert count == 2, "cpu-mpi-ci.yaml changed shape: update this test"
    text, count = re.subn(r"max_deficit_pct: 80",
                          "max_deficit_pct: 99\n      floor_gb_per_s: 0.05", text)
    assert count == 3, "cpu-mpi-ci.yaml changed shape: update this test"  # and sendrecv's
    with open(path, "w") as f:
        f.write(text)
    return path


class RunSuite(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="commcert-run-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.results = os.path.join(self.tmp, "results")

    def run_suite(self, suite, *args, fault=None, ranks=4, timeout=300, environment=None):
        command, env = mpirun_launch(ranks, fault)
        for name, value in (environment or {}).items():
            env[name] = value
            command += ["-x", name]
        command += [BIN, "run", suite, "--node-name", "node{rank}", "--out", self.results,
                    "--run-id", "suite-run", *args]
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
        self.run_dir = os.path.join(self.results, "suite-run")
        return proc

    def verdict(self):
        with open(os.path.join(self.run_dir, "verdict.json")) as f:
            return json.load(f)

    def suite_log(self):
        with open(os.path.join(self.run_dir, "suite.json")) as f:
            return json.load(f)

    def states(self):
        return {n["node"]: n["state"] for n in self.verdict()["nodes"]}

    def reasons(self, node):
        entry = next(n for n in self.verdict()["nodes"] if n["node"] == node)
        return entry["reasons"]

    def test_clean_ci_run_certifies_every_node_with_one_results_directory(self):
        proc = self.run_suite("ci")
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        self.assertEqual(self.states(), {node: "certified" for node in NODES})
        self.assertIn("certified 4, quarantined 0, inconclusive 0", proc.stdout)
        # Progress names stage, step and time on stderr; the verdict closes the run.
        self.assertIn("commcert run: [1/3] health:", proc.stderr)
        self.assertIn("commcert run: [3/3] cluster-collectives: ok", proc.stderr)
        self.assertRegex(proc.stderr, r"elapsed [0-9.]+s · at most [0-9hms.]+ left")
        log = self.suite_log()
        self.assertEqual((log["suite"], log["baseline"], log["status"]),
                         ("ci", "cpu-mpi-ci", "certified"))
        self.assertEqual([(s["name"], s["status"]) for s in log["stages"]],
                         [("health", "ok"), ("node-collectives", "ok"),
                          ("cluster-collectives", "ok")])
        # Every stage wrote into the one run directory, in the documented record schema.
        records = read_records(os.path.join(self.run_dir, "records.jsonl"))
        validate_records(self, records)
        scopes = {r["scope"] for r in records if r["kind"] == "collective"}
        self.assertEqual(scopes, {"node", "cluster"})
        self.assertEqual({r["host"] for r in records if r["kind"] == "health"}, set(NODES))
        self.assertEqual(self.verdict()["suite"]["name"], "ci")

    def test_corrupting_rank_quarantines_exactly_its_node(self):
        reports = os.path.join(self.tmp, "reports")
        os.makedirs(reports)
        proc = self.run_suite("ci", "--report", f"json={reports}/verdict.json",
                              "--report", f"nhc={reports}/verdict.nhc",
                              "--report", f"md={reports}/verdict.md", fault="corrupt:2")
        self.assertEqual(proc.returncode, 1, proc.stdout[-3000:] + proc.stderr[-3000:])
        self.assertEqual(self.states(), {"node0": "certified", "node1": "certified",
                                         "node2": "quarantined", "node3": "certified"})
        self.assertEqual(self.reasons("node2")[0]["code"], "collective.wrong_data")
        self.assertRegex(proc.stdout, r"node2\s+quarantined\s+isolate\s+allreduce: \d+ wrong")
        self.assertEqual(self.suite_log()["status"], "fail")
        # --report outputs beside the summary on stdout, from the same verdict.
        with open(os.path.join(reports, "verdict.json")) as f:
            report = json.load(f)
        self.assertEqual({n["node"]: n["state"] for n in report["nodes"]}, self.states())
        with open(os.path.join(reports, "verdict.nhc")) as f:
            self.assertRegex(f.read(), r"^ERROR: commcert: node2: quarantined")
        # The report written by the run says how the run ended (suite.json said running while
        # it was judged) and spans every stage, not only the last one's meta.json times.
        with open(os.path.join(self.run_dir, "meta.json")) as f:
            meta = json.load(f)
        first_start = min([meta["start_time"]] + [e["start_time"] for e in meta["earlier"]])
        with open(os.path.join(reports, "verdict.md")) as f:
            runs = f.read().split("### Runs", 1)[1]
        run_id = os.path.basename(self.run_dir)
        self.assertIn(f"- {run_id}: fail, suite ci, {first_start} – {meta['end_time']}", runs)

    def test_a_slow_node_is_found_by_the_pairs_and_blamed_alone(self):
        baseline = localization_baseline(os.path.join(self.tmp, "floor.yaml"))
        proc = self.run_suite("ci", "--baseline", baseline, fault="delay:2:100000")
        self.assertEqual(proc.returncode, 1, proc.stdout[-3000:] + proc.stderr[-3000:])
        self.assertIn("fell short without naming a node: measuring every node pair", proc.stderr)
        self.assertEqual(self.states(), {"node0": "certified", "node1": "certified",
                                         "node2": "quarantined", "node3": "certified"})
        first = self.reasons("node2")[0]
        self.assertEqual(first["code"], "localization.bad_node")
        self.assertIn("slow with 3 of 3 partners", first["message"])
        # Blamed only after it was slow again with two known-good partners, in one re-test stage.
        self.assertRegex(first["message"], r"slow again with known-good node[013] \(allreduce")
        names = [s["name"] for s in self.suite_log()["stages"]]
        self.assertIn("cluster-collectives-pairs", names)
        self.assertIn("cluster-collectives-pairs-retest", names)
        self.assertNotIn("cluster-collectives-pairs-retest2", names)  # nothing left to re-test
        records = read_records(os.path.join(self.run_dir, "records.jsonl"))
        pairs = {tuple(r["group_nodes"]) for r in records
                 if r["kind"] == "collective" and r["scope"] == "pairs"}
        self.assertEqual(len(pairs), 6)  # every pair of 4 nodes, once
        self.assertEqual({r["round"] for r in records if r.get("scope") == "pairs"}, {0, 1, 2})

    def test_a_slow_link_is_re_tested_and_blames_neither_node(self):
        baseline = localization_baseline(os.path.join(self.tmp, "floor.yaml"))
        proc = self.run_suite("ci", "--baseline", baseline, fault="linkdelay:1:3:100000")
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        self.assertEqual(self.states(), {node: "certified" for node in NODES})
        self.assertIn("re-testing before blaming", proc.stderr)
        self.assertIn("suspect link node1<->node3: allreduce", proc.stdout)
        for node in ("node1", "node3"):
            link = next(r for r in self.reasons(node) if r["code"] == "localization.suspect_link")
            self.assertEqual(link["severity"], "monitor")
            self.assertIn("slow again when measured again", link["message"])
            self.assertRegex(link["message"],
                             r"node1 passed with node\d(, node\d)*; node3 passed with node\d")
        retest = next(s for s in self.suite_log()["stages"] if s["name"].endswith("-retest"))
        self.assertEqual(retest["status"], "ok")
        self.assertIn("--pair-list", retest["argv"])
        records = read_records(os.path.join(self.run_dir, "records.jsonl"))
        retested = {tuple(sorted(r["group_nodes"])) for r in records if r.get("pair_list")}
        # Each suspect with both known-good nodes, and the slow pair once more.
        self.assertEqual(len(retested), 5)
        self.assertIn(("node1", "node3"), retested)
        for pair in retested - {("node1", "node3")}:
            self.assertEqual(len(set(pair) & {"node1", "node3"}), 1, pair)  # a suspect, a good node

    def test_a_stage_that_outlives_its_budget_ends_the_job_and_keeps_the_records(self):
        suite = os.path.join(self.tmp, "stuck.yaml")
        with open(suite, "w") as f:
            f.write("schema: 1\nname: stuck\nbaseline: cpu-mpi-ci\nstages:\n"
                    "  - run: health\n    budget: 60s\n"
                    "  - name: stuck-sweep\n    run: sweep\n"
                    "    args: [allreduce, --backend, mpi, -b, 1M, -e, 1M, -T, '0']\n"
                    "    budget: 4s\n")
        proc = self.run_suite(suite, fault="hang:1:3", timeout=120)
        self.assertEqual(proc.returncode, 4, proc.stdout[-3000:] + proc.stderr[-3000:])
        self.assertIn("stage 'stuck-sweep' used its budget of 4.0s; ending the job", proc.stderr)
        log = self.suite_log()
        self.assertEqual(log["status"], "over_budget")
        self.assertEqual(log["stages"][-1]["status"], "over_budget")
        records = read_records(os.path.join(self.run_dir, "records.jsonl"))
        self.assertEqual({r["host"] for r in records if r["kind"] == "health"}, set(NODES))
        # Judged afterwards, the nodes are not certified on a run that never finished.
        certify = subprocess.run([BIN, "certify", self.run_dir, "--baseline", CI_BASELINE],
                                 capture_output=True, text=True, timeout=60)
        self.assertNotEqual(certify.returncode, 0, certify.stdout)
        self.assertNotIn("certified 4", certify.stdout)

    def test_stages_after_the_first_may_outlast_the_end_of_job_timeout(self):
        # The end of the job (MPI_Finalize) is bounded, but only the run's own end: a stage's
        # process group closing inside the run once armed that bound, and every process ended
        # with status 4 and no verdict one timeout after the first stage, mid-run, whenever the
        # rest took longer (a slow fabric's pairs did). Here the bound is 2 s and the second
        # stage takes longer: 10 operations, each 0.4 s late on rank 1.
        suite = os.path.join(self.tmp, "long.yaml")
        with open(suite, "w") as f:
            f.write("schema: 1\nname: long\nbaseline: cpu-mpi-ci\nstages:\n"
                    "  - run: health\n    budget: 60s\n"
                    "  - name: slow-sweep\n    run: sweep\n"
                    "    args: [allreduce, --backend, mpi, -b, 1M, -e, 1M, -n, 10, -w, 1]\n"
                    "    budget: 120s\n")
        proc = self.run_suite(suite, fault="delay:1:400000", timeout=180,
                              environment={"COMMCERT_END_TIMEOUT": "2s"})
        detail = proc.stdout[-3000:] + proc.stderr[-3000:]
        self.assertNotIn("did not complete within", proc.stderr, detail)
        self.assertNotEqual(proc.returncode, 4, detail)
        self.assertEqual(sorted(n["node"] for n in self.verdict()["nodes"]), NODES)
        log = self.suite_log()
        self.assertEqual([stage["status"] for stage in log["stages"]], ["ok", "ok"], detail)
        self.assertNotIn(log["status"], ("running", "error"), detail)
        slow = next(stage for stage in log["stages"] if stage["name"] == "slow-sweep")
        self.assertGreater(slow["elapsed_s"], 2.0, "the stage must outlast the bound to test it")

    def test_an_error_on_another_process_ends_the_run_and_its_files_say_error(self):
        # Process 1's fourth data operation in the sweep fails (COMMCERT_FAULT fail:1:3): the job
        # ends at once (exit 3, no verdict), and process 0 records the error in suite.json and
        # meta.json before it goes, naming the process, its node and the reason, instead of
        # leaving both saying running.
        suite = os.path.join(self.tmp, "failing.yaml")
        with open(suite, "w") as f:
            f.write("schema: 1\nname: failing\nbaseline: cpu-mpi-ci\nstages:\n"
                    "  - run: health\n    budget: 60s\n"
                    "  - name: cluster-sweep\n    run: sweep\n"
                    "    args: [allreduce, --backend, mpi, -b, 64K, -e, 64K]\n"
                    "    budget: 120s\n")
        proc = self.run_suite(suite, fault="fail:1:3", timeout=180)
        detail = proc.stdout[-3000:] + proc.stderr[-3000:]
        self.assertEqual(proc.returncode, 3, detail)
        self.assertIn("commcert sweep: error on rank 1 (node1)", proc.stderr)
        log = self.suite_log()
        self.assertEqual((log["status"], log["exit_code"]), ("error", 3), log)
        self.assertEqual([(s["name"], s["status"]) for s in log["stages"]],
                         [("health", "ok"), ("cluster-sweep", "error")])
        stage = log["stages"][-1]
        self.assertEqual(stage["exit_code"], 3)
        for error in (log["error"], stage["error"]):
            self.assertEqual((error["command"], error["process"], error["rank"], error["node"]),
                             ("sweep", 1, 1, "node1"), error)
            self.assertIn("injected fault (COMMCERT_FAULT fail:1:3)", error["reason"])
        with open(os.path.join(self.run_dir, "meta.json")) as f:
            meta = json.load(f)
        self.assertEqual((meta["status"], meta["exit_code"]), ("error", 3), meta)
        self.assertEqual(meta["error"], log["error"])
        records = read_records(os.path.join(self.run_dir, "records.jsonl"))
        errors = [r for r in records if r["status"] == "error"]
        self.assertEqual([(r["kind"], r["host"]) for r in errors], [("collective", "node1")])
        self.assertFalse(os.path.exists(os.path.join(self.run_dir, "verdict.json")))
        # Judged afterwards: finished (not `running`), and nobody certified on it.
        certify = subprocess.run([BIN, "certify", self.run_dir, "--baseline", CI_BASELINE],
                                 capture_output=True, text=True, timeout=60)
        self.assertNotEqual(certify.returncode, 0, certify.stdout)
        self.assertNotIn("never finished", certify.stdout)
        self.assertIn("certified 0", certify.stdout)

    def test_a_report_that_cannot_be_written_leaves_the_verdicts_status_and_says_so(self):
        # /proc takes no new files, not even from root: the path passes the checks made before
        # the run (its directory exists) and fails when the verdict is written.
        unwritable = "/proc/commcert-verdict.json"
        try:
            with open(unwritable, "w"):
                pass
            self.skipTest(f"{unwritable} is writable here")
        except OSError:
            pass
        reports = os.path.join(self.tmp, "reports")
        os.makedirs(reports)
        proc = self.run_suite("ci", "--report", f"json={unwritable}",
                              "--report", f"md={reports}/verdict.md")
        detail = proc.stdout[-3000:] + proc.stderr[-3000:]
        # The verdict's status, as without the report: a CI job gates on the verdict.
        self.assertEqual(proc.returncode, 0, detail)
        self.assertEqual(self.states(), {node: "certified" for node in NODES})
        failed = [line for line in proc.stderr.splitlines() if unwritable in line]
        self.assertEqual(len(failed), 1, proc.stderr)
        self.assertIn(f"commcert run: error: --report json={unwritable}: ", failed[0])
        self.assertTrue(os.path.exists(os.path.join(reports, "verdict.md")))
        log = self.suite_log()
        self.assertEqual((log["status"], log["exit_code"]), ("certified", 0), log)
        entries = {entry["format"]: entry for entry in log["reports"]}
        self.assertEqual(entries["md"]["status"], "ok")
        self.assertEqual(entries["md"]["path"], f"{reports}/verdict.md")
        self.assertNotIn("reason", entries["md"])
        self.assertEqual((entries["json"]["status"], entries["json"]["path"]),
                         ("error", unwritable))
        self.assertTrue(entries["json"]["reason"], entries["json"])


class SuiteErrors(unittest.TestCase):
    """A malformed suite fails before anything runs: one line naming file, line and key."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="commcert-run-errors-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def run_plain(self, *args):
        """`commcert run ARGS` without a launcher, into a results root of its own."""
        self.out = tempfile.mkdtemp(dir=self.tmp)
        os.rmdir(self.out)
        return subprocess.run([BIN, "run", *args, "--out", self.out],
                              capture_output=True, text=True, timeout=60)

    def write(self, text):
        path = os.path.join(self.tmp, "suite.yaml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def assert_refused(self, proc, *fragments):
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        self.assertEqual(len(lines), 1, proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])
        self.assertFalse(os.path.exists(self.out), "something ran")

    def test_malformed_suites_name_file_line_and_key(self):
        head = "schema: 1\nname: bad\nbaseline: cpu-mpi-ci\nstages:\n"
        cases = [
            (head + "  - run: sweep\n    args: [allreduce]\n    budgt: 5m\n",
             ["suite.yaml:7:", "budgt"]),
            (head + "  - run: burnin\n    budget: 5m\n", ["suite.yaml:5:", "unknown stage 'burnin'"]),
            (head + "  - run: sweep\n    args: [allreduce, --frobnicate]\n    budget: 5m\n",
             ["suite.yaml:6:", "--frobnicate"]),
            (head + "  - run: sweep\n    args: [allreduce, -b, 1X]\n    budget: 5m\n",
             ["suite.yaml:6:", "1X"]),
            (head + "  - run: sweep\n    args: [allreduce, --out, /tmp/x]\n    budget: 5m\n",
             ["suite.yaml:6:", "--out is set by `commcert run`"]),
            (head + "  - run: health\n", ["suite.yaml:5:", "budget"]),
            (head + "  - run: health\n    budget: soon\n", ["suite.yaml:6:", "budget"]),
            (head + "  - run: health\n    budget: 1m\n  - run: health\n    budget: 1m\n",
             ["suite.yaml:7:", "'health' names two stages"]),
            ("schema: 1\nname: bad\nbaseline: cpu-mpi-ci\nstages: [\n", ["suite.yaml:"]),
        ]
        for text, fragments in cases:
            with self.subTest(fragments=fragments):
                self.assert_refused(self.run_plain(self.write(text)), *fragments)

    def test_unknown_suites_baselines_and_flags(self):
        self.assert_refused(self.run_plain("nightly"), "no suite 'nightly'", "quick")
        self.assert_refused(self.run_plain("ci", "--baseline", "h900"), "no baseline 'h900'")
        self.assert_refused(self.run_plain("ci", "--frobnicate"), "--frobnicate")
        self.assert_refused(self.run_plain(self.write("schema: 1\nname: x\nstages:\n"
                                                      "  - run: health\n    budget: 1m\n")),
                            "names no baseline")

    def test_bad_report_outputs_are_refused_before_any_stage(self):
        missing = os.path.join(self.tmp, "no", "verdict.json")
        self.assert_refused(self.run_plain("ci", "--report", f"json={missing}"),
                            "--report", "does not exist")
        self.assert_refused(self.run_plain("ci", "--report", "xml=-"),
                            "--report", "unknown format 'xml'", "text, json, nhc")
        self.assert_refused(self.run_plain("ci", "--format", "xml"), "--format", "'xml'")

    def test_plan_lists_stages_budgets_and_required_checks_without_running(self):
        proc = self.run_plain("quick", "--baseline", "cpu-mpi-ci", "--plan")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"burn\s+-\s+burn --duration 60s .*\[skipped: baseline "
                                      r"cpu-mpi-ci has no GPUs per node\]")
        self.assertRegex(proc.stdout, r"cluster-collectives\s+5m00s\s+sweep allreduce allgather")
        self.assertRegex(proc.stdout, r"p2p\s+-\s+p2p --size 64M .*\[skipped: baseline "
                                      r"cpu-mpi-ci has no GPUs per node\]")
        self.assertIn("required checks: health.node, collective.allreduce, collective.allgather",
                      proc.stdout)
        self.assertFalse(os.path.exists(self.out))
        # RDMA links need the ports the baseline says a node has; over MPI they run anywhere.
        proc = self.run_plain("acceptance", "--baseline", "cpu-mpi-ci", "--plan")
        self.assertRegex(proc.stdout, r"links-host\s+-\s+links --transport verbs --mem host .*"
                                      r"\[skipped: baseline cpu-mpi-ci has no RDMA ports per node")
        self.assertNotIn("links,", proc.stdout.split("required checks:")[1])
        proc = self.run_plain("acceptance", "--baseline", "h100-sxm-8gpu-ndr400", "--plan")
        self.assertRegex(proc.stdout, r"links-gpu\s+10m00s\s+links --transport verbs --mem gpu")
        self.assertIn("links, p2p", proc.stdout)
        proc = self.run_plain("quick", "--baseline", "h100-sxm-8gpu-ndr400", "--plan")
        self.assertIn("burn", proc.stdout)
        self.assertIn("health.gpu", proc.stdout)
        self.assertNotIn("skipped", proc.stdout)

    def test_every_built_in_suite_plans_against_its_baseline(self):
        for suite in ("quick", "acceptance", "sweep", "diagnose", "healthcheck", "ci"):
            with self.subTest(suite=suite):
                proc = self.run_plain(suite, "--baseline", "h200-sxm-8gpu-ndr400", "--plan")
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertIn(f"suite {suite} ", proc.stdout)


if __name__ == "__main__":
    unittest.main()
