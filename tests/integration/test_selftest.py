"""The GPU self-test (scripts/selftest, bin/commcert-selftest in the bundle) and its report writer
(scripts/selftest-report), which otherwise run only on GPU machines, kept from rotting here:

- the report writer on hand-written self-test directories (tests/fixtures/selftest/: `pass` is a
  whole 2-GPU run, the others are overlays of files that replace its files);
- the script's no-GPU path against the real built binary (COMMCERT_BIN, set by ctest);
- the script's GPU path with fake programs (nvidia-smi, commcert, the helpers, nccl-tests) that
  answer from the `pass` fixture: every step runs with the right arguments, in bundle layout and
  with the COMMCERT_BIN/COMMCERT_LIBEXEC overrides.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from commcert_testing import BIN, SOURCE_DIR, read_records, validate_records

SCRIPT = SOURCE_DIR / "scripts" / "selftest"
WRITER = SOURCE_DIR / "scripts" / "selftest-report"
FIXTURES = SOURCE_DIR / "tests" / "fixtures" / "selftest"
STEP_NAMES = ["version", "health", "commcert_gpu_tests", "commcert_gpu_stage_gpu_tests", "sweep", "sweep-graph",
              "nccl-tests", "sweep-time", "burn", "plain-gemm", "membw", "fault-corrupt", "fault-hang"]
GPU_STEPS = STEP_NAMES[2:]


def step_rows(report):
    """{step: result} from the report's steps table."""
    rows = {}
    for line in report.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[0].isdigit():
            rows[cells[1]] = cells[3].strip("*")
    return rows


class TemporaryDirectory(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="commcert-selftest-"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


class ReportWriterTest(TemporaryDirectory):
    def scenario(self, overlay=None):
        out = self.tmp / "out"
        shutil.copytree(FIXTURES / "pass", out)
        if overlay:
            shutil.copytree(FIXTURES / overlay, out, dirs_exist_ok=True)
        return out

    def write_report(self, out):
        completed = subprocess.run([sys.executable, str(WRITER), str(out)], capture_output=True, text=True,
                                   timeout=60)
        report = (out / "gpu-results.md").read_text() if (out / "gpu-results.md").exists() else ""
        return completed, report

    def test_fixture_records_follow_the_schema(self):
        paths = sorted(FIXTURES.rglob("records.jsonl"))
        self.assertGreaterEqual(len(paths), 8)
        for path in paths:
            with self.subTest(path=str(path.relative_to(FIXTURES))):
                validate_records(self, read_records(path))

    def test_a_passing_run_reports_every_figure_and_ratio(self):
        completed, report = self.write_report(self.scenario())
        self.assertEqual(completed.returncode, 0, completed.stdout + completed.stderr)
        self.assertIn("self-test: PASS", completed.stdout)
        self.assertTrue(report.startswith("## Self-test 2026-11-26 on `gpu-node-07`: PASS"), report[:200])
        self.assertEqual(step_rows(report), {name: "PASS" for name in STEP_NAMES})
        # machine, versions, the libraries --version named
        self.assertIn("GPU 1: NVIDIA H100 80GB HBM3, PCI 00000000:3B:00.0, driver 580.95.05", report)
        self.assertIn("nccl         2.28.9   /usr/lib/x86_64-linux-gnu/libnccl.so.2", report)
        # commands as run
        self.assertIn("sweep all --backend nccl -g 2 -b 1M -e 4M -f 4 -n 20 -w 1 -c 1 -G 2", report)
        # sweep table, both passes side by side; in-place sendrecv skipped with its reason
        self.assertIn("| allreduce | 4 MiB | out | 40.0 | 105.0 | 0 | 37.0 | 113.5 | 0 | 1.081 |", report)
        self.assertIn("- skipped: sendrecv has no in-place form", report)
        # ours beside nccl-tests
        self.assertIn("| allreduce | 1 MiB | out | 19.0 | 18.7 | 55.22 | 56.06 | 0.985 | shown |", report)
        self.assertIn("| allreduce | 4 MiB | out | 40.0 | 39.4 | 104.96 | 106.56 | 0.985 | PASS |", report)
        self.assertIn("| alltoall | 4 MiB | in |", report)
        # a whole sweep's wall time beside nccl-tests', round by round, and the spreads
        self.assertIn("`commcert sweep allreduce --backend nccl -g 2 -b 8 -e 8G -f 2` against "
                      "`all_reduce_perf -b 8 -e 8G -f 2 -g 2`", report)
        self.assertIn("| 2 | 12.91 | 30.51 | 0.423 |", report)
        self.assertIn("| median of 3 | 12.63 | 30.13 | 0.419 | PASS |", report)
        self.assertIn("| 8 B | 11.05 | 0.72% | 10.90 | 1.74% | PASS |", report)
        self.assertIn("| 1 MiB | 19.01 | 0.68% | 18.83 | 1.81% | PASS |", report)
        self.assertIn("| 64 MiB |", report)
        self.assertIn("| 8 GiB | 23880.20 | 0.13% | 23897.30 | 0.52% | PASS |", report)
        self.assertIn("| 8 | sweep-time |", report)
        self.assertRegex(report, r"\| sweep-time \|[^\n]*\| PASS \| 0,0,0,0,0,0 \| 128\.4 \| 3600 \| wall 0\.419×")
        # burn against the plain GEMM (joined on the PCI bus id, spelled two ways), membw against memcpy
        self.assertIn("| 0 | NVIDIA H100 80GB HBM3 | 741.9 | 758.2 | 0.979 | PASS | 75.0% | 0 | false |", report)
        self.assertIn("| 1 | NVIDIA H100 80GB HBM3 | 736.4 | 754.0 | 0.977 | PASS |", report)
        self.assertIn("sw_power_cap 38.2", report)
        self.assertIn("| 5.620 TB/s | 5.700 TB/s | 98.6% | PASS |", report)
        self.assertIn("0 errors in 71.0 GiB", report)
        # faults
        self.assertIn("10280 wrong elements counted, wrong_ranks [1]", report)
        self.assertIn("exit 4 after 16.9 s (bound 45 s)", report)
        self.assertIn("not_arrived rank 1 (gpu-node-07), attributed true", report)
        # health and unit tests
        self.assertIn("| 0 | NVIDIA H100 80GB HBM3 | 0000:19:00.0 | 580.95.05 |", report)
        self.assertIn("18/18", report)
        self.assertIn("| `commcert_gpu_stage_gpu_tests` | 4 | 0 | 1 | 0 |", report)
        self.assertNotIn("End of each failed step's log", report)

    def test_a_burn_below_the_plain_gemm_fails_the_burn_step(self):
        completed, report = self.write_report(self.scenario("burn-below-target"))
        self.assertEqual(completed.returncode, 1, completed.stdout)
        rows = step_rows(report)
        self.assertEqual(rows["burn"], "FAIL")
        self.assertEqual([name for name, result in rows.items() if result != "PASS"], ["burn"])
        self.assertIn("| 1 | NVIDIA H100 80GB HBM3 | 736.4 | 812.5 | 0.906 | BELOW TARGET |", report)
        self.assertIn("GPU 1 at 0.906× the plain GEMM (target 0.95)", report)
        self.assertIn("self-test: FAIL (1 step(s) failed: burn)", completed.stdout)

    def test_a_hang_that_is_not_bounded_fails_the_fault_step(self):
        completed, report = self.write_report(self.scenario("hang-not-bounded"))
        self.assertEqual(completed.returncode, 1, completed.stdout)
        rows = step_rows(report)
        self.assertEqual([name for name, result in rows.items() if result != "PASS"], ["fault-hang"])
        self.assertIn("killed by the self-test after 60 s", report)
        self.assertIn("no `timeout` record written", report)
        # the end of the failed step's log, to start the diagnosis from
        self.assertIn("`logs/fault-hang.log`:", report)
        self.assertIn("NCCL WARN Cuda failure 'unspecified launch failure'", report)

    def test_without_nccl_tests_nothing_is_compared_and_nothing_fails(self):
        completed, report = self.write_report(self.scenario("no-nccl-tests"))
        self.assertEqual(completed.returncode, 0, completed.stdout)
        self.assertEqual(step_rows(report)["nccl-tests"], "NOT AVAILABLE")
        self.assertEqual(step_rows(report)["sweep-time"], "NOT RUN")
        self.assertIn("Not timed: nccl-tests not available (no all_reduce_perf to time our sweep against).", report)
        self.assertIn("Not run: `sweep-time`.", report)
        self.assertIn("Not compared: nccl-tests not available (no all_reduce_perf on PATH or in $NCCL_TESTS_DIR).",
                      report)
        self.assertNotIn("nccl-tests GB/s", report)

    @staticmethod
    def edit_nccl_tests_rows(out, edit):
        """Calls edit(fields) on every data row of all_reduce_perf's table: size is fields[0],
        out-of-place time, algbw, busbw fields[5:8], in-place time, algbw, busbw fields[9:12]."""
        table = out / "nccl-tests" / "all_reduce_perf.txt"
        lines = []
        for line in table.read_text().splitlines():
            fields = line.split()
            if fields and fields[0].isdigit():
                edit(fields)
                line = " ".join(fields)
            lines.append(line)
        table.write_text("\n".join(lines) + "\n")

    def test_nccl_tests_faster_than_ours_fails_the_comparison(self):
        out = self.scenario()

        def theirs_ten_percent_faster(fields):
            fields[7] = f"{float(fields[7]) * 1.1:.2f}"
            fields[11] = f"{float(fields[11]) * 1.1:.2f}"
        self.edit_nccl_tests_rows(out, theirs_ten_percent_faster)
        completed, report = self.write_report(out)
        self.assertEqual(completed.returncode, 1, completed.stdout)
        self.assertEqual(step_rows(report)["nccl-tests"], "FAIL")
        self.assertIn("| 0.895 | BELOW TARGET |", report)
        self.assertIn("allreduce 4 MiB out-of-place at 0.90× nccl-tests", report)
        # 1 MiB took nccl-tests 18.7 µs: bound by launch latency, shown and not judged.
        self.assertRegex(report, r"\| allreduce \| 1 MiB \| out \|[^\n]*\| 0\.895 \| shown \|")

    def test_rows_are_judged_from_20_microseconds_of_nccl_tests_time(self):
        for their_us, judged in ((19.99, False), (20.0, True), (20.01, True)):
            with self.subTest(their_us=their_us):
                shutil.rmtree(self.tmp / "out", ignore_errors=True)
                out = self.scenario()

                def theirs_faster_at_1_mib_taking(fields, their_us=their_us):
                    if fields[0] == "1048576":
                        fields[5] = f"{their_us:.2f}"
                        fields[7] = f"{float(fields[7]) * 1.1:.2f}"
                self.edit_nccl_tests_rows(out, theirs_faster_at_1_mib_taking)
                completed, report = self.write_report(out)
                self.assertEqual(completed.returncode, 1 if judged else 0, completed.stdout)
                self.assertEqual("allreduce 1 MiB out-of-place at 0.90× nccl-tests" in report, judged)
                self.assertRegex(report, r"\| allreduce \| 1 MiB \| out \|[^\n]*\| 0\.895 \| "
                                 + ("BELOW TARGET" if judged else "shown") + r" \|")

    @staticmethod
    def edit_sweep_time_seconds(out, seconds):
        """Sets the wall seconds of sweep-time's processes: seconds[("commcert", 2)] = 15.0."""
        steps = out / "steps.tsv"
        lines = []
        for line in steps.read_text().splitlines():
            fields = line.split("\t")
            who, _, round_ = fields[0].removeprefix("sweep-time/").rpartition("-")
            if fields[0].startswith("sweep-time/") and (who, int(round_)) in seconds:
                fields[2] = str(seconds[(who, int(round_))])
            lines.append("\t".join(fields))
        steps.write_text("\n".join(lines) + "\n")

    def test_sweep_time_is_judged_at_half_of_nccl_tests_wall_time(self):
        for ours, passes in ((15.0, True), (15.01, False), (29.0, False)):
            with self.subTest(ours=ours):
                shutil.rmtree(self.tmp / "out", ignore_errors=True)
                out = self.scenario()
                seconds = {("all_reduce_perf", k): 30.0 + k - 2 for k in (1, 2, 3)}
                seconds.update({("commcert", k): ours + (k - 2) / 10 for k in (1, 2, 3)})
                self.edit_sweep_time_seconds(out, seconds)
                completed, report = self.write_report(out)
                rows = step_rows(report)
                self.assertEqual(completed.returncode, 0 if passes else 1, completed.stdout)
                self.assertEqual([name for name, result in rows.items() if result != "PASS"],
                                 [] if passes else ["sweep-time"])
                ratio = ours / 30.0
                self.assertIn(f"| median of 3 | {ours:.2f} | 30.00 | {ratio:.3f} | "
                              + ("PASS |" if passes else "ABOVE TARGET |"), report)
                self.assertEqual(f"wall time {ratio:.2f}× nccl-tests' (target ≤ 0.5)" in report, not passes)

    def test_a_wider_spread_than_nccl_tests_fails_sweep_time(self):
        # 64 MiB takes ours 192.4, 193.1, 192.7 µs (0.36 %) and theirs 191.6-193.9 µs (1.19 %):
        # ours at 195.0 µs in round 2 spreads 1.35 %.
        out = self.scenario()
        records = out / "results" / "sweep-time-2" / "records.jsonl"
        lines = []
        for line in records.read_text().splitlines():
            record = json.loads(line)
            if record.get("bytes") == 64 << 20 and not record.get("in_place"):
                record["time_s"] = 195.0e-6
            lines.append(json.dumps(record))
        records.write_text("\n".join(lines) + "\n")
        completed, report = self.write_report(out)
        self.assertEqual(completed.returncode, 1, completed.stdout)
        rows = step_rows(report)
        self.assertEqual([name for name, result in rows.items() if result != "PASS"], ["sweep-time"])
        self.assertIn("| 64 MiB | 192.70 | 1.35% | 192.50 | 1.19% | WIDER THAN THEIRS |", report)
        self.assertIn("64 MiB: our spread 1.35% wider than nccl-tests' 1.19%", report)
        self.assertIn("| median of 3 | 12.63 | 30.13 | 0.419 | PASS |", report)

    def test_a_sweep_time_round_killed_or_wrong_fails_and_is_left_out_of_the_median(self):
        out = self.scenario()
        steps = out / "steps.tsv"
        steps.write_text(steps.read_text().replace("sweep-time/commcert-3\t0\t12.633\t",
                                                   "sweep-time/commcert-3\t124\t600.0\t"))
        table = out / "nccl-tests" / "all_reduce_perf-sweep-time-1.txt"
        lines = table.read_text().splitlines()
        eight_bytes = next(i for i, line in enumerate(lines) if line.split()[:1] == ["8"])
        fields = lines[eight_bytes].split()
        fields[8] = "3"  # out-of-place #wrong
        lines[eight_bytes] = " ".join(fields)
        table.write_text("\n".join(lines) + "\n")
        completed, report = self.write_report(out)
        self.assertEqual(completed.returncode, 1, completed.stdout)
        self.assertEqual(step_rows(report)["sweep-time"], "FAIL")
        self.assertIn("round 3: commcert killed at its bound of 600 s", report)
        self.assertIn("round 1: nccl-tests 8 B 3 wrong", report)
        self.assertIn("| median of 2 | 12.66 | 30.18 |", report)
        # the killed process's records are partial: its sizes count in no spread
        self.assertIn("| 8 B | 11.06 | 0.72% | 10.90 | 1.74% | PASS |", report)
        self.assertIn("| 3 | 600.00 | 30.13 | n/a | not timed: round 3: commcert killed at its bound of 600 s |", report)

    def test_one_rank_in_place_rows_are_shown_not_judged(self):
        # One GPU: an in-place collective moves no data, and nccl-tests times only NCCL's host call
        # (seen on an H200: 0.4 µs against our 0.5 µs). Out of place the one rank still copies.
        out = self.scenario()
        records = out / "results" / "sweep" / "records.jsonl"
        lines = []
        for line in records.read_text().splitlines():
            record = json.loads(line)
            if record.get("kind") == "collective":
                record["nranks"] = 1
            lines.append(json.dumps(record))
        records.write_text("\n".join(lines) + "\n")

        def theirs_ten_times_faster_in_place(fields):
            fields[11] = f"{float(fields[11]) * 10:.2f}"
        self.edit_nccl_tests_rows(out, theirs_ten_times_faster_in_place)
        completed, report = self.write_report(out)
        self.assertEqual(completed.returncode, 0, completed.stdout)
        self.assertEqual(step_rows(report)["nccl-tests"], "PASS")
        self.assertRegex(report, r"\| allreduce \| 4 MiB \| in \|[^\n]*\| shown \|")
        self.assertRegex(report, r"\| allreduce \| 4 MiB \| out \|[^\n]*\| PASS \|")

        # The same figures with two ranks are judged, and fail.
        lines = [line.replace('"nranks": 1', '"nranks": 2') for line in records.read_text().splitlines()]
        records.write_text("\n".join(lines) + "\n")
        completed, report = self.write_report(out)
        self.assertEqual(completed.returncode, 1, completed.stdout)
        self.assertIn("allreduce 4 MiB in-place at 0.", report)

    def test_the_real_h200_run_is_judged_as_it_was_on_the_machine(self):
        # The first real GPU run (one H200): the writer must keep reading what the bundle wrote.
        out = self.tmp / "out"
        shutil.copytree(FIXTURES / "h200-2026-11-26", out)
        completed, report = self.write_report(out)
        self.assertEqual(completed.returncode, 1, completed.stdout)
        rows = step_rows(report)
        self.assertEqual(rows.pop("membw"), "FAIL")
        # That self-test had no sweep-time step yet: a missing step is never a pass.
        self.assertEqual(rows.pop("sweep-time"), "FAIL")
        self.assertIn("not attempted", report)
        self.assertEqual(set(rows.values()), {"PASS"}, rows)
        self.assertIn("GPU 0 copy at 0.945× cudaMemcpy (target 0.95)", report)
        self.assertIn("NVIDIA H200", report)
        # One rank: in-place rows are shown, out-of-place rows from 1 MiB judged.
        self.assertRegex(report, r"\| reduce \| 4 MiB \| in \|[^\n]*\| 0\.321 \| shown \|")
        self.assertRegex(report, r"\| broadcast \| 256 MiB \| out \|[^\n]*\| PASS \|")
        self.assertIn("not_arrived rank 0 (vm), attributed true", report)

    def test_a_truncated_record_is_reported_not_dropped(self):
        out = self.scenario()
        with open(out / "results" / "membw" / "records.jsonl", "a") as f:
            f.write('{"schema": 1, "run_id": "membw", "kind": "mem')
        completed, report = self.write_report(out)
        self.assertEqual(completed.returncode, 0, completed.stdout)
        self.assertIn("`membw/records.jsonl` line 4 is not JSON (truncated last line)", report)

    def test_not_a_selftest_directory(self):
        completed = subprocess.run([sys.executable, str(WRITER), str(self.tmp)], capture_output=True, text=True)
        self.assertEqual(completed.returncode, 2)
        self.assertIn("steps.tsv not found", completed.stderr)


class NoGpuTest(TemporaryDirectory):
    """The script on this machine: no GPU, the real binary."""

    def setUp(self):
        super().setUp()
        if not Path(BIN).is_file():
            self.skipTest(f"COMMCERT_BIN={BIN} is not a built binary (run through ctest)")

    def run_selftest(self, env=None, args=None):
        full_env = dict(os.environ, COMMCERT_BIN=str(Path(BIN).resolve()))
        full_env.pop("CUDA_VISIBLE_DEVICES", None)
        full_env.update(env or {})
        out = self.tmp / "out"
        completed = subprocess.run([str(SCRIPT), "--out", str(out), *(args or [])], env=full_env,
                                   capture_output=True, text=True, timeout=300)
        report = (out / "gpu-results.md").read_text() if (out / "gpu-results.md").exists() else ""
        return completed, out, report

    def assert_no_gpu_run(self, completed, report, why):
        output = completed.stdout + completed.stderr
        self.assertEqual(completed.returncode, 3, output)
        lines = [line for line in output.splitlines() if line.startswith("commcert-selftest: no GPU:")]
        self.assertEqual(len(lines), 1, output)
        self.assertIn(why, lines[0])
        self.assertIn("the self-test fails", lines[0])
        self.assertIn(": NO GPU", report.splitlines()[0])
        self.assertIn("The GPU steps did not run", report)
        rows = step_rows(report)
        self.assertEqual(rows["version"], "PASS")
        self.assertEqual(rows["health"], "PASS")
        for step in GPU_STEPS:
            self.assertEqual(rows[step], "NOT RUN", step)
        self.assertIn("Not run: `commcert_gpu_tests`, `commcert_gpu_stage_gpu_tests`, `sweep`", report)

    def test_no_driver(self):
        completed, out, report = self.run_selftest({"COMMCERT_NVIDIA_SMI": str(self.tmp / "missing" / "nvidia-smi")})
        self.assert_no_gpu_run(completed, report, "nvidia-smi not found")
        # The real binary ran what needs no GPU: its version in the report, health's skipped records.
        version = subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout.strip()
        self.assertIn(version.splitlines()[0], report)
        health = read_records(out / "results" / "health" / "records.jsonl")
        validate_records(self, health)
        gpu = [r for r in health if r.get("component") == "gpu"]
        self.assertTrue(gpu and all(r["status"] == "skipped" for r in gpu), gpu)
        self.assertEqual(sorted(p.name for p in (out / "results").iterdir()), ["health"])
        self.assertIn("[13/13 ", completed.stdout)

    def test_a_driver_that_does_not_answer(self):
        smi = self.tmp / "nvidia-smi"
        smi.write_text("#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
                       "driver. Make sure that the latest NVIDIA driver is installed and running.\"\nexit 9\n")
        smi.chmod(0o755)
        completed, _, report = self.run_selftest({"COMMCERT_NVIDIA_SMI": str(smi)}, ["--burn-seconds", "5"])
        self.assert_no_gpu_run(completed, report, "nvidia-smi failed (exit 9): NVIDIA-SMI has failed")

    def test_every_gpu_hidden_by_cuda_visible_devices(self):
        smi = self.tmp / "nvidia-smi"
        smi.write_text(f"#!/bin/sh\ncat {FIXTURES / 'pass' / 'gpus.csv'}\n")
        smi.chmod(0o755)
        completed, _, report = self.run_selftest({"COMMCERT_NVIDIA_SMI": str(smi), "CUDA_VISIBLE_DEVICES": ""})
        self.assert_no_gpu_run(completed, report, "CUDA_VISIBLE_DEVICES='' hides every GPU")


# What both fakes of sweep-time's processes share: the sizes of -b/-e/-f; a time per operation at
# each (10 µs plus 300 GB/s) that differs from round to round by a SPREAD set by env (1, 1 + SPREAD,
# 1 - SPREAD, ...); and a whole-process time set by env, so that a test makes either side slower.
FAKE_SWEEP_TIMING = r'''
def sizes(args):
    def parse(text):
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1], 1)
        return int(text[:-1] if scale > 1 else text) * scale
    size, largest, factor = (parse(args[args.index(flag) + 1]) for flag in ("-b", "-e", "-f"))
    while size <= largest:
        yield size
        size *= factor


def seconds_per_operation(size, round_, side):
    spread = float(os.environ.get(f"SELFTEST_FAKE_{side}_SPREAD", "0"))
    return (10e-6 + size / 300e9) * (1, 1 + spread, 1 - spread)[(round_ - 1) % 3]


def take_whole_process_time(side):
    time.sleep(float(os.environ.get(f"SELFTEST_FAKE_{side}_SECONDS", "0")))
'''

FAKE_COMMCERT = r'''#!/usr/bin/env python3
import json, os, shutil, sys, time
from pathlib import Path
fixture = Path(os.environ["SELFTEST_FAKE_FIXTURE"])
args = sys.argv[1:]
with open(os.environ["SELFTEST_FAKE_LOG"], "a") as log:
    log.write(json.dumps({"program": "commcert", "argv": args, "fault": os.environ.get("COMMCERT_FAULT"),
                          "pid": os.getpid()}) + "\n")
''' + FAKE_SWEEP_TIMING + r'''
if os.environ.get("SELFTEST_FAKE_STUCK") in args:
    time.sleep(300)
if args == ["--version"]:
    sys.stdout.write((fixture / "version.txt").read_text())
    sys.exit(0)
run_id = args[args.index("--run-id") + 1]
target = Path(args[args.index("--out") + 1]) / run_id
target.mkdir(parents=True, exist_ok=True)
if run_id.startswith("sweep-time-"):
    round_ = int(run_id.rsplit("-", 1)[1])
    with open(target / "records.jsonl", "w") as records:
        for size in sizes(args):
            for in_place in (False, True):
                records.write(json.dumps({"kind": "collective", "status": "ok", "collective": "allreduce",
                                          "bytes": size, "in_place": in_place, "cycle": 0, "nranks": 2,
                                          "time_s": seconds_per_operation(size, round_, "OUR")}) + "\n")
    take_whole_process_time("OUR")
    sys.exit(0)
for path in (fixture / "results" / run_id).iterdir():
    shutil.copy(path, target / path.name)
sys.exit({"fault-corrupt": 1, "fault-hang": 4}.get(run_id, 0))
'''

FAKE_HELPER = r'''#!/usr/bin/env python3
import json, os, shutil, sys, time
from pathlib import Path
fixture = Path(os.environ["SELFTEST_FAKE_FIXTURE"])
name = Path(sys.argv[0]).name
args = sys.argv[1:]
log_path = os.environ["SELFTEST_FAKE_LOG"]
earlier = [json.loads(line) for line in open(log_path)] if os.path.exists(log_path) else []
with open(log_path, "a") as log:
    log.write(json.dumps({"program": name, "argv": args}) + "\n")
''' + FAKE_SWEEP_TIMING + r'''
if name == "commcert_plain_gemm":
    sys.stdout.write((fixture / "plain_gemm.jsonl").read_text())
elif name == "all_reduce_perf" and args[args.index("-b") + 1] == "8":  # sweep-time's
    round_ = 1 + sum(1 for call in earlier if call == {"program": name, "argv": args})
    print("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong")
    for size in sizes(args):
        us = seconds_per_operation(size, round_, "THEIR") * 1e6
        bw = size / us / 1e3
        print(f"{size:12d} {size // 4:13d}     float     sum      -1 {us:8.2f} {bw:7.2f} {bw:7.2f}      0 "
              f"{us:8.2f} {bw:7.2f} {bw:7.2f}      0")
    take_whole_process_time("THEIR")
elif name.endswith("_perf"):
    sys.stdout.write((fixture / "nccl-tests" / (name + ".txt")).read_text())
else:
    xml = [a.split("xml:", 1)[1] for a in args if a.startswith("--gtest_output=xml:")][0]
    shutil.copy(fixture / "gtest" / (name + ".xml"), xml)
'''


class FakeGpuTest(TemporaryDirectory):
    """The script's GPU path, with programs that answer from the `pass` fixture."""

    def make_fakes(self, libexec, gpu_memory=None):
        """The fakes; nvidia-smi lists the `pass` fixture's two GPUs, with gpu_memory ("16384 MiB")
        in place of their memory.total when given. sweep-time passes unless a test changes the
        SELFTEST_FAKE_* timing."""
        libexec.mkdir(parents=True, exist_ok=True)
        for name in ("commcert_plain_gemm", "commcert_gpu_tests", "commcert_gpu_stage_gpu_tests"):
            (libexec / name).write_text(FAKE_HELPER)
            (libexec / name).chmod(0o755)
        nccl_tests = self.tmp / "nccl-tests" / "build"
        nccl_tests.mkdir(parents=True)
        for name in ("all_reduce_perf", "alltoall_perf"):
            (nccl_tests / name).write_text(FAKE_HELPER)
            (nccl_tests / name).chmod(0o755)
        gpus = (FIXTURES / "pass" / "gpus.csv").read_text()
        if gpu_memory:
            gpus = gpus.replace("81559 MiB", gpu_memory)
        (self.tmp / "gpus.csv").write_text(gpus)
        smi = self.tmp / "nvidia-smi"
        smi.write_text(f"#!/bin/sh\ncat {self.tmp / 'gpus.csv'}\n")
        smi.chmod(0o755)
        self.log = self.tmp / "invocations.jsonl"
        return {"SELFTEST_FAKE_FIXTURE": str(FIXTURES / "pass"), "SELFTEST_FAKE_LOG": str(self.log),
                "COMMCERT_NVIDIA_SMI": str(smi), "NCCL_TESTS_DIR": str(self.tmp / "nccl-tests"),
                "SELFTEST_FAKE_OUR_SECONDS": "0", "SELFTEST_FAKE_THEIR_SECONDS": "2",
                "SELFTEST_FAKE_OUR_SPREAD": "0.001", "SELFTEST_FAKE_THEIR_SPREAD": "0.01"}

    def run_script(self, script, env):
        full_env = dict(os.environ)
        for name in ("COMMCERT_BIN", "COMMCERT_LIBEXEC", "COMMCERT_BUILD_DIR", "CUDA_VISIBLE_DEVICES"):
            full_env.pop(name, None)
        full_env.update(env)
        out = self.tmp / "out"
        completed = subprocess.run([str(script), "--out", str(out), "--burn-seconds", "3"], env=full_env,
                                   capture_output=True, text=True, timeout=300)
        report = (out / "gpu-results.md").read_text() if (out / "gpu-results.md").exists() else ""
        calls = [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []
        return completed, out, report, calls

    def assert_every_step_ran(self, completed, out, report, calls):
        output = completed.stdout + completed.stderr
        self.assertEqual(completed.returncode, 0, output + report)
        self.assertNotIn("no GPU", output)
        self.assertEqual(step_rows(report), {name: "PASS" for name in STEP_NAMES})
        for i in range(1, 14):
            self.assertIn(f"[{i}/13 ", completed.stdout)
        commcert = [c for c in calls if c["program"] == "commcert"]
        argv = {c["argv"][c["argv"].index("--run-id") + 1]: c for c in commcert if "--run-id" in c["argv"]}
        self.assertEqual(sorted(argv), ["burn", "fault-corrupt", "fault-hang", "health", "membw", "sweep", "sweep-graph",
                                        "sweep-time-1", "sweep-time-2", "sweep-time-3"])
        self.assertIn(["--version"], [c["argv"] for c in commcert])
        sweep = " ".join(argv["sweep"]["argv"])
        self.assertIn("sweep all --backend nccl -g 2 -b 64K -e 256M -f 4 -n 20 -w 1 -c 1", sweep)
        self.assertNotIn("-G", sweep)
        self.assertIn("-G 2", " ".join(argv["sweep-graph"]["argv"]))
        self.assertIn("burn -g 0 --kernel gemm_bf16 --size 8192 -D 3", " ".join(argv["burn"]["argv"]))
        self.assertIn("membw -g 0", " ".join(argv["membw"]["argv"]))
        self.assertEqual(argv["fault-corrupt"]["fault"], "corrupt:1")
        self.assertEqual(argv["fault-hang"]["fault"], "hang:1:3")
        self.assertIn("sweep allreduce --backend nccl -g 2", " ".join(argv["fault-hang"]["argv"]))
        self.assertIn("-T 10", " ".join(argv["fault-hang"]["argv"]))
        for name in ("sweep", "sweep-graph", "burn", "membw", "health"):
            self.assertIsNone(argv[name]["fault"], name)
        helpers = {}  # each helper's first call (all_reduce_perf's later ones are sweep-time's)
        for c in calls:
            if c["program"] != "commcert":
                helpers.setdefault(c["program"], c["argv"])
        self.assertEqual(helpers["commcert_plain_gemm"], ["gemm_bf16", "8192", "3", "all"])
        self.assertEqual(helpers["all_reduce_perf"], ["-b", "64K", "-e", "256M", "-f", "4", "-n", "20", "-w", "1",
                                                      "-g", "2", "-c", "1"])
        self.assertIn("alltoall_perf", helpers)
        self.assertIn("--gtest_output=xml:" + str(out / "gtest" / "commcert_gpu_tests.xml"),
                      helpers["commcert_gpu_tests"])
        # burn and plain GEMM right after each other, the hang last
        order = [c["argv"][c["argv"].index("--run-id") + 1] if "--run-id" in c["argv"] else c["program"]
                 for c in calls]
        self.assertEqual(order[order.index("burn") + 1], "commcert_plain_gemm")
        self.assertEqual(order[-1], "fault-hang")
        for name in ("version", "health", "sweep", "burn", "fault-hang"):
            self.assertTrue((out / "logs" / f"{name}.log").exists(), name)
        self.assertTrue((out / "logs" / "nccl-tests-all_reduce_perf.log").exists())

    def test_bundle_layout(self):
        prefix = self.tmp / "commcert-0.1.0-linux-x86_64-cuda13"
        (prefix / "bin").mkdir(parents=True)
        shutil.copy(SCRIPT, prefix / "bin" / "commcert-selftest")
        (prefix / "bin" / "commcert").write_text(FAKE_COMMCERT)
        (prefix / "bin" / "commcert").chmod(0o755)
        env = self.make_fakes(prefix / "libexec" / "commcert")
        for path in [WRITER, *WRITER.parent.glob("selftest_*.py")]:  # as the bundle installs them
            shutil.copy(path, prefix / "libexec" / "commcert" / path.name)
        completed, out, report, calls = self.run_script(prefix / "bin" / "commcert-selftest", env)
        self.assert_every_step_ran(completed, out, report, calls)
        self.assertIn("(bundle layout; commcert `" + str(prefix / "bin" / "commcert"), report)
        self.assertIn(str(prefix / "libexec" / "commcert" / "commcert_gpu_tests"), report)

    def test_source_checkout_with_overrides(self):
        fake = self.tmp / "fake-commcert"
        fake.write_text(FAKE_COMMCERT)
        fake.chmod(0o755)
        env = self.make_fakes(self.tmp / "helpers")
        env.update({"COMMCERT_BIN": str(fake), "COMMCERT_LIBEXEC": str(self.tmp / "helpers")})
        completed, out, report, calls = self.run_script(SCRIPT, env)
        self.assert_every_step_ran(completed, out, report, calls)
        self.assertIn("(source layout; commcert `" + str(fake), report)

    def test_a_missing_helper_fails_its_step_and_the_rest_still_run(self):
        fake = self.tmp / "fake-commcert"
        fake.write_text(FAKE_COMMCERT)
        fake.chmod(0o755)
        env = self.make_fakes(self.tmp / "helpers")
        (self.tmp / "helpers" / "commcert_plain_gemm").unlink()
        env.update({"COMMCERT_BIN": str(fake), "COMMCERT_LIBEXEC": str(self.tmp / "helpers")})
        completed, _, report, calls = self.run_script(SCRIPT, env)
        self.assertEqual(completed.returncode, 1, completed.stdout)
        rows = step_rows(report)
        rows.pop("sweep-time")  # judged by wall time, which a loaded machine can tip (tested below)
        self.assertEqual([name for name, result in rows.items() if result != "PASS"], ["plain-gemm"])
        self.assertIn("commcert_plain_gemm not found at " + str(self.tmp / "helpers" / "commcert_plain_gemm"), report)
        self.assertIn("| 0 | NVIDIA H100 80GB HBM3 | 741.9 | n/a | n/a | n/a |", report)
        self.assertIn("fault-hang", [c["argv"][c["argv"].index("--run-id") + 1] for c in calls if "--run-id" in c["argv"]])

    def run_with_fakes(self, gpu_memory=None, **env):
        """The script in a source checkout, commcert and its helpers overridden by the fakes."""
        for leftover in ("out", "helpers", "nccl-tests", "invocations.jsonl"):
            path = self.tmp / leftover
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        fake = self.tmp / "fake-commcert"
        fake.write_text(FAKE_COMMCERT)
        fake.chmod(0o755)
        full_env = self.make_fakes(self.tmp / "helpers", gpu_memory)
        full_env.update({"COMMCERT_BIN": str(fake), "COMMCERT_LIBEXEC": str(self.tmp / "helpers")}, **env)
        return self.run_script(SCRIPT, full_env)

    @staticmethod
    def sweep_time_calls(calls):
        return [c for c in calls if (c["program"] == "commcert" and "sweep-time-" in " ".join(c["argv"]))
                or (c["program"] == "all_reduce_perf" and c["argv"][:2] == ["-b", "8"])]

    def test_sweep_time_interleaves_three_rounds_up_to_a_quarter_of_the_smallest_gpu(self):
        for memory, largest, largest_row in (("16384 MiB", "4G", "| 4 GiB |"), ("81559 MiB", "8G", "| 8 GiB |")):
            with self.subTest(memory=memory):
                completed, out, report, calls = self.run_with_fakes(memory)
                self.assertEqual(completed.returncode, 0, completed.stdout + report)
                self.assertEqual(step_rows(report)["sweep-time"], "PASS")
                timed = self.sweep_time_calls(calls)
                self.assertEqual([c["program"] for c in timed], ["commcert", "all_reduce_perf"] * 3)
                for round_, (ours, theirs) in enumerate(zip(timed[::2], timed[1::2]), 1):
                    self.assertEqual(ours["argv"], ["sweep", "allreduce", "--backend", "nccl", "-g", "2", "-b", "8",
                                                    "-e", largest, "-f", "2", "--run-id", f"sweep-time-{round_}",
                                                    "--out", str(out / "results"), "-q"])
                    self.assertEqual(theirs["argv"], ["-b", "8", "-e", largest, "-f", "2", "-g", "2"])
                    self.assertTrue((out / "nccl-tests" / f"all_reduce_perf-sweep-time-{round_}.txt").exists())
                # after nccl-tests' step, before the burn
                self.assertLess(calls.index([c for c in calls if c["program"] == "alltoall_perf"][0]), calls.index(timed[0]))
                self.assertLess(calls.index(timed[-1]), [i for i, c in enumerate(calls) if "burn" in c["argv"]][0])
                steps = [line.split("\t") for line in (out / "steps.tsv").read_text().splitlines()]
                self.assertEqual([(s[0], s[1], s[3]) for s in steps if s[0].startswith("sweep-time")],
                                 [(f"sweep-time/{who}-{k}", "0", "600") for k in (1, 2, 3)
                                  for who in ("commcert", "all_reduce_perf")])
                self.assertIn(f"sweep_time_maxbytes={largest}\n", (out / "selftest.params").read_text())
                # ours 2 s faster per round; spreads 0.2 % (ours) and 2 % (theirs) at every size
                self.assertRegex(report, r"\| median of 3 \| [0-9.]+ \| [0-9.]+ \| 0\.[0-4][0-9]* \| PASS \|")
                self.assertIn("| 8 B | 10.00 | 0.20% | 10.00 | 2.00% | PASS |", report)
                self.assertIn("| 1 MiB |", report)
                self.assertIn(largest_row, report)

    def test_a_sweep_slower_than_half_of_nccl_tests_fails_sweep_time(self):
        completed, _, report, _ = self.run_with_fakes(SELFTEST_FAKE_OUR_SECONDS="1", SELFTEST_FAKE_THEIR_SECONDS="0")
        self.assertEqual(completed.returncode, 1, completed.stdout)
        rows = step_rows(report)
        self.assertEqual([name for name, result in rows.items() if result != "PASS"], ["sweep-time"])
        self.assertRegex(report, r"\| median of 3 \| [1-9][0-9.]* \| [0-9.]+ \| [0-9.]+ \| ABOVE TARGET \|")
        self.assertIn("FAIL          sweep-time: wall time ", completed.stdout)

    def test_without_nccl_tests_sweep_time_is_not_run_and_not_passed(self):
        completed, _, report, calls = self.run_with_fakes(NCCL_TESTS_DIR=str(self.tmp / "no-nccl-tests"))
        self.assertEqual(completed.returncode, 0, completed.stdout)
        rows = step_rows(report)
        self.assertEqual(rows["nccl-tests"], "NOT AVAILABLE")
        self.assertEqual(rows["sweep-time"], "NOT RUN")
        self.assertRegex(completed.stdout, r"\[8/13 \d+:\d\d\] sweep-time: not run: nccl-tests not available")
        self.assertEqual(self.sweep_time_calls(calls), [])
        self.assertEqual(rows["burn"], "PASS")

    def test_interrupted_it_stops_the_step_and_reports_what_ran(self):
        fake = self.tmp / "fake-commcert"
        fake.write_text(FAKE_COMMCERT)
        fake.chmod(0o755)
        env = dict(os.environ)
        env.pop("CUDA_VISIBLE_DEVICES", None)
        env.update(self.make_fakes(self.tmp / "helpers"))
        env.update({"COMMCERT_BIN": str(fake), "COMMCERT_LIBEXEC": str(self.tmp / "helpers"),
                    "SELFTEST_FAKE_STUCK": "burn"})
        out = self.tmp / "out"
        script = subprocess.Popen([str(SCRIPT), "--out", str(out)], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        stuck = None
        deadline = time.monotonic() + 120
        while stuck is None and time.monotonic() < deadline and script.poll() is None:
            time.sleep(0.2)
            calls = [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []
            stuck = next((c["pid"] for c in calls if "burn" in c["argv"]), None)
        self.assertIsNotNone(stuck, "the burn step never started")
        time.sleep(0.5)
        script.send_signal(signal.SIGTERM)
        output, _ = script.communicate(timeout=60)
        self.assertEqual(script.returncode, 130, output)
        self.assertIn("interrupted; stopping the current step", output)
        with self.assertRaises(ProcessLookupError):
            os.kill(stuck, 0)  # the stuck step's process is gone
        report = (out / "gpu-results.md").read_text()
        self.assertIn(": FAIL (interrupted)", report.splitlines()[0])
        rows = step_rows(report)
        self.assertEqual(rows["sweep"], "PASS")
        self.assertEqual(rows["burn"], "FAIL")
        self.assertEqual(rows["fault-hang"], "NOT RUN")


class UsageTest(TemporaryDirectory):
    def run_script(self, *args):
        return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=60)

    def test_usage_errors_are_one_line_and_exit_2(self):
        (self.tmp / "full").mkdir()
        (self.tmp / "full" / "gpu-results.md").write_text("an earlier self-test\n")
        for args, mentions in (((), "--out DIR is required"),
                               (("--out", str(self.tmp / "a"), "--burn-seconds", "soon"), "--burn-seconds"),
                               (("--out", str(self.tmp / "b"), "--bogus"), "unknown argument '--bogus'"),
                               (("--out", str(self.tmp / "full")), "is not empty")):
            with self.subTest(args=args):
                completed = self.run_script(*args)
                self.assertEqual(completed.returncode, 2, completed.stderr)
                self.assertEqual(len(completed.stderr.strip().splitlines()), 1, completed.stderr)
                self.assertIn(mentions, completed.stderr)
        self.assertFalse((self.tmp / "a").exists())

    def test_help(self):
        completed = self.run_script("--help")
        self.assertEqual(completed.returncode, 0)
        self.assertIn("--burn-seconds", completed.stdout)


if __name__ == "__main__":
    unittest.main()
