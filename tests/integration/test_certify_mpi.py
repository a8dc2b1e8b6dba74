"""End to end: real 4-rank MPI sweeps on one host, each rank standing for a node through
--node-name 'node{rank}' (the host-alias mechanism, docs/records.md "Node identity"), then
`commcert certify` with the CPU baseline."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

BIN = os.environ["COMMCERT_BIN"]
SOURCE = os.environ["COMMCERT_SOURCE_DIR"]
BASELINE = os.path.join(SOURCE, "suites", "baselines", "cpu-mpi-ci.yaml")
MPIRUN = shutil.which("mpirun") or "mpirun"


class CertifyAfterMpiSweep(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="commcert-certify-mpi-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def sweep(self, run_id, fault=None, extra=()):
        env = dict(os.environ)
        env.pop("COMMCERT_FAULT", None)
        cmd = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", "4"]
        if fault:
            env["COMMCERT_FAULT"] = fault
            cmd += ["-x", "COMMCERT_FAULT"]
        cmd += [BIN, "sweep", "allreduce", "-b", "1M", "-e", "1M", "--node-name", "node{rank}",
                "--out", os.path.join(self.tmp, "results"), "--run-id", run_id, "-q", *extra]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
        run_dir = os.path.join(self.tmp, "results", run_id)
        self.assertTrue(os.path.exists(os.path.join(run_dir, "records.jsonl")),
                        f"sweep wrote no records (exit {proc.returncode}): {proc.stderr[-2000:]}")
        return run_dir, proc.returncode

    def certify(self, run_dir, *extra):
        return subprocess.run([BIN, "certify", run_dir, "--baseline", BASELINE, *extra],
                              capture_output=True, text=True, timeout=120)

    def verdict(self, run_dir):
        with open(os.path.join(run_dir, "verdict.json")) as f:
            return json.load(f)

    def states(self, verdict):
        return {n["node"]: n["state"] for n in verdict["nodes"]}

    def test_clean_run_certifies_all_four_nodes(self):
        run_dir, sweep_status = self.sweep("clean")
        self.assertEqual(sweep_status, 0)
        proc = self.certify(run_dir)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        verdict = self.verdict(run_dir)
        self.assertEqual(self.states(verdict), {f"node{i}": "certified" for i in range(4)})
        self.assertEqual(verdict["exit_status"], 0)
        self.assertIn("certified 4, quarantined 0, inconclusive 0", proc.stdout)

    def test_corrupting_rank_quarantines_exactly_its_node(self):
        run_dir, sweep_status = self.sweep("corrupt", fault="corrupt:2")
        self.assertEqual(sweep_status, 1)  # the sweep itself saw wrong data
        proc = self.certify(run_dir)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        verdict = self.verdict(run_dir)
        self.assertEqual(self.states(verdict), {"node0": "certified", "node1": "certified",
                                                "node2": "quarantined", "node3": "certified"})
        node2 = next(n for n in verdict["nodes"] if n["node"] == "node2")
        self.assertEqual(node2["severity"], "isolate")
        self.assertEqual(node2["first_reason"]["code"], "collective.wrong_data")
        self.assertIn("from rank 2", node2["first_reason"]["message"])
        # The record that shows it is named, file and line.
        evidence = node2["reasons"][0]["evidence"][0]
        self.assertTrue(evidence["file"].endswith("records.jsonl"))
        self.assertGreater(evidence["line"], 1)
        # The fault was injected on purpose, and the verdict says so.
        self.assertIn("input.fault_injection", [n["code"] for n in verdict["notes"]])

        nhc = self.certify(run_dir, "--format", "nhc", "--verdict", os.path.join(self.tmp, "v.json"))
        self.assertEqual(nhc.returncode, 1)
        lines = nhc.stdout.strip().splitlines()
        self.assertEqual(len(lines), 1, nhc.stdout)
        self.assertTrue(lines[0].startswith("ERROR: commcert: node2: quarantined (isolate): "), lines[0])

        # As Slurm's HealthCheckProgram each node asks about itself.
        one = self.certify(run_dir, "--format", "nhc", "--node", "node0",
                           "--verdict", os.path.join(self.tmp, "v0.json"))
        self.assertEqual(one.returncode, 0, one.stdout)
        self.assertTrue(one.stdout.startswith("SUCCESS: commcert: 1 node(s) certified"), one.stdout)

    def test_rank_that_never_arrives_is_quarantined_its_peers_inconclusive(self):
        run_dir, sweep_status = self.sweep("hang", fault="hang:1", extra=("-T", "5"))
        self.assertEqual(sweep_status, 4)  # the sweep's timeout status
        proc = self.certify(run_dir)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        verdict = self.verdict(run_dir)
        self.assertEqual(self.states(verdict), {"node0": "inconclusive", "node1": "quarantined",
                                                "node2": "inconclusive", "node3": "inconclusive"})
        node1 = next(n for n in verdict["nodes"] if n["node"] == "node1")
        self.assertEqual(node1["first_reason"]["code"], "collective.not_arrived")

    def test_error_record_appended_to_a_clean_run_leaves_its_node_inconclusive(self):
        # An error record of one node, written after the passing records of the same check (as a
        # second process or a later tool might), weighs on that node alone and is cited by line.
        run_dir, sweep_status = self.sweep("appended")
        self.assertEqual(sweep_status, 0)
        records = os.path.join(run_dir, "records.jsonl")
        with open(records) as f:
            original = f.read()
        for case, fields in (("with collective", {"collective": "allreduce"}),
                             ("without collective", {})):
            with self.subTest(case):
                first = json.loads(original.splitlines()[0])
                appended = {"schema": first["schema"], "run_id": first["run_id"],
                            "kind": "collective", "status": "error", "host": "node2",
                            "reason": "MPI_ERR_TRUNCATE: message truncated", **fields}
                with open(records, "w") as f:
                    f.write(original + json.dumps(appended) + "\n")
                appended_line = len(original.splitlines()) + 1
                proc = self.certify(run_dir)
                with open(records, "w") as f:
                    f.write(original)
                self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)  # inconclusive
                verdict = self.verdict(run_dir)
                self.assertEqual(self.states(verdict), {"node0": "certified", "node1": "certified",
                                                        "node2": "inconclusive", "node3": "certified"})
                node2 = next(n for n in verdict["nodes"] if n["node"] == "node2")
                cited = [(r["code"], e["line"]) for r in node2["reasons"] for e in r.get("evidence", [])
                         if e["file"].endswith("records.jsonl")]
                self.assertIn(("evidence.error", appended_line), cited, node2)
                self.assertTrue(any("MPI_ERR_TRUNCATE" in r["message"] for r in node2["reasons"]),
                                node2)
                notes = [n["code"] for n in verdict["notes"]]
                self.assertIn("input.meta_disagrees", notes)

if __name__ == "__main__":
    unittest.main()
