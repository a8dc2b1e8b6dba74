#!/usr/bin/env python3
"""Runs one integration test module for ctest and says whether anything really ran.

unittest exits 0 when every test of a module skipped, so ctest showed a module that ran nothing
(no root, no munge, no MPI) as passed. This runner exits 77 instead, which ctest shows as
skipped (SKIP_RETURN_CODE). A module named in COMMCERT_REQUIRED_TESTS (space-separated module
names) must run in full: any skip there fails it. CI sets it for the MPI, Slurm and bundle
modules it exists to run, so a CI machine that silently lost them goes red.
"""
import os
import sys
import unittest

ALL_SKIPPED = 77


def main(argv):
    if len(argv) != 2:
        print("usage: run_module.py MODULE", file=sys.stderr)
        return 2
    module = argv[1]
    # As `python -m unittest` does: modules are found in the working directory.
    sys.path.insert(0, os.getcwd())
    suite = unittest.defaultTestLoader.loadTestsFromName(module)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    required = os.environ.get("COMMCERT_REQUIRED_TESTS", "").split()
    if module in required and result.skipped:
        print(f"{module}: COMMCERT_REQUIRED_TESTS requires every test to run, but "
              f"{len(result.skipped)} skipped:", file=sys.stderr)
        for test, reason in result.skipped:
            print(f"  {test.id()}: {reason}", file=sys.stderr)
        return 1
    # A class-level skip counts one skip and no test run; a module with no tests ran nothing too.
    if result.testsRun <= len(result.skipped):
        print(f"{module}: every test skipped; reported to ctest as skipped", file=sys.stderr)
        return ALL_SKIPPED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
