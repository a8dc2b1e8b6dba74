"""The full run's ledger: every mutant of a file, run in full, recorded against the file's text.

Every mutant of the whole set is tens of machine-hours here, more than one sitting. So each file
run in full (no sample, no line range) writes its counts and survivors into tests/mutation-ledger/,
one JSON file per source file, with the SHA-256 of the text that was mutated; a run stopped
part-way (SIGTERM, --budget) records what it ran as a partial entry, which --resume goes on from
(the largest files take hours). The set's score is the sum over the ledger, and counts only while
it is current: a file whose text changed since its entry, that has no entry or only a partial
one, makes the set incomplete and the report says which. Survivors are kept with their text, so
one listed as equivalent later (in tests/mutation_equivalent.txt) is counted as such without
running the file again.
"""

from collections import Counter
import hashlib
import json
import os

LEDGER_DIR = os.path.join("tests", "mutation-ledger")
COUNTS = ("generated", "invalid", "equivalent", "killed", "survived")


def text_digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def entry_path(root, path):
    return os.path.join(root, LEDGER_DIR, path.replace("/", "__") + ".json")


def record(root, path, results, when, commit, command, resumed=None):
    """Writes `path`'s full run into the ledger: every one of its mutants, or, when the run was
    stopped (SIGTERM, --budget), those it ran, as a partial entry that --resume goes on from.
    `resumed` is the partial entry this run went on from, whose results are added."""
    survivors = [{"line": line, "before": before, "after": after}
                 for line, before, after in results["survivors"]]
    listed = [{"line": line, "before": before, "after": after}
              for line, before, after in results.get("listed", [])]
    counts = {key: results[key] for key in COUNTS}
    done = list(results["done"])
    if resumed:  # the same file's mutants: written the same, the outcomes add up
        for key in ("invalid", "equivalent", "killed", "survived"):
            counts[key] += resumed["counts"][key]
        survivors = resumed["survivors"] + survivors
        listed = resumed["listed_equivalent"] + listed
        done += resumed["done"]
    entry = {"file": path, "sha256": text_digest(os.path.join(root, path)), "date": when,
             "commit": commit, "command": command, "counts": counts,
             # Survivors as run, and those excused by tests/mutation_equivalent.txt then; both are
             # judged again against today's list when the set is summed.
             "survivors": survivors, "listed_equivalent": listed,
             # universalmutator's numbers of the mutants run: a partial entry's resume skips them.
             "done": sorted(set(done)), "complete": len(set(done)) >= counts["generated"]}
    write_entry(root, path, entry)


def write_entry(root, path, entry):
    target = entry_path(root, path)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target + ".tmp", "w") as f:
        json.dump(entry, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(target + ".tmp", target)


def recorded_survivors(entry):
    """(line, before, after) of every mutant the entry did not count as killed or as compiled
    to the same object: its survivors and those a listed reason excused. Two mutants that write
    the same text are two of the file's mutants and stay two (one outcome each)."""
    return sorted((s["line"], s["before"], s["after"])
                  for s in entry["survivors"] + entry["listed_equivalent"])


def after_recheck(entry, ran, results, when):
    """The entry once `ran` (the (line, before, after) of its recorded survivors and listed
    mutants that were run again: all of them, unless the recheck was stopped) gave `results`:
    those killed now count as killed, the listed as equivalent; a recorded mutant that was not
    run again keeps its outcome."""
    not_yet = Counter(ran)
    kept = {"survivors": [], "listed_equivalent": []}
    for kind in kept:
        for s in entry[kind]:
            key = (s["line"], s["before"], s["after"])
            if not_yet[key] > 0:
                not_yet[key] -= 1
            else:
                kept[kind].append({"line": s["line"], "before": s["before"], "after": s["after"]})
    listed_run_again = len(entry["listed_equivalent"]) - len(kept["listed_equivalent"])
    counts = dict(entry["counts"])
    counts["killed"] += results["killed"]
    counts["equivalent"] += results["equivalent"] - listed_run_again
    counts["invalid"] += results["invalid"]
    survivors = kept["survivors"] + [{"line": line, "before": before, "after": after}
                                     for line, before, after in results["survivors"]]
    counts["survived"] = len(survivors)
    listed = kept["listed_equivalent"] + [{"line": line, "before": before, "after": after}
                                          for line, before, after in results["listed"]]
    return dict(entry, counts=counts, survivors=survivors, listed_equivalent=listed,
                rechecked=when)


def read_entry(root, path):
    """The ledger entry of `path` or None; a malformed one stops the run naming its file."""
    target = entry_path(root, path)
    if not os.path.isfile(target):
        return None
    try:
        with open(target) as f:
            entry = json.load(f)
        _ = [entry["counts"][key] for key in COUNTS]
        _ = [(s["line"], s["before"], s["after"]) for s in entry["survivors"]]
        _ = [(s["line"], s["before"], s["after"]) for s in entry["listed_equivalent"]]
        _ = entry["sha256"], entry["date"]
        # Entries from before partial runs were recorded are complete runs.
        entry.setdefault("complete", True)
        entry.setdefault("done", [])
        return entry
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"scripts/mutation: {os.path.relpath(target, root)}: not a ledger entry "
                         f"({error.__class__.__name__}: {error})")


def is_current(root, path, entry):
    """Whether the file's text is the one the entry's run mutated."""
    return entry["sha256"] == text_digest(os.path.join(root, path))


def current_entry(root, path):
    """The file's entry when its text is the one that ran (complete or partial), else None."""
    entry = read_entry(root, path)
    return entry if entry and is_current(root, path, entry) else None


def summarize(root, files, excuse):
    """The set's state from the ledger: per file 'current', 'stale' (its text changed since) or
    'missing', and over the current files the counts, where `excuse(path, line, before, after)`
    says whether today's equivalents list excuses a survivor. Returns (rows, totals, survivors)."""
    rows, survivors = [], []
    totals = dict.fromkeys(["generated", "invalid", "equivalent", "killed", "survived"], 0)
    for path in files:
        entry = read_entry(root, path)
        if entry is None:
            rows.append((path, "missing", None))
            continue
        if not is_current(root, path, entry):
            rows.append((path, "stale", entry))
            continue
        if not entry["complete"]:
            rows.append((path, "partial", entry))
            continue
        counts = dict(entry["counts"])
        # Judged again against today's list: a survivor since excused is equivalent, and one
        # excused then but no longer listed survives.
        judged = entry["survivors"] + entry["listed_equivalent"]
        counts["survived"] = 0
        counts["equivalent"] = entry["counts"]["equivalent"] - len(entry["listed_equivalent"])
        for s in judged:
            if excuse(path, s["line"], s["before"], s["after"]):
                counts["equivalent"] += 1
            else:
                counts["survived"] += 1
                survivors.append((path, s["line"], s["before"], s["after"]))
        rows.append((path, "current", dict(entry, counts=counts)))
        for key in totals:
            totals[key] += counts[key]
    return rows, totals, survivors


def summary_report(rows, totals, survivors):
    """The ledger's summary as Markdown lines, and whether the set is complete (every file
    current)."""
    lines = ["| file | state | mutants | killed | survived | equivalent | not compiling | "
             "score | run |", "|---|---|---|---|---|---|---|---|---|"]
    for path, state, entry in rows:
        if entry is None:
            lines.append(f"| `{path}` | missing | | | | | | | |")
            continue
        c = entry["counts"]
        judged = c["killed"] + c["survived"]
        score = f"{100 * c['killed'] / judged:.1f} %" if judged else "n/a"
        if state == "stale":
            score = f"(was {score}; the file changed since)"
        elif state == "partial":
            score = (f"(so far {score}, {len(entry['done'])} of {c['generated']} run; "
                     "--resume goes on)")
        lines.append(f"| `{path}` | {state} | {c['generated']} | {c['killed']} | "
                     f"{c['survived']} | {c['equivalent']} | {c['invalid']} | {score} | "
                     f"{entry['date']} |")
    current = [r for r in rows if r[1] == "current"]
    complete = len(current) == len(rows)
    judged = totals["killed"] + totals["survived"]
    score = 100 * totals["killed"] / judged if judged else 0.0
    lines += ["", f"{len(current)} of {len(rows)} files current, {totals['generated']} mutants: "
              f"{totals['killed']} killed, {totals['survived']} survived, "
              f"{totals['equivalent']} equivalent, {totals['invalid']} not compiling; score "
              f"over the current files {score:.1f} %."]
    lines.append("The whole set is in the ledger and current: this is its full run's score." if
                 complete else "The set is NOT complete: the missing, stale and partial files "
                 "above need a full run (scripts/mutation --fast-build --files FILE, or --resume "
                 "for a partial one) before this is the whole set's score.")
    lines += ["", "Survivors of the current files:", ""]
    lines += [f"- `{p}:{line}`: `{before}` → `{after}`" for p, line, before, after in survivors] \
        or ["- none"]
    return lines, complete, score
