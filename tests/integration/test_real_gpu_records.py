"""Records real GPUs wrote, judged by the built-in baseline of their SKU.

A healthy GPU must not be quarantined by its own SKU's floors: the burn floors of the H100 and
H200 baselines were set from these runs after the datasheet-derived 692 TFLOP/s quarantined
both (docs/gpu-results.md). Each test also judges the same records against the earlier floor,
so a fixture that stopped reaching the rule would be noticed."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

BIN = os.environ["COMMCERT_BIN"]
SOURCE = os.environ["COMMCERT_SOURCE_DIR"]
RECORDS = os.path.join(SOURCE, "tests", "fixtures", "records")
BASELINES = os.path.join(SOURCE, "suites", "baselines")
EARLIER_BURN_FLOOR, EARLIER_BURN_EXPECTED = 692, 730


def perf_findings(verdict):
    """(node, code, message) of every performance finding: below floor, warn band, fleet."""
    return [(node["node"], reason["code"], reason["message"]) for node in verdict["nodes"]
            for reason in node["reasons"] if reason["code"].startswith("perf.")]


class RealGpuRecords(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="commcert-real-gpu-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def judge(self, baseline, files):
        completed = subprocess.run([BIN, "report", *files, "--baseline", baseline, "--format", "json"],
                                   capture_output=True, text=True, timeout=120)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        return json.loads(completed.stdout)

    def with_earlier_burn_limits(self, sku):
        with open(os.path.join(BASELINES, f"{sku}.yaml")) as f:
            text = f.read()
        changed, count = re.subn(r"(gemm_bf16:\n(?:\s*#.*\n)*\s*floor:) \d+(\s*\n\s*expected:) \d+",
                                 rf"\1 {EARLIER_BURN_FLOOR}\2 {EARLIER_BURN_EXPECTED}", text)
        self.assertEqual(count, 1, f"{sku}: no gemm_bf16 floor to change")
        path = os.path.join(self.tmp, f"{sku}.yaml")
        with open(path, "w") as f:
            f.write(changed)
        return path

    def assert_healthy_under_its_floor_and_caught_by_the_earlier_one(self, sku, files):
        verdict = self.judge(sku, files)
        self.assertEqual(perf_findings(verdict), [])
        gpu_reasons = [r for node in verdict["nodes"] for r in node["reasons"] if r["check"] in ("burn", "membw")]
        self.assertTrue(gpu_reasons, "the one-GPU machine must still miss GPUs 1-7 of 8")
        self.assertTrue(all(r["code"] == "evidence.missing" for r in gpu_reasons), gpu_reasons)

        earlier = self.judge(self.with_earlier_burn_limits(sku), files)
        findings = perf_findings(earlier)
        self.assertEqual(len(findings), 1, findings)
        self.assertEqual(findings[0][1], "perf.below_floor")
        self.assertIn(f"below the floor {EARLIER_BURN_FLOOR} TFLOP/s", findings[0][2])
        self.assertIn("gpu 0", findings[0][2])

    def test_a_healthy_h100_is_not_quarantined_by_the_h100_floors(self):
        # 689.3 TFLOP/s at the 700 W cap; membw copy 2.84 TB/s, host 55.3/55.1 GB/s.
        files = [os.path.join(RECORDS, "h100", f"selftest-{kind}.jsonl") for kind in ("health", "burn", "membw")]
        self.assert_healthy_under_its_floor_and_caught_by_the_earlier_one("h100-sxm-8gpu-ndr400", files)

    def test_a_healthy_h200_burn_is_not_quarantined_by_the_h200_floor(self):
        # 667.6 TFLOP/s at the 700 W cap.
        files = [os.path.join(RECORDS, "h200", "burn-timeline.jsonl")]
        self.assert_healthy_under_its_floor_and_caught_by_the_earlier_one("h200-sxm-8gpu-ndr400", files)

    def test_a_one_gpu_node_run_by_itself_is_told_why_its_collectives_cannot_be_judged(self):
        # `commcert run quick` on one H100 (4cc0032): every stage ran, every sweep one rank.
        run = os.path.join(RECORDS, "h100", "quick-one-gpu")
        with open(os.path.join(run, "suite.json")) as f:
            suite = json.load(f)
        self.assertEqual([(s["name"], s["status"]) for s in suite["stages"]],
                         [("health", "ok"), ("burn", "ok"), ("node-collectives", "ok"),
                          ("cluster-collectives", "ok")])
        self.assertIn("-g", suite["stages"][1]["argv"])  # the one process drove every GPU
        verdict = self.judge("h100-sxm-8gpu-ndr400", [run])
        self.assertEqual(perf_findings(verdict), [])  # 682.2 TFLOP/s passes the H100 floor
        reasons = {r["check"]: r for node in verdict["nodes"] for r in node["reasons"]}
        for check in ("collective.allreduce", "collective.allgather"):
            self.assertEqual(reasons[check]["code"], "evidence.not_judgeable")
            self.assertIn("ran on a one-rank communicator, which has no bus bandwidth",
                          reasons[check]["message"])
        # The run is judged as finished, and its report spans it from the first stage's start.
        self.assertNotIn("input.run_unfinished", json.dumps(verdict))
        completed = subprocess.run([BIN, "report", run, "--baseline", "h100-sxm-8gpu-ndr400",
                                    "--format", "md"], capture_output=True, text=True, timeout=120)
        self.assertIn("- quick: fail, suite quick, 2026-11-26T17:16:46.331Z – 2026-11-26T17:17:51.640Z",
                      completed.stdout)


if __name__ == "__main__":
    unittest.main()
