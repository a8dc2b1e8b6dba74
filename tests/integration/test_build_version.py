"""--version names the commit the binary was built from, stamped at build time.

A build directory is configured once and rebuilt many times (a developer's, the one a release
bundle is packaged from); the commit must not be the one it was configured at.
"""

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from commcert_testing import SOURCE_DIR, CommcertTestCase

SCRIPT = SOURCE_DIR / "cmake" / "CommcertVersion.cmake"


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


@unittest.skipUnless(shutil.which("git") and shutil.which("cmake"), "needs git and cmake")
class BuildTimeVersion(CommcertTestCase):
    def setUp(self):
        super().setUp()
        self.repo = Path(tempfile.mkdtemp(prefix="commcert-version-"))
        self.addCleanup(shutil.rmtree, self.repo, ignore_errors=True)
        git(self.repo, "init", "-q")
        git(self.repo, "config", "user.email", "t@example.invalid")
        git(self.repo, "config", "user.name", "t")
        self.output = self.repo / "out" / "git_describe.cpp"

    def commit(self, text):
        (self.repo / "file").write_text(text)
        git(self.repo, "add", "file")
        git(self.repo, "commit", "-q", "-m", text)
        return git(self.repo, "rev-parse", "--short", "HEAD")

    def stamp(self):
        subprocess.run(["cmake", f"-DSOURCE_DIR={self.repo}", f"-DOUTPUT={self.output}", "-P",
                        str(SCRIPT)], check=True, capture_output=True, text=True)
        return self.output.read_text()

    def test_each_commit_restamps_and_an_unchanged_one_touches_nothing(self):
        first = self.commit("one")
        self.assertIn(f'kGitDescribe = "{first}";', self.stamp())
        written = self.output.stat().st_mtime_ns
        os.utime(self.output, ns=(written - 10**9, written - 10**9))
        before = self.output.stat().st_mtime_ns
        self.stamp()
        self.assertEqual(self.output.stat().st_mtime_ns, before,
                         "an unchanged commit must not rewrite the file (nothing relinks)")
        second = self.commit("two")
        self.assertIn(f'kGitDescribe = "{second}";', self.stamp())
        (self.repo / "file").write_text("edited")
        self.assertIn(f'kGitDescribe = "{second}-dirty";', self.stamp())

    def test_a_tree_without_git_is_unknown(self):
        shutil.rmtree(self.repo / ".git")
        self.assertIn('kGitDescribe = "unknown";', self.stamp())

    @unittest.skipUnless((SOURCE_DIR / ".git").exists(), "the source is not a git checkout")
    def test_the_binary_reports_the_commit_it_was_built_from(self):
        head = git(SOURCE_DIR, "rev-parse", "HEAD")
        first_line = self.run_commcert(["--version"]).stdout.splitlines()[0]
        described = first_line.split("(", 1)[1].split(",", 1)[0].removesuffix("-dirty")
        commit = described.rsplit("-g", 1)[-1]
        self.assertTrue(head.startswith(commit),
                        f"--version says {described!r}, the checkout is at {head[:12]}: "
                        "rebuild, or the stamp is not refreshed at build time")


if __name__ == "__main__":
    unittest.main()
