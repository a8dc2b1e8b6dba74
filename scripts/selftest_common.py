"""What the self-test's report writer (selftest-report) and its step sections share: reading a
self-test directory (scripts/selftest's output), formatting figures, and the verdicts.

Installed beside selftest-report (libexec/commcert/ in the bundle), which imports it from there.
Python 3 standard library only: it runs on GPU nodes without package access.
"""

import json
import xml.etree.ElementTree as ElementTree

PASS, FAIL, NOT_RUN, NOT_AVAILABLE = "PASS", "FAIL", "NOT RUN", "NOT AVAILABLE"


# ---- reading ---------------------------------------------------------------------------------

def read_params(out):
    params = {}
    path = out / "selftest.params"
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                params[key.strip()] = value
    return params


class Step:
    def __init__(self, name, status, seconds, bound, detail):
        self.name, self.status, self.detail = name, status, detail
        self.seconds = float(seconds) if seconds not in ("", None) else None
        self.bound = float(bound) if bound not in ("", None) else None
        self.rc = int(status) if status.lstrip("-").isdigit() else None

    @property
    def ran(self):
        return self.rc is not None

    @property
    def killed(self):
        return self.rc in (124, 137)


def read_steps(out):
    steps = {}
    path = out / "steps.tsv"
    if not path.exists():
        return steps
    for line in path.read_text(errors="replace").splitlines()[1:]:
        fields = line.split("\t")
        if len(fields) < 5:
            continue
        steps[fields[0]] = Step(*fields[:5])
    return steps


def read_records(path, problems):
    records = []
    if not path.exists():
        return records
    lines = path.read_text(errors="replace").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            problems.append(f"`{path.parent.name}/records.jsonl` line {number} is not JSON"
                            + (" (truncated last line)" if number == len(lines) else ""))
    return records


def read_json(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def read_jsonl(path):
    rows = []
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return rows


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def read_nccl_tests(path):
    """Data rows of an nccl-tests table: {bytes, in_place: {time_us, busbw_gbps, wrong}}."""
    rows = []
    if not path.exists():
        return rows
    for line in path.read_text(errors="replace").splitlines():
        fields = line.split()
        if not fields or line.lstrip().startswith("#") or not fields[0].isdigit() or len(fields) < 10:
            continue
        size = int(fields[0])
        tail = fields[-8:]  # out-of-place time algbw busbw #wrong, in-place the same
        for in_place, part in ((False, tail[:4]), (True, tail[4:])):
            wrong = number(part[3])
            rows.append({"bytes": size, "in_place": in_place, "time_us": number(part[0]),
                         "busbw_gbps": number(part[2]), "wrong": wrong})
    return rows


def read_gtest(path):
    """{tests, failures, skipped, failed: [names], skipped_names: [names]} or None."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return None
    summary = {"tests": 0, "failures": 0, "skipped": 0, "failed": [], "skipped_names": []}
    for case in root.iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        summary["tests"] += 1
        if case.find("failure") is not None or case.find("error") is not None:
            summary["failures"] += 1
            summary["failed"].append(name)
        elif case.find("skipped") is not None or case.get("result") == "skipped" or case.get("status") == "notrun":
            summary["skipped"] += 1
            summary["skipped_names"].append(name)
    return summary


# ---- formatting ------------------------------------------------------------------------------

def size_text(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def text(x):
    """A record's value as JSON spells it (true, false, null)."""
    return json.dumps(x) if isinstance(x, bool) or x is None else str(x)


def fmt(x, digits=1, suffix=""):
    return "n/a" if x is None else f"{x:.{digits}f}{suffix}"


def tbps(x):
    return "n/a" if x is None else f"{x / 1e12:.3f} TB/s"


def gbps(x):
    return "n/a" if x is None else f"{x / 1e9:.1f} GB/s"


def pct(x):
    return "n/a" if x is None else f"{x * 100:.1f}%"


def judged(ratio, target):
    if ratio is None:
        return "n/a"
    return "PASS" if ratio >= target else "BELOW TARGET"


def pci(bus_id):
    """`00000000:1B:00.0` (CUDA, nvidia-smi) and `0000:1b:00.0` (records) as one key."""
    if not bus_id:
        return None
    domain, _, rest = str(bus_id).lower().partition(":")
    return f"{int(domain, 16):04x}:{rest}" if rest else str(bus_id).lower()


def log_tail(out, name, lines=15):
    path = out / "logs" / f"{name.replace('/', '-')}.log"
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    return text[-lines:]
