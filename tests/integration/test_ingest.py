"""`commcert ingest` on the nccl-tests fixtures (tests/fixtures/nccl_tests, written from the
published output format) and the DCGM diagnostics (tests/fixtures/dcgm, written from the layout of
`dcgmi diag -j`): records that satisfy the record schema, exit statuses, one line per
unreadable line, and `certify` judging what was read in - failing closed where the log cannot
prove something (unchecked data, a cut-off run, a crash)."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from commcert_testing import SOURCE_DIR, read_records, validate_records

BIN = os.environ["COMMCERT_BIN"]
FIXTURES = SOURCE_DIR / "tests" / "fixtures" / "nccl_tests"
DCGM_FIXTURES = SOURCE_DIR / "tests" / "fixtures" / "dcgm"

# A node of {gpus} GPUs whose only required check is health.gpu: what a DCGM diagnostic speaks to.
DCGM_BASELINE = """schema: 1
sku: dcgm-test
node:
  gpus: {gpus}
  ib_ports: 0
required: [health.gpu]
fleet:
  enabled: false
"""

# The fixtures' two nodes reach 88-90 GB/s all-reduce busbw at 64 MiB: a floor of 80 passes them,
# 95 does not.
BASELINE = """schema: 1
sku: ingest-test
node:
  gpus: 0
  ib_ports: 0
required: [collective.allreduce]
fleet:
  enabled: false
checks:
  collective.allreduce:
    min_bytes: 64M
    require_check: true
    busbw_gb_per_s:
      cluster:
        floor: {floor}
      node:
        floor: {floor}
"""


class Ingest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="commcert-ingest-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def ingest(self, *names, run_id="log", extra=()):
        paths = [str(FIXTURES / name) for name in names]
        proc = subprocess.run([BIN, "ingest", *paths, "--out", str(self.tmp), "--run-id", run_id,
                               *extra], capture_output=True, text=True, timeout=60)
        return proc, self.tmp / run_id

    def certify(self, run_dir, floor=80):
        baseline = self.tmp / f"baseline-{floor}.yaml"
        baseline.write_text(BASELINE.format(floor=floor))
        proc = subprocess.run([BIN, "certify", str(run_dir), "--baseline", str(baseline),
                               "--format", "json"], capture_output=True, text=True, timeout=60)
        verdict = json.loads((run_dir / "verdict.json").read_text())
        return proc, {n["node"]: n for n in verdict["nodes"]}

    def test_every_fixture_becomes_records_the_schema_accepts(self):
        expected = {
            "allreduce_2nodes_v2.19.log": 0,
            "all_reduce_perf_v2.11_error_column.log": 0,
            "allreduce_tag_output.log": 0,
            "allreduce_srun_label.log": 0,
            "allreduce_per_iteration_timestamps.log": 0,
            "several_tests.log": 1,  # hypercube_perf has no commcert collective
            "allreduce_truncated.log": 1,
            "allreduce_garbage_and_crash.log": 1,
            "allreduce_wrong_data.log": 0,
            "allreduce_unchecked.log": 0,
        }
        self.assertEqual(sorted(expected), sorted(p.name for p in FIXTURES.glob("*.log")))
        for name, status in expected.items():
            proc, run_dir = self.ingest(name, run_id=name.replace(".log", ""))
            self.assertEqual(proc.returncode, status, (name, proc.stdout, proc.stderr))
            records = read_records(run_dir / "records.jsonl")
            validate_records(self, records)
            self.assertTrue(any(r["kind"] == "collective" for r in records), name)
            meta = json.loads((run_dir / "meta.json").read_text())
            self.assertEqual(meta["source"], "nccl-tests")

    def test_a_clean_log_is_certified_and_judged_against_the_floor(self):
        proc, run_dir = self.ingest("allreduce_2nodes_v2.19.log")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("ingested 8 measurement(s) and 0 error record(s) on 2 node(s)", proc.stdout)
        certify, nodes = self.certify(run_dir, floor=80)
        self.assertEqual(certify.returncode, 0, certify.stdout + certify.stderr)
        self.assertEqual({n: v["state"] for n, v in nodes.items()},
                         {"gpu-a01": "certified", "gpu-a02": "certified"})
        certify, nodes = self.certify(run_dir, floor=95)
        self.assertNotEqual(certify.returncode, 0)
        self.assertNotIn("certified", {v["state"] for v in nodes.values()})

    def test_certify_adds_the_judged_run_to_the_history(self):
        _, run_dir = self.ingest("allreduce_2nodes_v2.19.log", run_id="hist")
        baseline = self.tmp / "baseline.yaml"
        baseline.write_text(BASELINE.format(floor=80))
        db = self.tmp / "h" / "history.db"
        for expected in ("run hist added to history", "run hist already in history"):
            proc = subprocess.run([BIN, "certify", str(run_dir), "--baseline", str(baseline),
                                   "--history", str(db)], capture_output=True, text=True,
                                  timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn(expected, proc.stderr)
        show = subprocess.run([BIN, "history", "show", "gpu-a01", "--history", str(db)],
                              capture_output=True, text=True, timeout=60)
        self.assertIn("hist", show.stdout)
        self.assertIn("certified", show.stdout)
        # A history that cannot be written: one error line, status 3, the verdict kept.
        (self.tmp / "not-a-dir").write_text("")
        proc = subprocess.run([BIN, "certify", str(run_dir), "--baseline", str(baseline),
                               "--history", str(self.tmp / "not-a-dir" / "h.db")],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertEqual(sum("error" in line for line in proc.stderr.splitlines()), 1,
                         proc.stderr)
        self.assertTrue((run_dir / "verdict.json").exists())

    def test_unchecked_data_certifies_no_node(self):
        _, run_dir = self.ingest("allreduce_unchecked.log")
        certify, nodes = self.certify(run_dir)
        self.assertNotEqual(certify.returncode, 0)
        self.assertEqual({v["state"] for v in nodes.values()}, {"inconclusive"}, nodes)

    def test_wrong_data_certifies_no_node_and_blames_none_by_name(self):
        # The log counts wrong elements but does not say on which rank: every node of the test is
        # held inconclusive (not certified, not quarantined on a guess).
        _, run_dir = self.ingest("allreduce_wrong_data.log")
        # The log reported a failure: meta.json does not say the run went well.
        self.assertEqual(json.loads((run_dir / "meta.json").read_text())["status"], "fail")
        certify, nodes = self.certify(run_dir)
        self.assertEqual(certify.returncode, 3, certify.stdout + certify.stderr)
        self.assertEqual({v["state"] for v in nodes.values()}, {"inconclusive"}, nodes)
        for node in nodes.values():
            self.assertIn("1536 wrong element(s)", node["first_reason"]["message"])

    def test_a_cut_off_log_is_an_unfinished_run(self):
        proc, run_dir = self.ingest("allreduce_truncated.log")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("allreduce_truncated.log:16:", proc.stderr)
        self.assertIn("the test did not finish", proc.stderr)
        certify, nodes = self.certify(run_dir)
        self.assertEqual(certify.returncode, 3, certify.stdout + certify.stderr)
        self.assertEqual({v["state"] for v in nodes.values()}, {"inconclusive"}, nodes)

    def test_a_crash_is_evidence_against_the_host_it_names(self):
        proc, run_dir = self.ingest("allreduce_garbage_and_crash.log")
        self.assertEqual(proc.returncode, 1)
        # One line per unreadable line, with file and line.
        self.assertIn("allreduce_garbage_and_crash.log:15: 4 fields", proc.stderr)
        errors = [r for r in read_records(run_dir / "records.jsonl") if r["status"] == "error"]
        self.assertEqual({r["host"] for r in errors}, {"gpu-a02"})
        _, nodes = self.certify(run_dir)
        self.assertNotEqual(nodes["gpu-a02"]["state"], "certified")

    def test_several_logs_make_one_run(self):
        proc, run_dir = self.ingest("allreduce_2nodes_v2.19.log", "several_tests.log")
        self.assertEqual(proc.returncode, 1)  # the hypercube test
        self.assertIn("hypercube_perf", proc.stderr)
        records = read_records(run_dir / "records.jsonl")
        self.assertEqual(sum(r["kind"] == "run" for r in records), 1)
        self.assertEqual({r["collective"] for r in records if r["kind"] == "collective"},
                         {"allreduce", "allgather", "broadcast"})

    def test_ingested_runs_can_be_compared(self):
        _, run_a = self.ingest("allreduce_per_iteration_timestamps.log", run_id="a")
        _, run_b = self.ingest("allreduce_2nodes_v2.19.log", run_id="b")
        proc = subprocess.run([BIN, "compare", str(run_a), str(run_b), "--all"],
                              capture_output=True, text=True, timeout=60)
        # Same figures on both sides: nothing moved, nothing regressed.
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("8 unchanged", proc.stdout)

    def test_json_output_is_read_and_certified(self):
        proc, run_dir = self.ingest("allreduce_per_iteration.json", run_id="json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        records = read_records(run_dir / "records.jsonl")
        validate_records(self, records)
        certify, nodes = self.certify(run_dir, floor=80)
        self.assertEqual(certify.returncode, 0, certify.stdout + certify.stderr)
        self.assertEqual({v["state"] for v in nodes.values()}, {"certified"})
        proc, run_dir = self.ingest("allreduce_failed.json", run_id="json-failed")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("allreduce_failed.json: results[2]:", proc.stderr)
        _, nodes = self.certify(run_dir, floor=80)
        self.assertNotIn("certified", {v["state"] for v in nodes.values()})

    def test_nothing_readable_is_one_error_line_and_nothing_written(self):
        garbage = self.tmp / "garbage.log"
        garbage.write_bytes(b"hello\n\x00\x01 not a log\n")
        proc = subprocess.run([BIN, "ingest", str(garbage), "--out", str(self.tmp / "out")],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertIn("no nccl-tests result could be read", proc.stderr)
        self.assertFalse((self.tmp / "out").exists())

    def test_an_existing_run_is_not_appended_to(self):
        self.ingest("allreduce_2nodes_v2.19.log", run_id="same")
        proc, _ = self.ingest("allreduce_2nodes_v2.19.log", run_id="same")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("already holds a run", proc.stderr)

    def test_a_missing_log_is_a_usage_error(self):
        proc = subprocess.run([BIN, "ingest", str(self.tmp / "nope.log"), "--out", str(self.tmp)],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("nope.log", proc.stderr)


PARAMETERS = ("# nThread 1 nGpus 8 minBytes 1048576 maxBytes 67108864 step: 4(factor) warmup iters: 1 "
              "iters: 20 agg iters: 1 validation: 1 graph: 0\n")
HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     "
          "time   algbw   busbw #wrong\n"
          "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
          "(us)  (GB/s)  (GB/s)\n")
# 8 ranks: busbw = algbw x 2(n-1)/n = algbw x 1.75.
ROWS = ("    16777216       4194304     float     sum      -1   200.00   83.89  146.80      0   "
        "201.00   83.47  146.07      0\n"
        "    67108864      16777216     float     sum      -1   700.00   95.87  167.77      0   "
        "705.00   95.19  166.58      0\n")
FOOTER = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 156.805 \n"


def device_lines(*hosts):
    return "".join(f"#  Rank {rank:2d} Group  0 Pid  {100 + rank} on {host:>10} device  {rank} "
                   f"[0000:18:00] NVIDIA H100 80GB HBM3\n" for rank, host in enumerate(hosts))


class IngestWithoutHosts(unittest.TestCase):
    """Tables pasted without their header or their `# Rank ... on HOST` lines, `--node` for them,
    and host names attributed exactly or refused where they are written (issue 30, 18)."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="commcert-ingest-hosts-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def ingest(self, texts, *extra, run_id="pasted"):
        paths = []
        for name, text in texts.items():
            (self.tmp / name).write_text(text)
            paths.append(str(self.tmp / name))
        proc = subprocess.run([BIN, "ingest", *paths, "--out", str(self.tmp / "out"), "--run-id",
                               run_id, *extra], capture_output=True, text=True, timeout=60)
        return proc, self.tmp / "out" / run_id

    def test_rows_without_a_column_header_are_named_line_by_line(self):
        proc, run_dir = self.ingest({"all_reduce_perf.log": "pasted from a ticket\n" + ROWS})
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("all_reduce_perf.log:2: a result row with no column header before it",
                      proc.stderr)
        self.assertIn("all_reduce_perf.log:3: a result row with no column header", proc.stderr)
        self.assertIn("no nccl-tests result could be read", proc.stderr)
        self.assertIn("each line that could not be read is named above", proc.stderr)
        self.assertFalse(run_dir.exists())

    def test_a_table_without_device_lines_is_refused_naming_node_and_read_with_it(self):
        text = PARAMETERS + HEADER + ROWS + FOOTER
        proc, run_dir = self.ingest({"all_reduce_perf.log": text})
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("all_reduce_perf.log:1: no '# Rank ... on HOST device N' lines", proc.stderr)
        self.assertIn("--node NAME", proc.stderr)
        self.assertFalse(run_dir.exists())

        proc, run_dir = self.ingest({"all_reduce_perf.log": text}, "--node", "gpu-x07")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("its tests were read as run on --node gpu-x07", proc.stdout)
        records = read_records(run_dir / "records.jsonl")
        validate_records(self, records)
        self.assertEqual({(r["host"], r["nranks"], r["scope"]) for r in records},
                         {("gpu-x07", 8, "node")})
        meta = json.loads((run_dir / "meta.json").read_text())
        self.assertEqual(meta["nodes"], ["gpu-x07"])
        self.assertEqual(meta["ingest"]["files"][0]["node"], "gpu-x07")
        baseline = self.tmp / "floor.yaml"
        baseline.write_text(BASELINE.format(floor=80))
        certify = subprocess.run([BIN, "certify", str(run_dir), "--baseline", str(baseline),
                                  "--format", "json"], capture_output=True, text=True, timeout=60)
        self.assertEqual(certify.returncode, 0, certify.stdout + certify.stderr)

    def test_node_goes_to_the_files_that_name_none_in_order(self):
        named = PARAMETERS + device_lines("gpu-a01", "gpu-a02") + HEADER + ROWS + FOOTER
        pasted = PARAMETERS + HEADER + ROWS + FOOTER
        dcgm = (DCGM_FIXTURES / "diag_r3_all_pass.json").read_text()
        proc, run_dir = self.ingest({"a_all_reduce_perf.log": named, "b_diag.json": dcgm,
                                     "c_all_reduce_perf.log": pasted},
                                    "--node", "gpu-d01", "--node", "gpu-p01")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        records = read_records(run_dir / "records.jsonl")
        hosts = {r["host"] for r in records if r["kind"] == "health"}
        self.assertEqual(hosts, {"gpu-d01"})
        pasted_hosts = {tuple(r["group_nodes"]) for r in records if r["kind"] == "collective"
                        and r["nodes"] == 1}
        self.assertEqual(pasted_hosts, {("gpu-p01",)})
        # One --node more than files that name no node is a usage error.
        proc, _ = self.ingest({"a_all_reduce_perf.log": named}, "--node", "gpu-p01",
                              run_id="extra")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--node given 1 time(s) for 0 file(s) that do not name their node",
                      proc.stderr)

    def test_a_node_name_with_shell_metacharacters_is_refused_never_changed(self):
        pasted = PARAMETERS + HEADER + ROWS + FOOTER
        for bad in ("gpu;reboot", "$(id)", "gpu x", "-gpu"):
            proc, run_dir = self.ingest({"all_reduce_perf.log": pasted}, "--node", bad,
                                        run_id="bad")
            self.assertEqual(proc.returncode, 2, (bad, proc.stderr))
            self.assertIn(f"invalid node name '{bad}' from --node", proc.stderr)
            self.assertFalse(run_dir.exists())
        # In the log, on a device line: the test is refused on that line.
        log = PARAMETERS + device_lines("gpu-a01", "gpu;reboot") + HEADER + ROWS + FOOTER
        proc, run_dir = self.ingest({"all_reduce_perf.log": log}, run_id="in-log")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("all_reduce_perf.log:3: invalid node name 'gpu;reboot' from the device line",
                      proc.stderr)
        self.assertFalse(run_dir.exists())

    def test_a_failure_is_recorded_on_the_host_it_names_exactly(self):
        log = (PARAMETERS + device_lines("node1", "node10") + HEADER + ROWS +
               "node10: Test NCCL failure common.cu:1125 'remote process node1 exited'\n")
        proc, run_dir = self.ingest({"all_reduce_perf.log": log})
        self.assertEqual(proc.returncode, 1, proc.stderr)  # cut off: no footer
        errors = [r for r in read_records(run_dir / "records.jsonl") if r["status"] == "error"]
        self.assertEqual([r["host"] for r in errors], ["node10"])

    def test_lookalike_hosts_in_mixed_logs_are_each_blamed_for_their_own_failure(self):
        # Names that are prefixes, suffixes or substrings of each other, and an FQDN beside its
        # short name, each in a different rank order per log: every failure lands on exactly the
        # host its line names (docs/ingest.md, "Host names").
        logs = {
            "a_all_reduce_perf.log": (PARAMETERS + device_lines("node1", "node10", "node100") +
                                      HEADER + ROWS + "node10: Test NCCL failure common.cu:1125 "
                                      "'remote process node1 exited'\n" + FOOTER),
            "b_all_reduce_perf.log": (PARAMETERS + device_lines("node100", "node10", "node1") +
                                      HEADER + ROWS + " .. node100 pid 100: Test failure "
                                      "common.cu:401 node10\n" + FOOTER),
            "c_all_reduce_perf.log": (PARAMETERS + device_lines("xn1", "n1", "gpu-a10", "gpu-a1") +
                                      HEADER + ROWS + "n1: Test CUDA failure common.cu:9 'xn1'\n" +
                                      "gpu-a1: Test timeout (300s) common.cu:518\n" + FOOTER),
            "d_all_reduce_perf.log": (PARAMETERS + device_lines("node1.cluster.local", "node1") +
                                      HEADER + ROWS + "node1.cluster.local: Test NCCL failure "
                                      "common.cu:1 'node1'\n" + FOOTER),
        }
        proc, run_dir = self.ingest(logs)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        records = read_records(run_dir / "records.jsonl")
        validate_records(self, records)
        # Each error record quotes "nccl-tests, PATH:LINE: the line".
        errors = sorted((r["host"], r["reason"].split(": ", 1)[0].rsplit("/", 1)[-1])
                        for r in records if r["status"] == "error")
        self.assertEqual(errors, [("gpu-a1", "c_all_reduce_perf.log:11"),
                                  ("n1", "c_all_reduce_perf.log:10"),
                                  ("node1.cluster.local", "d_all_reduce_perf.log:8"),
                                  ("node10", "a_all_reduce_perf.log:9"),
                                  ("node100", "b_all_reduce_perf.log:9")])
        meta = json.loads((run_dir / "meta.json").read_text())
        self.assertEqual(sorted(meta["nodes"]),
                         ["gpu-a1", "gpu-a10", "n1", "node1", "node1.cluster.local", "node10",
                          "node100", "xn1"])

    def test_an_invalid_host_in_a_log_is_one_line_naming_file_and_line_never_changed(self):
        # Beside a log that reads: the run is written without the refused test, exit status 1.
        good = PARAMETERS + device_lines("node1", "node10") + HEADER + ROWS + FOOTER
        for bad in ("node1;reboot", "node1\x1b[2J", "-node10", "n" * 65):
            bad_log = PARAMETERS + device_lines("node1", bad) + HEADER + ROWS + FOOTER
            proc, run_dir = self.ingest({"a_all_reduce_perf.log": good,
                                         "b_all_reduce_perf.log": bad_log}, run_id="mixed")
            self.assertEqual(proc.returncode, 1, (bad, proc.stderr))
            lines = [line for line in proc.stderr.splitlines() if "invalid node name" in line]
            self.assertEqual(len(lines), 1, proc.stderr)
            self.assertIn("b_all_reduce_perf.log:3: invalid node name '", lines[0])
            self.assertIn("from the device line (line 3)", lines[0])
            self.assertNotIn("\x1b", proc.stderr)
            hosts = {r["host"] for r in read_records(run_dir / "records.jsonl")}
            self.assertEqual(hosts, {"node1"}, bad)
            shutil.rmtree(run_dir)
        # JSON: no line per device, so the element is named; a newline in the name stays escaped.
        root = json.loads((FIXTURES / "allreduce_per_iteration.json").read_text())
        root["config"]["devices"][1]["hostname"] = "gpu-b01\nreboot"
        proc, run_dir = self.ingest({"all_reduce_perf.json": json.dumps(root)}, run_id="json")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 2, proc.stderr)
        self.assertIn("all_reduce_perf.json:1: invalid node name 'gpu-b01\\nreboot' from "
                      "config.devices[1]: only letters", proc.stderr)
        self.assertFalse(run_dir.exists())


class IngestDcgm(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="commcert-ingest-dcgm-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def ingest(self, *names, run_id="dcgm", nodes=("gpu-node-07",)):
        paths = [str(DCGM_FIXTURES / name) for name in names]
        extra = [arg for node in nodes for arg in ("--node", node)]
        proc = subprocess.run([BIN, "ingest", *paths, "--out", str(self.tmp), "--run-id", run_id,
                               *extra], capture_output=True, text=True, timeout=60)
        return proc, self.tmp / run_id

    def certify(self, run_dir, gpus=2):
        baseline = self.tmp / f"baseline-{gpus}.yaml"
        baseline.write_text(DCGM_BASELINE.format(gpus=gpus))
        proc = subprocess.run([BIN, "certify", str(run_dir), "--baseline", str(baseline),
                               "--format", "json"], capture_output=True, text=True, timeout=60)
        verdict = json.loads((run_dir / "verdict.json").read_text())
        return proc, {n["node"]: n for n in verdict["nodes"]}

    def test_every_readable_diagnostic_becomes_records_the_schema_accepts(self):
        expected = {
            "diag_r3_all_pass.json": 0,
            "diag_r3_gpu1_memory_fail.json": 0,
            "diag_r3_skip_warn.json": 0,
            "diag_old_uppercase.json": 0,
            "diag_new_key_unjudged_test.json": 1,  # NVBandwidth: not judged
        }
        for name, status in expected.items():
            proc, run_dir = self.ingest(name, run_id=name.replace(".json", ""))
            self.assertEqual(proc.returncode, status, (name, proc.stdout, proc.stderr))
            self.assertIn("read 2 GPU result(s) from DCGM diagnostics", proc.stdout)
            records = read_records(run_dir / "records.jsonl")
            validate_records(self, records)
            self.assertEqual({(r["kind"], r["component"], r["source"], r["host"]) for r in records},
                             {("health", "gpu", "dcgm", "gpu-node-07")}, name)
            meta = json.loads((run_dir / "meta.json").read_text())
            self.assertEqual(meta["source"], "dcgm")
            self.assertEqual(meta["nodes"], ["gpu-node-07"])
            self.assertIn("Denylist", meta["ingest"]["files"][0]["gpus"]["1"])

    def test_all_pass_is_health_evidence_that_certifies(self):
        proc, run_dir = self.ingest("diag_r3_all_pass.json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        certify, nodes = self.certify(run_dir)
        self.assertEqual(certify.returncode, 0, certify.stdout + certify.stderr)
        self.assertEqual(nodes["gpu-node-07"]["state"], "certified")

    def test_a_gpu_the_diagnostic_did_not_cover_has_no_evidence(self):
        # The baseline expects 4 GPUs; DCGM tested 2: GPUs 2 and 3 have no evidence.
        _, run_dir = self.ingest("diag_r3_all_pass.json")
        certify, nodes = self.certify(run_dir, gpus=4)
        self.assertNotEqual(certify.returncode, 0)
        node = nodes["gpu-node-07"]
        self.assertEqual(node["state"], "inconclusive")
        self.assertIn("gpu 2, 3", node["first_reason"]["message"])

    def test_one_gpu_failing_quarantines_the_node_naming_the_gpu_and_test(self):
        proc, run_dir = self.ingest("diag_r3_gpu1_memory_fail.json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        certify, nodes = self.certify(run_dir)
        self.assertNotEqual(certify.returncode, 0)
        node = nodes["gpu-node-07"]
        self.assertEqual(node["state"], "quarantined")
        message = node["first_reason"]["message"]
        self.assertIn("gpu 1", message)
        self.assertIn("DCGM Memory failed", message)
        self.assertIn("memory mismatch", message)

    def test_skip_and_warn_certify_nothing_and_blame_nothing(self):
        _, run_dir = self.ingest("diag_r3_skip_warn.json")
        certify, nodes = self.certify(run_dir)
        self.assertNotEqual(certify.returncode, 0)
        self.assertEqual(nodes["gpu-node-07"]["state"], "inconclusive", nodes)

    def test_without_node_it_is_one_usage_line_and_nothing_written(self):
        proc = subprocess.run([BIN, "ingest", str(DCGM_FIXTURES / "diag_r3_all_pass.json"),
                               "--out", str(self.tmp / "out")],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertIn("diag_r3_all_pass.json: a DCGM diagnostic does not name the node", proc.stderr)
        self.assertIn("--node", proc.stderr)
        self.assertFalse((self.tmp / "out").exists())
        # A name that is not a valid node name is refused like any other.
        proc, run_dir = self.ingest("diag_r3_all_pass.json", run_id="bad", nodes=("-x;y",))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--node", proc.stderr)
        self.assertFalse(run_dir.exists())

    def test_a_cut_off_or_damaged_file_is_one_line_with_its_position(self):
        truncated = (DCGM_FIXTURES / "diag_truncated.json").read_text()
        # The parser gives up past the last character: the last line, one column beyond its end.
        last_line = truncated.count("\n") + 1
        last_column = len(truncated.split("\n")[-1]) + 1
        for name, where in (("diag_truncated.json", f":{last_line}:{last_column}:"),
                            ("diag_garbage.json", ":5:5:")):
            proc, run_dir = self.ingest(name, run_id=name)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
            self.assertIn(f"{name}{where} not whole JSON", proc.stderr)
            self.assertFalse(run_dir.exists())

    def test_a_number_beyond_a_double_is_one_usage_line(self):
        damaged = self.tmp / "diag_big_number.json"
        damaged.write_text('{"DCGM GPU Diagnostic": {"version": 1e99999}}\n')
        proc = subprocess.run([BIN, "ingest", str(damaged), "--node", "node1", "--out",
                               str(self.tmp / "out")], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertIn("diag_big_number.json: not readable JSON", proc.stderr)
        self.assertFalse((self.tmp / "out").exists())

    def test_dcgm_and_nccl_tests_make_one_run(self):
        proc, run_dir = self.ingest("diag_r3_gpu1_memory_fail.json", "diag_r3_all_pass.json",
                                    nodes=("gpu-a01", "gpu-a02"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        paths = [str(FIXTURES / "allreduce_2nodes_v2.19.log"),
                 str(DCGM_FIXTURES / "diag_r3_gpu1_memory_fail.json"),
                 str(DCGM_FIXTURES / "diag_r3_all_pass.json")]
        proc = subprocess.run([BIN, "ingest", *paths, "--out", str(self.tmp), "--run-id", "mixed",
                               "--node", "gpu-a01", "--node", "gpu-a02"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        records = read_records(self.tmp / "mixed" / "records.jsonl")
        validate_records(self, records)
        failed = [r for r in records if r["kind"] == "health" and r["status"] == "fail"]
        self.assertEqual([(r["host"], r["gpu"]["index"]) for r in failed], [("gpu-a01", 1)])
        meta = json.loads((self.tmp / "mixed" / "meta.json").read_text())
        self.assertEqual(meta["source"], "nccl-tests,dcgm")
        # A --node more than there are DCGM files is a usage error.
        proc, _ = self.ingest("diag_r3_all_pass.json", run_id="extra", nodes=("a", "b"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--node given 2 time(s) for 1 file(s) that do not name their node",
                      proc.stderr)

    def test_each_diagnostic_lands_on_exactly_its_node(self):
        # --node names that contain each other: the failing diagnostic is node10's alone.
        proc, run_dir = self.ingest("diag_r3_all_pass.json", "diag_r3_gpu1_memory_fail.json",
                                    "diag_r3_all_pass.json", nodes=("node1", "node10", "node100"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        records = read_records(run_dir / "records.jsonl")
        failed = {r["host"] for r in records if r["status"] == "fail"}
        self.assertEqual(failed, {"node10"})
        self.assertEqual({r["host"] for r in records}, {"node1", "node10", "node100"})
        _, nodes = self.certify(run_dir)
        self.assertEqual({n: v["state"] for n, v in nodes.items()},
                         {"node1": "certified", "node10": "quarantined", "node100": "certified"})


if __name__ == "__main__":
    unittest.main()
