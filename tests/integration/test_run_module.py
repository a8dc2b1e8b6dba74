"""run_module.py: what ctest is told about a module whose tests skipped."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

RUNNER = Path(__file__).resolve().parent / "run_module.py"

MODULES = {
    "mod_all_skip": """
        import unittest
        class T(unittest.TestCase):
            def test_a(self): self.skipTest("no munge here")
            def test_b(self): self.skipTest("no munge here")
    """,
    "mod_class_skip": """
        import unittest
        class T(unittest.TestCase):
            @classmethod
            def setUpClass(cls): raise unittest.SkipTest("no root")
            def test_a(self): pass
    """,
    "mod_some_skip": """
        import unittest
        class T(unittest.TestCase):
            def test_runs(self): pass
            def test_gpu(self): self.skipTest("no GPU")
    """,
    "mod_all_run": """
        import unittest
        class T(unittest.TestCase):
            def test_runs(self): pass
    """,
    "mod_fails": """
        import unittest
        class T(unittest.TestCase):
            def test_fails(self): self.fail("broken")
            def test_skip(self): self.skipTest("no GPU")
    """,
}


class RunModule(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        for name, text in MODULES.items():
            (Path(cls.dir.name) / f"{name}.py").write_text(textwrap.dedent(text))

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def run_module(self, module, required=""):
        env = dict(os.environ, COMMCERT_REQUIRED_TESTS=required)
        return subprocess.run([sys.executable, str(RUNNER), module], cwd=self.dir.name, env=env,
                              capture_output=True, text=True, timeout=60)

    def test_a_module_whose_every_test_skipped_is_reported_skipped(self):
        for module in ("mod_all_skip", "mod_class_skip"):
            result = self.run_module(module)
            self.assertEqual(result.returncode, 77, module + result.stderr)
            self.assertIn("every test skipped", result.stderr)

    def test_a_module_where_something_ran_passes_despite_a_skip(self):
        self.assertEqual(self.run_module("mod_some_skip").returncode, 0)
        self.assertEqual(self.run_module("mod_all_run").returncode, 0)

    def test_a_required_module_fails_on_any_skip_and_names_it(self):
        result = self.run_module("mod_some_skip", required="other mod_some_skip")
        self.assertEqual(result.returncode, 1)
        self.assertIn("test_gpu: no GPU", result.stderr)
        self.assertEqual(self.run_module("mod_all_skip", required="mod_all_skip").returncode, 1)
        self.assertEqual(self.run_module("mod_all_run", required="mod_all_run").returncode, 0)

    def test_a_failure_is_a_failure_whatever_skipped(self):
        self.assertEqual(self.run_module("mod_fails").returncode, 1)


if __name__ == "__main__":
    unittest.main()
