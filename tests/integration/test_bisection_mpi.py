"""Bisection end to end under a real mpirun, one rank per (pretend) node with --node-name
'node{rank}': `sweep --groups` measures disjoint node groups at once, and a suite with
`localize: bisect` finds a node slowed by COMMCERT_FAULT=delay in about log2 N rounds,
re-tested with two known-good nodes before it is quarantined (docs/localization.md).

The suite judges against a copy of cpu-mpi-ci, judging allreduce from 256 KiB, whose
cluster-scope and pairs floor (0.004 GB/s) a 400 ms injected delay falls far below (a 256 KiB
allreduce then makes under 0.0007 GB/s) and a healthy group clears several times over (0.1-0.5
GB/s at 256 KiB on a quiet 2-core box, 0.02 while a sanitizer build runs beside it)."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from commcert_testing import CommcertTestCase, mpirun_launch, read_records, validate_records

BIN = os.environ["COMMCERT_BIN"]
SOURCE = os.environ["COMMCERT_SOURCE_DIR"]
CI_BASELINE = os.path.join(SOURCE, "suites", "baselines", "cpu-mpi-ci.yaml")
DELAY_US = 400000

SUITE = """schema: 1
name: bisect
baseline: floor.yaml
stages:
  - name: cluster
    run: sweep
    args: [allreduce, --backend, mpi, -b, 256K, -e, 256K, -n, 2, -w, 1, -T, 30s, --scope, cluster]
    budget: 60s
    localize: bisect
"""


def write_floor_baseline(path):
    with open(CI_BASELINE) as f:
        text = f.read()
    text, count = re.subn(r"(      cluster:\n        floor: )0\.001", r"\g<1>0.004", text)
    assert count == 2, "cpu-mpi-ci.yaml changed shape: update this test"
    text, count = re.subn(r"min_bytes: 1M       # CI sweeps", "min_bytes: 256K     # CI sweeps", text)
    assert count == 1, "cpu-mpi-ci.yaml changed shape: update this test"
    # Pairs (the fallback) judged by the same absolute floor, as test_run_mpi does: healthy pairs
    # of one round on a loaded 2-core box spread over more than a factor of ten.
    text, count = re.subn(r"max_deficit_pct: 80",
                          "max_deficit_pct: 99\n      floor_gb_per_s: 0.004", text)
    assert count == 3, "cpu-mpi-ci.yaml changed shape: update this test"
    with open(path, "w") as f:
        f.write(text)


class BisectionInRun(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="commcert-bisect-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        write_floor_baseline(os.path.join(self.tmp, "floor.yaml"))
        self.suite = os.path.join(self.tmp, "bisect.yaml")
        with open(self.suite, "w") as f:
            f.write(SUITE)
        self.run_dir = os.path.join(self.tmp, "results", "r")

    def run_suite(self, ranks, fault=None):
        command, env = mpirun_launch(ranks, fault)
        command += [BIN, "run", self.suite, "--node-name", "node{rank}", "--out",
                    os.path.join(self.tmp, "results"), "--run-id", "r"]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)

    def load(self, name):
        with open(os.path.join(self.run_dir, name)) as f:
            return json.load(f)

    def states(self):
        return {n["node"]: n["state"] for n in self.load("verdict.json")["nodes"]}

    def assert_slow_node_found(self, ranks, slow, max_rounds):
        proc = self.run_suite(ranks, fault=f"delay:{slow}:{DELAY_US}")
        self.assertEqual(proc.returncode, 1, proc.stdout[-3000:] + proc.stderr[-3000:])
        bad = f"node{slow}"
        expected = {f"node{i}": "certified" for i in range(ranks)}
        expected[bad] = "quarantined"
        self.assertEqual(self.states(), expected)
        node = next(n for n in self.load("verdict.json")["nodes"] if n["node"] == bad)
        reason = node["reasons"][0]
        self.assertEqual(reason["code"], "localization.bisect_bad_node")
        # Blamed after failing with two different known-good nodes, with the figures.
        match = re.search(r"again with known-good (node\d) and (node\d) \(with node\d: allreduce "
                          r"[0-9.]+ GB/s; with node\d: allreduce [0-9.]+ GB/s; groups need "
                          r"0\.004 GB/s\)", reason["message"])
        self.assertIsNotNone(match, reason["message"])
        self.assertNotEqual(match.group(1), match.group(2))
        self.assertNotIn(bad, match.groups())
        # The record of the run: rounds and groups, and the pairs never ran.
        log = self.load("suite.json")
        [bisection] = log["localization"]
        self.assertEqual(bisection["method"], "bisect")
        self.assertTrue(bisection["conclusive"])
        self.assertLessEqual(bisection["rounds"], max_rounds)
        self.assertEqual(len(bisection["groups"]), bisection["rounds"])
        names = [s["name"] for s in log["stages"]]
        self.assertEqual(names, ["cluster"] + [f"cluster-bisect{i + 1}"
                                               for i in range(bisection["rounds"])])
        for round_groups in bisection["groups"]:
            members = [n for g in round_groups for n in g["nodes"]]
            self.assertEqual(len(members), len(set(members)), "groups of a round are disjoint")
        records = read_records(os.path.join(self.run_dir, "records.jsonl"))
        validate_records(self, records)
        grouped = [r for r in records if r.get("scope") == "groups"]
        self.assertEqual({r["round"] for r in grouped}, set(range(bisection["rounds"])))
        # The text summary names the culprit and the run's note says how many rounds.
        self.assertRegex(proc.stdout, rf"{bad}\s+quarantined\s+triage\s+allreduce in bisection "
                                      rf"over {ranks} nodes \({bisection['rounds']} rounds")
        self.assertIn(f"bisection of run r over {ranks} nodes: {bisection['rounds']} rounds",
                      proc.stdout)
        self.assertIn("the bisection rounds of the same run name the node", proc.stdout)
        return bisection

    def test_a_slow_node_among_four_is_quarantined_alone(self):
        bisection = self.assert_slow_node_found(4, 2, max_rounds=2 + 2)
        # Halves, the lone nodes with known-good ones, the confirmation, the rest verified.
        self.assertEqual(bisection["rounds"], 4)

    def test_a_slow_node_among_eight_is_quarantined_alone(self):
        self.assert_slow_node_found(8, 5, max_rounds=3 + 2)

    def test_a_slow_link_is_handed_to_the_pairs_and_blames_neither_node(self):
        # node1 and node3 sit in different halves: each half passes alone.
        proc = self.run_suite(4, fault=f"linkdelay:1:3:{DELAY_US}")
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        self.assertEqual(self.states(), {f"node{i}": "certified" for i in range(4)})
        log = self.load("suite.json")
        [bisection] = log["localization"]
        self.assertFalse(bisection["conclusive"])
        self.assertEqual(bisection["rounds"], 1)
        self.assertIn("node0,node1 and node2,node3 each pass alone", bisection["summary"])
        self.assertIn("the bisection did not settle it: the pairs decide", proc.stderr)
        names = [s["name"] for s in log["stages"]]
        self.assertEqual(names[:3], ["cluster", "cluster-bisect1", "cluster-pairs"])
        self.assertIn("suspect link node1<->node3", proc.stdout)

    def test_a_healthy_run_bisects_nothing_and_quarantines_nobody(self):
        proc = self.run_suite(4)
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        self.assertEqual(self.states(), {f"node{i}": "certified" for i in range(4)})
        self.assertNotIn("localization", self.load("suite.json"))
        self.assertNotIn("bisecting", proc.stderr)


    def test_plan_says_bisection_adds_rounds(self):
        proc = subprocess.run([BIN, "run", self.suite, "--plan"], capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("bisection adds up to about 2 log2 N rounds for N nodes", proc.stdout)


class GroupsInSweep(CommcertTestCase):
    def test_groups_run_at_once_and_nodes_in_no_group_idle(self):
        result = self.sweep(["allreduce", "-b", "16K", "-e", "16K", "-n", "2", "-q",
                             "--groups", "node3,node0;node1", "--groups-round", "3"])
        self.assertEqual(result.returncode, 0, result.stderr)
        validate_records(self, result.records())
        measured = result.collective_records("ok")
        groups = {(r["group"], tuple(r["group_nodes"]), r["round"], r["scope"], r["nranks"])
                  for r in measured}
        self.assertEqual(groups, {(0, ("node0", "node3"), 3, "groups", 2),
                                  (1, ("node1",), 3, "groups", 1)})
        self.assertFalse(any("node2" in r["group_nodes"] for r in result.records()
                             if r["kind"] == "collective"))

    def test_bad_group_specs_are_usage_errors_naming_the_flag(self):
        cases = [
            ("node0,node1;node1,node2", "--groups: node 'node1' is in group 1 and in group 2"),
            ("node0,node1;;node2", "--groups: group 2 is empty"),
            ("node0,,node1", "--groups: group 1 has an empty node name"),
            ("node0,node9", "--groups: no rank runs on node 'node9' in this job"),
        ]
        for spec, message in cases:
            with self.subTest(spec=spec):
                result = self.sweep(["allreduce", "-b", "1K", "-e", "1K", "--groups", spec],
                                    run_id="bad")
                self.assertEqual(result.returncode, 2, result.stderr)
                errors = [line for line in result.stderr.splitlines() if "error" in line]
                self.assertEqual(len(errors), 1, result.stderr)
                self.assertIn(message, errors[0])
                self.assertFalse((self.results / "bad").exists(), "nothing written")

    def test_a_group_file(self):
        path = str(self.results / "groups.txt")
        with open(path, "w") as f:
            f.write("# two groups\nnode0 node1\n\nnode2, node3\n")
        result = self.sweep(["allreduce", "-b", "16K", "-e", "16K", "-n", "2", "-q",
                             "--groups", "@" + path])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual({tuple(r["group_nodes"]) for r in result.collective_records("ok")},
                         {("node0", "node1"), ("node2", "node3")})
        with open(path, "a") as f:
            f.write("node1\n")
        result = self.sweep(["allreduce", "-b", "1K", "-e", "1K", "--groups", "@" + path],
                            run_id="bad")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"--groups: node 'node1' is in {path}:2 and in {path}:5", result.stderr)


if __name__ == "__main__":
    unittest.main()
