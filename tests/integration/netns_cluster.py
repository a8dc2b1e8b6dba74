"""A cluster of hosts on one machine, for tests that need real hosts and real faults.

Each host is a Linux network namespace with its own address and, for every process launched in
it, its own hostname (a UTS namespace); the hosts are joined by a bridge that lives in a
namespace of its own, so nothing is added to the machine's network. Open MPI reaches the hosts
over TCP through an rsh agent that enters the host's namespaces, as ssh would log in to a node.
Name resolution comes from /etc/netns/<namespace>/hosts, which `ip netns exec` puts in place of
/etc/hosts for that namespace only: the machine's /etc/hosts is never touched.

A cluster may have several leaves: `leaves=[[0, 1, 2], [3, 4, 5]]` gives each group of hosts a
bridge of its own, and joins every leaf bridge to a spine bridge by a veth pair, its uplink, so
traffic between leaves crosses two switches and a cable as on a real fabric.

Faults are made with tc, which this kernel has with htb, tbf and u32 (no netem, no prio):
- a slow host: tbf on the host's interface and on its bridge port (both directions);
- a slow leaf uplink: tbf on both ends of the veth between the leaf's bridge and the spine, so
  every path that leaves the leaf is slow and every path inside it is not;
- a slow link between two hosts only: an htb class for the other host's address (u32 filter)
  on each of the two, every other destination in an unlimited default class.

Needs root, `ip`, `tc`, `unshare` and `mpirun`; `skip_reason()` says what is missing. Every
namespace and file it made is removed on close(), also after a failed start; use it as a
context manager.

    with NetnsCluster(4) as cluster:
        cluster.slow_link(1, 2, "20mbit")
        subprocess.run(cluster.mpirun([BIN, "run", suite, ...]), ...)
"""

import os
import shutil
import subprocess
import tempfile

_SUBNET = "10.77.0"
_UNLIMITED = "10gbit"


def _run(*command):
    subprocess.run(command, check=True, capture_output=True, text=True)


def skip_reason():
    """Why the cluster cannot be made here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "tc", "unshare", "mpirun"):
        if not shutil.which(tool):
            return f"{tool} is not installed"
    probe = f"ccprobe{os.getpid()}"
    try:
        _run("ip", "netns", "add", probe)
        _run("ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev", "lo", "root", "handle",
             "1:", "htb", "default", "1")
    except (subprocess.CalledProcessError, OSError) as error:
        detail = getattr(error, "stderr", "") or str(error)
        return f"cannot make a network namespace with an htb qdisc: {detail.strip()}"
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


class NetnsCluster:
    """`hosts` hosts named node0.. (or `names`), each with one veth to its leaf's bridge: one
    bridge for all unless `leaves` groups the hosts' indices under several."""

    def __init__(self, hosts=4, names=None, leaves=None):
        self.names = list(names) if names else [f"node{i}" for i in range(hosts)]
        self.leaves = [list(leaf) for leaf in leaves] if leaves else [list(range(len(self.names)))]
        if sorted(i for leaf in self.leaves for i in leaf) != list(range(len(self.names))):
            raise ValueError(f"leaves {leaves}: every host index exactly once")
        tag = f"cc{os.getpid()}x{id(self) % 10000}"
        self.switch = f"{tag}sw"
        self.namespaces = [f"{tag}h{i}" for i in range(len(self.names))]
        self.addresses = [f"{_SUBNET}.{i + 1}" for i in range(len(self.names))]
        self.directory = None
        self.agent = None
        self.hostfile = None
        self._made = []

    # ---- life cycle ---------------------------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def start(self):
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self):
        self.directory = tempfile.mkdtemp(prefix="commcert-netns-")
        _run("ip", "netns", "add", self.switch)
        self._made.append(self.switch)
        leaf_of = {}
        for leaf, members in enumerate(self.leaves):
            _run("ip", "-n", self.switch, "link", "add", f"br{leaf}", "type", "bridge")
            _run("ip", "-n", self.switch, "link", "set", f"br{leaf}", "up")
            leaf_of.update((i, leaf) for i in members)
        if len(self.leaves) > 1:
            _run("ip", "-n", self.switch, "link", "add", "spine", "type", "bridge")
            _run("ip", "-n", self.switch, "link", "set", "spine", "up")
            for leaf in range(len(self.leaves)):
                # The uplink: up<leaf> on the leaf's bridge, dn<leaf> on the spine.
                _run("ip", "-n", self.switch, "link", "add", f"up{leaf}", "type", "veth", "peer",
                     "name", f"dn{leaf}")
                _run("ip", "-n", self.switch, "link", "set", f"up{leaf}", "master", f"br{leaf}",
                     "up")
                _run("ip", "-n", self.switch, "link", "set", f"dn{leaf}", "master", "spine", "up")
        hosts_lines = "127.0.0.1 localhost\n" + "".join(
            f"{address} {name}\n" for address, name in zip(self.addresses, self.names))
        for i, (ns, address) in enumerate(zip(self.namespaces, self.addresses)):
            _run("ip", "netns", "add", ns)
            self._made.append(ns)
            port = f"p{i}"
            _run("ip", "-n", self.switch, "link", "add", port, "type", "veth", "peer", "name",
                 "eth0", "netns", ns)
            _run("ip", "-n", self.switch, "link", "set", port, "master", f"br{leaf_of[i]}",
                 "up")
            _run("ip", "-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
            _run("ip", "-n", ns, "link", "set", "eth0", "up")
            _run("ip", "-n", ns, "link", "set", "lo", "up")
            etc = f"/etc/netns/{ns}"
            os.makedirs(etc, exist_ok=True)
            with open(os.path.join(etc, "hosts"), "w") as f:
                f.write(hosts_lines)
        self.hostfile = os.path.join(self.directory, "hostfile")
        with open(self.hostfile, "w") as f:
            f.writelines(f"{name} slots=1\n" for name in self.names)
        self.agent = os.path.join(self.directory, "enter-host")
        namespace_of = " ".join(f"{n}) ns={ns};;" for n, ns in zip(self.names, self.namespaces))
        with open(self.agent, "w") as f:
            # Like ssh: the remote command is the arguments joined, run by a shell on the host.
            f.write("#!/bin/sh\n"
                    "# rsh agent for Open MPI: runs a command on a host of the namespace cluster\n"
                    f'host=$1; shift\ncase "$host" in {namespace_of} '
                    '*) echo "no such host: $host" >&2; exit 255;; esac\n'
                    'exec ip netns exec "$ns" unshare --uts sh -c '
                    '\'hostname "$1"; shift; eval "$*"\' enter-host "$host" "$@"\n')
        os.chmod(self.agent, 0o755)

    def close(self):
        for ns in reversed(self._made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
            shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)
        self._made = []
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    # ---- running ------------------------------------------------------------------------------

    def on_host(self, index, command):
        """`command` (a list) run on host `index`, with its hostname and network."""
        return ["ip", "netns", "exec", self.namespaces[index], "unshare", "--uts", "sh", "-c",
                'hostname "$1"; shift; exec "$@"', "on-host", self.names[index], *command]

    def mpirun(self, command, mpirun_args=()):
        """An mpirun on host 0 launching `command` once on every host, over TCP on eth0."""
        return self.on_host(0, [
            "mpirun", "--allow-run-as-root", "--hostfile", self.hostfile,
            "-np", str(len(self.names)), "--map-by", "node",
            "--mca", "plm_rsh_agent", self.agent, "--mca", "plm_rsh_no_tree_spawn", "1",
            "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "eth0",
            "--mca", "oob_tcp_if_include", "eth0", "--mca", "pml", "ob1",
            # The hosts share this machine's cores: a rank that spins waiting for a message takes
            # the CPU its partner (or the kernel delivering the bytes) needs. Spinning, healthy
            # pairs stalled for 20-40 ms per operation on a loaded 2-core machine and healthy
            # hosts were quarantined in 9 of 10 runs; yielding, 0 of 12 (docs/localization.md).
            "--mca", "mpi_yield_when_idle", "1",
            *mpirun_args, *command])

    # ---- faults -------------------------------------------------------------------------------

    def slow_host(self, index, rate):
        """Every byte to and from host `index` at `rate` (tc syntax, e.g. "50mbit")."""
        for args in (("-n", self.namespaces[index], "dev", "eth0"),
                     ("-n", self.switch, "dev", f"p{index}")):
            _run("tc", args[0], args[1], "qdisc", "replace", *args[2:], "root", "tbf",
                 "rate", rate, "burst", "32kbit", "latency", "400ms")

    def slow_link(self, a, b, rate):
        """Traffic between hosts `a` and `b` at `rate`; each keeps full speed to the others."""
        self.slow_links([(a, b)], rate)

    def slow_links(self, pairs, rate):
        """Traffic between the two hosts of every pair in `pairs` at `rate` (each pair shaped on
        its own, as a slow cable would be); every other path keeps full speed. Replaces the
        faults on the hosts it touches: one htb per host, one u32 filter per slow partner."""
        partners = {}
        for a, b in pairs:
            partners.setdefault(a, set()).add(b)
            partners.setdefault(b, set()).add(a)
        for source, destinations in sorted(partners.items()):
            ns = ["-n", self.namespaces[source]]
            subprocess.run(["tc", *ns, "qdisc", "del", "dev", "eth0", "root"],
                           capture_output=True)
            _run("tc", *ns, "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb",
                 "default", "1")
            _run("tc", *ns, "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:1",
                 "htb", "rate", _UNLIMITED)
            for minor, destination in enumerate(sorted(destinations), 2):
                # A class per partner: the partners do not share one slow pipe.
                _run("tc", *ns, "class", "add", "dev", "eth0", "parent", "1:", "classid",
                     f"1:{minor:x}", "htb", "rate", rate, "ceil", rate)
                _run("tc", *ns, "filter", "add", "dev", "eth0", "parent", "1:", "protocol",
                     "ip", "prio", "1", "u32", "match", "ip", "dst",
                     f"{self.addresses[destination]}/32", "flowid", f"1:{minor:x}")

    def slow_uplink(self, leaf, rate):
        """Every byte between leaf `leaf` and the spine at `rate`, both ways: a slow leaf uplink
        or spine port. Paths inside the leaf keep full speed."""
        if len(self.leaves) < 2:
            raise ValueError("slow_uplink: the cluster has one leaf and no spine")
        for port in (f"up{leaf}", f"dn{leaf}"):
            _run("tc", "-n", self.switch, "qdisc", "replace", "dev", port, "root", "tbf", "rate",
                 rate, "burst", "32kbit", "latency", "400ms")

    def clear_faults(self):
        for i, ns in enumerate(self.namespaces):
            subprocess.run(["tc", "-n", ns, "qdisc", "del", "dev", "eth0", "root"],
                           capture_output=True)
            subprocess.run(["tc", "-n", self.switch, "qdisc", "del", "dev", f"p{i}", "root"],
                           capture_output=True)
        if len(self.leaves) > 1:
            for leaf in range(len(self.leaves)):
                for port in (f"up{leaf}", f"dn{leaf}"):
                    subprocess.run(["tc", "-n", self.switch, "qdisc", "del", "dev", port, "root"],
                                   capture_output=True)
