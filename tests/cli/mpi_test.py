#!/usr/bin/env python3
"""Data-parallel training under mpirun (a build with -DNEXTWORD_MPI=ON).

    python3 tests/cli/mpi_test.py build/nextword [REPOSITORY]

On a few hundred lines of ../shared/corpus next to the repository (copied to
a temporary directory, never into the repository; a small made-up story when
the corpus is missing), a small model:
  - 2 ranks reach the weights of 1 process within 1e-5 (norm-wise relative)
    after 100 steps without dropout, and print the figure;
  - with dropout, two 2-rank runs write identical weights;
  - a batch that 2 ranks cannot split is a usage error, and a missing
    corpus an I/O error, each one line;
  - SIGTERM to one rank stops every rank after the same step with status
    130 and one checkpoint, which loads; resuming it with 1 process is
    refused, naming both counts; resuming with 2 reaches the weights of an
    uninterrupted 2-rank run byte for byte;
  - SIGTERM to mpirun, and kill -9 of one rank, end the job with a non-zero
    status, never a hang, and what is on disk loads.
No timing is asserted; every wait has a timeout.
"""
import base64
import json
import math
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

NEXTWORD = ROOT = None
USAGE, INTERRUPTED = 2, 130
TIMEOUT = 120  # seconds any one command may take before the test fails

SHAPE = ["--vocab-size", "500", "--d-model", "32", "--layers", "2", "--heads", "2",
         "--context", "16", "--val-fraction", "0.05", "--eval-every", "0", "-f", "json"]
SMALL = SHAPE + ["--batch", "8"]
STORY = ("Once upon a time there was a little cat. The cat liked to play in the sun. "
         "One day the cat saw a big dog. The dog was kind and they played all day.\n")


def mpirun(ranks):
    """mpirun as a test in a container needs it: as root, more ranks than
    cores, no binding (one thread per rank, placed by the kernel), shared
    memory without the single-copy mechanism containers often forbid, and
    quiet (no banners around nextword's own error line)."""
    return ["mpirun", "-q", "-np", str(ranks), "--oversubscribe", "--bind-to", "none",
            "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"]


def environment():
    env = dict(os.environ)
    # A rank waiting in the allreduce yields its core rather than spin: CI
    # machines are shared.
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1")
    return env


def command(ranks, *args):
    return ([*mpirun(ranks), NEXTWORD] if ranks > 1 else [NEXTWORD]) + list(args)


def run(ranks, *args):
    return subprocess.run(command(ranks, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=environment(), timeout=TIMEOUT, check=False)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def weights(directory):
    """Every float of weights.json, tensor by tensor in name order."""
    with open(os.path.join(directory, "weights.json"), encoding="utf-8") as f:
        tensors = json.load(f)["tensors"]
    values = []

    def flatten(data):
        for x in data:
            if isinstance(x, list):
                flatten(x)
            else:
                values.append(float(x))

    for name in sorted(tensors):
        t = tensors[name]
        if "b64" in t:
            raw = base64.b64decode(t["b64"])
            values.extend(struct.unpack("<%df" % (len(raw) // 4), raw))
        else:
            flatten(t["data"])
    return values


def relative_difference(a, b):
    assert len(a) == len(b)
    diff = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    return diff / math.sqrt(sum(x * x for x in a))


def children(pid):
    """The processes mpirun started (the ranks), by their rank."""
    ranks = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, encoding="utf-8") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            if parent != pid:
                continue
            with open("/proc/%s/environ" % entry, "rb") as f:
                env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
            if b"OMPI_COMM_WORLD_RANK" in env:
                ranks[int(env[b"OMPI_COMM_WORLD_RANK"])] = int(entry)
        except (OSError, ValueError, IndexError):
            continue  # gone, or not ours
    return ranks


def alive(pid):
    """True while pid runs (a zombie has ended)."""
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Mpi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.text = os.path.join(cls.tmp, "stories.txt")
        corpus = os.path.join(ROOT, "..", "shared", "corpus", "tinystories-train-head.txt")
        with open(cls.text, "w", encoding="utf-8") as out:
            if os.path.exists(corpus):
                with open(corpus, encoding="utf-8") as f:
                    for _, line in zip(range(400), f):
                        out.write(line)
            else:
                out.write((STORY + "\n") * 100)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def train(self, ranks, name, *extra):
        out = os.path.join(self.tmp, name)
        threads = [] if "--threads" in extra else ["--threads", "1"]
        r = run(ranks, "train", self.text, "-o", out, *SMALL, *threads, *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        return out, r

    def test_two_ranks_reach_the_weights_of_one(self):
        one, r1 = self.train(1, "one", "--steps", "100", "--dropout", "0")
        two, r2 = self.train(2, "two", "--steps", "100", "--dropout", "0")
        difference = relative_difference(weights(one), weights(two))
        print("\n2 ranks against 1 after 100 steps: norm-wise relative difference %.3g"
              % difference, file=sys.stderr)
        self.assertLess(difference, 1e-5)
        # Rank 0 alone prints: one summary, one opening note.
        self.assertEqual(len(r2.stdout.strip().split("\n")), 1)
        self.assertEqual(sum(1 for line in r2.stderr.split("\n") if line.startswith("nextword: training")), 1)
        self.assertEqual(json.loads(r2.stdout)["steps"], 100)
        self.assertAlmostEqual(json.loads(r2.stdout)["loss"], json.loads(r1.stdout)["loss"], 4)
        with open(os.path.join(two, "checkpoint.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["ranks"], 2)

    def test_threads_train_as_ranks(self):
        # One process of 2 worker threads and 2 ranks of 1 split the batch
        # alike, draw the same dropout masks and add the gradients in the same
        # order: the same bits. 1 rank of 2 threads against 2 ranks of 2
        # threads would be 4 shares against 2, so that is not compared.
        threads, _ = self.train(1, "threads", "--steps", "30", "--dropout", "0.2",
                                "--threads", "2")
        ranks, _ = self.train(2, "ranks", "--steps", "30", "--dropout", "0.2")
        self.assertEqual(read(os.path.join(threads, "weights.json")),
                         read(os.path.join(ranks, "weights.json")))
        four, _ = self.train(2, "four", "--steps", "30", "--dropout", "0.2", "--threads", "2")
        self.assertNotEqual(read(os.path.join(four, "weights.json")),
                            read(os.path.join(ranks, "weights.json")))

    def test_dropout_is_repeatable(self):
        a, _ = self.train(2, "dropout_a", "--steps", "30", "--dropout", "0.1")
        b, _ = self.train(2, "dropout_b", "--steps", "30", "--dropout", "0.1")
        self.assertEqual(read(os.path.join(a, "weights.json")),
                         read(os.path.join(b, "weights.json")))
        one, _ = self.train(1, "dropout_one", "--steps", "30", "--dropout", "0.1")
        self.assertNotEqual(read(os.path.join(a, "weights.json")),  # other masks than 1 process
                            read(os.path.join(one, "weights.json")))

    def test_batch_must_split_over_the_ranks(self):
        r = run(2, "train", self.text, "-o", os.path.join(self.tmp, "odd"), *SHAPE, "--batch", "7")
        self.assertEqual(r.returncode, USAGE, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr.strip().split("\n"),
                         ["nextword: train: --batch 7 does not split evenly over the 2 ranks "
                          "of mpirun"])
        # An error every rank meets ends every rank, with its code and one line.
        missing = os.path.join(self.tmp, "missing.txt")
        r = run(2, "train", missing, "-o", os.path.join(self.tmp, "none"), *SMALL)
        self.assertEqual(r.returncode, 5, r.stderr)  # I/O
        self.assertEqual(len(r.stderr.strip().split("\n")), 1, r.stderr)
        self.assertIn(missing, r.stderr)

    def start(self, out, steps):
        """A 2-rank run reporting every step; returns the mpirun process
        once rank 0 has reported step 20 (checkpoints every 10 steps)."""
        process = subprocess.Popen(
            command(2, "train", self.text, "-o", out, *SMALL, "--steps", str(steps),
                    "--dropout", "0.1", "--log-every", "1", "--checkpoint-every", "10"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment())
        for line in process.stderr:
            if line.startswith("{") and json.loads(line)["step"] >= 20:
                return process
        self.fail("the run ended before step 20: %s" % process.communicate(timeout=TIMEOUT)[1])
        return None

    def assert_loads(self, out):
        p = run(1, "predict", "-m", out, "once upon a")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_sigterm_to_one_rank_saves_once_and_resumes_exactly(self):
        steps = 300  # far more than the few steps the signal may take to arrive
        whole, _ = self.train(2, "whole", "--steps", str(steps), "--dropout", "0.1",
                              "--log-every", "1", "--checkpoint-every", "10")
        out = os.path.join(self.tmp, "stopped")
        process = self.start(out, steps)
        os.kill(children(process.pid)[1], signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=TIMEOUT)
        self.assertEqual(process.returncode, INTERRUPTED, stderr)
        self.assertEqual(stderr.count("saved; continue with: nextword train --resume"), 1)
        summary = json.loads(stdout)  # one summary line, from rank 0
        self.assertFalse(summary["completed"])
        with open(os.path.join(out, "checkpoint.json"), encoding="utf-8") as f:
            checkpoint = json.load(f)
        self.assertEqual((checkpoint["step"], checkpoint["ranks"]), (summary["steps"], 2))
        self.assertLess(checkpoint["step"], steps)
        self.assert_loads(out)

        r = run(1, "train", "--resume", out)
        self.assertEqual(r.returncode, USAGE, r.stderr)
        self.assertEqual(r.stderr.strip().split("\n"),
                         ["nextword: %s/checkpoint.json: ranks: saved by 2 ranks, resumed with 1"
                          % out])
        r = run(2, "train", "--resume", out, "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["steps"], steps)
        self.assertEqual(read(os.path.join(whole, "weights.json")),
                         read(os.path.join(out, "weights.json")))

    def test_sigterm_to_mpirun_ends_the_job(self):
        out = os.path.join(self.tmp, "terminated")
        process = self.start(out, 100000)
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=TIMEOUT)
        self.assertNotEqual(process.returncode, 0)
        self.assert_loads(out)

    def test_a_dead_rank_ends_the_job(self):
        out = os.path.join(self.tmp, "killed")
        process = self.start(out, 100000)
        ranks = children(process.pid)
        os.kill(ranks[1], signal.SIGKILL)
        process.communicate(timeout=TIMEOUT)
        self.assertNotEqual(process.returncode, 0)
        self.assert_loads(out)
        deadline = time.monotonic() + TIMEOUT  # no rank left behind
        while any(alive(pid) for pid in ranks.values()):
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.1)


def main():
    global NEXTWORD, ROOT
    NEXTWORD = os.path.abspath(sys.argv[1])
    ROOT = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    if shutil.which("mpirun") is None:
        print("mpi_test: mpirun not found (apt-get install openmpi-bin)", file=sys.stderr)
        sys.exit(1)
    unittest.main(argv=[sys.argv[0], "-v"])


if __name__ == "__main__":
    main()
