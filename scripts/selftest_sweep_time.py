"""The self-test's sweep-time step in the report (selftest-report): a whole `commcert sweep
allreduce` against a whole `all_reduce_perf` over the same sizes (8 B to the self-test's
sweep_time_maxbytes, factor 2), both with their default flags, in interleaved rounds.

Reads the rounds' steps (`sweep-time/commcert-K`, `sweep-time/all_reduce_perf-K` in steps.tsv:
exit status and wall seconds as the script timed them), our records
(results/sweep-time-K/records.jsonl) and nccl-tests' tables
(nccl-tests/all_reduce_perf-sweep-time-K.txt). Judges two targets: the median of our wall times
over the median of theirs, and at a few sizes each side's relative spread across the rounds of
the out-of-place time per operation, ours no wider than theirs.
"""

import statistics

from selftest_common import FAIL, PASS, fmt, read_nccl_tests, read_records, size_text

STEP = "sweep-time"
WALL_TARGET = 0.5  # median wall time of our whole sweep / nccl-tests', same sizes, same GPUs
SHOWN_SIZES = (8, 1 << 20, 64 << 20)  # where the spreads are compared, with the largest size


def size_bytes(text):
    """'8G', '512M', '64K' or '8' as bytes; None when it is none of these."""
    text = (text or "").strip()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    return int(digits) * scale if digits.isdigit() else None


def relative_spread(values):
    """(max - min) / median of the rounds' values; None with fewer than two or a median of 0."""
    if len(values) < 2:
        return None
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle > 0 else None


def pct(x):
    return "n/a" if x is None else f"{x * 100:.2f}%"


def run_problem(who, round_, step):
    """What keeps one process of a round from being timed, or None."""
    if step is None:
        return f"round {round_}: {who} did not run"
    if step.status == "interrupted":
        return f"round {round_}: {who} interrupted"
    if step.killed:
        return f"round {round_}: {who} killed at its bound of {fmt(step.bound, 0)} s"
    if step.rc != 0:
        return f"round {round_}: {who} exit {step.status}"
    return None


def ended_well(step):
    return step is not None and step.rc == 0


class Round:
    """One round: our process and theirs, their wall seconds and out-of-place times per size (only
    from a process that ended with exit 0: a killed one's records are partial)."""

    def __init__(self, report, number, runs):
        self.number = number
        self.ours = runs.get(f"commcert-{number}")
        self.theirs = runs.get(f"all_reduce_perf-{number}")
        self.problems = [p for p in (run_problem("commcert", number, self.ours),
                                     run_problem("all_reduce_perf", number, self.theirs)) if p]
        records = read_records(report.out / "results" / f"{STEP}-{number}" / "records.jsonl", report.problems)
        collectives = [r for r in records if r.get("kind") == "collective"]
        self.our_times = {r.get("bytes"): r["time_s"] for r in collectives
                          if ended_well(self.ours) and r.get("status") == "ok" and r.get("collective") == "allreduce"
                          and not r.get("in_place") and r.get("cycle", 0) == 0 and r.get("time_s") is not None}
        for r in collectives:
            if r.get("status") in ("fail", "error", "timeout"):
                self.problems.append(f"round {number}: ours {size_text(r.get('bytes') or 0)} {r.get('status')}")
        table = read_nccl_tests(report.out / "nccl-tests" / f"all_reduce_perf-{STEP}-{number}.txt")
        self.their_times = {t["bytes"]: t["time_us"] * 1e-6 for t in table
                            if ended_well(self.theirs) and not t["in_place"] and t["time_us"] is not None}
        for t in table:
            if t["wrong"]:
                self.problems.append(f"round {number}: nccl-tests {size_text(t['bytes'])} {t['wrong']:g} wrong")
        if ended_well(self.theirs) and not table:
            self.problems.append(f"round {number}: all_reduce_perf printed no table")

    @property
    def timed(self):
        """Both processes ended by themselves with exit 0: their wall times compare."""
        return all(ended_well(s) and s.seconds is not None for s in (self.ours, self.theirs))


def section(report):
    """Judges the step (report.judge) and writes its section (report.w)."""
    p = report.params
    report.w(f"### A whole sweep's wall time beside nccl-tests' (target ≤ {WALL_TARGET}, spread ≤ theirs)")
    report.w()
    runs = {name.split("/", 1)[1]: step for name, step in report.steps.items() if name.startswith(STEP + "/")}
    if not runs:
        verdict = report.ran_verdict(STEP) or (FAIL, "no sweep-time run")
        report.judge(STEP, *verdict)
        report.w(f"Not timed: {verdict[1]}.")
        report.w()
        return
    numbers = sorted({int(key.rsplit("-", 1)[1]) for key in runs if key.rsplit("-", 1)[1].isdigit()})
    rounds = [Round(report, n, runs) for n in numbers]
    problems = [problem for r in rounds for problem in r.problems]
    largest = size_bytes(p.get("sweep_time_maxbytes"))
    largest_text, planned = p.get("sweep_time_maxbytes"), p.get("sweep_time_rounds") or len(rounds)
    report.w(f"`commcert sweep allreduce --backend nccl -g {report.ngpus} -b 8 -e {largest_text} -f 2` against "
             f"`all_reduce_perf -b 8 -e {largest_text} -f 2 -g {report.ngpus}`, each with its defaults otherwise, "
             f"as whole processes timed by the self-test, in {planned} rounds of the two one after the other, "
             f"each process bounded at {p.get('sweep_time_bound_s', '?')} s. Targets: the median of our wall "
             f"times ≤ {WALL_TARGET} × the median of theirs; at each size below, our relative spread across the "
             "rounds ((max − min) / median of the out-of-place time per operation) no wider than theirs.")
    report.w()
    wall_ratio = wall_table(report, rounds)
    if wall_ratio is None:
        problems.append("no round where both processes ended with exit 0")
    elif wall_ratio > WALL_TARGET:
        problems.append(f"wall time {wall_ratio:.2f}× nccl-tests' (target ≤ {WALL_TARGET})")
    sizes = sorted({s for s in SHOWN_SIZES if largest is None or s <= largest} | ({largest} if largest else set()))
    problems += spread_table(report, rounds, sizes)
    if problems:
        report.judge(STEP, FAIL, "; ".join(problems[:6]))
    else:
        report.judge(STEP, PASS, f"wall {wall_ratio:.3f}× nccl-tests' (median of {len(rounds)} rounds), "
                                 f"spread no wider than theirs at {len(sizes)} sizes")


def wall_table(report, rounds):
    """Writes each round's wall times; returns the median ratio over the timed rounds, or None."""
    report.w("| round | commcert s | nccl-tests s | commcert / nccl-tests | |")
    report.w("|---|---|---|---|---|")
    for r in rounds:
        ours = r.ours.seconds if r.ours and r.ours.ran else None
        theirs = r.theirs.seconds if r.theirs and r.theirs.ran else None
        ratio = ours / theirs if r.timed and theirs else None
        note = "" if r.timed else "not timed: " + "; ".join(r.problems)
        report.w(f"| {r.number} | {fmt(ours, 2)} | {fmt(theirs, 2)} | {fmt(ratio, 3)} | {note} |")
    timed = [r for r in rounds if r.timed]
    if not timed:
        report.w()
        return None
    ours = statistics.median(r.ours.seconds for r in timed)
    theirs = statistics.median(r.theirs.seconds for r in timed)
    ratio = ours / theirs if theirs > 0 else None
    verdict = "n/a" if ratio is None else ("PASS" if ratio <= WALL_TARGET else "ABOVE TARGET")
    report.w(f"| median of {len(timed)} | {fmt(ours, 2)} | {fmt(theirs, 2)} | {fmt(ratio, 3)} | {verdict} |")
    report.w()
    return ratio


def spread_table(report, rounds, sizes):
    """Writes each size's median time and spread on both sides; returns the sizes' problems."""
    problems = []
    report.w("| size | commcert µs (median) | commcert spread | nccl-tests µs (median) | nccl-tests spread | |")
    report.w("|---|---|---|---|---|---|")
    for size in sizes:
        ours = [r.our_times[size] for r in rounds if size in r.our_times]
        theirs = [r.their_times[size] for r in rounds if size in r.their_times]
        our_spread, their_spread = relative_spread(ours), relative_spread(theirs)
        if our_spread is None or their_spread is None:
            verdict = "n/a"
            problems.append(f"{size_text(size)}: out-of-place time in {len(ours)} of our rounds and "
                            f"{len(theirs)} of theirs")
        elif our_spread <= their_spread:
            verdict = "PASS"
        else:
            verdict = "WIDER THAN THEIRS"
            problems.append(f"{size_text(size)}: our spread {pct(our_spread)} wider than nccl-tests' "
                            f"{pct(their_spread)}")
        report.w(f"| {size_text(size)} | {fmt(statistics.median(ours) * 1e6 if ours else None, 2)} | "
                 f"{pct(our_spread)} | {fmt(statistics.median(theirs) * 1e6 if theirs else None, 2)} | "
                 f"{pct(their_spread)} | {verdict} |")
    report.w()
    return problems
