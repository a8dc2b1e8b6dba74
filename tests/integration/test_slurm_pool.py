"""`commcert run ci` under `srun`, `commcert certify --apply slurm` and scripts/slurm/ (the
acceptance batch script, the HealthCheckProgram, by hand and run by slurmd) against a real Slurm:
4 fake nodes (node1..node4) on this host, slurmctld, one slurmd per node and a private munge
(slurm_cluster.SlurmCluster), all stopped again at the end. Skipped where that cannot run (not
root, no Slurm or munge, no MPI).

Each rank's node identity is Slurm's name for its node (SLURMD_NODENAME), the way a cluster runs
it. A drained node takes no new job, yet it has to be measured again to be resumed: the main
scenario holds one allocation of all four nodes (`salloc --no-shell`) and runs both suites as
steps of it (a drain does not end the steps of an allocation that already holds the node), as an
acceptance job that re-tests after a repair would. Runs that must speak for some nodes only use a
local `mpirun` with one COMMCERT_NODE_NAME per rank, like any `--node-name` run.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from slurm_cluster import SlurmCluster, free_port_block, missing_requirements

BIN = os.environ["COMMCERT_BIN"]
SOURCE = os.environ["COMMCERT_SOURCE_DIR"]
BASELINE = os.path.join(SOURCE, "suites", "baselines", "cpu-mpi-ci.yaml")
MPIRUN = shutil.which("mpirun")
NODES = ["node1", "node2", "node3", "node4"]
HEALTHCHECK = os.path.join(SOURCE, "scripts", "slurm", "commcert-healthcheck")
ACCEPTANCE = os.path.join(SOURCE, "scripts", "slurm", "commcert-acceptance.sbatch")
SYSFS = os.path.join(SOURCE, "tests", "fixtures", "sysfs")


def skip_reason():
    if os.environ.get("COMMCERT_HAVE_MPI", "1") != "1":
        return "built without MPI"
    if MPIRUN is None:
        return "mpirun not found"
    return missing_requirements()


class SlurmPool(unittest.TestCase):
    cluster = None

    @classmethod
    def setUpClass(cls):
        reason = skip_reason()
        if reason:
            raise unittest.SkipTest(reason)
        cls.cluster = SlurmCluster(nodes=len(NODES))
        try:
            cls.cluster.start()
            pmix = cls.cluster.run(["srun", "--mpi=list"])
            if "pmix" not in pmix.stdout + pmix.stderr:
                raise unittest.SkipTest("srun has no pmix plugin")
        except BaseException:
            cls.cluster.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.cluster is not None:
            cls.cluster.stop()

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="commcert-slurm-pool-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        # Every test starts from an idle pool, whatever the previous one left.
        for node in NODES:
            if "DRAIN" in self.cluster.state(node):
                self.cluster.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"],
                                 check=True)
        self.wait_for_states({node: "IDLE" for node in NODES})

    # -- helpers -----------------------------------------------------------------------------
    def allocate(self):
        """An allocation of all four nodes, one task each, held until the test ends; returns its
        job id and the rank srun gives each node (block distribution: rank i on the i-th)."""
        grant = self.cluster.run(["salloc", "--no-shell", "-N4", "-n4", "--ntasks-per-node=1"],
                                 timeout=60)
        self.assertEqual(grant.returncode, 0, grant.stderr)
        job = re.search(r"Granted job allocation (\d+)", grant.stderr).group(1)
        self.addCleanup(self.cluster.run, ["scancel", job])
        placement = self.cluster.run(
            ["srun", f"--jobid={job}", "-N4", "-n4", "-l", "printenv", "SLURMD_NODENAME"],
            timeout=60)
        self.assertEqual(placement.returncode, 0, placement.stderr)
        rank_of = {}
        for line in placement.stdout.splitlines():
            rank, node = (part.strip() for part in line.split(":", 1))
            rank_of[node] = int(rank)
        self.assertEqual(sorted(rank_of), NODES, placement.stdout)
        return job, rank_of

    def srun(self, job, args, fault=None):
        """`srun --mpi=pmix commcert ARGS` as a step of allocation `job`, one rank per node, each
        rank named by Slurm (SLURMD_NODENAME); `fault` goes to every rank as COMMCERT_FAULT."""
        env = self.cluster.environment({"OMPI_MCA_mpi_yield_when_idle": "1"})
        env.pop("COMMCERT_NODE_NAME", None)  # identities must come from SLURMD_NODENAME
        env.pop("COMMCERT_FAULT", None)
        if fault:
            env["COMMCERT_FAULT"] = fault  # srun hands the environment to every rank
        return subprocess.run(["srun", f"--jobid={job}", "--mpi=pmix", "-N4", "-n4", BIN, *args],
                              env=env, capture_output=True, text=True, timeout=300)

    def srun_run_ci(self, job, run_id, fault=None):
        proc = self.srun(job, ["run", "ci", "--run-id", run_id, "--out", self.tmp, "-q"], fault)
        run_dir = os.path.join(self.tmp, run_id)
        self.assertTrue(os.path.exists(os.path.join(run_dir, "records.jsonl")),
                        f"srun run wrote no records (exit {proc.returncode}): {proc.stderr[-2000:]}")
        return run_dir, proc

    def srun_sweep(self, run_id, fault_on_node=None):
        """A 1 MiB allreduce on every node under srun (an allocation of its own): identities from
        Slurm. With `fault_on_node`, the rank srun places there corrupts its output."""
        job, rank_of = self.allocate()
        fault = f"corrupt:{rank_of[fault_on_node]}" if fault_on_node else None
        proc = self.srun(job, ["sweep", "allreduce", "-b", "1M", "-e", "1M", "-n", "5",
                               "--backend", "mpi", "--run-id", run_id, "--out", self.tmp, "-q"],
                         fault)
        self.cluster.run(["scancel", job], check=True)
        self.wait_for_states({node: "IDLE" for node in NODES})
        run_dir = os.path.join(self.tmp, run_id)
        self.assertTrue(os.path.exists(os.path.join(run_dir, "records.jsonl")),
                        f"srun sweep wrote no records (exit {proc.returncode}): {proc.stderr[-2000:]}")
        return run_dir, proc.returncode, rank_of

    def mpirun_sweep(self, run_id, nodes=NODES):
        """A clean 1 MiB allreduce with one local rank per node name (see the module comment)."""
        command = [MPIRUN, "--allow-run-as-root", "--oversubscribe"]
        for i, node in enumerate(nodes):
            if i:
                command.append(":")
            command += ["-np", "1", "env", f"COMMCERT_NODE_NAME={node}", BIN, "sweep", "allreduce",
                        "-b", "1M", "-e", "1M", "-n", "5", "--backend", "mpi", "--run-id", run_id,
                        "--out", self.tmp, "-q"]
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_mpi_yield_when_idle="1")
        env.pop("COMMCERT_FAULT", None)
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)
        self.assertEqual(proc.returncode, 0, proc.stdout[-2000:] + proc.stderr[-2000:])
        return os.path.join(self.tmp, run_id)

    def certify(self, run_dir, *args):
        return self.cluster.run([BIN, "certify", run_dir, "--baseline", BASELINE, "--apply", "slurm",
                                 *args], timeout=120)

    def wait_for_states(self, expected, seconds=30):
        self.cluster.wait_until(
            lambda: all(self.cluster.state(node) == state for node, state in expected.items()),
            seconds, f"nodes did not reach {expected}: "
                     f"{ {node: self.cluster.state(node) for node in expected} }")

    def assert_pool(self, drained):
        """Exactly the nodes of `drained` ({node: reason prefix}) are drained, the others idle."""
        reasons = self.cluster.reasons()
        self.assertEqual(sorted(reasons), sorted(drained), reasons)
        for node in NODES:
            state = self.cluster.state(node)
            if node in drained:
                self.assertIn("DRAIN", state, node)
                self.assertTrue(reasons[node].startswith(drained[node]), (node, reasons[node]))
                self.assertTrue(self.cluster.node(node)["Reason"].startswith(drained[node]))
            else:
                self.assertEqual(state, "IDLE", node)

    # -- scenarios ---------------------------------------------------------------------------
    def test_ci_suite_drains_the_faulty_node_and_a_clean_run_resumes_it(self):
        job, rank_of = self.allocate()
        run_dir, proc = self.srun_run_ci(job, "faulty", fault=f"corrupt:{rank_of['node3']}")
        self.assertEqual(proc.returncode, 1, proc.stderr[-3000:])
        with open(os.path.join(run_dir, "records.jsonl")) as lines:
            records = [json.loads(line) for line in lines]
        run = next(r for r in records if r["kind"] == "run")
        self.assertEqual({r["rank"]: r["node"] for r in run["ranks"]},
                         {rank: node for node, rank in rank_of.items()})
        wrong = {w["host"] for r in records if r["kind"] == "collective" for w in r["wrong_ranks"]}
        self.assertEqual(wrong, {"node3"})
        # `commcert run` judged the run itself; certify --apply acts on that verdict.
        with open(os.path.join(run_dir, "verdict.json")) as f:
            self.assertEqual({n["node"]: n["state"] for n in json.load(f)["nodes"]},
                             {"node1": "certified", "node2": "certified",
                              "node3": "quarantined", "node4": "certified"})
        # A technician drains node1 by hand while the allocation holds it.
        self.cluster.drain("node1", "hw: fan")

        proc = self.certify(run_dir, "--suite", "ci")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("drain  node3: commcert: allreduce: ", proc.stdout)
        self.assertIn("leave  node1: certified, but drained by someone else (hw: fan)", proc.stdout)
        # Certifying the same evidence again changes nothing (the reason is already set).
        again = self.certify(run_dir, "--suite", "ci")
        self.assertEqual(again.returncode, 1)
        self.assertIn("leave  node3: already drained for this reason", again.stdout)

        # node3 is drained but still in the allocation: the repaired node is measured again.
        clean_dir, proc = self.srun_run_ci(job, "clean")
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        self.cluster.run(["scancel", job], check=True)
        self.wait_for_states({"node2": "IDLE", "node4": "IDLE"})
        self.assert_pool({"node1": "hw: fan", "node3": "commcert: allreduce: "})
        sinfo = self.cluster.run(["sinfo", "-R", "-h", "-N", "-o", "%N|%E"], check=True).stdout
        self.assertEqual(sorted(line.split("|")[0] for line in sinfo.splitlines()),
                         ["node1", "node3"], sinfo)

        dry = self.certify(clean_dir, "--suite", "ci", "--dry-run")
        self.assertEqual(dry.returncode, 0, dry.stdout + dry.stderr)
        self.assertIn("resume node3 (dry run)", dry.stdout)
        self.assert_pool({"node1": "hw: fan", "node3": "commcert: allreduce: "})

        proc = self.certify(clean_dir, "--suite", "ci")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("resume node3", proc.stdout)
        self.wait_for_states({"node2": "IDLE", "node3": "IDLE", "node4": "IDLE"})
        self.assert_pool({"node1": "hw: fan"})  # the technician's drain stays
        self.assertNotIn("Reason", self.cluster.node("node3"))

    def test_machine_formats_keep_stdout_clean_and_a_refused_action_is_status_3(self):
        run_dir, sweep_status, _ = self.srun_sweep("corrupt", fault_on_node="node2")
        self.assertEqual(sweep_status, 1)
        proc = self.certify(run_dir, "--format", "json")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertEqual(json.loads(proc.stdout)["exit_status"], 1)  # stdout is the verdict only
        self.assertIn("drain  node2: commcert: allreduce: ", proc.stderr)
        self.assert_pool({"node2": "commcert: allreduce: "})
        self.cluster.run(["scontrol", "update", "NodeName=node2", "State=RESUME"], check=True)

        proc = self.certify(run_dir, "--format", "nhc", "--node", "node2")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertEqual(len(proc.stdout.splitlines()), 1, proc.stdout)
        self.assertTrue(proc.stdout.startswith("ERROR: commcert: node2: quarantined"), proc.stdout)
        self.cluster.run(["scontrol", "update", "NodeName=node2", "State=RESUME"], check=True)
        self.wait_for_states({node: "IDLE" for node in NODES})

        # An operator without Slurm admin rights: Slurm refuses the drain. The verdict stands,
        # the refusal is printed, and the status says the pool is not as the verdict says.
        os.chmod(self.tmp, 0o777)
        verdict = os.path.join(self.tmp, "nobody-verdict.json")
        proc = subprocess.run(
            ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", BIN, "certify",
             run_dir, "--baseline", BASELINE, "--apply", "slurm", "--verdict", verdict],
            env=self.cluster.environment(), capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        self.assertIn("FAILED drain  node2: slurm_update error: ", proc.stdout)
        self.assertIn("certified 3, quarantined 1", proc.stdout)
        with open(verdict) as f:
            self.assertEqual(json.load(f)["exit_status"], 1)
        self.assert_pool({})

    def test_drains_by_others_are_kept_inconclusive_nodes_left_alone(self):
        self.cluster.drain("node2", "hw: fan")
        self.cluster.drain("node4", "commcert: allreduce: 7 wrong elements (earlier run)")
        self.assert_pool({"node2": "hw: fan", "node4": "commcert: "})

        # node4 without evidence is inconclusive: neither resumed nor drained.
        partial = self.mpirun_sweep("partial", nodes=["node1", "node2", "node3"])
        proc = self.certify(partial, *(f"--node={node}" for node in NODES))
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        self.assertIn("leave  node4: inconclusive", proc.stdout)
        self.assertIn("leave  node2: certified, but drained by someone else (hw: fan)", proc.stdout)
        self.assert_pool({"node2": "hw: fan", "node4": "commcert: allreduce: 7 wrong"})

        # --node restricts the actions: node4 is certified but not asked about.
        clean = self.mpirun_sweep("clean")
        proc = self.certify(clean, "--node", "node1")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertNotIn("node4", proc.stdout)
        self.assert_pool({"node2": "hw: fan", "node4": "commcert: "})

        proc = self.certify(clean)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("resume node4", proc.stdout)
        self.wait_for_states({"node1": "IDLE", "node3": "IDLE", "node4": "IDLE"})
        self.assert_pool({"node2": "hw: fan"})

    def test_unreachable_controller_is_status_3_with_the_verdict_written(self):
        run_dir, sweep_status, _ = self.srun_sweep("corrupt", fault_on_node="node2")
        self.assertEqual(sweep_status, 1)
        # The same cluster seen through a configuration whose controller port nobody listens on:
        # scontrol gives up after its message timeout (about 9 s here).
        dead = os.path.join(self.tmp, "dead-controller.conf")
        with open(dead, "w") as f:
            f.write(re.sub(r"SlurmctldPort=\d+", f"SlurmctldPort={free_port_block(1)}",
                           self.cluster.conf.read_text()))
        env = self.cluster.environment({"SLURM_CONF": dead})
        proc = subprocess.run([BIN, "certify", run_dir, "--baseline", BASELINE, "--apply", "slurm"],
                              env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        errors = [line for line in proc.stderr.splitlines() if "error" in line]
        self.assertEqual(len(errors), 1, proc.stderr)
        self.assertIn("Unable to contact slurm controller", errors[0])
        self.assertIn("certified 3, quarantined 1", proc.stdout)
        with open(os.path.join(run_dir, "verdict.json")) as f:
            self.assertEqual(json.load(f)["exit_status"], 1)  # the verdict is not lost
        self.assert_pool({})  # and nothing was drained

    # -- the batch script --------------------------------------------------------------------
    def sbatch_acceptance(self, **settings):
        """scripts/slurm/commcert-acceptance.sbatch on all four nodes with the built-in ci suite
        (the acceptance suite needs GPUs and hours); returns the job's output and exit code once
        it has ended."""
        env = {"COMMCERT_BIN": BIN, "COMMCERT_BASELINE": "cpu-mpi-ci", "COMMCERT_SUITE": "ci",
               "COMMCERT_RESULTS": os.path.join(self.tmp, "results"),
               "OMPI_MCA_mpi_yield_when_idle": "1", "COMMCERT_FAULT": "", **settings}
        output = os.path.join(self.tmp, "job-%j.out")
        # The fake nodes have no GPUs: override the script's --gpus-per-node and tasks per node.
        submit = self.cluster.run(["sbatch", "--parsable", "-N4", "--ntasks-per-node=1",
                                   "--gpus-per-node=0", f"--output={output}", ACCEPTANCE], env=env)
        self.assertEqual(submit.returncode, 0, submit.stderr)
        job = submit.stdout.strip().split(";")[0]
        self.cluster.wait_until(
            lambda: not self.cluster.run(["squeue", "-h", "-j", job], check=True).stdout.strip(),
            120, f"job {job} did not end")
        shown = self.cluster.run(["scontrol", "-o", "show", "job", job], check=True).stdout
        exit_code = int(shown.split("ExitCode=", 1)[1].split(":", 1)[0])
        with open(output.replace("%j", job)) as f:
            return job, f.read(), exit_code

    def test_acceptance_job_judges_and_drains_its_allocation(self):
        # srun places rank i on the i-th node of the allocation; the records confirm it below.
        _, _, rank_of = self.srun_sweep("placement")
        fault = f"corrupt:{rank_of['node3']}"
        job, output, exit_code = self.sbatch_acceptance(COMMCERT_FAULT=fault, COMMCERT_DRY_RUN="1")
        self.assertEqual(exit_code, 1, output)
        self.assertIn("drain  node3: commcert: allreduce: ", output)
        self.assertIn("(dry run)", output)
        self.assert_pool({})
        verdict_path = os.path.join(self.tmp, "results", job, "verdict.json")
        with open(verdict_path) as f:
            verdict = json.load(f)
        self.assertEqual({n["node"]: n["state"] for n in verdict["nodes"]},
                         {"node1": "certified", "node2": "certified", "node3": "quarantined",
                          "node4": "certified"})
        self.assertEqual(verdict["suite"]["name"], "ci")  # judged by the suite that ran
        with open(os.path.join(self.tmp, "results", job, "suite.json")) as f:
            self.assertEqual([s["name"] for s in json.load(f)["stages"]],
                             ["health", "node-collectives", "cluster-collectives"])

        job, output, exit_code = self.sbatch_acceptance(COMMCERT_FAULT=fault)
        self.assertEqual(exit_code, 1, output)
        self.assertIn(f"run {job} ended with status 1", output)
        self.assertIn("drain  node3: commcert: allreduce: ", output)
        self.assert_pool({"node3": "commcert: allreduce: "})

    # -- the HealthCheckProgram --------------------------------------------------------------
    def healthcheck(self, node, sysfs="healthy", **settings):
        """scripts/slurm/commcert-healthcheck with the almost empty environment slurmd gives it,
        the built-in CPU baseline and the default (built-in healthcheck) suite."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SLURM_CONF": str(self.cluster.conf),
               "SLURMD_NODENAME": node, "COMMCERT_BIN": BIN, "COMMCERT_HC_BASELINE": "cpu-mpi-ci",
               "COMMCERT_HC_DIR": os.path.join(self.tmp, "hc"),
               "COMMCERT_HC_HEALTH_ARGS": f"--sysfs-root {os.path.join(SYSFS, sysfs)}"}
        env.update(settings)
        return subprocess.run([HEALTHCHECK], env=env, capture_output=True, text=True, timeout=70)

    def hc_runs(self):
        directory = os.path.join(self.tmp, "hc")
        return sorted(os.listdir(directory)) if os.path.isdir(directory) else []

    def test_healthcheck_drains_its_node_on_a_fault_and_resumes_it_when_healthy(self):
        dry = self.healthcheck("node3", sysfs="down_port", COMMCERT_HC_DRY_RUN="1")
        self.assertEqual(dry.returncode, 1, dry.stdout + dry.stderr)
        self.assertIn("(dry run)", dry.stderr)
        self.assert_pool({})

        proc = self.healthcheck("node3", sysfs="down_port")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.splitlines(), [
            "ERROR: commcert: node3: quarantined (triage): mlx5_0 port 1: port state DOWN, "
            "physical Disabled [health.ib_port_down]"])
        self.assert_pool({"node3": "commcert: mlx5_0 port 1: port state DOWN"})

        proc = self.healthcheck("node3", COMMCERT_HC_KEEP="2")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout, "SUCCESS: commcert: 1 node(s) certified against cpu-mpi-ci\n")
        self.wait_for_states({node: "IDLE" for node in NODES})
        self.assert_pool({})
        runs = self.hc_runs()
        self.assertEqual(len(runs), 2, runs)  # the oldest of three was removed
        self.assertTrue(all(run.startswith("hc-") for run in runs), runs)
        self.assertTrue(os.path.exists(os.path.join(self.tmp, "hc", runs[-1], "verdict.json")))

    def test_healthcheck_refuses_a_bad_node_name_and_leaves_other_drains(self):
        proc = self.healthcheck("node3;reboot")
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertEqual(len(proc.stdout.splitlines()), 1, proc.stdout)
        self.assertIn("invalid node name", proc.stdout)
        self.assertEqual(self.hc_runs(), [])  # nothing ran

        self.cluster.drain("node2", "hw: fan")
        proc = self.healthcheck("node2")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("leave  node2: certified, but drained by someone else (hw: fan)", proc.stderr)
        self.assert_pool({"node2": "hw: fan"})


class SlurmdRunsTheHealthCheck(unittest.TestCase):
    """The script as slurm.conf's HealthCheckProgram, run by slurmd every 2 s (scripts/slurm/README.md):
    a wrapper exports the settings and execs it; node3 reports a down InfiniBand port while a flag
    file exists."""

    @classmethod
    def setUpClass(cls):
        reason = missing_requirements()
        if reason:
            raise unittest.SkipTest(reason)
        cls.tmp = tempfile.mkdtemp(prefix="commcert-slurm-hc-")
        os.chmod(cls.tmp, 0o755)
        cls.fault = os.path.join(cls.tmp, "node3-port-down")
        wrapper = os.path.join(cls.tmp, "commcert-hc")
        cls.cluster = SlurmCluster(nodes=len(NODES), extra_config=(
            f"HealthCheckProgram={wrapper}\nHealthCheckInterval=2\nHealthCheckNodeState=ANY"))
        with open(wrapper, "w") as f:
            f.write(f"""#!/bin/bash
export COMMCERT_BIN={BIN} COMMCERT_HC_BASELINE={BASELINE} COMMCERT_HC_SUITE=healthcheck
export COMMCERT_HC_DIR={cls.tmp}/hc-"$SLURMD_NODENAME"
if [[ -r {cls.tmp}/slurm_conf ]]; then export SLURM_CONF="$(cat {cls.tmp}/slurm_conf)"; fi
sysfs={SYSFS}/healthy
if [[ $SLURMD_NODENAME == node3 && -e {cls.fault} ]]; then sysfs={SYSFS}/down_port; fi
export COMMCERT_HC_HEALTH_ARGS="--sysfs-root $sysfs"
exec {HEALTHCHECK} >>{cls.tmp}/hc-"$SLURMD_NODENAME".log 2>&1
""")
        os.chmod(wrapper, 0o755)
        try:
            cls.cluster.start()
            # The wrapper finds slurm.conf through this file; the checks slurmd runs before it
            # exists cannot reach Slurm and change nothing (status 3).
            with open(os.path.join(cls.tmp, "slurm_conf"), "w") as conf:
                conf.write(str(cls.cluster.conf))
        except BaseException:
            cls.cluster.stop()
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_slurmd_drains_and_resumes_through_the_health_check(self):
        cluster = self.cluster
        with open(self.fault, "w"):
            pass
        cluster.wait_until(lambda: "DRAIN" in cluster.state("node3"), 30, "node3 was not drained")
        reason = cluster.node("node3")["Reason"]
        self.assertTrue(reason.startswith("commcert: mlx5_0 port 1: port state DOWN"), reason)
        self.assertEqual({node: cluster.state(node) for node in NODES if node != "node3"},
                         {"node1": "IDLE", "node2": "IDLE", "node4": "IDLE"})
        os.remove(self.fault)
        cluster.wait_until(lambda: all(cluster.state(n) == "IDLE" for n in NODES), 30,
                           "node3 was not resumed")
        self.assertEqual(cluster.reasons(), {})


if __name__ == "__main__":
    unittest.main()
