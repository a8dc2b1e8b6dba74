"""scripts/mutation's own logic: --lines parsing and filtering, the whole-set sample's draw, the
Wilson interval and the areas. No mutant is compiled: the filter runs on a tiny fixture file and
mutants written by hand, the rest on plain data."""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ.get("COMMCERT_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(
                                os.path.abspath(__file__)))))
SCRIPT = os.path.join(SOURCE_DIR, "scripts", "mutation")


def load_script():
    loader = importlib.machinery.SourceFileLoader("mutation_script", SCRIPT)
    spec = importlib.util.spec_from_loader("mutation_script", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


mutation = load_script()

FIXTURE = ["int f(int a) {",        # 1
           "  if (a > 0) return 1;",  # 2
           "  return 0;",             # 3
           "}",                       # 4
           "int g() {",               # 5
           "  return 2;",             # 6
           "}"]                       # 7


class ParseLineRanges(unittest.TestCase):
    def test_a_range_a_single_line_and_several_ranges(self):
        self.assertEqual(mutation.parse_line_ranges("src/comm/watchdog.cpp:31-67"),
                         ("src/comm/watchdog.cpp", [(31, 67)]))
        self.assertEqual(mutation.parse_line_ranges("a.cpp:5"), ("a.cpp", [(5, 5)]))
        self.assertEqual(mutation.parse_line_ranges("a.cpp:1-2,7-9,12"),
                         ("a.cpp", [(1, 2), (7, 9), (12, 12)]))

    def test_a_one_line_range_is_accepted_and_a_reversed_one_refused(self):
        self.assertEqual(mutation.parse_line_ranges("a.cpp:4-4"), ("a.cpp", [(4, 4)]))
        with self.assertRaisesRegex(ValueError, "'5-4' is not a range"):
            mutation.parse_line_ranges("a.cpp:5-4")

    def test_malformed_specs_are_refused_naming_the_part(self):
        for spec, part in [("a.cpp", "expected FILE:A-B"), ("a.cpp:", "expected FILE:A-B"),
                           (":3-4", "expected FILE:A-B"), ("a.cpp:0-3", "'0-3'"),
                           ("a.cpp:3-", "'3-'"), ("a.cpp:x", "'x'"), ("a.cpp:1-2,", "''"),
                           ("a.cpp:-3", "'-3'")]:
            with self.subTest(spec=spec), self.assertRaisesRegex(ValueError, part):
                mutation.parse_line_ranges(spec)

    def test_a_bad_flag_is_a_usage_error_naming_it(self):
        done = subprocess.run([sys.executable, SCRIPT, "--lines", "src/comm/watchdog.cpp:9-3"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--lines 'src/comm/watchdog.cpp:9-3'", done.stderr)
        done = subprocess.run([sys.executable, SCRIPT, "--sample-set", "10", "--lines",
                               "src/comm/watchdog.cpp:3"], capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--sample-set", done.stderr)


class MutantsOnLines(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.TemporaryDirectory()
        self.addCleanup(self.scratch.cleanup)

    def mutant(self, name, lines):
        path = os.path.join(self.scratch.name, name)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def test_only_mutants_changing_a_named_line_are_kept_both_ends_included(self):
        on_2 = self.mutant("m2", FIXTURE[:1] + ["  if (a >= 0) return 1;"] + FIXTURE[2:])
        on_3 = self.mutant("m3", FIXTURE[:2] + ["  return 1;"] + FIXTURE[3:])
        on_4 = self.mutant("m4", FIXTURE[:3] + ["} "] + FIXTURE[4:])
        on_6 = self.mutant("m6", FIXTURE[:5] + ["  return 3;"] + FIXTURE[6:])
        deleted_1 = self.mutant("d1", FIXTURE[1:])
        mutants = [on_2, on_3, on_4, on_6, deleted_1]
        self.assertEqual(mutation.mutants_on_lines(FIXTURE, mutants, [(2, 3)]), [on_2, on_3])
        self.assertEqual(mutation.mutants_on_lines(FIXTURE, mutants, [(3, 3), (6, 7)]),
                         [on_3, on_6])
        self.assertEqual(mutation.mutants_on_lines(FIXTURE, mutants, [(1, 1)]), [deleted_1])
        self.assertEqual(mutation.mutants_on_lines(FIXTURE, mutants, [(5, 5)]), [])

    def test_an_inserted_line_counts_on_the_line_it_displaces(self):
        # The report names an insertion by the line it comes before (describe's a0 + 1).
        inserted = self.mutant("i", FIXTURE[:2] + ["  break;"] + FIXTURE[2:])
        self.assertEqual(mutation.describe(FIXTURE, inserted)[0], 3)
        self.assertEqual(mutation.mutants_on_lines(FIXTURE, [inserted], [(3, 3)]), [inserted])
        self.assertEqual(mutation.mutants_on_lines(FIXTURE, [inserted], [(2, 2)]), [])


class EquivalentReason(unittest.TestCase):
    def test_a_listed_line_excuses_that_line_only_and_a_bare_path_every_line(self):
        listed = {("a.cpp:12", "(inserted after: })", "continue;"): "ends the loop body",
                  ("a.cpp", "x = -1;", "x = -2;"): "any negative start"}
        reason = mutation.equivalent_reason
        self.assertEqual(reason(listed, "a.cpp", 12, "(inserted after: })", "continue;"),
                         "ends the loop body")
        self.assertIsNone(reason(listed, "a.cpp", 13, "(inserted after: })", "continue;"))
        self.assertIsNone(reason(listed, "b.cpp", 12, "(inserted after: })", "continue;"))
        for line in (1, 40):
            self.assertEqual(reason(listed, "a.cpp", line, "x = -1;", "x = -2;"),
                             "any negative start")
        self.assertIsNone(reason(listed, "a.cpp", 1, "x = -1;", "x = -3;"))


class SplitEquivalentEntry(unittest.TestCase):
    def test_a_pipe_inside_a_field_is_written_escaped(self):
        self.assertEqual(mutation.split_equivalent_entry(
            "a.cpp | return (x << 32) \\| y; | return (x << 33) \\| y; | why"),
            ["a.cpp", "return (x << 32) | y;", "return (x << 33) | y;", "why"])
        self.assertEqual(mutation.split_equivalent_entry("a.cpp | x || y | x && y | why"),
                         ["a.cpp", "x || y", "x && y", "why"])

    def test_the_listed_file_reads(self):
        self.assertTrue(mutation.listed_equivalents())


class DrawSample(unittest.TestCase):
    def test_the_sample_is_n_in_all_not_n_per_file_and_from_every_file_s_mutants(self):
        mutants = {"big.cpp": [f"b{i}" for i in range(900)],
                   "small.cpp": [f"s{i}" for i in range(100)]}
        drawn = mutation.draw_sample(mutants, 200, seed=16)
        self.assertEqual(sum(len(m) for m in drawn.values()), 200)
        for path, chosen in drawn.items():
            self.assertTrue(set(chosen) <= set(mutants[path]))
            self.assertEqual(len(set(chosen)), len(chosen))
        # Uniform over the union: the big file's share is about 90 %, not half.
        self.assertGreater(len(drawn["big.cpp"]), 150)
        self.assertLess(len(drawn.get("small.cpp", [])), 50)

    def test_the_same_seed_draws_the_same_sample_and_a_large_n_takes_everything(self):
        mutants = {"a.cpp": ["a1", "a2", "a3"], "b.cpp": ["b1"]}
        self.assertEqual(mutation.draw_sample(mutants, 2, 7), mutation.draw_sample(mutants, 2, 7))
        everything = mutation.draw_sample(mutants, 10, 7)
        self.assertEqual({p: sorted(m) for p, m in everything.items()},
                         {"a.cpp": ["a1", "a2", "a3"], "b.cpp": ["b1"]})

    def test_a_file_none_of_whose_mutants_is_drawn_is_not_run(self):
        drawn = mutation.draw_sample({"a.cpp": ["a1"], "b.cpp": []}, 5, 1)
        self.assertEqual(list(drawn), ["a.cpp"])


class WilsonInterval(unittest.TestCase):
    def test_known_values(self):
        # 8 of 10: 49.0 % to 94.3 % (Wilson, z = 1.96).
        low, high = mutation.wilson_interval(8, 10)
        self.assertAlmostEqual(low, 0.4902, places=3)
        self.assertAlmostEqual(high, 0.9433, places=3)
        low, high = mutation.wilson_interval(85, 100)
        self.assertAlmostEqual(low, 0.7672, places=3)
        self.assertAlmostEqual(high, 0.9069, places=3)

    def test_it_stays_inside_zero_and_one_at_the_extremes(self):
        low, high = mutation.wilson_interval(20, 20)
        self.assertEqual(high, 1.0)
        self.assertAlmostEqual(low, 0.8389, places=3)
        low, high = mutation.wilson_interval(0, 20)
        self.assertEqual(low, 0.0)
        self.assertAlmostEqual(high, 0.1611, places=3)
        self.assertEqual(mutation.wilson_interval(0, 0), (0.0, 1.0))


class ValidatorSuites(unittest.TestCase):
    def test_every_validator_suite_is_run_for_rule_mutants_or_left_out_on_purpose(self):
        # A rule whose suite the filter misses loses every mutant to "survived" (the link rule's
        # and the bisection rule's once did): each suite must be judging or named as not.
        import fnmatch
        import glob
        import re
        patterns = mutation.JUDGING.split(":")
        suites = set()
        for path in glob.glob(os.path.join(SOURCE_DIR, "tests", "validate", "*.cpp")):
            with open(path) as f:
                suites |= set(re.findall(r"^TEST(?:_F|_P)?\((\w+),", f.read(), re.M))
        self.assertGreater(len(suites), 30)
        for suite in sorted(suites):
            judged = any(fnmatch.fnmatchcase(f"{suite}.AnyTest", p) for p in patterns)
            with self.subTest(suite=suite):
                self.assertTrue(judged != (suite in mutation.NOT_JUDGING),
                                f"{suite}: add it to JUDGING or NOT_JUDGING in scripts/mutation")


class Areas(unittest.TestCase):
    def test_each_part_of_the_set_has_its_area(self):
        self.assertEqual(mutation.area_of("src/validate/rules/floor_rule.cpp"), "validate")
        self.assertEqual(mutation.area_of("src/validate/evidence.cpp"), "validate")
        self.assertEqual(mutation.area_of("src/comm/watchdog.cpp"), "comm")
        self.assertEqual(mutation.area_of("kernels/pattern_host.cpp"), "comm")
        self.assertEqual(mutation.area_of("src/pool/slurm_actions.cpp"), "pool")
        self.assertEqual(mutation.area_of("src/bench/sweep_engine.cpp"), "bench")
        self.assertEqual(mutation.area_of("src/links/verbs_window.cpp"), "other")


if __name__ == "__main__":
    unittest.main()
