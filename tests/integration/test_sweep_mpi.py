"""`commcert sweep` under real mpirun on 4 ranks (one fake node per rank): correctness of every
collective, the record schema, and detection of each injected fault."""

import json
import os
import signal
import subprocess
import time
import unittest

from commcert_testing import CommcertTestCase, read_records, table_rows, validate_records

ALL = ["allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv",
       "gather", "scatter"]
SYMMETRIC = {"allreduce", "allgather", "reducescatter", "alltoall"}


class EveryCollectivePassesItsCheck(CommcertTestCase):
    def test_all_collectives_float_4_ranks(self):
        result = self.sweep(["all", "-b", "1K", "-e", "256K", "-f", "16", "-n", "3"])
        self.assertEqual(result.returncode, 0, result.stderr)
        records = result.records()
        validate_records(self, records)
        measured = result.collective_records()
        self.assertEqual({r["collective"] for r in measured}, set(ALL))
        for record in measured:
            if record["status"] == "skipped":
                # The only placement without a form: in-place sendrecv.
                self.assertEqual((record["collective"], record["in_place"]), ("sendrecv", True))
                continue
            self.assertEqual(record["status"], "ok", json.dumps(record)[:300])
            self.assertTrue(record["check"])
            self.assertEqual(record["wrong_elements"], 0)
            # Checked: `time` from the second, unchecked pass run back to back.
            self.assertEqual(record["timing"], "back_to_back")
            self.assertEqual(record["nranks"], 4)
            self.assertEqual(record["nodes"], 4)
            self.assertEqual(len(record["rank_time_s"]), 4)
            self.assertGreater(record["busbw_bytes_per_s"], 0)
        # One table block per collective, every row with nccl-tests' 13 columns.
        self.assertEqual(result.stdout.count("# Collective test starting:"), len(ALL))
        for row in table_rows(result.stdout):
            self.assertEqual(len(row), 13, row)
        self.assertNotIn("FAILED", result.stdout)

    def test_every_datatype_and_reduction(self):
        result = self.sweep(["allreduce", "reducescatter", "-d", "all", "-o", "all",
                             "-b", "4K", "-e", "4K", "-n", "2", "-w", "0"])
        self.assertEqual(result.returncode, 0, result.stderr)
        measured = result.collective_records()
        combos = {(r["collective"], r["dtype"], r["redop"]) for r in measured}
        self.assertEqual(len(combos), 2 * 12 * 5)
        for record in measured:
            self.assertEqual(record["status"], "ok", json.dumps(record)[:300])
            self.assertEqual(record["wrong_elements"], 0)

    def test_data_movement_datatypes_on_three_ranks_every_root(self):
        result = self.sweep(["broadcast", "gather", "scatter", "alltoall", "-d", "all",
                             "-r", "-1", "-b", "2K", "-e", "2K", "-n", "2", "-w", "0"], ranks=3)
        self.assertEqual(result.returncode, 0, result.stderr)
        roots = {r["root"] for r in result.collective_records() if r["collective"] == "gather"}
        self.assertEqual(roots, {0, 1, 2})
        for record in result.collective_records("fail"):
            self.fail(json.dumps(record)[:300])


class RecordsAndMeta(CommcertTestCase):
    def test_meta_and_run_record(self):
        result = self.sweep(["allreduce", "-b", "64K", "-e", "64K"],
                            env={"NCCL_DEBUG": "WARN", "MY_SECRET_TOKEN": "hunter2"})
        self.assertEqual(result.returncode, 0, result.stderr)
        meta = result.meta()
        self.assertEqual(meta["status"], "ok")
        self.assertEqual(meta["exit_code"], 0)
        self.assertEqual(meta["command"], "sweep")
        self.assertEqual(meta["nodes"], ["node0", "node1", "node2", "node3"])
        self.assertEqual([r["rank"] for r in meta["ranks"]], [0, 1, 2, 3])
        self.assertEqual(meta["backend"]["name"], "mpi")
        self.assertTrue(meta["versions"]["mpi"])
        self.assertEqual(meta["parameters"]["timeout_s"], 300)
        self.assertIsNotNone(meta["end_time"])
        # Only whitelisted variables, so secrets never land in results.
        self.assertEqual(meta["environment"].get("NCCL_DEBUG"), "WARN")
        self.assertNotIn("MY_SECRET_TOKEN", json.dumps(meta))
        self.assertFalse([k for k in meta["environment"] if k.startswith("OMPI_MCA_orte_")])
        run = result.records()[0]
        self.assertEqual(run["kind"], "run")
        self.assertEqual([r["node"] for r in run["ranks"]], meta["nodes"])
        for line in (result.run_dir / "records.jsonl").read_text().splitlines():
            self.assertNotIn("hunter2", line)

    def test_cycles_adaptive_aggregation(self):
        # -c 0: `time` is then the ranks' windows combined, which the record's rank times show
        # (with checks it comes from the back-to-back pass, whose per-rank spans it does not).
        result = self.sweep(["allreduce", "-b", "32K", "-e", "32K", "-N", "2", "-a", "3",
                             "--target-ci", "50", "--size-budget", "2s", "-c", "0"])
        self.assertEqual(result.returncode, 0, result.stderr)
        measured = result.collective_records()
        self.assertEqual({r["cycle"] for r in measured}, {0, 1})
        for record in measured:
            self.assertEqual(record["aggregation"], "max")
            self.assertAlmostEqual(record["time_s"], record["rank_time"]["max_s"])
            adaptive = record["adaptive"]
            self.assertIsNotNone(adaptive)
            self.assertIn(adaptive["stopped_by"], ("ci", "budget", "max_iterations"))
            self.assertGreaterEqual(record["iterations"], 5)
            if adaptive["stopped_by"] == "ci":
                self.assertLessEqual(adaptive["achieved_ci_pct"], 50)

    def test_progress_on_stderr_unless_quiet(self):
        loud = self.sweep(["allreduce", "-b", "1K", "-e", "4K", "-f", "2"], run_id="loud")
        self.assertRegex(loud.stderr, r"commcert sweep: .*\| +\d+% \| elapsed .* \| ETA ")
        quiet = self.sweep(["allreduce", "-b", "1K", "-e", "4K", "-f", "2", "-q"], run_id="quiet")
        self.assertNotIn("ETA", quiet.stderr)

    def test_endless_cycles_stop_cleanly_on_sigterm(self):
        command, env = self.sweep_command(["allreduce", "-b", "4K", "-e", "4K", "-N", "0", "-q"],
                                          run_id="endless")
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        try:
            records_path = self.results / "endless" / "records.jsonl"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and (
                    not records_path.exists() or len(read_records(records_path)) < 7):
                time.sleep(0.1)
            for rank in json.loads((self.results / "endless" / "meta.json").read_text())["ranks"]:
                os.kill(rank["pid"], signal.SIGTERM)
            stderr = process.communicate(timeout=60)[1]
        finally:
            if process.poll() is None:
                process.kill()
        self.assertEqual(process.returncode, 0, stderr)
        meta = json.loads((self.results / "endless" / "meta.json").read_text())
        self.assertEqual((meta["status"], meta["interrupted"]), ("ok", True))
        cycles = {r["cycle"] for r in read_records(self.results / "endless" / "records.jsonl")
                  if r["kind"] == "collective"}
        self.assertGreaterEqual(len(cycles), 3)

    def test_blocking_mode(self):
        result = self.sweep(["allgather", "-b", "8K", "-e", "8K", "-z", "1"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.meta()["parameters"]["blocking"], 1)
        for record in result.collective_records("ok"):
            self.assertEqual(record["timing"], "windows")

    def test_unchecked_operations_are_timed_by_their_windows(self):
        result = self.sweep(["allreduce", "-b", "64K", "-e", "64K", "-n", "4", "-c", "0"])
        self.assertEqual(result.returncode, 0, result.stderr)
        measured = result.collective_records("ok")
        self.assertEqual(len(measured), 2)
        for record in measured:
            self.assertIsNone(record["wrong_elements"])
            self.assertEqual(record["timing"], "windows")


class InjectedFaultsAreDetected(CommcertTestCase):
    def test_delay_names_the_late_rank_as_straggler(self):
        result = self.sweep(["allreduce", "allgather", "alltoall", "reducescatter",
                             "-b", "16K", "-e", "64K", "-f", "4", "-n", "5", "-q"],
                            env={"COMMCERT_FAULT": "delay:2:10000"})
        self.assertEqual(result.returncode, 0, result.stderr)
        measured = result.collective_records("ok")
        self.assertTrue(measured)
        for record in measured:
            self.assertIn(record["collective"], SYMMETRIC)
            self.assertEqual(record["straggler"]["rank"], 2, json.dumps(record["rank_time_s"]))
            self.assertEqual(record["straggler"]["host"], "node2")
            # The others waited for it about as long as it was late: less on a loaded 2-core
            # machine, where the waiting ranks share the cores (CI saw 38% of a 3 ms delay).
            self.assertGreater(record["straggler"]["lead_s"], 0.003)
            # The delay acts between checked operations: no back-to-back pass hides it.
            self.assertEqual(record["timing"], "windows")
        self.assertEqual(result.meta()["fault_injection"], "delay:2:10000")

    def test_corruption_is_attributed_to_the_rank(self):
        result = self.sweep(["allreduce", "allgather", "broadcast", "sendrecv",
                             "-b", "8K", "-e", "8K", "-n", "4", "-q"],
                            env={"COMMCERT_FAULT": "corrupt:1"})
        self.assertEqual(result.returncode, 1, result.stderr)
        failed = result.collective_records("fail")
        self.assertEqual(len(failed), 7)  # 4 collectives x 2 placements, minus in-place sendrecv
        for record in failed:
            self.assertEqual([w["rank"] for w in record["wrong_ranks"]], [1])
            self.assertEqual(record["wrong_ranks"][0]["host"], "node1")
            self.assertEqual(record["wrong_ranks"][0]["wrong_iterations"], 4)
            self.assertGreater(record["wrong_elements"], 0)
            self.assertIn("node1", record["reason"])
        self.assertIn("# Out of bounds values : 2 FAILED", result.stdout)
        self.assertRegex(result.stdout, r"wrong elements on rank 1 \(node1\)")
        self.assertEqual(result.meta()["status"], "fail")
        validate_records(self, result.records())

    def assert_unwritten_output_is_attributed_to_rank_1(self, fault, unwritten_share):
        """A transport that returns without writing (all or part of) rank 1's output: only the
        poison before each checked operation lets the check see it, in both placements."""
        result = self.sweep(["allreduce", "allgather", "broadcast", "sendrecv",
                             "-b", "8K", "-e", "8K", "-n", "4", "-q"],
                            env={"COMMCERT_FAULT": f"{fault}:1"})
        self.assertEqual(result.returncode, 1, result.stderr)
        failed = result.collective_records("fail")
        self.assertEqual(len(failed), 7)  # 4 collectives x 2 placements, minus in-place sendrecv
        self.assertEqual(result.collective_records("ok"), [])
        for record in failed:
            where = (record["collective"], record["in_place"])
            self.assertEqual([w["rank"] for w in record["wrong_ranks"]], [1], where)
            wrong = record["wrong_ranks"][0]
            self.assertEqual(wrong["host"], "node1")
            self.assertEqual(wrong["wrong_iterations"], 4, where)
            self.assertEqual(record["wrong_elements"], wrong["wrong_elements"])
            if not record["in_place"]:
                # Out of place the unwritten elements hold the poison, which differs from the
                # expected value everywhere: every one of them is counted, and no other.
                elements = record["bytes"] // 4
                self.assertEqual(wrong["wrong_elements"], 4 * unwritten_share(elements), where)
            self.assertGreater(wrong["wrong_elements"], 0, where)
            self.assertIn("node1", record["reason"])
        self.assertIn("# Out of bounds values : 2 FAILED", result.stdout)
        self.assertRegex(result.stdout, r"wrong elements on rank 1 \(node1\)")
        self.assertEqual(result.meta()["status"], "fail")
        self.assertEqual(result.meta()["fault_injection"], f"{fault}:1")
        validate_records(self, result.records())

    def test_stale_output_is_attributed_to_the_rank(self):
        self.assert_unwritten_output_is_attributed_to_rank_1("stale", lambda n: n)

    def test_partial_output_is_attributed_to_the_rank(self):
        # The first half written, the rest (with the odd element) left stale.
        self.assert_unwritten_output_is_attributed_to_rank_1("partial", lambda n: n - n // 2)

    def test_hang_times_out_naming_the_rank_and_keeps_earlier_records(self):
        # Each size runs 1 warm-up + 2 timed operations per placement; the rank hangs before its
        # 8th operation, i.e. after the first size completed.
        result = self.sweep(["allreduce", "-b", "4K", "-e", "16K", "-f", "2", "-n", "2", "-T", "3", "-q"],
                            env={"COMMCERT_FAULT": "hang:3:7"}, timeout=60)
        self.assertEqual(result.returncode, 4, result.stderr)
        self.assertLess(result.seconds, 30, "the timeout must end the run in bounded time")
        records = result.records()
        validate_records(self, records)
        measured = [r for r in records if r["kind"] == "collective" and r["status"] == "ok"]
        self.assertEqual({r["bytes"] for r in measured}, {4096})
        timeout = records[-1]
        self.assertEqual(timeout["status"], "timeout")
        self.assertEqual(timeout["not_arrived"], [{"rank": 3, "host": "node3"}])
        self.assertEqual(timeout["timeout_s"], 3)
        self.assertIn("8 KiB", timeout["operation"])
        self.assertRegex(result.stderr, r"rank 3 \(node3\) did not arrive at allreduce")
        meta = result.meta()
        self.assertEqual((meta["status"], meta["exit_code"]), ("timeout", 4))

    def test_hang_of_rank_zero(self):
        # Rank 0's main thread is stuck but its process still answers, so it reports itself.
        result = self.sweep(["allreduce", "-b", "4K", "-e", "4K", "-T", "2", "-q"],
                            env={"COMMCERT_FAULT": "hang:0"}, timeout=60)
        self.assertEqual(result.returncode, 4, result.stderr)
        timeout = result.records()[-1]
        self.assertEqual(timeout["status"], "timeout")
        self.assertEqual(timeout["not_arrived"], [{"rank": 0, "host": "node0"}])

    def test_an_error_on_another_rank_ends_the_job_and_meta_says_error_naming_it(self):
        # Rank 2's fourth data operation reports an error (COMMCERT_FAULT fail:2:3), its peers
        # left waiting inside it: rank 2 writes its error record and tells process 0, which owns
        # meta.json and records the error there before it ends the job. Nobody waits out -T.
        result = self.sweep(["allreduce", "-b", "4K", "-e", "16K", "-f", "2", "-n", "2", "-T", "120",
                             "-q"], env={"COMMCERT_FAULT": "fail:2:3"}, timeout=120)
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertLess(result.seconds, 60, "an error must end the job at once")
        self.assertIn("commcert sweep: error on rank 2 (node2)", result.stderr)
        records = result.records()
        validate_records(self, records)
        errors = [r for r in records if r["status"] == "error"]
        self.assertEqual([(r["kind"], r["rank"], r["host"]) for r in errors],
                         [("collective", 2, "node2")])
        self.assertIn("injected fault (COMMCERT_FAULT fail:2:3)", errors[0]["reason"])
        meta = result.meta()
        self.assertEqual((meta["status"], meta["exit_code"]), ("error", 3), meta)
        error = meta["error"]
        self.assertEqual((error["command"], error["process"], error["rank"], error["node"]),
                         ("sweep", 2, 2, "node2"))
        self.assertEqual(error["reason"], errors[0]["reason"])

    def test_a_job_that_ends_abruptly_with_nobody_to_write_stays_unfinished(self):
        # Every process killed at once (nodes lost): nothing can record how the run ended, so
        # meta.json keeps saying running and the validator reads the run as never finished.
        command, env = self.sweep_command(["allreduce", "-b", "4K", "-e", "4K", "-N", "0", "-T", "60",
                                           "-q"], ranks=2, run_id="abrupt")
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        try:
            meta_path = self.results / "abrupt" / "meta.json"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if meta_path.exists() and json.loads(meta_path.read_text()).get("ranks"):
                    break
                time.sleep(0.1)
            for rank in json.loads(meta_path.read_text())["ranks"]:
                os.kill(rank["pid"], signal.SIGKILL)
            process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
        self.assertNotEqual(process.returncode, 0)
        meta = json.loads(meta_path.read_text())
        self.assertEqual(meta["status"], "running")
        self.assertNotIn("error", meta)
        certify = self.run_commcert(["certify", str(self.results / "abrupt"), "--baseline",
                                     "cpu-mpi-ci"])
        self.assertNotEqual(certify.returncode, 0, certify.stdout)
        self.assertIn("run abrupt never finished (meta.json still says running)", certify.stdout)

    def sweep_with_frozen_rank(self, rank, ranks, run_id):
        """An endless 4 KiB allreduce (-T 2) whose `rank` is stopped with SIGSTOP (a node frozen
        by the kernel) once the run has started; returns (exit status, stderr, records)."""
        command, env = self.sweep_command(["allreduce", "-b", "4K", "-e", "4K", "-N", "0", "-T", "2",
                                           "-q"], ranks=ranks, run_id=run_id)
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        try:
            meta_path = self.results / run_id / "meta.json"
            deadline = time.monotonic() + 60
            while not meta_path.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            pid = json.loads(meta_path.read_text())["ranks"][rank]["pid"]
            os.kill(pid, signal.SIGSTOP)
            stderr = process.communicate(timeout=90)[1]
        finally:
            if process.poll() is None:
                process.kill()
        return process.returncode, stderr, read_records(self.results / run_id / "records.jsonl")

    def test_frozen_process_is_named_and_the_next_rank_reports(self):
        # A process that stops answering altogether is named from its silence; the lowest
        # process still answering writes the record.
        returncode, stderr, records = self.sweep_with_frozen_rank(1, ranks=4, run_id="frozen")
        self.assertEqual(returncode, 4, stderr)
        timeout = records[-1]
        self.assertEqual(timeout["status"], "timeout")
        self.assertEqual(timeout["not_arrived"], [{"rank": 1, "host": "node1"}])
        states = {s["rank"]: s["responded"] for s in timeout["rank_states"]}
        self.assertEqual(states, {0: True, 1: False, 2: True, 3: True})

    def test_frozen_rank_zero_is_named_once_and_never_contradicted(self):
        # Rank 0 frozen: process 1 writes the record naming it. When the launcher ends the job it
        # resumes rank 0 (SIGCONT before SIGTERM), whose watchdog wakes long past its deadline
        # with the others' notices waiting; it must not write a second record of its own.
        returncode, stderr, records = self.sweep_with_frozen_rank(0, ranks=3, run_id="frozen0")
        self.assertEqual(returncode, 4, stderr)
        timeouts = [r for r in records if r["status"] == "timeout"]
        self.assertEqual(len(timeouts), 1, json.dumps(timeouts, indent=1)[:2000])
        self.assertEqual(timeouts[0]["not_arrived"], [{"rank": 0, "host": "node0"}])

    def test_a_process_frozen_after_its_last_record_does_not_hang_the_job(self):
        # freeze:2 stops process 2 (SIGSTOP) once its records are written, just before
        # MPI_Finalize; the other processes' end-of-job deadline ends the job instead of waiting
        # in MPI_Finalize forever, and every record stays.
        result = self.sweep(["allreduce", "-b", "4K", "-e", "8K", "-f", "2", "-q"], ranks=3,
                            env={"COMMCERT_FAULT": "freeze:2", "COMMCERT_END_TIMEOUT": "3"},
                            timeout=120)
        self.assertEqual(result.returncode, 4, result.stderr)
        self.assertLess(result.seconds, 60, "the end of the job must be bounded")
        self.assertRegex(result.stderr, r"process [01]: the job's end \(MPI_Finalize\) did not "
                                        r"complete within 3\.0s")
        self.assertEqual({r["bytes"] for r in result.collective_records(status="ok")}, {4096, 8192})
        self.assertEqual(result.meta()["status"], "ok")

    def test_a_bad_end_of_job_timeout_is_a_usage_error(self):
        result = self.sweep(["allreduce", "-b", "4K", "-e", "4K", "-q"], ranks=2,
                            env={"COMMCERT_END_TIMEOUT": "0"}, timeout=60)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("COMMCERT_END_TIMEOUT: expected a duration above 0", result.stderr)

    def test_a_process_that_never_joins_does_not_hang_the_start(self):
        # The second process of the job never calls MPI_Init (it is `sleep`, not commcert), so
        # commcert's MPI_Init waits for it; no watchdog exists yet. The start-up deadline ends
        # the job and says which step did not complete.
        command, env = self.sweep_command(["allreduce", "-b", "4K", "-e", "4K", "-q"], ranks=1,
                                          env={"COMMCERT_START_TIMEOUT": "3"})
        command += [":", "-np", "1", "sleep", "120"]
        start = time.monotonic()
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=110)
        self.assertEqual(result.returncode, 4, result.stderr)
        self.assertLess(time.monotonic() - start, 60, "the start of the job must be bounded")
        self.assertRegex(result.stderr, r"process 0: the job's start-up \(MPI_Init and the control "
                                        r"plane's communicators\) did not complete within 3\.0s")

    def test_a_bad_start_up_timeout_is_a_usage_error(self):
        result = self.sweep(["allreduce", "-b", "4K", "-e", "4K", "-q"], ranks=2,
                            env={"COMMCERT_START_TIMEOUT": "90000"}, timeout=60)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("COMMCERT_START_TIMEOUT: expected a duration above 0 and at most 24h",
                      result.stderr)


class Scopes(CommcertTestCase):
    def test_node_scope_gives_one_record_per_node(self):
        result = self.sweep(["allreduce", "alltoall", "-b", "32K", "-e", "32K", "--scope", "node",
                             "--node-name", "node{rank/2}", "-n", "3", "-q"])
        self.assertEqual(result.returncode, 0, result.stderr)
        validate_records(self, result.records())
        measured = result.collective_records("ok")
        self.assertEqual(len(measured), 2 * 2 * 2)  # collectives x placements x nodes
        groups = {(r["group"], tuple(r["group_nodes"]), tuple(r["group_ranks"])) for r in measured}
        self.assertEqual(groups, {(0, ("node0",), (0, 1)), (1, ("node1",), (2, 3))})
        for record in measured:
            self.assertEqual((record["scope"], record["nranks"], record["round"]), ("node", 2, None))
        self.assertIn("# node 1: node1", result.stdout)

    def test_pairs_cover_every_pair_once_and_localise_a_bad_rank(self):
        result = self.sweep(["allreduce", "-b", "16K", "-e", "16K", "--scope", "pairs", "-n", "3",
                             "-q"], ranks=5, env={"COMMCERT_FAULT": "corrupt:3"})
        self.assertEqual(result.returncode, 1, result.stderr)
        validate_records(self, result.records())
        out_of_place = [r for r in result.collective_records() if not r["in_place"]]
        pairs = [tuple(r["group_nodes"]) for r in out_of_place]
        self.assertEqual(len(pairs), 10)  # C(5, 2)
        self.assertEqual(len(set(pairs)), 10)
        self.assertEqual({r["round"] for r in out_of_place}, set(range(5)))  # odd: N rounds, a bye each
        for round_number in range(5):
            busy = [n for r in out_of_place if r["round"] == round_number for n in r["group_nodes"]]
            self.assertEqual(len(busy), len(set(busy)), "a node is in two pairs of one round")
        failing = {tuple(r["group_nodes"]) for r in out_of_place if r["status"] == "fail"}
        self.assertEqual(failing, {p for p in pairs if "node3" in p})
        for record in out_of_place:
            if record["status"] == "fail":
                self.assertEqual([w["rank"] for w in record["wrong_ranks"]], [3])

    def test_pairs_with_every_rank_of_both_nodes(self):
        result = self.sweep(["allgather", "-b", "16K", "-e", "16K", "--scope", "pairs",
                             "--pair-ranks", "all", "--node-name", "node{rank/2}", "-n", "2", "-q"],
                            ranks=6)
        self.assertEqual(result.returncode, 0, result.stderr)
        out_of_place = [r for r in result.collective_records("ok") if not r["in_place"]]
        self.assertEqual(len(out_of_place), 3)
        for record in out_of_place:
            self.assertEqual(record["nranks"], 4)
            self.assertEqual(len(record["group_nodes"]), 2)


class UsageErrorsUnderMpi(CommcertTestCase):
    def test_bad_value_is_reported_once_with_exit_2(self):
        result = self.sweep(["allreduce", "-b", "12Q"])
        self.assertEqual(result.returncode, 2)
        errors = [line for line in result.stderr.splitlines() if "error:" in line]
        self.assertEqual(len(errors), 1, result.stderr)
        self.assertIn("-b/--minbytes", errors[0])
        self.assertFalse((self.results / "run").exists(), "nothing is written on a usage error")

    def test_fault_naming_a_missing_rank(self):
        result = self.sweep(["allreduce", "-b", "1K", "-e", "1K"], env={"COMMCERT_FAULT": "hang:9"})
        self.assertEqual(result.returncode, 2)
        self.assertIn("COMMCERT_FAULT names rank 9 but the job has 4 rank(s)", result.stderr)

    def test_root_outside_the_job(self):
        result = self.sweep(["broadcast", "-r", "4", "-b", "1K", "-e", "1K"])
        self.assertEqual(result.returncode, 2)
        self.assertIn("-r/--root 4", result.stderr)

    def test_pair_list_naming_a_node_outside_the_job(self):
        # Was exit 3 ("the run could not complete") after the results directory was created.
        result = self.sweep(["allreduce", "-b", "1K", "-e", "1K", "--pair-list", "node0:node9"])
        self.assertEqual(result.returncode, 2, result.stderr)
        errors = [line for line in result.stderr.splitlines() if "error" in line]
        self.assertEqual(len(errors), 1, result.stderr)
        self.assertIn("--pair-list: no rank runs on node 'node9'", errors[0])
        self.assertFalse((self.results / "run").exists(), "nothing is written on a usage error")
        # Nodes of the job still run.
        good = self.sweep(["allreduce", "-b", "1K", "-e", "1K", "--pair-list", "node0:node3", "-q"],
                          run_id="good")
        self.assertEqual(good.returncode, 0, good.stderr)


class SingleRankWithoutLauncher(CommcertTestCase):
    def test_singleton_run(self):
        result = self.sweep(["allreduce", "broadcast", "-b", "1M", "-e", "1M"], mpi=False,
                            run_id="single")
        self.assertEqual(result.returncode, 0, result.stderr)
        for record in result.collective_records():
            self.assertEqual(record["nranks"], 1)
            if record["collective"] == "allreduce":
                self.assertEqual(record["busbw_bytes_per_s"], 0)  # factor 2(n-1)/n is 0
            else:
                self.assertGreater(record["busbw_bytes_per_s"], 0)  # broadcast's factor is 1


if __name__ == "__main__":
    unittest.main()
