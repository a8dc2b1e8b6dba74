"""Helpers for integration tests: run the real binary (under real mpirun) and read its evidence."""

import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

BIN = os.environ.get("COMMCERT_BIN", "commcert")
SOURCE_DIR = Path(os.environ.get("COMMCERT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
HAVE_MPI = os.environ.get("COMMCERT_HAVE_MPI", "1") == "1"
SCHEMA_PATH = SOURCE_DIR / "docs" / "schema" / "record.schema.json"
META_SCHEMA_PATH = SOURCE_DIR / "docs" / "schema" / "meta.schema.json"

try:
    import jsonschema
except ImportError:  # scripts/bootstrap installs python3-jsonschema; say so instead of skipping
    jsonschema = None


class Result:
    def __init__(self, completed, seconds, run_dir):
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        self.seconds = seconds
        self.run_dir = run_dir

    def records(self):
        return read_records(self.run_dir / "records.jsonl")

    def meta(self):
        meta = json.loads((self.run_dir / "meta.json").read_text())
        validate_meta(meta)
        return meta

    def collective_records(self, status=None):
        return [r for r in self.records()
                if r["kind"] == "collective" and (status is None or r["status"] == status)]


def mpirun_launch(ranks, fault=None):
    """mpirun's command prefix for `ranks` ranks and the environment to run it in: the caller's,
    with COMMCERT_FAULT set to `fault` and passed to every rank, or removed when there is none."""
    env = dict(os.environ)
    env.pop("COMMCERT_FAULT", None)
    command = [shutil.which("mpirun") or "mpirun", "--allow-run-as-root", "--oversubscribe",
               "-np", str(ranks)]
    if fault:
        env["COMMCERT_FAULT"] = fault
        command += ["-x", "COMMCERT_FAULT"]
    return command, env


def read_records(path):
    records = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise AssertionError(f"{path}:{number}: not JSON: {error}") from error
    return records


def validate_meta(meta):
    """Every meta.json a test reads through Result.meta() follows docs/schema/meta.schema.json."""
    if jsonschema is None:
        raise AssertionError("python3-jsonschema is missing: run scripts/bootstrap")
    validator = jsonschema.Draft202012Validator(json.loads(META_SCHEMA_PATH.read_text()))
    errors = sorted(validator.iter_errors(meta), key=lambda e: list(e.path))
    if errors:
        raise AssertionError("meta.json violates docs/schema/meta.schema.json: " +
                             "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:3]))


def validate_records(test, records):
    test.assertIsNotNone(jsonschema, "python3-jsonschema is missing: run scripts/bootstrap")
    schema = json.loads(SCHEMA_PATH.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for record in records:
        errors = sorted(validator.iter_errors(record), key=lambda e: list(e.path))
        test.assertFalse(errors, f"record violates docs/schema/record.schema.json: "
                                 f"{[e.message for e in errors][:3]}\n{json.dumps(record)[:400]}")


class CommcertTestCase(unittest.TestCase):
    """Each test gets its own results directory, removed afterwards unless it failed."""

    def setUp(self):
        self.results = Path(tempfile.mkdtemp(prefix="commcert-it-"))

    def tearDown(self):
        # Python 3.11 records a failure on the result before tearDown but leaves _outcome.success.
        result = getattr(getattr(self, "_outcome", None), "result", None)
        failed = result is not None and any(test is self for test, _ in result.failures + result.errors)
        if failed:
            print(f"\nkept results for inspection: {self.results}")
        else:
            shutil.rmtree(self.results, ignore_errors=True)

    def sweep(self, args, ranks=4, env=None, timeout=180, run_id="run", mpi=True):
        """Runs `commcert sweep ARGS` on `ranks` MPI ranks, one fake node per rank."""
        command, full_env = self.sweep_command(args, ranks, env, run_id, mpi)
        start = time.monotonic()
        completed = subprocess.run(command, env=full_env, capture_output=True, text=True,
                                   timeout=timeout)
        return Result(completed, time.monotonic() - start, self.results / run_id)

    def sweep_command(self, args, ranks=4, env=None, run_id="run", mpi=True):
        command = [BIN, "sweep", *args, "--out", str(self.results), "--run-id", run_id]
        if "--node-name" not in args:
            command += ["--node-name", "node{rank}"]
        full_env = dict(os.environ)
        full_env.update(env or {})
        if mpi:
            launcher = ["mpirun", "--oversubscribe", "-np", str(ranks)]
            for name in (env or {}):
                launcher += ["-x", name]
            command = launcher + command
        return command, full_env

    def run_commcert(self, args, env=None, timeout=60):
        full_env = dict(os.environ)
        full_env.update(env or {})
        return subprocess.run([BIN, *args], env=full_env, capture_output=True, text=True,
                              timeout=timeout)


def table_rows(stdout):
    """Data rows of the nccl-tests table, split on whitespace as nccl-tests parsers do."""
    return [line.split() for line in stdout.splitlines() if line.strip() and not line.startswith("#")]
