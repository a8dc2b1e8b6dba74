"""`commcert burn`, `membw`, `p2p` and `health` as a user runs them, on whatever machine runs the tests.

Without a GPU (CI) the GPU stages must write `skipped` records and exit 0; with one they must
write measurements. Either way every record must satisfy docs/schema/record.schema.json.
`health` is driven against fixture sysfs trees and the fake NVML built in tests/fake_nvml.
"""

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import jsonschema

BIN = os.environ["COMMCERT_BIN"]
SOURCE = Path(os.environ["COMMCERT_SOURCE_DIR"])
BINARY = Path(os.environ["COMMCERT_BINARY_DIR"])
HAVE_MPI = os.environ.get("COMMCERT_HAVE_MPI", "0") in ("1", "ON", "TRUE", "true")
HAVE_CUDA = os.environ.get("COMMCERT_HAVE_CUDA", "0") in ("1", "ON", "TRUE", "true")
MPIEXEC = os.environ.get("COMMCERT_MPIEXEC", "mpiexec")
FIXTURES = SOURCE / "tests" / "fixtures"
FAKE_NVML = BINARY / "tests" / "fake_nvml" / "current" / "libnvidia-ml.so.1"
SCHEMA = json.loads((SOURCE / "docs" / "schema" / "record.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
META_VALIDATOR = jsonschema.Draft202012Validator(
    json.loads((SOURCE / "docs" / "schema" / "meta.schema.json").read_text()))


def validate_meta(meta):
    errors = [f"{list(e.path)}: {e.message}" for e in META_VALIDATOR.iter_errors(meta)]
    if errors:
        raise AssertionError("meta.json violates docs/schema/meta.schema.json: " + "; ".join(errors[:3]))


class Run:
    def __init__(self, completed, directory):
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        self.directory = directory

    def records(self):
        path = self.directory / "records.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def meta(self):
        meta = json.loads((self.directory / "meta.json").read_text())
        validate_meta(meta)  # every stage's meta.json follows docs/schema/meta.schema.json
        return meta

    def of_kind(self, kind):
        return [r for r in self.records() if r["kind"] == kind]


class StageTest(unittest.TestCase):
    def setUp(self):
        self.out = Path(tempfile.mkdtemp(prefix="commcert-gpu-stages-"))
        self.addCleanup(shutil.rmtree, self.out, ignore_errors=True)
        self.env = dict(os.environ)
        for name in ("COMMCERT_NVML_LIBRARY", "COMMCERT_FAKE_NVML_SCRIPT", "HWLOC_XMLFILE", "COMMCERT_RUN_ID"):
            self.env.pop(name, None)

    def run_commcert(self, *args, run_id="run", launcher=(), env=None, timeout=600):
        command = [*launcher, BIN, *args, "--out", str(self.out), "--run-id", run_id, "-q"]
        completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                   env={**self.env, **(env or {})})
        return Run(completed, self.out / run_id)

    def assert_valid_records(self, run):
        records = run.records()
        self.assertTrue(records, f"no records; stderr: {run.stderr}")
        for record in records:
            errors = sorted(VALIDATOR.iter_errors(record), key=lambda e: list(e.path))
            self.assertFalse(errors, f"{record['kind']} record breaks the schema: "
                                     f"{[e.message for e in errors[:3]]}\n{json.dumps(record)[:600]}")

    def assert_usage_error(self, run, flag):
        self.assertEqual(run.returncode, 2, run.stderr)
        lines = run.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, run.stderr)
        self.assertIn(flag, lines[0])


class GpuStagesTest(StageTest):
    def test_burn_writes_a_record_per_gpu_or_says_why_it_could_not(self):
        run = self.run_commcert("burn", "--duration", "2", "--size", "2048")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assert_valid_records(run)
        burns = run.of_kind("burn")
        self.assertTrue(burns)
        for record in burns:
            if record["status"] == "skipped":
                self.assertIsNone(record["gpu"])
                expected = "no usable GPU" if HAVE_CUDA else "this build has no CUDA support"
                self.assertIn(expected, record["reason"])
            else:
                self.assertEqual(record["status"], "ok", record.get("reason"))
                self.assertGreater(record["tflops"], 0)
                self.assertEqual(record["miscompares"], 0)
        self.assertEqual(run.meta()["status"], "ok")
        self.assertEqual(run.meta()["exit_code"], 0)
        self.assertEqual(run.of_kind("run")[0]["backend"], "none")

    def test_membw_writes_a_record_per_gpu_or_says_why_it_could_not(self):
        run = self.run_commcert("membw", "--buffer-size", "64M", "--memtest-fraction", "0.05",
                                "--host-size", "16M", "-n", "5")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assert_valid_records(run)
        for record in run.of_kind("membw"):
            if record["status"] == "skipped":
                expected = "no usable GPU" if HAVE_CUDA else "this build has no CUDA support"
                self.assertIn(expected, record["reason"])
            else:
                self.assertEqual(record["status"], "ok", record.get("reason"))
                self.assertEqual(record["integrity"]["errors"], 0)

    def test_p2p_measures_this_node_or_says_why_it_could_not(self):
        run = self.run_commcert("p2p", "--size", "8M", "--copies", "2", "-n", "2", "--chase-size", "4M",
                                "--chase-loads", "1000")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assert_valid_records(run)
        records = run.of_kind("p2p")
        self.assertTrue(records)
        if records[0]["status"] == "skipped" and records[0]["path"] is None:
            self.assertEqual(len(records), 1)
            expected = "no usable GPU" if HAVE_CUDA else "this build has no CUDA support"
            self.assertIn(expected, records[0]["reason"])
            self.assertIsNone(records[0]["gpu"])
        else:
            for record in records:
                if record["path"] == "gpu_gpu" and record["status"] == "skipped":
                    continue  # one GPU, or no peer access: says so in its reason
                self.assertEqual(record["status"], "ok", record.get("reason"))
                self.assertTrue(record["bytes_per_s"] or record["latency_s"])
        self.assertEqual(run.meta()["exit_code"], 0)

    def test_stages_append_to_one_run(self):
        env = {"COMMCERT_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"}
        for args in (["health", "--sysfs-root", str(FIXTURES / "sysfs/no_rdma")],
                     ["burn", "-D", "1", "--size", "1024"],
                     ["membw", "--buffer-size", "8M", "--memtest-fraction", "0.01", "--host-size", "1M"]):
            self.assertEqual(self.run_commcert(*args, run_id="shared", env=env).returncode, 0)
        run = Run(subprocess.CompletedProcess([], 0, "", ""), self.out / "shared")
        self.assert_valid_records(run)
        self.assertEqual([r["command"] for r in run.of_kind("run")], ["health", "burn", "membw"])
        for kind in ("health", "burn", "membw"):
            self.assertTrue(run.of_kind(kind), kind)


class HealthTest(StageTest):
    def test_without_driver_or_rdma_each_component_is_skipped_with_a_reason(self):
        run = self.run_commcert("health", "--sysfs-root", str(FIXTURES / "sysfs/no_rdma"),
                                "--nvml-library", "/nonexistent/libnvidia-ml.so.1")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assert_valid_records(run)
        health = run.of_kind("health")
        self.assertEqual([r["component"] for r in health], ["gpu", "ib_port", "node"])
        self.assertEqual(health[0]["status"], "skipped")
        self.assertTrue(health[0]["reason"].startswith("no NVIDIA driver: "), health[0]["reason"])
        self.assertEqual(health[1]["status"], "skipped")
        self.assertIn("no RDMA devices under " + str(FIXTURES / "sysfs/no_rdma/class/infiniband"), health[1]["reason"])
        self.assertEqual(health[2]["status"], "ok")
        self.assertIsNone(health[2]["gpu_count"])
        self.assertEqual(health[2]["ib_port_count"], 0)

    def test_reads_every_gpu_and_port_of_a_scripted_node(self):
        run = self.run_commcert("health", "--sysfs-root", str(FIXTURES / "sysfs/healthy"), env={
            "COMMCERT_NVML_LIBRARY": str(FAKE_NVML),
            "COMMCERT_FAKE_NVML_SCRIPT": str(FIXTURES / "nvml/two_h200.json"),
            "HWLOC_XMLFILE": str(FIXTURES / "hwloc/two_socket_gpu_nic.xml")})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assert_valid_records(run)
        gpus = [r for r in run.of_kind("health") if r["component"] == "gpu"]
        self.assertEqual(len(gpus), 2)
        self.assertEqual(gpus[0]["gpu"], {"index": 0, "uuid": "GPU-8a1c2e3f-0000-4b5c-9d6e-0123456789ab",
                                          "pci_bus_id": "0000:1b:00.0", "name": "NVIDIA H200"})
        self.assertEqual(gpus[0]["xid_events"][0]["xid"], 79)
        self.assertEqual(gpus[1]["pcie"]["gen_current"], 4)
        self.assertEqual(gpus[1]["clock_event_reasons"], ["sw_power_cap", "hw_thermal"])
        ports = [r for r in run.of_kind("health") if r["component"] == "ib_port"]
        self.assertEqual([p["device"] for p in ports], ["mlx5_0", "mlx5_2", "mlx5_10", "mlx5_bond_0"])
        node = [r for r in run.of_kind("health") if r["component"] == "node"][0]
        self.assertEqual(node["gpu_count"], 2)
        if node["topology_source"]:  # built with hwloc
            self.assertEqual(node["affinity"][0]["nearest_ib_devices"], ["mlx5_0"])
            self.assertEqual(node["affinity"][1]["numa_node"], 1)

    def test_a_lost_gpu_makes_the_run_an_error(self):
        run = self.run_commcert("health", "--sysfs-root", str(FIXTURES / "sysfs/errors"), env={
            "COMMCERT_NVML_LIBRARY": str(FAKE_NVML),
            "COMMCERT_FAKE_NVML_SCRIPT": str(FIXTURES / "nvml/lost_gpu.json")})
        self.assertEqual(run.returncode, 3, run.stderr)
        self.assert_valid_records(run)
        self.assertEqual(run.meta()["status"], "error")
        port = [r for r in run.of_kind("health") if r["component"] == "ib_port"][0]
        self.assertEqual(port["counters"]["symbol_error"], 65535)

    def test_on_this_machine(self):
        run = self.run_commcert("health")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assert_valid_records(run)
        self.assertEqual(run.of_kind("health")[-1]["component"], "node")


class BadInputTest(StageTest):
    def test_each_bad_flag_is_one_line_naming_it_with_status_2(self):
        cases = [
            (["burn", "--duration", "ten"], "--duration"),
            (["burn", "--duration", "0"], "--duration"),
            (["burn", "--kernel", "gemm_int4"], "--kernel"),
            (["burn", "--size", "1000"], "--size"),
            (["burn", "--window", "1us"], "--window"),
            (["membw", "--buffer-size", "12Q"], "--buffer-size"),
            (["membw", "--memtest-fraction", "2"], "--memtest-fraction"),
            (["health", "--sysfs-root", "/nonexistent/sys"], "--sysfs-root"),
            (["health", "--watch", "soon"], "--watch"),
            (["health", "--no-such-flag"], "--no-such-flag"),
            (["burn", "--node-name", "bad name;rm"], "bad name;rm"),
            (["membw", "--node-name", "-x"], "-x"),
            (["p2p", "--size", "512K"], "--size"),
            (["p2p", "--methods", "ce,nvlink"], "--methods"),
            (["p2p", "--paths", "gpu_gpu,disk"], "--paths"),
            (["p2p", "--copies", "0"], "--copies"),
            (["p2p", "-T", "0"], "-T/--timeout"),
        ]
        for args, flag in cases:
            with self.subTest(args=args):
                self.assert_usage_error(self.run_commcert(*args), flag)


class SchemaTest(unittest.TestCase):
    def test_the_schema_rejects_an_incomplete_measurement(self):
        record = {"schema": 1, "run_id": "r", "kind": "burn", "status": "ok", "time": "2026-11-22T00:00:00.000Z",
                  "host": "n1", "rank": 0, "local_rank": 0, "gpu": None, "kernel": "gemm_bf16"}
        self.assertTrue(list(VALIDATOR.iter_errors(record)))
        record = {"schema": 1, "run_id": "r", "kind": "health", "status": "skipped", "time": "2026-11-22T00:00:00.000Z",
                  "host": "n1", "rank": 0, "local_rank": 0, "gpu": None, "reason": "no NVIDIA driver"}
        self.assertTrue(list(VALIDATOR.iter_errors(record)))  # which component was skipped?


@unittest.skipUnless(HAVE_MPI, "this build has no MPI")
class MpiTest(StageTest):
    def mpirun(self, n):
        return (MPIEXEC, "-n", str(n))

    def test_one_process_speaks_for_each_node(self):
        run = self.run_commcert("health", "--sysfs-root", str(FIXTURES / "sysfs/no_rdma"),
                                "--nvml-library", "/nonexistent/libnvidia-ml.so.1", launcher=self.mpirun(2))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assert_valid_records(run)
        nodes = [r for r in run.of_kind("health") if r["component"] == "node"]
        self.assertEqual(len(nodes), 1)
        self.assertEqual(nodes[0]["rank"], 0)

    def test_each_node_identity_gets_its_own_health_records(self):
        run = self.run_commcert("health", "--sysfs-root", str(FIXTURES / "sysfs/no_rdma"),
                                "--nvml-library", "/nonexistent/libnvidia-ml.so.1", "--node-name", "n{rank}",
                                launcher=self.mpirun(2))
        self.assertEqual(run.returncode, 0, run.stderr)
        nodes = [r for r in run.of_kind("health") if r["component"] == "node"]
        self.assertEqual(sorted(r["host"] for r in nodes), ["n0", "n1"])

    def test_p2p_has_one_process_per_host_speak_for_its_gpus(self):
        run = self.run_commcert("p2p", "--size", "8M", "-n", "1", "--paths", "host_gpu",
                                launcher=self.mpirun(2))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assert_valid_records(run)
        records = run.of_kind("p2p")
        self.assertTrue(records)
        self.assertEqual({r["rank"] for r in records} - {0}, set())  # the host's first process
        if not HAVE_CUDA:
            self.assertEqual(len(records), 1)
            self.assertEqual(records[0]["status"], "skipped")

    def test_p2p_pretend_nodes_sharing_a_host_each_say_why(self):
        run = self.run_commcert("p2p", "--size", "8M", "-n", "1", "--paths", "host_gpu",
                                "--node-name", "n{rank}", launcher=self.mpirun(2))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assert_valid_records(run)
        self.assertEqual(sorted({r["host"] for r in run.of_kind("p2p")}), ["n0", "n1"])

    def test_every_rank_of_a_gpu_stage_is_recorded(self):
        run = self.run_commcert("burn", "-D", "1", "--size", "1024", launcher=self.mpirun(2))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assert_valid_records(run)
        self.assertEqual(sorted(r["rank"] for r in run.of_kind("burn")), [0, 1])
        self.assertEqual(len(run.of_kind("run")[0]["ranks"]), 2)


if __name__ == "__main__":
    unittest.main()
