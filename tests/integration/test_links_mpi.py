"""`commcert links --transport mpi` end to end: real mpirun -np 4 on one host, each rank standing
for a node (--node-name 'node{rank}'), then `commcert certify` with a baseline that requires the
links check. Injected delays stand for a slow NIC (delay) and a slow cable (linkdelay)."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

from commcert_testing import mpirun_launch, validate_records

BIN = os.environ["COMMCERT_BIN"]
# Four processes share a busy CI host's cores: 4M bandwidth varies by a third from pair to pair
# and small-message latency by orders of magnitude, so the judged tests are the bandwidths, and a
# pair must be 80 % below the best quartile to count as slow. The injected delay (200 ms per
# iteration against ~15 ms) puts a slow pair ~90 % below.
BASELINE = """schema: 1
sku: links-ci
required: [links]
fleet: {enabled: false}
checks:
  links:
    max_deficit_pct: 80
"""
# 4M is judged (min_bytes 1M), 64K is not; few iterations keep the module short.
FAST = ["--sizes", "64K,4M", "-n", "5", "-w", "1", "-T", "60"]
JUDGED = ["--sizes", "4M", "-n", "3", "-w", "0", "-T", "60", "--tests", "write_bw,write_bw_bidir"]
DELAY_US = 200000


class LinksOverMpi(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="commcert-links-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.baseline = os.path.join(self.tmp, "links.yaml")
        with open(self.baseline, "w") as f:
            f.write(BASELINE)

    def links(self, run_id, ranks=4, fault=None, args=(), node_name="node{rank}"):
        cmd, env = mpirun_launch(ranks, fault)
        cmd += [BIN, "links", *args, "--node-name", node_name,
                "--out", os.path.join(self.tmp, "results"), "--run-id", run_id]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        return os.path.join(self.tmp, "results", run_id), proc

    def records(self, run_dir):
        with open(os.path.join(run_dir, "records.jsonl")) as f:
            return [json.loads(line) for line in f]

    def certify(self, run_dir):
        proc = subprocess.run([BIN, "certify", run_dir, "--baseline", self.baseline],
                              capture_output=True, text=True, timeout=120)
        with open(os.path.join(run_dir, "verdict.json")) as f:
            verdict = json.load(f)
        return proc, {n["node"]: n for n in verdict["nodes"]}

    @staticmethod
    def codes(node):
        return [r["code"] for r in node["reasons"]]

    def test_every_pair_is_measured_once_per_test_size_and_direction(self):
        run_dir, proc = self.links("clean", args=FAST)
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        self.assertIn("links", proc.stderr)  # progress on rank 0
        records = self.records(run_dir)
        validate_records(self, records)
        links = [r for r in records if r["kind"] == "link"]
        # 6 pairs: write_bw both ways (2 x 2 sizes), bidirectional (2 sizes), latency (1).
        self.assertEqual(len(links), 6 * 7)
        pairs = {tuple(sorted(r["nodes"])) for r in links}
        self.assertEqual(len(pairs), 6)
        self.assertEqual({r["round"] for r in links}, {0, 1, 2})
        for r in links:
            self.assertEqual((r["status"], r["transport"], r["memory"], r["rail"]),
                             ("ok", "mpi", "host", 0))
            self.assertEqual(r["host"], r["nodes"][0])
            self.assertEqual(len(r["samples_s"]), 5)
            if r["test"] == "write_lat":
                self.assertEqual(r["bytes"], 8)
                self.assertGreater(r["latency_s"], 0)
            else:
                self.assertGreater(r["bytes_per_s"], 0)
        one_way = [tuple(r["nodes"]) for r in links if r["test"] == "write_bw" and r["bytes"] == 4 << 20]
        self.assertEqual(len(set(one_way)), 12, "each direction of each pair once")
        meta = json.load(open(os.path.join(run_dir, "meta.json")))
        self.assertEqual(meta["parameters"]["transport"], "mpi")
        self.assertEqual(meta["status"], "ok")

    def test_a_clean_run_certifies_every_node(self):
        run_dir, proc = self.links("clean-judged", args=JUDGED)
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        proc, nodes = self.certify(run_dir)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual({n: v["state"] for n, v in nodes.items()},
                         {f"node{i}": "certified" for i in range(4)})

    def test_a_slow_node_is_quarantined_and_its_partners_certified(self):
        run_dir, proc = self.links("slow-node", fault=f"delay:2:{DELAY_US}", args=JUDGED)
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        proc, nodes = self.certify(run_dir)
        self.assertEqual(nodes["node2"]["state"], "quarantined", proc.stdout)
        self.assertIn("links.slow_node", self.codes(nodes["node2"]))
        for other in ("node0", "node1", "node3"):
            self.assertEqual(nodes[other]["state"], "certified", proc.stdout)

    def test_a_slow_cable_is_a_suspect_link_between_its_two_nodes(self):
        run_dir, proc = self.links("slow-link", fault=f"linkdelay:0:1:{DELAY_US}", args=JUDGED)
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        proc, nodes = self.certify(run_dir)
        for end in ("node0", "node1"):
            self.assertIn("links.slow_link", self.codes(nodes[end]), proc.stdout)
            link = [r for r in nodes[end]["reasons"] if r["code"] == "links.slow_link"][0]
            self.assertIn("node0<->node1", link["message"])
        for node in nodes.values():
            self.assertNotIn("links.slow_node", self.codes(node))
            self.assertEqual(node["state"], "certified", proc.stdout)  # a warning blames no node

    def test_a_hung_end_times_out_names_its_node_and_certifies_nobody(self):
        run_dir, proc = self.links("hang", fault="hang:1:2",
                                  args=["--sizes", "4M", "-n", "3", "-w", "0", "-T", "5"])
        self.assertEqual(proc.returncode, 4, proc.stderr[-2000:])
        records = self.records(run_dir)
        timeouts = [r for r in records if r["status"] == "timeout"]
        self.assertEqual([r["kind"] for r in timeouts], ["link"])
        self.assertIn("node1", timeouts[0]["reason"])
        # The reporting process names where it waited (a transfer or the end-of-round barrier).
        self.assertTrue(timeouts[0]["operation"].startswith("links: "), timeouts[0])
        # The record is about the hung end's link, both ends, whoever wrote it.
        ends = timeouts[0]["nodes"]
        self.assertEqual(len(ends), 2, timeouts[0])
        self.assertIn("node1", ends)
        validate_records(self, records)
        _, nodes = self.certify(run_dir)
        self.assertEqual({v["state"] for v in nodes.values()}, {"inconclusive"})
        # The validator weighs the timeout on both ends; the other nodes just lack evidence.
        for node, verdict in nodes.items():
            expected = "evidence.timeout" if node in ends else "evidence.missing"
            self.assertIn(expected, self.codes(verdict), (node, verdict["reasons"]))

    def test_a_failing_transfer_is_an_error_record_naming_its_node_and_ends_the_job(self):
        # A transfer that reports an error (a queue pair in the error state) is written down as
        # the rank's error record and ends every process at once: nobody waits out -T.
        run_dir, proc = self.links("fail", fault="fail:1:2",
                                  args=["--sizes", "64K", "-n", "3", "-w", "0", "-T", "120"])
        self.assertEqual(proc.returncode, 3, proc.stderr[-2000:])
        errors = [r for r in self.records(run_dir) if r["status"] == "error"]
        self.assertEqual([(r["kind"], r["host"], r["rank"]) for r in errors], [("link", "node1", 1)])
        self.assertIn("injected fault (COMMCERT_FAULT fail:1:2)", errors[0]["reason"])
        self.assertIn("commcert links: error on rank 1 (node1)", proc.stderr)
        # Process 0 owns meta.json and records the other process's error before the job ends.
        with open(os.path.join(run_dir, "meta.json")) as f:
            meta = json.load(f)
        self.assertEqual((meta["status"], meta["exit_code"]), ("error", 3), meta)
        self.assertEqual((meta["error"]["command"], meta["error"]["process"],
                          meta["error"]["node"]), ("links", 1, "node1"))
        self.assertEqual(meta["error"]["reason"], errors[0]["reason"])
        _, nodes = self.certify(run_dir)
        self.assertEqual({v["state"] for v in nodes.values()}, {"inconclusive"})

    def test_one_node_has_no_partner_and_is_inconclusive(self):
        run_dir, proc = self.links("alone", ranks=2, args=FAST, node_name="solo")
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        links = [r for r in self.records(run_dir) if r["kind"] == "link"]
        self.assertEqual([(r["status"], r["nodes"]) for r in links], [("skipped", ["solo"])])
        self.assertIn("no partner", links[0]["reason"])
        _, nodes = self.certify(run_dir)
        self.assertEqual(nodes["solo"]["state"], "inconclusive")
        self.assertEqual(self.codes(nodes["solo"]), ["evidence.skipped"])

    def test_verbs_without_an_rdma_device_is_skipped_with_the_reason(self):
        run_dir, proc = self.links("verbs", ranks=2, args=["--transport", "verbs", *FAST])
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        links = [r for r in self.records(run_dir) if r["kind"] == "link"]
        self.assertEqual({r["status"] for r in links}, {"skipped"})
        self.assertEqual(len(links), 2)  # one per node
        for record in links:
            self.assertIn("no RDMA device", record["reason"])
            self.assertEqual(record["registrations"], [None])
        validate_records(self, links)

    def test_bad_flags_are_usage_errors_before_anything_runs(self):
        for args, fragment in ((["--tests", "read_bw"], "needs --transport verbs"),
                               (["--mem", "gpu"], "--mem gpu"),
                               (["--gid-index", "3"], "--gid-index: only with --transport verbs"),
                               (["--transport", "verbs", "--gid-index", "256"], "--gid-index"),
                               (["--transport", "verbs", "--ib-port", "0"], "--ib-port"),
                               (["--sizes", "4M,0"], "--sizes"),
                               (["--tests", "write_bw,nope"], "unknown test 'nope'")):
            with self.subTest(args=args):
                proc = subprocess.run([BIN, "links", *args, "--out", self.tmp], capture_output=True,
                                      text=True, timeout=60)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(fragment, proc.stderr)
                self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)


if __name__ == "__main__":
    unittest.main()
