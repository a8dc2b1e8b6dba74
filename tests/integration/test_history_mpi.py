"""The run history end to end: two real `commcert run ci` under mpirun -np 4 (one rank per
pretend node), the second with node2 delayed (COMMCERT_FAULT=delay:2:...), both added through
`run --history`; `compare` of the two runs and `compare --since` against the history must report
node2's regression first and exit 1; `history show` prints node2's trend; several processes adding
to one database at once leave every run in it exactly once."""

import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

from commcert_testing import HAVE_MPI

BIN = os.environ["COMMCERT_BIN"]
MPIRUN = shutil.which("mpirun") or "mpirun"
# 50 ms per operation on node2: its 1 MiB node-scope collectives take ~50 ms instead of ~1 ms.
DELAY = "delay:2:50000"


@unittest.skipUnless(HAVE_MPI, "this build has no MPI backend")
class HistoryAndCompare(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="commcert-history-")
        cls.results = os.path.join(cls.tmp, "results")
        cls.db = os.path.join(cls.tmp, "history.db")
        cls.first = cls.run_ci("first", None)
        cls.second = cls.run_ci("second", DELAY)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def run_ci(cls, run_id, fault):
        env = dict(os.environ)
        env.pop("COMMCERT_FAULT", None)
        env["COMMCERT_HISTORY"] = cls.db
        command = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", "4", "-x",
                   "COMMCERT_HISTORY"]
        if fault:
            env["COMMCERT_FAULT"] = fault
            command += ["-x", "COMMCERT_FAULT"]
        command += [BIN, "run", "ci", "--node-name", "node{rank}", "--out", cls.results,
                    "--run-id", run_id]
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=400)
        cls.outputs = getattr(cls, "outputs", {})
        cls.outputs[run_id] = proc
        return os.path.join(cls.results, run_id)

    def commcert(self, *args, env=None):
        full_env = dict(os.environ)
        full_env.pop("COMMCERT_HISTORY", None)
        full_env.update(env or {})
        return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120,
                              env=full_env)

    def test_run_adds_itself_to_the_history_named_by_the_environment(self):
        for run_id in ("first", "second"):
            proc = self.outputs[run_id]
            self.assertIn(f"run {run_id} added to history {self.db}", proc.stderr,
                          proc.stderr[-3000:])
        with sqlite3.connect(self.db) as db:
            runs = [row[0] for row in db.execute("SELECT run_id FROM runs ORDER BY started")]
            states = dict(db.execute(
                "SELECT node, state FROM verdicts v JOIN runs r ON r.id = v.run "
                "WHERE r.run_id = 'first'"))
        self.assertEqual(runs, ["first", "second"])
        self.assertEqual(sorted(states), ["node0", "node1", "node2", "node3"])

    def assert_node2_blamed(self, proc):
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        lines = proc.stdout.splitlines()
        # The first line listed is a regression of node2's own figures or of a group that waited
        # for node2.
        first = lines[1]
        self.assertTrue(first.startswith("regression"), proc.stdout)
        self.assertTrue(first.split()[1] == "node2" or first.endswith("waited for node2"),
                        proc.stdout)
        self.assertIn("significant", first)
        # The summary names node2 first; its own node-scope figures regressed.
        blame = next(l for l in lines if l.startswith("regressed:"))
        self.assertTrue(blame.startswith("regressed: node2 ("), blame)
        own = int(blame.split("(")[1].split()[0])
        self.assertGreaterEqual(own, 4, blame)

    def test_compare_names_the_delayed_node_first_and_fails(self):
        self.assert_node2_blamed(self.commcert("compare", self.first, self.second))

    def test_compare_since_against_the_history_finds_the_same_regression(self):
        proc = self.commcert("compare", self.second, "--since", "30d", "--history", self.db)
        self.assertIn("1 run(s) of", proc.stdout)
        self.assert_node2_blamed(proc)

    def test_a_run_compared_with_itself_has_no_regression(self):
        proc = self.commcert("compare", self.first, self.first, "--all")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertNotIn("regression", proc.stdout.split("figure(s) compared")[0])

    def test_threshold_above_every_drop_passes(self):
        # 100 %: no drop of a positive figure reaches it.
        proc = self.commcert("compare", self.first, self.second, "--threshold", "100")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_history_show_prints_the_nodes_trend(self):
        proc = self.commcert("history", "show", "node2", "--history", self.db)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("node2: 2 run(s)", proc.stdout)
        self.assertIn("first", proc.stdout)
        self.assertIn("second", proc.stdout)
        self.assertRegex(proc.stdout, r"allreduce 1 MiB \w+_bytes_per_s .*GB/s .*GB/s +-\d")

    def test_the_html_report_shows_each_nodes_trend(self):
        html = os.path.join(self.tmp, "trend.html")
        proc = self.commcert("report", self.second, "--history", self.db, "--report",
                             f"html={html}")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(html, encoding="utf-8") as f:
            page = f.read()
        self.assertIn('<section id="history">', page)
        # Every node of the verdict has a table with both runs; node2's own allreduce fell in
        # the second (a negative change, marked worse).
        tables = dict(re.findall(r'<table class="trend" data-node="([^"]+)">(.*?)</table>', page,
                                 re.S))
        self.assertEqual(sorted(tables), ["node0", "node1", "node2", "node3"])
        node2 = tables["node2"]
        self.assertEqual(re.findall(r'<th title="([^"]+)">', node2), ["first", "second"])
        self.assertRegex(node2, r'allreduce 1 MiB[^<]*</td>(<td>[^<]*GB/s</td>){2}'
                                r'<td class="change worse">-\d')

    def test_report_with_a_missing_history_is_a_usage_error(self):
        proc = self.commcert("report", self.second, "--history", "/nonexistent/h.db", "--format",
                             "html")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--history: no history database at /nonexistent/h.db", proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)

    def test_adding_a_run_again_is_a_no_op(self):
        proc = self.commcert("history", "add", self.first, "--history", self.db)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(proc.stdout.startswith("already in first"), proc.stdout)
        with sqlite3.connect(self.db) as db:
            self.assertEqual(db.execute("SELECT count(*) FROM runs").fetchone()[0], 2)

    def test_concurrent_writers_keep_every_run_once(self):
        # Eight distinct runs (copies whose records differ by trailing blank lines, so their
        # fingerprints differ) and the first run, added by eight processes at once.
        db = os.path.join(self.tmp, "concurrent.db")
        copies = []
        for i in range(8):
            copy = os.path.join(self.tmp, "copies", f"copy{i}")
            shutil.copytree(self.first, copy)
            with open(os.path.join(copy, "records.jsonl"), "a") as records:
                records.write("\n" * (i + 1))
            copies.append(copy)
        processes = [subprocess.Popen([BIN, "history", "add", copy, self.first, "--history", db],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                     for copy in copies]
        for process in processes:
            out, err = process.communicate(timeout=120)
            self.assertEqual(process.returncode, 0, out + err)
        with sqlite3.connect(db) as connection:
            self.assertEqual(connection.execute("SELECT count(*) FROM runs").fetchone()[0], 9)
            per_run = connection.execute(
                "SELECT count(DISTINCT run), count(*) FROM metrics").fetchone()
            first_figures = connection.execute(
                "SELECT count(*) FROM metrics m JOIN runs r ON r.id = m.run "
                "WHERE r.path = ?", (self.first,)).fetchone()[0]
            self.assertEqual(connection.execute("PRAGMA journal_mode").fetchone()[0], "wal")
        self.assertEqual(per_run[0], 9)
        self.assertEqual(per_run[1], 9 * first_figures)


class CompareUsage(unittest.TestCase):
    def test_usage_errors_exit_2_with_one_line(self):
        cases = [
            (["compare", "/nonexistent/a", "/nonexistent/b"], "no records.jsonl"),
            (["compare", "/nonexistent/a"], "name two runs"),
            (["compare", "/nonexistent/a", "--since", "3x"], "--since"),
            (["compare", "/a", "/b", "--threshold", "101"], "threshold"),
            (["history", "show", "node0", "--history", "/nonexistent/h.db"], "does not exist"),
        ]
        for args, expected in cases:
            proc = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, (args, proc.stderr))
            self.assertIn(expected, proc.stderr, args)


if __name__ == "__main__":
    unittest.main()
