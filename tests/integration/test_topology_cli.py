"""`--topology FILE` on `commcert certify` and `commcert run`, and `scontrol show topology` in a
Slurm job (issue 31): a suspect switch path named by its switch from each format, a malformed file
refused with one line naming file:line before anything runs, scontrol's topology taken without a
file, a note where scontrol gives none, and `--apply slurm` draining nobody for a switch path.
Runs in every configuration (no MPI, no Slurm: scontrol is a stand-in script on PATH)."""

import json
import os
import shutil
import stat
import subprocess
import tempfile
import unittest

BIN = os.environ["COMMCERT_BIN"]
SOURCE = os.environ["COMMCERT_SOURCE_DIR"]
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "topology")
NODES = [f"gpu00{i}" for i in range(1, 7)]
LEFT = {"gpu001", "gpu002"}  # leaf-a of the fixtures; the others hang from leaf-b and leaf-c
GIB = 1 << 30
NAMED = ("suspect switch path leaf-a <-> spine-1, spine-2 (uplink of leaf-a): 2 nodes under leaf-a "
         "(gpu001, gpu002) slow with each of the 4 nodes outside it, fine with each other")
UNNAMED = ("suspect switch path between {gpu001, gpu002} and {gpu003, gpu004, gpu005, gpu006}: "
           "every pair across is slow")
BASELINE = """schema: 1
sku: topology-test
required: [collective.allreduce]
fleet: {enabled: false}
checks:
  collective.allreduce:
    min_bytes: 1G
    busbw_gb_per_s:
      cluster: {floor: 100}
"""


def record(kind, host, **fields):
    r = {"schema": 1, "run_id": "r1", "kind": kind, "status": "ok", "time": "2026-11-21T10:00:00.000Z",
         "host": host, "rank": 0, "local_rank": 0, "gpu": None}
    r.update(fields)
    return r


def collective(busbw_gb, scope, nodes, listed=False):
    c = record("collective", nodes[0], backend="mpi", collective="allreduce", dtype="float", redop="sum",
               root=None, bytes=GIB, count=GIB // 4, nranks=len(nodes), nodes=len(nodes), scope=scope,
               in_place=False, cycle=0, check=True, iterations=20, busbw_bytes_per_s=busbw_gb * 1e9,
               rank_time={"min_s": 0.9, "median_s": 1.0, "max_s": 1.1},
               straggler={"rank": 0, "host": nodes[0], "time_s": 0.98, "lead_s": 0.02},
               wrong_elements=0, wrong_ranks=[])
    if scope == "pairs":
        c.update(group_nodes=list(nodes), round=0, group=0)
        if listed:
            c["pair_list"] = True
    return c


def slow_leaf_records():
    """The cluster allreduce below its floor; every pair measured, slow between leaf-a's nodes and
    the others, fine within; two pairs across slow again when measured again."""
    ranks = [{"rank": i, "process": i, "node": n, "hostname": "vm", "local_rank": 0, "pid": 100 + i,
              "device": "host", "gpu": None} for i, n in enumerate(NODES)]
    records = [record("run", NODES[0], command="sweep", backend="mpi", ranks=ranks),
               collective(60.0, "cluster", NODES)]
    for i, a in enumerate(NODES):
        for b in NODES[i + 1:]:
            records.append(collective(12.0 if (a in LEFT) != (b in LEFT) else 48.0, "pairs", [a, b]))
    records.append(collective(11.0, "pairs", ["gpu001", "gpu003"], listed=True))
    records.append(collective(13.0, "pairs", ["gpu002", "gpu005"], listed=True))
    return records


class TopologyCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="commcert-topology-cli-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.baseline = self.write("baseline.yaml", BASELINE)
        self.run_dir = os.path.join(self.tmp, "run")
        self.write("run/records.jsonl", "".join(json.dumps(r) + "\n" for r in slow_leaf_records()))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def certify(self, *args, env=None):
        return subprocess.run([BIN, "certify", self.run_dir, "--baseline", self.baseline, *args],
                              capture_output=True, text=True, timeout=60, env=env or self.env)

    def fake_scontrol(self, topology_script):
        """A directory holding an `scontrol` that answers `show topology` with `topology_script`
        (shell), `-o show node` with the six nodes (gpu004 drained by commcert before) and logs
        every call; returns the environment of a Slurm job that finds it first on PATH."""
        bin_dir = os.path.join(self.tmp, "bin")
        os.makedirs(bin_dir, exist_ok=True)
        log = os.path.join(self.tmp, "scontrol.log")
        nodes = "\n".join(
            f"NodeName={n} State={'IDLE+DRAIN' if n == 'gpu004' else 'IDLE'} "
            + ("Reason=commcert: old [root@2026-11-20T10:00:00]" if n == "gpu004" else "Reason=(null)")
            for n in NODES)
        script = f"""#!/bin/sh
echo "$@" >> {log}
if [ "$1" = show ] && [ "$2" = topology ]; then
{topology_script}
elif [ "$1" = -o ] && [ "$2" = show ] && [ "$3" = node ]; then
cat <<'EOF'
{nodes}
EOF
else
  echo "unexpected: $@" >&2; exit 9
fi
"""
        path = os.path.join(bin_dir, "scontrol")
        with open(path, "w") as f:
            f.write(script)
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
        env = dict(self.env, PATH=bin_dir + os.pathsep + self.env.get("PATH", ""), SLURM_JOB_ID="42")
        return env, log

    def test_each_format_names_the_switch(self):
        for name in ("small_fabric.topology.conf", "small_fabric.scontrol.txt",
                     "small_fabric.ibnetdiscover.txt"):
            with self.subTest(topology=name):
                proc = self.certify("--topology", os.path.join(FIXTURES, name))
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                self.assertIn(NAMED, proc.stdout)
                self.assertEqual(proc.stdout.count("suspect switch path"), 1, proc.stdout)
                self.assertNotIn("topology.unavailable", proc.stdout)
                self.assertNotIn("localization.topology_mismatch", proc.stdout)

    def test_without_a_topology_the_groups_are_named_by_their_nodes(self):
        proc = self.certify()
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn(UNNAMED, proc.stdout)
        self.assertNotIn("topology.unavailable", proc.stdout)

    def assert_one_line_error(self, proc, start):
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertIn(start, lines[0])

    def test_a_malformed_topology_is_one_line_naming_file_and_line_before_anything_runs(self):
        bad_conf = self.write("bad.conf", "SwitchName=leaf-a Nodes=gpu[001-002]\nSwitchName=leaf-b Nodes=gpu[003-]\n")
        bad_ib = self.write("bad.ibnet", "#\nvendid=0x2c9\nSwitch\t64 \"S-0002c90300ffee01\"\t\t# \"spine-1\" "
                                        "enhanced port 0 lid 3 lmc 0\nnot ibnetdiscover\n")
        missing = os.path.join(self.tmp, "absent.conf")
        for path, start in ((bad_conf, f"{bad_conf}:2: "), (bad_ib, f"{bad_ib}:4: "), (missing, missing)):
            with self.subTest(topology=path):
                self.assert_one_line_error(self.certify("--topology", path), start)
                self.assertFalse(os.path.exists(os.path.join(self.run_dir, "verdict.json")))
                # `run` refuses it before any stage (and with --plan before printing one).
                work = os.path.join(self.tmp, "work")
                os.makedirs(work, exist_ok=True)
                for extra in (["--plan"], []):
                    proc = subprocess.run([BIN, "run", "ci", "--topology", path, *extra], cwd=work,
                                          capture_output=True, text=True, timeout=60, env=self.env)
                    self.assert_one_line_error(proc, start)
                    self.assertEqual(proc.stdout, "")
                self.assertEqual(os.listdir(work), [])

    def test_in_a_slurm_job_scontrol_show_topology_names_the_switch(self):
        with open(os.path.join(FIXTURES, "small_fabric.scontrol.txt")) as f:
            text = f.read()
        env, log = self.fake_scontrol(f"cat <<'EOF'\n{text}EOF")
        proc = self.certify(env=env)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn(NAMED, proc.stdout)
        with open(log) as f:
            self.assertEqual(f.read().splitlines(), ["show topology"])
        # A file given wins: scontrol is not asked.
        os.remove(log)
        proc = self.certify("--topology", os.path.join(FIXTURES, "small_fabric.topology.conf"), env=env)
        self.assertIn(NAMED, proc.stdout)
        self.assertFalse(os.path.exists(log))

    def test_when_scontrol_gives_no_topology_one_note_says_so_and_judging_goes_on(self):
        for name, script, said in (
                ("fails", "echo 'slurm_load_topo error: Unable to contact slurm controller' >&2; exit 1",
                 "failed with status 1 (slurm_load_topo error: Unable to contact slurm controller)"),
                ("prints nothing", "true", "printed nothing")):
            with self.subTest(scontrol=name):
                env, _ = self.fake_scontrol(script)
                proc = self.certify("--format", "json", env=env)
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                verdict = json.loads(proc.stdout)
                notes = [n for n in verdict["notes"] if n["code"] == "topology.unavailable"]
                self.assertEqual(len(notes), 1, verdict["notes"])
                self.assertIn(said, notes[0]["message"])
                reasons = [r for r in verdict["nodes"][0]["reasons"]
                           if r["code"] == "localization.suspect_switch"]
                self.assertEqual(reasons[0]["link"]["path"],
                                 "between {gpu001, gpu002} and {gpu003, gpu004, gpu005, gpu006}")

    def test_apply_slurm_drains_nobody_for_a_suspect_switch_path(self):
        env, log = self.fake_scontrol(f"cat {os.path.join(FIXTURES, 'small_fabric.scontrol.txt')}")
        proc = self.certify("--apply", "slurm", "--dry-run", env=env)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn(NAMED, proc.stdout)
        actions = [line for line in proc.stdout.splitlines()
                   if line.startswith(("drain", "resume", "leave", "FAILED"))]
        self.assertFalse([a for a in actions if a.startswith("drain")], proc.stdout)
        # Certified with the warning: the node commcert drained before is resumed, as any
        # certified node would be.
        self.assertIn("resume gpu004 (dry run)", actions)
        with open(log) as f:
            self.assertEqual(f.read().splitlines(), ["show topology", "-o show node"])
        with open(os.path.join(self.run_dir, "verdict.json")) as f:
            verdict = json.load(f)
        self.assertEqual({n["state"] for n in verdict["nodes"]}, {"certified"})


if __name__ == "__main__":
    unittest.main()
