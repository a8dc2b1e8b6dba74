"""scripts/mutation's quick path and ledger (scripts/mutation_parts/): a mutant built without
ninja must end in the binary exactly as ninja would put it there, the test order must never turn a
kill into a survivor, and the ledger must count a file only while its text is the one that ran.
The build is a real CMake/ninja project in a scratch directory; the test order runs the real
validator test binary."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ.get("COMMCERT_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(
                                os.path.abspath(__file__)))))
BINARY_DIR = os.environ.get("COMMCERT_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))
sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts"))

from mutation_parts import ledger, quick_build, test_order  # noqa: E402

TINY_PROJECT = {
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.25)\nproject(tiny CXX)\n"
                      "set(CMAKE_EXPORT_COMPILE_COMMANDS ON)\n"
                      "add_library(answers STATIC answers.cpp)\n"
                      "target_include_directories(answers PUBLIC ${CMAKE_SOURCE_DIR})\n"
                      "add_executable(ask main.cpp)\ntarget_link_libraries(ask answers)\n",
    "answers.hpp": "#pragma once\n#include <string>\nstd::string answer();\n",
    "answers.cpp": "// the answer\n#include <string>\n\n#include \"answers.hpp\"\n\n"
                   "std::string answer() { return std::string(\"forty-two\"); }\n",
    "main.cpp": "#include <cstdio>\n#include \"answers.hpp\"\n"
                "int main() { std::puts(answer().c_str()); }\n",
}


def have_tools():
    return all(shutil.which(tool) for tool in ("cmake", "ninja", "c++"))


@unittest.skipUnless(have_tools(), "cmake, ninja and a C++ compiler are needed")
class QuickBuildOfARealProject(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix="quick-build-")
        self.source = os.path.join(self.scratch, "src")
        os.makedirs(self.source)
        for name, text in TINY_PROJECT.items():
            with open(os.path.join(self.source, name), "w") as f:
                f.write(text)
        self.build = os.path.join(self.scratch, "build")
        for command in (["cmake", "-S", self.source, "-B", self.build, "-G", "Ninja"],
                        ["ninja", "-C", self.build]):
            subprocess.run(command, check=True, capture_output=True)
        listed = subprocess.run(["ninja", "-C", self.build, "-t", "targets", "all"],
                                capture_output=True, text=True, check=True).stdout
        self.objects = [line.split(":")[0] for line in listed.splitlines()
                        if line.split(":")[0].endswith("answers.cpp.o")]

    def tearDown(self):
        shutil.rmtree(self.scratch)

    def ask(self):
        return subprocess.run([os.path.join(self.build, "ask")], capture_output=True,
                              text=True, check=True).stdout.strip()

    def write_answer(self, text):
        path = os.path.join(self.source, "answers.cpp")
        with open(path) as f:
            original = f.read()
        with open(path, "w") as f:
            f.write(original.replace("forty-two", text))
        return original

    def test_a_mutant_reaches_the_binary_and_ninja_rebuilds_the_original_after(self):
        quick = quick_build.QuickBuild(self.scratch, "build", "src/answers.cpp", self.objects,
                                       ["ask"], self.scratch)
        self.assertTrue(quick.ready)
        # The includes were precompiled: the compile uses the header, not the text.
        self.assertIn("-include", quick.header_options[self.objects[0]])
        original = self.write_answer("forty-three")
        self.assertTrue(quick.compile())
        self.assertTrue(quick.link())
        self.assertEqual(self.ask(), "forty-three")
        # A mutant that does not compile is reported, not linked.
        path = os.path.join(self.source, "answers.cpp")
        with open(path, "w") as f:
            f.write(original.replace("forty-two\")", "forty-four\" +)"))
        self.assertFalse(quick.compile())
        self.assertEqual(self.ask(), "forty-three")
        with open(path, "w") as f:
            f.write(original)
        os.utime(path)
        subprocess.run(["ninja", "-C", self.build], check=True, capture_output=True)
        self.assertEqual(self.ask(), "forty-two")

    def test_without_compile_commands_it_is_not_ready_and_ninja_is_used(self):
        os.remove(os.path.join(self.build, "compile_commands.json"))
        quick = quick_build.QuickBuild(self.scratch, "build", "src/answers.cpp", self.objects,
                                       ["ask"], self.scratch)
        self.assertFalse(quick.ready)


class QuickBuildPieces(unittest.TestCase):
    def test_the_leading_includes_stop_at_the_first_other_line(self):
        text = ("// why\n#include <a>\n\n#include \"b.hpp\"\n#if X\n#include <c>\n#endif\n"
                "#include <d>\nint x;\n")
        self.assertEqual(quick_build.leading_includes(text), ["#include <a>",
                                                              "#include \"b.hpp\""])
        self.assertEqual(quick_build.leading_includes("namespace a {}\n#include <a>\n"), [])

    def test_output_and_dependency_options_are_dropped_with_their_values(self):
        argv = ["c++", "-DX", "-MD", "-MT", "o.o", "-MF", "o.o.d", "-o", "o.o", "-c", "a.cpp",
                "-O0"]
        self.assertEqual(quick_build.without_output_options(argv), ["c++", "-DX", "-O0"])


class TestOrderPieces(unittest.TestCase):
    OUTPUT = ("[ RUN      ] A.One\n[       OK ] A.One (3 ms)\n[ RUN      ] A.Two\n"
              "x.cpp:9: Failure\n[  FAILED  ] A.Two (1 ms)\n")

    def test_the_test_a_run_stopped_in_is_the_last_started_and_not_passed(self):
        self.assertEqual(test_order.failed_test(self.OUTPUT), "A.Two")
        # A crash leaves no FAILED line: the test it started in is still named.
        self.assertEqual(test_order.failed_test("[ RUN      ] A.One\nSegmentation fault\n"),
                         "A.One")
        self.assertIsNone(test_order.failed_test("[ RUN      ] A.One\n[       OK ] A.One (0 ms)"))

    def test_excluding_tests_keeps_the_filters_own_exclusions(self):
        self.assertEqual(test_order.with_excluded("A.*:B.*", ["A.Slow"]), "A.*:B.*-A.Slow")
        self.assertEqual(test_order.with_excluded("*-C.*", ["A.Slow", "B.Slow"]),
                         "*-C.*:A.Slow:B.Slow")
        self.assertEqual(test_order.with_excluded("-C.*", ["A.Slow"]), "*-C.*:A.Slow")
        self.assertEqual(test_order.with_excluded("A.*", []), "A.*")

    def test_the_nearest_killers_come_first_once_each_and_only_the_guards_own(self):
        killers = [(10, "A.Far"), (50, "A.Near"), (52, "A.Near"), (49, "B.Other"), (60, "A.Mid")]
        guard = {"A.Far", "A.Near", "A.Mid"}
        self.assertEqual(test_order.nearest_killers(killers, 50, guard),
                         ["A.Near", "A.Mid", "A.Far"])
        self.assertEqual(test_order.nearest_killers([], 50, guard), [])


VALIDATE_TESTS = os.path.join(BINARY_DIR, "tests", "validate", "commcert_validate_tests")


@unittest.skipUnless(os.path.isfile(VALIDATE_TESTS), "the validator's test binary is not built")
class GuardRunOfTheRealValidatorTests(unittest.TestCase):
    FILTER = "FloorRule.*:HealthyFleet.*"

    def test_every_test_of_the_guard_is_in_one_of_its_goes(self):
        guard = test_order.GuardRun(VALIDATE_TESTS, self.FILTER, SOURCE_DIR)
        self.assertTrue(guard.measure())
        listed = subprocess.run([VALIDATE_TESTS, f"--gtest_filter={self.FILTER}",
                                 "--gtest_list_tests"], capture_output=True, text=True).stdout
        self.assertEqual(len(guard.tests), sum(1 for line in listed.splitlines()
                                               if line.startswith("  ")))
        killer = guard.tests[0][0]
        goes = guard.goes([(7, killer)], 7)
        self.assertEqual(goes[0], killer)
        ran = set()
        for test_filter in goes:
            listed = subprocess.run([VALIDATE_TESTS, f"--gtest_filter={test_filter}",
                                     "--gtest_list_tests"], capture_output=True, text=True).stdout
            suite = None
            for line in listed.splitlines():
                if not line.startswith("  "):
                    suite = line.strip()
                else:
                    ran.add(suite + line.split()[0])
        self.assertEqual(ran, {name for name, _ in guard.tests})
        self.assertEqual(guard.run([], 1), ("passed", None))


class Ledger(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="ledger-")
        os.makedirs(os.path.join(self.root, "src"))
        for name in ("a.cpp", "b.cpp", "c.cpp"):
            with open(os.path.join(self.root, "src", name), "w") as f:
                f.write(f"int {name[0]}() {{ return 1; }}\n")
        self.results = {"generated": 10, "invalid": 4, "equivalent": 2, "killed": 2,
                        "survived": 2, "survivors": [(1, "return 1;", "return 0;"),
                                                     (1, "int a()", "int a() {")],
                        "listed": [(1, "{", "}")], "done": list(range(1, 11))}

    def tearDown(self):
        shutil.rmtree(self.root)

    def summary(self, excused=()):
        return ledger.summarize(self.root, ["src/a.cpp", "src/b.cpp", "src/c.cpp"],
                                lambda path, line, before, after: (before, after) in excused)

    def test_a_file_counts_while_its_text_is_the_one_that_ran(self):
        ledger.record(self.root, "src/a.cpp", self.results, "2026-11-26 20:00 UTC", "abc", "x")
        ledger.record(self.root, "src/b.cpp", self.results, "2026-11-26 20:00 UTC", "abc", "x")
        with open(os.path.join(self.root, "src", "b.cpp"), "a") as f:
            f.write("int later() { return 2; }\n")
        rows, totals, survivors = self.summary(excused={("{", "}")})
        self.assertEqual([state for _, state, _ in rows], ["current", "stale", "missing"])
        self.assertEqual((totals["killed"], totals["survived"], totals["generated"]), (2, 2, 10))
        lines, complete, score = ledger.summary_report(rows, totals, survivors)
        self.assertFalse(complete)
        self.assertEqual(score, 50.0)
        self.assertTrue(any("NOT complete" in line for line in lines))

    def test_survivors_are_judged_against_todays_equivalents(self):
        ledger.record(self.root, "src/a.cpp", self.results, "d", "c", "x")
        # A survivor excused since counts as equivalent; the one excused then and no longer
        # listed survives.
        rows, totals, survivors = self.summary(excused={("return 1;", "return 0;")})
        self.assertEqual((totals["survived"], totals["equivalent"]), (2, 2))
        self.assertEqual(sorted(s[3] for s in survivors), ["int a() {", "}"])

    def test_a_complete_ledger_is_the_sets_score(self):
        for name in ("a", "b", "c"):
            ledger.record(self.root, f"src/{name}.cpp", self.results, "d", "c", "x")
        lines, complete, score = ledger.summary_report(*self.summary(
            excused={("int a()", "int a() {"), ("{", "}")}))
        self.assertTrue(complete)
        self.assertAlmostEqual(score, 100 * 6 / 9)

    def test_a_recheck_moves_what_a_new_test_kills_and_keeps_what_it_did_not_run(self):
        ledger.record(self.root, "src/a.cpp", self.results, "d", "c", "x")
        entry = ledger.read_entry(self.root, "src/a.cpp")
        self.assertEqual(len(ledger.recorded_survivors(entry)), 3)
        # Two of the three were run again: one is killed now, one is listed; the third was not
        # run (not written again) and stays a survivor.
        rerun = [(1, "return 1;", "return 0;"), (1, "{", "}")]
        results = {"killed": 1, "survived": 0, "equivalent": 1, "invalid": 0, "survivors": [],
                   "listed": [(1, "{", "}")]}
        after = ledger.after_recheck(entry, rerun, results, "later")
        self.assertEqual(after["counts"]["killed"], 3)
        self.assertEqual(after["counts"]["survived"], 1)
        self.assertEqual(after["counts"]["equivalent"], 2)
        self.assertEqual([s["after"] for s in after["survivors"]], ["int a() {"])
        self.assertEqual(after["rechecked"], "later")
        total = sum(after["counts"][k] for k in ("invalid", "equivalent", "killed", "survived"))
        self.assertEqual(total, after["counts"]["generated"])

    def test_two_survivors_of_the_same_text_stay_two_through_a_recheck(self):
        twice = dict(self.results, listed=[],
                     survivors=[(1, "return 1;", "return 0;"), (1, "return 1;", "return 0;")])
        ledger.record(self.root, "src/a.cpp", twice, "d", "c", "x")
        entry = ledger.read_entry(self.root, "src/a.cpp")
        self.assertEqual(len(ledger.recorded_survivors(entry)), 2)
        # Both are run again (the same mutant file twice) and both are killed now.
        rerun = [(1, "return 1;", "return 0;")] * 2
        results = {"killed": 2, "survived": 0, "equivalent": 0, "invalid": 0, "survivors": [],
                   "listed": []}
        after = ledger.after_recheck(entry, rerun, results, "later")
        self.assertEqual(after["counts"]["survived"], 0)
        total = sum(after["counts"][k] for k in ("invalid", "equivalent", "killed", "survived"))
        self.assertEqual(total, after["counts"]["generated"])

    def test_a_stopped_recheck_keeps_what_it_did_not_run_as_recorded(self):
        three = dict(self.results, listed=[(3, "x", "y")],
                     survivors=[(1, "return 1;", "return 0;"), (2, "{", "}")])
        ledger.record(self.root, "src/a.cpp", three, "d", "c", "x")
        entry = ledger.read_entry(self.root, "src/a.cpp")
        before = dict(entry["counts"])
        # Stopped after the first survivor, which a new test kills: the other survivor and the
        # listed mutant were not run again and keep their outcomes.
        ran = [(1, "return 1;", "return 0;")]
        results = {"killed": 1, "survived": 0, "equivalent": 0, "invalid": 0, "survivors": [],
                   "listed": []}
        after = ledger.after_recheck(entry, ran, results, "later")
        self.assertEqual([(s["line"], s["after"]) for s in after["survivors"]], [(2, "}")])
        self.assertEqual([s["line"] for s in after["listed_equivalent"]], [3])
        self.assertEqual(after["counts"]["killed"], before["killed"] + 1)
        self.assertEqual(after["counts"]["survived"], 1)
        self.assertEqual(after["counts"]["equivalent"], before["equivalent"])
        total = sum(after["counts"][k] for k in ("invalid", "equivalent", "killed", "survived"))
        self.assertEqual(total, after["counts"]["generated"])

    def test_a_stopped_run_is_partial_until_a_resume_runs_the_rest(self):
        first = {"generated": 10, "invalid": 3, "equivalent": 0, "killed": 1, "survived": 1,
                 "survivors": [(1, "return 1;", "return 0;")], "listed": [],
                 "done": [1, 2, 3, 4, 5]}
        ledger.record(self.root, "src/a.cpp", first, "d", "c", "x")
        entry = ledger.read_entry(self.root, "src/a.cpp")
        self.assertFalse(entry["complete"])
        rows, totals, _ = self.summary()
        self.assertEqual(rows[0][1], "partial")
        self.assertEqual(totals["killed"], 0)  # a partial run is not counted as the file's
        lines, complete, _ = ledger.summary_report(rows, totals, [])
        self.assertTrue(any("5 of 10 run; --resume goes on" in line for line in lines))
        rest = {"generated": 10, "invalid": 1, "equivalent": 2, "killed": 2, "survived": 0,
                "survivors": [], "listed": [(1, "{", "}")], "done": [6, 7, 8, 9, 10]}
        ledger.record(self.root, "src/a.cpp", rest, "d", "c", "x", resumed=entry)
        entry = ledger.read_entry(self.root, "src/a.cpp")
        self.assertTrue(entry["complete"])
        self.assertEqual(entry["counts"], {"generated": 10, "invalid": 4, "equivalent": 2,
                                           "killed": 3, "survived": 1})
        self.assertEqual(entry["done"], list(range(1, 11)))
        self.assertEqual(len(entry["survivors"]) + len(entry["listed_equivalent"]), 2)

    def test_a_malformed_entry_stops_the_summary_naming_its_file(self):
        os.makedirs(os.path.join(self.root, ledger.LEDGER_DIR))
        with open(ledger.entry_path(self.root, "src/a.cpp"), "w") as f:
            json.dump({"file": "src/a.cpp"}, f)
        with self.assertRaises(SystemExit) as stopped:
            self.summary()
        self.assertIn("src__a.cpp.json", str(stopped.exception))


if __name__ == "__main__":
    unittest.main()
