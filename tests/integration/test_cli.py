"""The command line without MPI: help, version, and one-line errors with exit status 2."""

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
