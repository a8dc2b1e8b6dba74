"""A real Slurm cluster on this host for tests: one slurmctld and several slurmd, each slurmd
standing for one node (Debian's Slurm is built with --enable-multiple-slurmd), with a private munge
daemon and socket, per-node TmpFS (pmix needs it) and free ports, so it coexists with anything else
on the machine. Everything it starts is stopped again: its jobs are cancelled, its daemons stopped by
PID, and any job process left over (slurmstepd outlives slurmd) is found by the SLURM_CONF of this
cluster in its environment and killed.

    with SlurmCluster(nodes=4) as cluster:
        cluster.run(["srun", "-N4", "hostname"])
"""

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

DAEMONS = ("slurmctld", "slurmd", "munged")


def missing_requirements():
    """Why this machine cannot run the cluster, or None."""
    if os.geteuid() != 0:
        return "needs root (slurmd runs jobs as their users)"
    for program in ("slurmctld", "slurmd", "srun", "sinfo", "scontrol"):
        if not shutil.which(program):
            return f"{program} not found (scripts/bootstrap installs slurm-wlm)"
    if not Path("/usr/sbin/munged").exists() or not Path("/etc/munge/munge.key").exists():
        return "munge not installed (scripts/bootstrap installs munge)"
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "no munge user"
    return None


def free_port_block(count):
    """A base port such that base..base+count are free now."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count > 65000:
            continue
        try:
            for port in range(base, base + count + 1):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise RuntimeError("no free block of ports")


class SlurmCluster:
    def __init__(self, nodes=4, cpus_per_node=2, extra_config=""):
        self.node_names = [f"node{i}" for i in range(1, nodes + 1)]
        self.cpus_per_node = cpus_per_node
        self.extra_config = extra_config
        self.root = None
        self.pids = []

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        self.root = Path(tempfile.mkdtemp(prefix="commcert-slurm-"))
        os.chmod(self.root, 0o755)
        self.conf = self.root / "slurm.conf"
        self._start_munge()
        base = free_port_block(len(self.node_names) + 1)
        for sub in ("state", "log", *(f"spool/{n}" for n in self.node_names),
                    *(f"tmp/{n}" for n in self.node_names)):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.conf.write_text(self._config(base))
        self._spawn(["slurmctld", "-f", str(self.conf), "-i"], self.root / "slurmctld.pid")
        for name in self.node_names:
            self._spawn(["slurmd", "-f", str(self.conf), "-N", name], self.root / f"slurmd-{name}.pid")
        self.wait_until(lambda: all(self.state(n) == "IDLE" for n in self.node_names), 60,
                        "nodes did not become idle")

    def stop(self):
        if self.root is None:
            return
        self._cancel_jobs()
        for pid in reversed(self.pids):
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        for pid in self.pids:
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.05)
            if _alive(pid):
                os.kill(pid, 9)
        self.pids.clear()
        self._kill_leftover_job_processes()
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def _cancel_jobs(self, seconds=15):
        try:
            self.run(["scancel", "--full", "--user", pwd.getpwuid(os.getuid()).pw_name], timeout=30)
            self.wait_until(lambda: not self.run(["squeue", "-h"], timeout=30).stdout.strip(),
                            seconds, "jobs did not end")
        except (AssertionError, subprocess.SubprocessError):
            pass  # the processes are killed below whatever state the controller is in

    def _kill_leftover_job_processes(self):
        marker = f"SLURM_CONF={self.conf}".encode() + b"\0"
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if marker not in f.read() + b"\0":
                        continue
                os.kill(int(entry), 9)
            except (OSError, ProcessLookupError):
                pass

    # -- use -------------------------------------------------------------------------------
    def environment(self, extra=None):
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf)
        env.update(extra or {})
        return env

    def run(self, command, env=None, timeout=120, check=False):
        return subprocess.run(command, env=self.environment(env), capture_output=True, text=True,
                              timeout=timeout, check=check)

    def node(self, name):
        """`scontrol show node NAME` as a dict (State, Reason, ...)."""
        out = self.run(["scontrol", "-o", "show", "node", name], check=True).stdout
        fields = {}
        for token in out.split():
            if "=" in token:
                key, value = token.split("=", 1)
                fields[key] = value
        # Reason may contain spaces: take everything after "Reason=" up to the next known key.
        if "Reason=" in out:
            reason = out.split("Reason=", 1)[1]
            fields["Reason"] = reason.split(" [", 1)[0].strip()
        return fields

    def state(self, name):
        """Base state with flags, e.g. IDLE, IDLE+DRAIN, ALLOCATED (without the '*' of no response)."""
        return self.node(name).get("State", "").rstrip("*")

    def reasons(self):
        """{node: reason} of `sinfo -R`."""
        out = self.run(["sinfo", "-R", "-h", "-o", "%N|%E"], check=True).stdout
        reasons = {}
        for line in out.splitlines():
            nodes, reason = line.split("|", 1)
            for name in expand_hostlist(nodes):
                reasons[name] = reason
        return reasons

    def drain(self, name, reason):
        self.run(["scontrol", "update", f"NodeName={name}", "State=DRAIN", f"Reason={reason}"], check=True)

    def wait_until(self, predicate, seconds, message):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if predicate():
                    return
            except subprocess.CalledProcessError:
                pass
            time.sleep(0.2)
        logs = "\n".join(p.read_text()[-2000:] for p in (self.root / "log").glob("*.log"))
        raise AssertionError(f"{message}\n{logs}")

    # -- internals -------------------------------------------------------------------------
    def _start_munge(self):
        munge_dir = self.root / "munge"
        munge_dir.mkdir()
        user = pwd.getpwnam("munge")
        os.chown(munge_dir, user.pw_uid, user.pw_gid)
        os.chmod(munge_dir, 0o755)
        self.munge_socket = munge_dir / "munge.socket.2"
        pid_file = munge_dir / "munged.pid"
        subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged",
                        f"--socket={self.munge_socket}", f"--pid-file={pid_file}",
                        f"--log-file={munge_dir / 'munged.log'}", f"--seed-file={munge_dir / 'seed'}"],
                       check=True, capture_output=True, text=True)
        self.pids.append(_read_pid(pid_file))

    def _spawn(self, command, pid_file):
        subprocess.run(command, check=True, capture_output=True, text=True, env=self.environment())
        self.pids.append(_read_pid(pid_file))

    def _config(self, base):
        d = self.root
        host = socket.gethostname()
        last = base + len(self.node_names)
        return f"""ClusterName=commcert-test
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort={base}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.munge_socket}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd-%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd-%n.log
TmpFS={d}/tmp/%n
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdTimeout=60
MailProg=/bin/true
{self.extra_config}
NodeName=node[1-{len(self.node_names)}] NodeHostname={host} NodeAddr=127.0.0.1 Port=[{base + 1}-{last}] CPUs={self.cpus_per_node} RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
"""


def expand_hostlist(text):
    """node[1-3],node7 -> [node1, node2, node3, node7] (enough of Slurm's syntax for tests)."""
    names = []
    for part in _split_top_level(text):
        if "[" not in part:
            names.append(part)
            continue
        prefix, ranges = part[:-1].split("[", 1)
        for piece in ranges.split(","):
            if "-" in piece:
                low, high = piece.split("-")
                names += [f"{prefix}{i:0{len(low)}d}" for i in range(int(low), int(high) + 1)]
            else:
                names.append(prefix + piece)
    return names


def _split_top_level(text):
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char == "["
        depth -= char == "]"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if current:
        parts.append(current)
    return parts


def _read_pid(path, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            text = Path(path).read_text().strip()
            if text:
                return int(text)
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"no pid file {path}")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of ours counts as gone
        waited, _ = os.waitpid(pid, os.WNOHANG)
        return waited == 0
    except ChildProcessError:
        return True
