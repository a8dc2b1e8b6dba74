"""scripts/mutation's parts (scripts/mutation_parts/): a mutant built without ninja must end in
the binary exactly as ninja would put it there, the test order must never turn a kill into a
survivor, and an equivalence rule must set aside only mutants that no test could tell apart, each
rule shown on mutants it explains and on look-alikes it must leave to the tests. The build is a
real CMake/ninja project in a scratch directory; the test order runs the real validator test
binary."""
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

from mutation_parts import equivalence_rules, quick_build, test_order  # noqa: E402

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


def inserted(lines, after, text):
    """The description (as scripts/mutation's describe() gives it) of `text` inserted after line
    `after` (1-based)."""
    return after + 1, f"(inserted after: {lines[after - 1].strip()})", text


def replaced(lines, line, text):
    return line, lines[line - 1].strip(), text


def rule(lines, description):
    return equivalence_rules.rule_for(lines, *description)


LOOP = ["int sum(const std::vector<int>& v) {",  # 1
        "  int total = 0;",                       # 2
        "  for (int x : v) {",                    # 3
        "    if (x < 0) {",                       # 4
        "      total -= x;",                      # 5
        "    }",                                  # 6
        "    total += x;",                        # 7
        "  }",                                    # 8
        "  return total;",                        # 9
        "}"]                                      # 10


class RedundantJump(unittest.TestCase):
    def test_a_continue_before_the_end_of_a_loop_body_is_equivalent(self):
        self.assertEqual(rule(LOOP, inserted(LOOP, 7, "continue;")), "redundant-jump")

    def test_a_continue_before_the_end_of_an_if_with_more_of_the_loop_after_it_is_not(self):
        self.assertIsNone(rule(LOOP, inserted(LOOP, 5, "continue;")))
        # After the loop, or before its first statement, a continue changes what runs.
        self.assertIsNone(rule(LOOP, inserted(LOOP, 8, "continue;")))
        self.assertIsNone(rule(LOOP, inserted(LOOP, 3, "continue;")))

    def test_the_end_of_an_if_or_else_branch_that_ends_the_loop_body_is_equivalent(self):
        lines = ["void f(int n) {",            # 1
                 "  while (n > 0) {",          # 2
                 "    --n;",                   # 3
                 "    if (n % 2) {",           # 4
                 "      g(n);",                # 5
                 "    } else if (n % 3) {",    # 6
                 "      h(n);",                # 7
                 "    } else {",               # 8
                 "      k(n);",                # 9
                 "    }",                      # 10
                 "  }",                        # 11
                 "}"]                          # 12
        for after in (5, 7, 9, 10):
            with self.subTest(after=after):
                self.assertEqual(rule(lines, inserted(lines, after, "continue;")),
                                 "redundant-jump")
        self.assertIsNone(rule(lines, inserted(lines, 3, "continue;")))

    def test_do_loops_plain_blocks_and_a_last_switch_end_there_too(self):
        lines = ["void f(int n) {",          # 1
                 "  do {",                   # 2
                 "    {",                    # 3
                 "      g(n);",              # 4
                 "    }",                    # 5
                 "    switch (n) {",         # 6
                 "      case 1:",            # 7
                 "        h();",             # 8
                 "    }",                    # 9
                 "  } while (--n > 0);",     # 10
                 "}"]                        # 11
        for after in (8, 9):
            with self.subTest(after=after):
                self.assertEqual(rule(lines, inserted(lines, after, "continue;")),
                                 "redundant-jump")
        # The plain block is followed by the switch, which the continue would skip.
        self.assertIsNone(rule(lines, inserted(lines, 4, "continue;")))
        # Inside the switch a break leaves the switch where its end goes: the same place.
        self.assertEqual(rule(lines, inserted(lines, 8, "break;")), "redundant-jump")
        # A break that ends the loop body leaves the loop: not equivalent.
        self.assertIsNone(rule(lines, inserted(lines, 9, "break;")))

    def test_a_jump_before_the_same_jump_is_equivalent_and_before_a_case_it_is_not(self):
        lines = ["void f(const std::vector<int>& v) {",  # 1
                 "  for (int x : v) {",                  # 2
                 "    switch (x) {",                     # 3
                 "      case 1:",                        # 4
                 "        g();",                         # 5
                 "        break;",                       # 6
                 "      case 2:",                        # 7
                 "        h();",                         # 8
                 "        continue;",                    # 9
                 "    }",                                # 10
                 "    k(x);",                            # 11
                 "  }",                                  # 12
                 "}"]                                    # 13
        self.assertEqual(rule(lines, inserted(lines, 5, "break;")), "redundant-jump")
        self.assertEqual(rule(lines, inserted(lines, 8, "continue;")), "redundant-jump")
        self.assertIsNone(rule(lines, inserted(lines, 8, "break;")))  # skips k(x)
        self.assertIsNone(rule(lines, inserted(lines, 5, "continue;")))  # skips k(x)
        self.assertIsNone(rule(lines, inserted(lines, 4, "break;")))  # skips g()

    def test_the_end_of_a_lambda_inside_a_loop_is_not_the_loop_s_end(self):
        lines = ["void f(std::vector<int>& v) {",          # 1
                 "  for (auto& x : v) {",                   # 2
                 "    std::sort(v.begin(), v.end(), [](int a, int b) {",  # 3
                 "      return a < b;",                     # 4
                 "    });",                                 # 5
                 "  }",                                     # 6
                 "}"]                                       # 7
        self.assertIsNone(rule(lines, inserted(lines, 4, "continue;")))

    def test_braces_in_strings_characters_and_comments_are_not_counted(self):
        lines = ["void f(const std::vector<int>& v, std::string& s) {",  # 1
                 "  for (int x : v) {",                                 # 2
                 "    if (x) {",                                        # 3
                 "      s += \"}\";  // }",                             # 4
                 "      s += '}';",                                     # 5
                 "      /* } */ s += R\"(})\";",                        # 6
                 "    }",                                               # 7
                 "    g(x);",                                           # 8
                 "  }",                                                 # 9
                 "}"]                                                   # 10
        # A brace counted in the text would match the if's `}` with the loop's `{`.
        self.assertIsNone(rule(lines, inserted(lines, 6, "continue;")))
        self.assertEqual(rule(lines, inserted(lines, 8, "continue;")), "redundant-jump")


class UnreachableJump(unittest.TestCase):
    LINES = ["int f(const std::vector<int>& v) {",   # 1
             "  for (int x : v) {",                  # 2
             "    if (x == 1) {",                    # 3
             "      return x;",                      # 4
             "    }",                                # 5
             "    if (x == 2)",                      # 6
             "      return 0;",                      # 7
             "    if (x == 3) break;",               # 8
             "    switch (x) {",                     # 9
             "      case 4:",                        # 10
             "        throw std::runtime_error(\"four\");",  # 11
             "      case 5:",                        # 12
             "        continue;",                    # 13
             "    }",                                # 14
             "    g(x);",                            # 15
             "  }",                                  # 16
             "  return -1;",                         # 17
             "}"]                                    # 18

    def test_a_jump_right_after_an_unconditional_jump_is_never_reached(self):
        lines = self.LINES
        self.assertEqual(rule(lines, inserted(lines, 4, "break;")), "unreachable-jump")
        self.assertEqual(rule(lines, inserted(lines, 4, "continue;")), "unreachable-jump")
        self.assertEqual(rule(lines, inserted(lines, 11, "break;")), "unreachable-jump")
        self.assertEqual(rule(lines, inserted(lines, 13, "continue;")), "unreachable-jump")

    def test_after_a_jump_that_is_an_if_s_body_or_a_conditional_line_it_is_reached(self):
        lines = self.LINES
        self.assertIsNone(rule(lines, inserted(lines, 7, "continue;")))
        self.assertIsNone(rule(lines, inserted(lines, 8, "continue;")))
        self.assertIsNone(rule(lines, inserted(lines, 15, "break;")))

    def test_a_jump_with_nothing_to_leave_is_left_to_the_compiler(self):
        # After the loop a continue or break does not compile: not counted as equivalent.
        lines = self.LINES
        self.assertIsNone(rule(lines, inserted(lines, 17, "continue;")))
        self.assertIsNone(rule(lines, inserted(lines, 17, "break;")))

    def test_a_throw_inside_a_conditional_expression_is_not_a_statement(self):
        lines = ["int f(const std::vector<int>& v) {", "  for (int x : v) {",
                 "    g(x > 0 ? x :", "      throw std::runtime_error(\"negative\"));",
                 "    h(x);", "  }", "  return 0;", "}"]
        self.assertIsNone(rule(lines, inserted(lines, 4, "continue;")))
        lines[3] = "      throw std::runtime_error(\"negative\");"
        lines[2] = "    x = x > 0 ? x :"
        self.assertIsNone(rule(lines, inserted(lines, 4, "continue;")))

    def test_a_return_over_several_lines_is_not_taken_for_one(self):
        lines = ["int f(int a, int b) {", "  while (a) {", "    return a +", "           b;",
                 "  }", "  return 0;", "}"]
        self.assertIsNone(rule(lines, inserted(lines, 4, "break;")))


class RemovedRedundantJump(unittest.TestCase):
    LINES = ["void f(const std::vector<int>& v) {",  # 1
             "  for (int x : v) {",                  # 2
             "    switch (x) {",                     # 3
             "      case 1:",                        # 4
             "        g();",                         # 5
             "        break;",                       # 6
             "      case 2:",                        # 7
             "        h();",                         # 8
             "        break;",                       # 9
             "    }",                                # 10
             "    if (x > 9) {",                     # 11
             "      k();",                           # 12
             "      continue;",                      # 13
             "    }",                                # 14
             "    if (x < 0)",                       # 15
             "      continue;",                      # 16
             "    m(x);",                            # 17
             "    continue;",                        # 18
             "  }",                                  # 19
             "}"]                                    # 20

    def test_a_continue_removed_at_the_end_of_a_loop_body_is_equivalent(self):
        lines = self.LINES
        self.assertEqual(rule(lines, replaced(lines, 18, "/*continue;*/")),
                         "removed-redundant-jump")
        self.assertEqual(rule(lines, (18, "continue;", "(deleted)")), "removed-redundant-jump")

    def test_the_last_break_of_a_switch_removed_is_equivalent(self):
        self.assertEqual(rule(self.LINES, replaced(self.LINES, 9, "/*break;*/")),
                         "removed-redundant-jump")

    def test_a_break_before_another_case_or_a_continue_with_more_after_it_is_not(self):
        lines = self.LINES
        self.assertIsNone(rule(lines, replaced(lines, 6, "/*break;*/")))  # falls into case 2
        self.assertIsNone(rule(lines, replaced(lines, 13, "/*continue;*/")))  # then m(x) runs
        # An if's body: commenting it out makes the next statement the body.
        self.assertIsNone(rule(lines, replaced(lines, 16, "/*continue;*/")))

    def test_a_break_removed_at_the_end_of_a_loop_body_is_not(self):
        lines = ["void f(int n) {", "  while (n) {", "    n = g(n);", "    break;", "  }", "}"]
        self.assertIsNone(rule(lines, replaced(lines, 4, "/*break;*/")))


class ReserveRemoved(unittest.TestCase):
    LINES = ["std::vector<int> f(const std::vector<int>& in, std::size_t n) {",  # 1
             "  std::vector<int> out;",                                          # 2
             "  out.reserve(in.size() * 2 + n);",                                # 3
             "  out.reserve(next_size());",                                      # 4
             "  out.reserve(n++);",                                              # 5
             "  out.resize(n);",                                                 # 6
             "  if (n)",                                                         # 7
             "    out.reserve(n);",                                              # 8
             "  return out;",                                                    # 9
             "}"]                                                                # 10

    def test_a_reserve_without_side_effects_removed_is_equivalent(self):
        lines = self.LINES
        self.assertEqual(rule(lines, replaced(lines, 3, "/*out.reserve(in.size() * 2 + n);*/")),
                         "reserve-removed")

    def test_a_reserve_that_calls_or_changes_something_or_another_call_is_not(self):
        lines = self.LINES
        for line in (4, 5, 6, 8):
            with self.subTest(line=line):
                self.assertIsNone(rule(lines, replaced(lines, line,
                                                       f"/*{lines[line - 1].strip()}*/")))


class MessageText(unittest.TestCase):
    LINES = ["void f(std::string_view line, int n) {",                     # 1
             "  if (line.find(\"fatal:\") != std::string_view::npos) {",   # 2
             "    throw Error(\"the file is missing: \" + std::string(line));",  # 3
             "  }",                                                        # 4
             "  log(fmt::format(\"a run of {} ranks \"",                    # 5
             "                  \"took too long\", n));",                   # 6
             "  send(\" Reason=\", n, \"a b\");",                           # 7
             "  put('a');",                                                # 8
             "}"]                                                          # 9

    def test_a_change_inside_a_message_only_is_equivalent(self):
        lines = self.LINES
        for line, text in ((3, "throw Error(\"\" + std::string(line));"),
                           (5, "log(fmt::format(\"\""),
                           (6, "\"\", n));")):
            with self.subTest(text=text):
                self.assertEqual(rule(lines, replaced(lines, line, text)), "message-text")
        self.assertEqual(rule(lines, replaced(lines, 6, "\"took too short\", n));")),
                         "message-text")

    def test_a_key_a_separator_code_or_a_character_is_not(self):
        lines = self.LINES
        for line, text in ((2, "if (line.find(\"\") != std::string_view::npos) {"),
                           (7, "send(\"\", n, \"a b\");"),
                           # The greedy ".+" of universalmutator joins two literals into one.
                           (7, "send(\"\");"),
                           (3, "throw Error(\"\" + std::string(line) + \"x\");"),
                           (6, "\"took too long\", n + 1));"),
                           (8, "put('b');")):
            with self.subTest(text=text):
                self.assertIsNone(rule(lines, replaced(lines, line, text)))

    def test_a_preprocessor_line_is_left_alone(self):
        lines = ["#define MESSAGE \"a long message\"", "int x;"]
        self.assertIsNone(rule(lines, replaced(lines, 1, "#define MESSAGE \"\"")))


class CommentOrSpace(unittest.TestCase):
    LINES = ["int f(int a) {",           # 1
             "  // the answer, a - 1",   # 2
             "  /* a block",             # 3
             "   * comment - here",      # 4
             "   */",                    # 5
             "  return a - 1;  // why",  # 6
             "}"]                        # 7

    def test_a_change_inside_a_comment_is_equivalent(self):
        lines = self.LINES
        for description in (replaced(lines, 2, "/*// the answer, a - 1*/"),
                            replaced(lines, 4, "* comment + here"),
                            inserted(lines, 4, "continue;"),
                            replaced(lines, 6, "return a - 1;  // how")):
            with self.subTest(description=description):
                self.assertEqual(rule(lines, description), "comment-or-space")

    def test_white_space_between_tokens_is_equivalent_but_not_inside_a_string(self):
        lines = ["int f(int a, int b) {", "  g(a, \", \");", "  return a - -b;", "}"]
        self.assertEqual(rule(lines, replaced(lines, 2, "g(a , \", \");")), "comment-or-space")
        self.assertIsNone(rule(lines, replaced(lines, 2, "g(a, \",\");")))
        # `a --b` is a decrement: the same characters without the space are other tokens.
        self.assertIsNone(rule(lines, replaced(lines, 3, "return a --b;")))

    def test_code_commented_out_or_a_comment_closed_early_is_not(self):
        lines = self.LINES
        for description in (replaced(lines, 6, "/*return a - 1;  // why*/"),
                            replaced(lines, 4, "/** comment - here*/"),
                            replaced(lines, 6, "return a + 1;  // why")):
            with self.subTest(description=description):
                self.assertIsNone(rule(lines, description))


class RuleDescriptions(unittest.TestCase):
    def test_a_description_that_is_not_one_line_of_this_file_matches_no_rule(self):
        # The line moved (the file is not the one described), or several lines changed.
        self.assertIsNone(rule(LOOP, (8, "total += x;", "/*total += x;*/")))
        self.assertIsNone(rule(LOOP, (7, "total += x; / }", "continue;")))
        self.assertIsNone(rule(LOOP, (7, "(inserted after: total -= x;)", "continue;")))
        self.assertIsNone(rule(LOOP, (0, "", "")))

    def test_every_rule_is_named_and_the_names_are_the_report_s(self):
        self.assertEqual(len(set(equivalence_rules.RULES)), 6)
        for name in equivalence_rules.RULES:
            self.assertTrue(hasattr(equivalence_rules.FileRules, name.replace("-", "_")), name)

    def test_numbers_with_separators_do_not_open_a_character(self):
        pieces, end = equivalence_rules.lex_line("x = 1'000'000; c = '{';", equivalence_rules.CODE)
        self.assertEqual(end, equivalence_rules.CODE)
        self.assertEqual([k for k, _ in pieces], ["code", "char", "code"])

if __name__ == "__main__":
    unittest.main()
