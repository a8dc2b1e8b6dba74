"""scripts/mutation's own logic: --lines parsing and filtering, the rules' set-aside, the report
folder (--out) and its three files, the whole-set sample's draw, the Wilson interval and the
areas. No mutant is compiled: the filters run on a tiny fixture file and mutants written by hand,
the rest on plain data."""
import contextlib
import datetime
import importlib.machinery
import importlib.util
import json
import os
import signal
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


class SetAsideByRules(unittest.TestCase):
    LOOP = ["int f(int n) {",            # 1
            "  int s = 0;",               # 2
            "  for (int i = 0; i < n; ++i) {",  # 3
            "    s += i;",                # 4
            "  }",                        # 5
            "  return s;  // the sum",    # 6
            "}"]                          # 7

    def setUp(self):
        self.scratch = tempfile.TemporaryDirectory()
        self.addCleanup(self.scratch.cleanup)

    def mutant(self, name, lines):
        path = os.path.join(self.scratch.name, name)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def test_rule_equivalents_are_counted_by_rule_and_the_rest_kept_in_order(self):
        lines = self.LOOP
        redundant = self.mutant("c", lines[:4] + ["    continue;"] + lines[4:])
        comment = self.mutant("k", lines[:5] + ["  return s;  // the total"] + lines[6:])
        flipped = self.mutant("f", lines[:2] + ["  for (int i = 0; i <= n; ++i) {"] + lines[3:])
        broken = self.mutant("b", lines[:1] + ["  int s = 0;", "  continue;"] + lines[2:])
        kept, by_rule = mutation.set_aside_by_rules(lines, [redundant, flipped, comment, broken])
        self.assertEqual(kept, [flipped, broken])
        self.assertEqual(by_rule, {"redundant-jump": 1, "comment-or-space": 1})


class OutDir(unittest.TestCase):
    def test_a_tracked_folder_of_the_repository_is_refused_naming_the_flag(self):
        for inside in (os.path.join(SOURCE_DIR, "scripts"), SOURCE_DIR,
                       os.path.join(SOURCE_DIR, "tests", "not-there-yet")):
            with self.subTest(folder=inside):
                error = mutation.out_dir_error(inside)
                self.assertIsNotNone(error)
                self.assertTrue(error.startswith(f"--out {inside}: inside the repository"))
                self.assertNotIn("\n", error)

    def test_a_folder_outside_the_repository_or_ignored_by_git_is_taken(self):
        with tempfile.TemporaryDirectory() as outside:
            self.assertIsNone(mutation.out_dir_error(os.path.join(outside, "report")))
        if subprocess.run(["git", "-C", SOURCE_DIR, "rev-parse"], capture_output=True).returncode:
            self.skipTest("the source tree is not a git repository")
        self.assertIsNone(mutation.out_dir_error(
            os.path.join(SOURCE_DIR, "build-mutation", "mutation-report")))

    def test_the_script_stops_before_any_work_with_a_one_line_error(self):
        if subprocess.run(["git", "-C", SOURCE_DIR, "rev-parse"], capture_output=True).returncode:
            self.skipTest("the source tree is not a git repository")
        done = subprocess.run([sys.executable, SCRIPT, "--files", "src/pool/slurm_actions.cpp",
                               "--out", os.path.join(SOURCE_DIR, "scripts")],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 1)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1)
        self.assertIn("--out", done.stderr)
        self.assertIn("not ignored by git", done.stderr)


class BuildDir(unittest.TestCase):
    def write_cache(self, folder, unity):
        with open(os.path.join(folder, "CMakeCache.txt"), "w") as f:
            f.write(f"CMAKE_BUILD_TYPE:STRING=Debug\nCOMMCERT_UNITY_BUILD:BOOL={unity}\n")

    def test_a_unity_build_is_refused_naming_the_option(self):
        # Its objects hold several files each: every file would be skipped as not compiled and
        # the gate would pass on nothing.
        with tempfile.TemporaryDirectory() as build:
            self.write_cache(build, "ON")
            with self.assertRaises(SystemExit) as stopped:
                mutation.refuse_unity_build(build)
            self.assertIn("COMMCERT_UNITY_BUILD=OFF", str(stopped.exception.code))

    def test_a_build_with_one_object_per_file_is_taken(self):
        with tempfile.TemporaryDirectory() as build:
            self.write_cache(build, "OFF")
            mutation.refuse_unity_build(build)
            os.remove(os.path.join(build, "CMakeCache.txt"))
            mutation.refuse_unity_build(build)

    def test_the_fast_build_is_configured_without_unity_batches(self):
        self.assertIn("-DCOMMCERT_UNITY_BUILD=OFF", mutation.FAST_BUILD_OPTIONS)


class RunReport(unittest.TestCase):
    def test_a_run_writes_its_counts_survivors_and_command_into_the_folder(self):
        # The mutants' runs are stood in for: what main() makes of their results is checked.
        results = {"src/pool/slurm_actions.cpp": {
            "generated": 30, "by_rule": {"redundant-jump": 2, "message-text": 1}, "tried": 9,
            "killed": 6, "survived": 1, "equivalent": 1, "invalid": 1, "unrun": 0,
            "survivors": [(42, "if (a < b) {", "if (a <= b) {")]},
            "src/pool/scontrol_answers.cpp": {
            "generated": 10, "by_rule": {"redundant-jump": 1}, "tried": 4, "killed": 3,
            "survived": 0, "equivalent": 0, "invalid": 1, "unrun": 0, "survivors": []}}
        saved = (mutation.find_mutator, mutation.mutate_file, sys.argv)
        self.addCleanup(lambda: (setattr(mutation, "find_mutator", saved[0]),
                                 setattr(mutation, "mutate_file", saved[1]),
                                 setattr(sys, "argv", saved[2])))
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        mutation.find_mutator = lambda: None
        mutation.mutate_file = lambda path, *_: dict(results[path])
        with tempfile.TemporaryDirectory() as scratch:
            out = os.path.join(scratch, "out")
            sys.argv = ["scripts/mutation", "--build-dir", scratch, "--out", out, "--files",
                        "src/pool/slurm_actions.cpp", "src/pool/scontrol_answers.cpp",
                        "--min-score", "85"]
            with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
                code = mutation.main()
            with open(os.path.join(out, "summary.json")) as f:
                summary = json.load(f)
            with open(os.path.join(out, "survivors.tsv")) as f:
                survivors = f.read()
            with open(os.path.join(out, "report.md")) as f:
                report = f.read()
        self.assertEqual(code, 0)  # 9 of 10: 90 %
        self.assertEqual(summary["score"], 90.0)
        self.assertEqual(summary["counts"], {
            "written": 40, "equivalent_by_rule": 4, "tried": 13, "killed": 9, "survived": 1,
            "equivalent_same_object": 1, "not_compiling": 2, "not_run": 0})
        self.assertEqual(summary["equivalent_by_rule"], {"redundant-jump": 3, "message-text": 1})
        self.assertTrue(summary["command"].startswith("scripts/mutation --build-dir"))
        self.assertRegex(summary["date"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertTrue(summary["commit"])
        self.assertTrue(summary["complete"])
        self.assertEqual(survivors,
                         "src/pool/slurm_actions.cpp\t42\tif (a < b) {\tif (a <= b) {\n")
        self.assertIn("src/pool/slurm_actions.cpp:42: if (a < b) { → if (a <= b) {", report)
        self.assertIn("| equivalent (rule: redundant-jump) | 3 |", report)


class ReportFiles(unittest.TestCase):
    SURVIVORS = [("src/a.cpp", 12, "if (x < 3) {", "if (x <= 3) {"),
                 ("src/b.cpp", 7, "(inserted after: a = 1;)", "break;")]

    def test_the_three_files_are_written_into_a_new_folder(self):
        totals = {"generated": 20, "tried": 6, "killed": 3, "survived": 2, "equivalent": 1,
                  "invalid": 0, "unrun": 0}
        started = datetime.datetime(2026, 11, 28, 4, 5, tzinfo=datetime.timezone.utc)
        report = mutation.render_report(
            started, "scripts/mutation --files src/a.cpp src/b.cpp", "abc123", ["| row |"],
            totals, {"redundant-jump": 4, "comment-or-space": 1}, self.SURVIVORS, ["- a note"], [])
        summary = {"score": 60.0, "counts": {"killed": 3, "survived": 2}, "command": "x"}
        with tempfile.TemporaryDirectory() as scratch:
            out = os.path.join(scratch, "deeper", "report")
            mutation.write_outputs(out, report, self.SURVIVORS, summary)
            self.assertEqual(sorted(os.listdir(out)),
                             ["report.md", "summary.json", "survivors.tsv"])
            with open(os.path.join(out, "survivors.tsv")) as f:
                rows = [line.rstrip("\n").split("\t") for line in f]
            self.assertEqual(rows, [["src/a.cpp", "12", "if (x < 3) {", "if (x <= 3) {"],
                                    ["src/b.cpp", "7", "(inserted after: a = 1;)", "break;"]])
            with open(os.path.join(out, "summary.json")) as f:
                self.assertEqual(json.load(f), summary)
            with open(os.path.join(out, "report.md")) as f:
                text = f.read()
        self.assertIn("# Mutation report, 2026-11-28 04:05 UTC", text)
        self.assertIn("**60.0 %**", text)
        self.assertIn("src/a.cpp:12: if (x < 3) { → if (x <= 3) {", text)
        self.assertIn("src/b.cpp:7: (inserted after: a = 1;) → break;", text)
        self.assertIn("| equivalent (rule: redundant-jump) | 4 |", text)
        self.assertIn("Commit: abc123", text)

    def test_a_tab_in_a_line_does_not_split_its_field(self):
        with tempfile.TemporaryDirectory() as out:
            mutation.write_outputs(out, "", [("a.cpp", 1, "x\t= 1;", "x\t= 2;")], {})
            with open(os.path.join(out, "survivors.tsv")) as f:
                self.assertEqual(f.read(), "a.cpp\t1\tx = 1;\tx = 2;\n")

    def test_a_run_without_survivors_says_so(self):
        totals = dict.fromkeys(["generated", "tried", "killed", "survived", "equivalent",
                                "invalid", "unrun"], 0)
        report = mutation.render_report(datetime.datetime.now(datetime.timezone.utc), "c", "h",
                                        [], totals, {}, [], [], [])
        self.assertIn("Survivors (0):\n\nnone", report)
        self.assertIn("**n/a**", report)


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
        import re
        patterns = mutation.JUDGING.split(":")
        # The suites of the validator's binary: its sources as tests/validate/CMakeLists.txt
        # lists them (other binaries compile some files of tests/validate/ too).
        validate = os.path.join(SOURCE_DIR, "tests", "validate")
        with open(os.path.join(validate, "CMakeLists.txt")) as f:
            listed = re.search(r"commcert_add_gtest\(commcert_validate_tests(.*?)\)", f.read(),
                               re.S).group(1)
        suites = set()
        for name in re.findall(r"\S+\.cpp", listed):
            with open(os.path.join(validate, name)) as f:
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
