"""The command line without MPI: help, version, and one-line errors with exit status 2."""

import shutil
import tempfile
import unittest

from commcert_testing import HAVE_MPI, CommcertTestCase


class CommandLine(CommcertTestCase):
    def assert_usage_error(self, args, mentions, env=None):
        result = self.run_commcert(args, env=env)
        self.assertEqual(result.returncode, 2, f"{args}: {result.stderr}")
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, f"{args}: expected one line, got {result.stderr!r}")
        self.assertIn(mentions, lines[0])
        self.assertEqual(list(self.results.iterdir()), [], "nothing may be written")

    def test_help_and_version(self):
        self.assertEqual(self.run_commcert(["--version"]).returncode, 0)
        help_text = self.run_commcert(["sweep", "--help"])
        self.assertEqual(help_text.returncode, 0)
        for flag in ("--minbytes", "--maxbytes", "--stepfactor", "--iters", "--warmup_iters",
                     "--check", "--op", "--datatype", "--root", "--blocking", "--average",
                     "--run_cycles", "--timeout", "--cudagraph", "--ngpus", "--target-ci"):
            self.assertIn(flag, help_text.stdout)

    def test_bad_flags_and_values(self):
        out = ["--out", str(self.results)]
        self.assert_usage_error(["sweep", "allreduce", "--bogus", *out], "--bogus")
        self.assert_usage_error(["sweep", "allreduce", "-b", "12Q", *out], "-b/--minbytes")
        self.assert_usage_error(["sweep", "allreduce", "-b", "1M", "-e", "1K", *out], "-b/--minbytes")
        self.assert_usage_error(["sweep", "allreduce", "-T", "soon", *out], "-T/--timeout")
        self.assert_usage_error(["sweep", "allreduce", "-d", "float128", *out], "-d/--datatype")
        self.assert_usage_error(["sweep", "allreduce", "-o", "xor", *out], "-o/--op")
        self.assert_usage_error(["sweep", "allreduce", "-a", "7", *out], "--average")
        self.assert_usage_error(["sweep", "allgatherv", *out], "unknown collective 'allgatherv'")
        self.assert_usage_error(["sweep", *out], "collectives")

    def test_non_finite_numbers_are_refused(self):
        # NaN passed CLI11's range checks: `-f nan` and `--target-ci nan` were accepted.
        out = ["--out", str(self.results)]
        for flag, value in (("-f", "nan"), ("-f", "inf"), ("-f", "-2"), ("-f", "0"),
                            ("--target-ci", "nan"), ("--target-ci", "0.009"), ("--target-ci", "100.01")):
            with self.subTest(flag=flag, value=value):
                named = "--stepfactor" if flag == "-f" else flag
                self.assert_usage_error(["sweep", "allreduce", flag, value, *out], named)
        # The limits themselves pass the flag check (without MPI the sweep stops at the backend;
        # with MPI it runs as one rank, writing elsewhere than the directory checked above).
        elsewhere = tempfile.mkdtemp(prefix="commcert-it-limits-")
        self.addCleanup(shutil.rmtree, elsewhere, ignore_errors=True)
        for flag, value in (("-f", "1e-9"), ("--target-ci", "0.01"), ("--target-ci", "100")):
            with self.subTest(flag=flag, value=value):
                result = self.run_commcert(["sweep", "allreduce", "-b", "1K", "-e", "1K", "-q", flag,
                                            value, "--out", elsewhere])
                self.assertNotIn("--stepfactor" if flag == "-f" else flag, result.stderr)
                self.assertIn(result.returncode, (0, 2), result.stderr)
        self.assert_usage_error(["sweep", "allreduce", "--target-ci", "nan", *out],
                                "'nan' is not a number from 0.01 to 100")
        self.assert_usage_error(["membw", "--memtest-fraction", "nan", *out], "--memtest-fraction")
        self.assert_usage_error(["baseline", "--from", str(self.results), "--out", "x.yaml",
                                 "--floor-margin-pct", "nan"], "--floor-margin-pct")

    def test_a_missing_command_names_the_commands(self):
        for args in ([], ["frobnicate"]):
            with self.subTest(args=args):
                self.assert_usage_error(args, "the command is one of run, sweep")
                result = self.run_commcert(args)
                for word in ("burn", "membw", "health", "certify", "baseline"):
                    self.assertIn(word, result.stderr)

    def test_rank_divisor_zero_is_refused(self):
        # {rank/0} was read as {rank/1}: every rank became a node of its own.
        self.assert_usage_error(["sweep", "allreduce", "--node-name", "n{rank/0}",
                                 "--out", str(self.results)], "K must be from 1 to 1000000")

    def test_a_newline_in_a_node_name_stays_one_line_of_error(self):
        self.assert_usage_error(["sweep", "allreduce", "--node-name", "n1\nreboot",
                                 "--out", str(self.results)], "invalid node name 'n1\\nreboot'")

    def test_node_name_with_shell_metacharacters(self):
        self.assert_usage_error(["sweep", "allreduce", "--node-name", "n1;reboot",
                                 "--out", str(self.results)], "invalid node name 'n1;reboot'")
        self.assert_usage_error(["sweep", "allreduce", "--out", str(self.results)], "invalid node name",
                                env={"COMMCERT_NODE_NAME": "$(id)"})

    def test_malformed_fault_plan(self):
        self.assert_usage_error(["sweep", "allreduce", "--out", str(self.results)], "COMMCERT_FAULT",
                                env={"COMMCERT_FAULT": "explode:1"})

    def test_bad_run_id(self):
        self.assert_usage_error(["sweep", "allreduce", "-b", "1K", "-e", "1K", "--out",
                                 str(self.results), "--run-id", "../escape"], "--run-id")

    @unittest.skipIf(HAVE_MPI, "this build has MPI; the check is for the MPI-less build")
    def test_no_backend_without_mpi_or_gpu(self):
        result = self.run_commcert(["sweep", "allreduce", "--out", str(self.results)])
        self.assertEqual(result.returncode, 2)
        self.assertIn("no backend can run here", result.stderr)


if __name__ == "__main__":
    unittest.main()
