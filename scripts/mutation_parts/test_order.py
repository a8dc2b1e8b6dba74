"""Running a guard's tests in the order that kills a mutant soonest, without changing what is
killed.

Most mutants fail a quick test, but a guard's run takes as long as its slowest tests (two property
tests are two thirds of the validator's). So each mutant's tests run in up to three goes, each
stopping at its first failure: the tests that killed this file's mutants on the nearest lines, then
every quick test of the guard, then its slow ones. A mutant survives only when every test of the
guard passed, exactly as in one run of them all; only the time to a kill changes.
"""

import os
import re
import subprocess

RAN = re.compile(r"^\[ RUN      \] (\S+)", re.M)
PASSED = re.compile(r"^\[       OK \] (\S+) \((\d+) ms\)", re.M)

# A test slower than this runs after the quick ones (a rule file's quick tests take a few ms).
SLOW_TEST_MS = 100
# At most this many earlier killers are tried first.
KILLERS_FIRST = 3


def timed_tests(output):
    """[(test, milliseconds)] in the order an unmutated run passed them."""
    return [(name, int(ms)) for name, ms in PASSED.findall(output)]


def failed_test(output):
    """The test a run stopped in: the last one started and not passed (a failure, a crash or a
    timeout), or None."""
    passed = {name for name, _ in PASSED.findall(output)}
    started = [name for name in RAN.findall(output) if name not in passed]
    return started[-1] if started else None


def with_excluded(test_filter, names):
    """`test_filter` with `names` left out (gtest's POSITIVE-NEGATIVE form)."""
    if not names:
        return test_filter
    positive, dash, negative = test_filter.partition("-")
    excluded = ([negative] if dash and negative else []) + list(names)
    return (positive or "*") + "-" + ":".join(excluded)


def nearest_killers(killers, line, guard_tests):
    """Up to KILLERS_FIRST distinct tests that killed mutants nearest to `line`, among the
    guard's own tests."""
    chosen = []
    for _, name in sorted(killers, key=lambda k: abs(k[0] - line)):
        if name in guard_tests and name not in chosen:
            chosen.append(name)
        if len(chosen) == KILLERS_FIRST:
            break
    return chosen


def run_filter(binary_path, test_filter, timeout, cwd):
    """('passed' | 'failed' | 'timeout', the test it stopped in or None)."""
    environment = dict(os.environ)
    # One failing test kills the mutant: the binary stops there (GTEST_FAIL_FAST=0 in the
    # caller's environment turns this off, e.g. to compare the two).
    environment.setdefault("GTEST_FAIL_FAST", "1")
    try:
        done = subprocess.run([binary_path, f"--gtest_filter={test_filter}"], cwd=cwd,
                              capture_output=True, text=True, timeout=timeout,
                              start_new_session=True, env=environment, errors="replace")
    except subprocess.TimeoutExpired as expired:
        partial = expired.stdout or ""
        if isinstance(partial, bytes):
            partial = partial.decode(errors="replace")
        return "timeout", failed_test(partial)
    if done.returncode == 0:
        return "passed", None
    return "failed", failed_test(done.stdout)


class GuardRun:
    """One guard (a test binary and its filter): measured once unmutated, then run per mutant."""

    def __init__(self, binary_path, test_filter, cwd):
        self.binary_path, self.test_filter, self.cwd = binary_path, test_filter, cwd
        self.tests, self.timeout = [], None

    def measure(self):
        """Runs the guard unmutated; False when it fails there. Sets each phase's timeout (ten
        times the whole run, at least 10 s) and which tests are slow."""
        environment = dict(os.environ, GTEST_FAIL_FAST="0")
        started = os.times().elapsed
        done = subprocess.run([self.binary_path, f"--gtest_filter={self.test_filter}"],
                              cwd=self.cwd, capture_output=True, text=True, env=environment,
                              errors="replace")
        self.timeout = max(10.0, 10 * (os.times().elapsed - started))
        self.tests = timed_tests(done.stdout)
        self.slow = [name for name, ms in self.tests if ms >= SLOW_TEST_MS]
        self.names = {name for name, _ in self.tests}
        return done.returncode == 0

    def goes(self, killers, line):
        """The filters of each go, in order; together they hold every test of the guard."""
        first = nearest_killers(killers, line, self.names)
        goes = [":".join(first)] if first else []
        goes.append(with_excluded(self.test_filter, self.slow))
        if self.slow:
            goes.append(":".join(self.slow))
        return goes

    def run(self, killers, line):
        """('killed', test or None) at the first go that fails or times out, else
        ('passed', None)."""
        for test_filter in self.goes(killers, line):
            outcome, test = run_filter(self.binary_path, test_filter, self.timeout, self.cwd)
            if outcome != "passed":
                return "killed", test
        return "passed", None
