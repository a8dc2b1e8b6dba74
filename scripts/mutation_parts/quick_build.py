"""Building one mutant without ninja's bookkeeping: the file's own compile command (from the build's
compile_commands.json) run directly, with the file's leading #include lines precompiled once, then
the archive and link commands of the test binaries that hold it.

Why not ninja: a mutant of a rule file spends most of its compile in the headers it includes, the
same for every mutant, and ninja's check of globbed directories and of the version stamp runs on
every call. A precompiled header (GCC's .gch) of the file's includes halves the compile; the
archive and link commands are those `ninja -t commands` prints, so the binary is linked exactly as
ninja links it. Ninja's own records are left stale on purpose: the original file is put back with
a fresh mtime at the end, so the next ninja call rebuilds the object, the archive and the binaries.
"""

import json
import os
import shlex
import subprocess

LAUNCHERS = {"ccache", "sccache", "distcc"}
# Most mutants do not compile; the first error settles that, and the compiler's recovery from it
# (reading on through every later function) is the larger part of such a mutant's time.
FIRST_ERROR_ENDS = ["-Wfatal-errors"]


def leading_includes(source_text):
    """The file's leading block of #include lines (blank lines and // comments between them kept
    out), up to the first line of anything else: what every mutant includes the same way. A
    conditional include (#if) ends the block, so nothing is included that the file would not."""
    includes = []
    for line in source_text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        if stripped.startswith("#include"):
            includes.append(stripped)
            continue
        break
    return includes


def without_output_options(argv):
    """The compile command without its -c SOURCE, -o OBJECT and dependency-file options: the base
    that the header's and the mutant's compiles both extend."""
    dropped_with_value = {"-o", "-c", "-MF", "-MT", "-MQ"}
    kept, skip = [], False
    for word in argv:
        if skip:
            skip = False
            continue
        if word in dropped_with_value:
            skip = True
            continue
        if word in ("-MD", "-MMD"):
            continue
        kept.append(word)
    return kept


def compile_entries(build_dir, source, objects):
    """{object (relative to the build directory): argv} for `source`'s objects, from
    compile_commands.json; {} when the build has none or does not list the file."""
    listing = os.path.join(build_dir, "compile_commands.json")
    if not os.path.isfile(listing):
        return {}
    with open(listing) as f:
        entries = json.load(f)
    wanted = {os.path.normpath(os.path.join(build_dir, o)): o for o in objects}
    found = {}
    for entry in entries:
        if os.path.normpath(os.path.join(entry["directory"], entry["file"])) != source:
            continue
        argv = entry.get("arguments") or shlex.split(entry["command"])
        if os.path.basename(argv[0]) in LAUNCHERS:
            argv = argv[1:]
        output = entry.get("output") or argv[argv.index("-o") + 1]
        target = wanted.get(os.path.normpath(os.path.join(entry["directory"], output)))
        if target:
            found[target] = argv
    return found if len(found) == len(objects) else {}


def relink_commands(build_dir, objects, targets):
    """The commands ninja would run, after the objects, to rebuild `targets`: for each target the
    archive commands that take one of the objects and its final link, in order, once each."""
    commands = []
    for target in targets:
        listed = subprocess.run(["ninja", "-C", build_dir, "-t", "commands", target],
                                capture_output=True, text=True, check=True).stdout.splitlines()
        for line in listed:
            takes_object = any(o in line.split() and f"-o {o}" not in line for o in objects)
            if takes_object and line not in commands:
                commands.append(line)
        if listed and listed[-1] not in commands:
            commands.append(listed[-1])
    return commands


class QuickBuild:
    """Compiles the current text of `path` into its objects and relinks `targets`; `ready` is
    False where the build gives no way to (no compile_commands.json), and the caller uses ninja."""

    def __init__(self, root, build_dir, path, objects, targets, scratch):
        self.build_dir = os.path.join(root, build_dir)
        self.source = os.path.join(root, path)
        self.entries = compile_entries(self.build_dir, self.source, objects)
        self.ready = bool(self.entries)
        if not self.ready:
            return
        self.relink = relink_commands(self.build_dir, objects, targets)
        self.header_options = self._precompile(scratch)

    def _precompile(self, scratch):
        """Precompiles the leading includes once per object's flags: the options that make a
        compile use it, or [] where it cannot be built (the compile then reads the headers)."""
        with open(self.source) as f:
            includes = leading_includes(f.read())
        options = {}
        for number, (target, argv) in enumerate(sorted(self.entries.items())):
            options[target] = []
            if not includes:
                continue
            header = os.path.join(scratch, f"includes-{number}.hpp")
            with open(header, "w") as f:
                f.write("\n".join(includes) + "\n")
            # Quoted includes are found next to the file; the header lives elsewhere.
            quote_dir = ["-iquote", os.path.dirname(self.source)]
            made = subprocess.run(without_output_options(argv) + quote_dir +
                                  ["-x", "c++-header", header, "-o", header + ".gch"],
                                  cwd=self.build_dir, capture_output=True)
            if made.returncode == 0:
                options[target] = quote_dir + ["-include", header]
        return options

    def compile(self):
        """True when the file as it is now compiles into every one of its objects."""
        for target, argv in self.entries.items():
            command = without_output_options(argv) + self.header_options[target] + \
                FIRST_ERROR_ENDS + ["-c", self.source, "-o", target]
            if subprocess.run(command, cwd=self.build_dir, capture_output=True).returncode != 0:
                return False
        return True

    def link(self):
        """True when the archives and test binaries were rebuilt from the objects as they are."""
        for command in self.relink:
            done = subprocess.run(command, shell=True, cwd=self.build_dir, capture_output=True)
            if done.returncode != 0:
                return False
        return True
