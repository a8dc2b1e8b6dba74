"""The release bundle (scripts/package) on a node without CUDA: unpacked from its tarball and run
with the CUDA toolkit hidden (a private mount namespace lays empty directories over it), with
the system's copies of the bundled libraries hidden too, under the node's own Open MPI."""

import os
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import unittest
from pathlib import Path

BUNDLE_DIR = Path(os.environ.get("COMMCERT_BUNDLE_DIR", "dist"))
CUDA_DIRS = ["/usr/local/cuda-13.0", "/usr/local/cuda", "/usr/local/lib"]
# Bundled libraries Open MPI itself does not need: hidden from the whole namespace. (hwloc and
# udev stay visible, because mpirun needs them; ldd shows the binary takes the bundle's.)
HIDDEN_SYSTEM_LIBRARIES = ["libfmt.so.9", "libyaml-cpp.so.0.7", "libsimdjson.so.14"]


def tarball():
    found = sorted(BUNDLE_DIR.glob("commcert-*-linux-*.tar.gz"))
    if not found:
        raise unittest.SkipTest(f"no bundle in {BUNDLE_DIR} (run scripts/package)")
    return found[-1]


def hide_script(python_env=None):
    """Shell lines that hide CUDA and the system libraries; with `python_env`, the toolkit's
    libraries stay reachable only as a Python environment's nvidia/nccl/lib."""
    lines = ["set -e"]
    if python_env:
        target = f"{python_env}/lib/python3.11/site-packages/nvidia/nccl/lib"
        lines += [f"mkdir -p {target}", f"mount --bind /usr/local/cuda-13.0/lib {target}"]
    for directory in CUDA_DIRS:
        real = os.path.realpath(directory)
        if os.path.isdir(real):
            lines.append(f"mount -t tmpfs none {shlex.quote(real)}")
    seen = set()
    for name in HIDDEN_SYSTEM_LIBRARIES:
        for directory in ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu"]:
            path = os.path.realpath(os.path.join(directory, name))
            if os.path.exists(path) and path not in seen:
                seen.add(path)
                lines.append(f"mount --bind /dev/null {shlex.quote(path)}")
    return "\n".join(lines)


class BundleOnANodeWithoutCuda(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0 or shutil.which("unshare") is None:
            raise unittest.SkipTest("needs root and unshare to hide the CUDA toolkit")
        if subprocess.run(["unshare", "-m", "true"]).returncode != 0:
            raise unittest.SkipTest("no mount namespaces here")
        cls.work = Path(tempfile.mkdtemp(prefix="commcert-bundle-"))
        with tarfile.open(tarball()) as archive:
            archive.extractall(cls.work)
        (cls.root,) = [p for p in cls.work.iterdir() if p.is_dir()]
        cls.bin = cls.root / "bin" / "commcert"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def hidden(self, command, python_env=None, env=None, timeout=240):
        script = hide_script(python_env) + "\nexec " + " ".join(shlex.quote(str(c)) for c in command)
        full_env = dict(os.environ, **(env or {}))
        for variable in ("LD_LIBRARY_PATH", "CUDA_HOME", "NCCL_HOME", "VIRTUAL_ENV", "CONDA_PREFIX",
                         "COMMCERT_BIN", "COMMCERT_LIBEXEC"):
            full_env.pop(variable, None)
        full_env.update(env or {})
        return subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script],
                              capture_output=True, text=True, env=full_env, timeout=timeout)

    def test_layout_and_links(self):
        for path in ["bin/commcert", "lib/libcommcert-mpi.so", "share/commcert/suites/ci.yaml",
                     "share/commcert/slurm/commcert-healthcheck", "README.md"]:
            self.assertTrue((self.root / path).exists(), path)
        dynamic = subprocess.run(["readelf", "-d", str(self.bin)], capture_output=True,
                                 text=True, check=True).stdout
        needed = re.findall(r"\(NEEDED\).*\[(.*)\]", dynamic)
        for library in needed:
            self.assertNotRegex(library, r"libnccl|libcudart|libcublas|libcuda\.|libmpi|libibverbs",
                                f"{library} must be loaded at run time, not linked")
        self.assertIn("(RPATH)", dynamic)
        self.assertIn("[$ORIGIN/../lib]", dynamic)
        resolved = subprocess.run(["ldd", str(self.bin)], capture_output=True, text=True,
                                  env={"PATH": os.environ["PATH"]}, check=True).stdout
        for library in ["libfmt.so.9", "libyaml-cpp.so.0.7", "libsimdjson.so.14",
                        "libhwloc.so.15"]:
            self.assertRegex(resolved, rf"{re.escape(library)} => {re.escape(str(self.root))}/(bin/\.\./)?lib/",
                             f"{library} must come from the bundle")

    def test_version_names_what_is_missing_and_the_mpi_found(self):
        result = self.hidden([self.bin, "--version"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, r"nccl +not available: libnccl\.so\.2 not found")
        self.assertRegex(result.stdout, r"cublasLt +not available: libcublasLt\.so\.\d+ not found")
        self.assertRegex(result.stdout, r"mpi +Open MPI v\S+ +/\S*libmpi\.so\.40 \(plugin ")
        self.assertRegex(result.stdout, r"cuda_runtime +\d+\.\d+ +static")

    def test_ci_suite_certifies_four_nodes_under_mpirun(self):
        out = self.work / "ci-results"
        result = self.hidden(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "4",
                              self.bin, "run", "ci", "--node-name", "node{rank}", "--out", out])
        self.assertEqual(result.returncode, 0, result.stdout[-2000:] + result.stderr[-2000:])
        self.assertIn("certified 4, quarantined 0, inconclusive 0", result.stdout)
        (run,) = list(out.iterdir())
        meta = (run / "meta.json").read_text()
        self.assertIn('"libraries"', meta)

    def test_gpu_stage_says_why_it_is_skipped(self):
        out = self.work / "burn-results"
        result = self.hidden([self.bin, "burn", "--duration", "1s", "--out", out])
        records = (next(out.iterdir()) / "records.jsonl").read_text()
        self.assertIn('"status":"skipped"', records.replace(" ", ""))
        self.assertRegex(records, r"no usable GPU|not loaded|not found", records[:600])
        self.assertIn(result.returncode, (0, 3, 4), result.stderr)

    def test_nccl_from_a_python_environment(self):
        venv = self.work / "torch-venv"
        result = self.hidden([self.bin, "--version"], python_env=venv,
                             env={"VIRTUAL_ENV": str(venv)})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout,
                         rf"nccl +2\.\d+\.\d+ +{re.escape(str(venv))}/lib/python3\.11/site-packages/"
                         rf"nvidia/nccl/lib/libnccl\.so\.2 \(python environment {re.escape(str(venv))}\)")

    def test_selftest_runs_from_the_bundle_and_reports_no_gpu(self):
        out = self.work / "selftest"
        result = self.hidden([self.root / "bin" / "commcert-selftest", "--out", out],
                             env={"COMMCERT_MPI_PLUGIN": str(self.work / "no-such-plugin.so")})
        self.assertEqual(result.returncode, 3, result.stdout[-1500:] + result.stderr[-1500:])
        self.assertIn("commcert-selftest: no GPU", result.stdout + result.stderr)
        report = (out / "gpu-results.md").read_text()
        self.assertIn(f"commcert `{self.bin}`", report, "the bundle's own binary ran")
        self.assertRegex(report, r"\| 1 \| version \|[^\n]*\| PASS \|")
        self.assertIn("not available: libnccl.so.2 not found", report)

    def test_without_mpi_one_process_runs_and_a_launched_one_refuses(self):
        no_plugin = {"COMMCERT_MPI_PLUGIN": str(self.work / "no-such-plugin.so")}
        out = self.work / "health-alone"
        alone = self.hidden([self.bin, "health", "--out", out], env=no_plugin)
        self.assertEqual(alone.returncode, 0, alone.stderr)
        self.assertIn("mpi          not available", alone.stderr)
        launched = self.hidden([self.bin, "health", "--out", self.work / "health-launched"],
                               env=dict(no_plugin, OMPI_COMM_WORLD_SIZE="4"))
        self.assertNotEqual(launched.returncode, 0)
        self.assertIn("started as one of 4 processes, but MPI is not available", launched.stderr)


if __name__ == "__main__":
    unittest.main()
