#!/usr/bin/env python3
"""predict, complete and score under GNU parallel: a file cut into pieces,
each piece its own nextword process, the records put back in order with -k,
must be byte for byte what one nextword process writes for the whole file.

    python3 tests/cli/parallel_test.py build/nextword data [--quick]

- On this machine: `parallel --pipe -k` (blocks of 1k and 4k, -N 7 and
  -N 64 lines, 2 and 3 jobs) and `parallel --pipepart -a FILE` (blocks of 1k,
  and --block -3: three parts per job slot), over 400 random phrases drawn
  from the default model's vocabulary (1 to 200 words, some unknown, some
  past max_len), over 1,000 more, and over 40 of them one and two a job;
  every job runs with --threads 1, the one process with the defaults (every
  core, the default --batch). The formats that print full precision (JSON:
  predict's float32 to 7 or 8 digits, complete's and score's doubles to 17)
  and TSV (6 decimals).
- On two hosts, simulated: `parallel --ssh tests/cli/fake_ssh.sh -S
  1/hostA,1/hostB` (and --sshloginfile, --pipepart, --cleanup). The fake ssh
  runs each command in a folder of its own per host, so the model and the
  binary sent by --basefile land there, and the jobs run `./nextword ... -m
  ./stories` relative to that folder (or, the binary not sent, run it by its
  absolute path, as if installed on every host): without the model sent,
  the jobs fail. Its log shows that both hosts received the files and ran
  jobs; with --cleanup, nothing is left on them.

--quick (the sanitizer build, whose binary starts and runs 5 times slower):
two ways of cutting the 400 lines in every format, one way and one command
for the 1,000 lines, -N 2 only for the 40, one command with -S.

GNU parallel runs with a HOME of its own (~/.parallel/will-cite, no user
config), no PARALLEL* variables and a TMPDIR in the test's folder.

Exits 77 (skipped) when parallel or rsync is missing, 1 when a check fails.
"""
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

import cli_common

NEXTWORD = DATA = None  # set by cli_common.main
HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_SSH = os.path.join(HERE, "fake_ssh.sh")
TIMEOUT = 180  # seconds for one parallel or nextword run
QUICK = cli_common.quick()

TMP = None  # the test's folder: HOME, TMPDIR and the inputs
INPUTS = {}  # name -> path of an input file
REFERENCE = {}  # ((command, flags), input name) -> one process's stdout

# What each command prints, in the formats compared: (command, flags).
PREDICT_JSON = ("predict", ("-f", "json", "-q"))
PREDICT_TSV = ("predict", ("-f", "tsv", "-q"))
COMPLETE_JSON = ("complete", ("-f", "json"))
COMPLETE_TSV = ("complete", ("-f", "tsv"))
SCORE_JSON = ("score", ("-f", "json", "-q"))
SCORE_TSV = ("score", ("-f", "tsv", "-q"))

# The ways of cutting the 400-line input (about 20 KB): all of them for the
# JSON records, two for TSV.
SPLITS = [
    ("--pipe -j2 --block 1k", lambda f: ["--pipe", "-j2", "--block", "1k"]),
    ("--pipe -j2 --block 4k", lambda f: ["--pipe", "-j2", "--block", "4k"]),
    ("--pipe -j2 -N 7", lambda f: ["--pipe", "-j2", "-N", "7"]),
    ("--pipe -j3 -N 64", lambda f: ["--pipe", "-j3", "-N", "64"]),
    ("--pipepart -j2 --block 1k", lambda f: ["--pipepart", "-a", f, "-j2", "--block", "1k"]),
    ("--pipepart -j2 --block -3", lambda f: ["--pipepart", "-a", f, "-j2", "--block", "-3"]),
]
SPLITS_TSV = [SPLITS[1], SPLITS[4]]


def splits():
    return SPLITS_TSV if QUICK else SPLITS


def vocabulary():
    with open(os.path.join(DATA, "stories", "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    words = vocab if isinstance(vocab, list) else list(vocab)
    return [w for w in words if not (w.startswith("<") and w.endswith(">"))]


def phrases(rng, words, count):
    """`count` phrases of vocabulary words: most short, one in a hundred
    past max_len (128 tokens, the bos_token included), one word in 25 not in
    the vocabulary, every phrase ending in one that is."""
    lines = []
    for _ in range(count):
        r = rng.random()
        n = (rng.randint(1, 12) if r < 0.85 else rng.randint(13, 40) if r < 0.99
             else rng.randint(140, 200))
        line = [rng.choice(words) for _ in range(n)]
        for i in range(n):
            if rng.random() < 0.04 and i != n - 1:
                line[i] = "zq" + "".join(rng.choice("xvkj") for _ in range(4))
        if rng.random() < 0.2:
            line[0] = line[0].capitalize()
        lines.append(" ".join(line))
    return lines


def typed(rng, words, texts):
    """What `complete` reads: a text, then a space (next words) or the start
    of a word (a prefix of a vocabulary word, now and then one of no word)."""
    lines = []
    for text in texts:
        r = rng.random()
        if r < 0.3:
            lines.append(text + " ")
        elif r < 0.95:
            word = rng.choice(words)
            lines.append(text + " " + word[:rng.randint(1, max(1, min(4, len(word))))])
        else:
            lines.append(text + " qzx")
    return lines


def setUpModule():
    global TMP
    TMP = tempfile.mkdtemp(prefix="nextword-parallel-")
    os.makedirs(os.path.join(TMP, "home", ".parallel"))
    open(os.path.join(TMP, "home", ".parallel", "will-cite"), "w").close()
    os.makedirs(os.path.join(TMP, "tmp"))
    rng = random.Random(15)
    words = vocabulary()
    small = phrases(rng, words, 400)
    big = phrases(rng, words, 1000)
    small_typed = typed(rng, words, small)
    files = {"small": small, "big": big, "head": small[:40], "small_typed": small_typed,
             "big_typed": typed(rng, words, big), "head_typed": small_typed[:40]}
    for name, lines in files.items():
        INPUTS[name] = os.path.join(TMP, name + ".txt")
        with open(INPUTS[name], "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


def environment(**extra):
    env = {k: v for k, v in os.environ.items()
           if k != "NEXTWORD_MODEL" and not k.startswith("PARALLEL")}
    env.update(HOME=os.path.join(TMP, "home"), TMPDIR=os.path.join(TMP, "tmp"))
    env.update(extra)
    return env


def input_of(command, size):
    return INPUTS[size + "_typed" if command == "complete" else size]


def one_process(what, size):
    """stdout of one nextword process over the whole input, default threads
    and batch (cached)."""
    command, flags = what
    key = (what, size)
    if key not in REFERENCE:
        with open(input_of(command, size), "rb") as f:
            r = subprocess.run([NEXTWORD, command, "-m", os.path.join(DATA, "stories"), *flags],
                               stdin=f, capture_output=True, env=environment(), timeout=TIMEOUT,
                               check=False)
        assert r.returncode == 0, (what, r.returncode, r.stderr.decode(errors="replace"))
        REFERENCE[key] = r.stdout
    return REFERENCE[key]


def parallel(args, stdin_path=None, cwd=None, env=None):
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        return subprocess.run(["parallel", *args], stdin=stdin, capture_output=True,
                              cwd=cwd or TMP, env=env or environment(), timeout=TIMEOUT,
                              check=False)
    finally:
        if stdin_path:
            stdin.close()


def difference(got, want):
    """"" when the bytes are equal, else how they differ: how many lines,
    and the first differing pair."""
    if got == want:
        return ""
    g, w = got.split(b"\n"), want.split(b"\n")
    differing = [i for i in range(max(len(g), len(w)))
                 if i >= len(g) or i >= len(w) or g[i] != w[i]]
    i = differing[0]
    show = lambda lines: lines[i][:400].decode(errors="replace") if i < len(lines) else "(none)"
    return (f"{len(differing)} of {len(w) - 1} lines differ ({len(g) - 1} lines from parallel); "
            f"first at line {i + 1}:\n    parallel:    {show(g)}\n    one process: {show(w)}")


class Split(unittest.TestCase):
    """parallel --pipe / --pipepart on this machine against one process."""

    def check(self, what, size, splits):
        command, flags = what
        want = one_process(what, size)
        job = " ".join(shlex.quote(a) for a in
                       [NEXTWORD, command, "-m", os.path.join(DATA, "stories"), "-t", "1", *flags])
        path = input_of(command, size)
        for name, split in splits:
            with self.subTest(split=name, command=" ".join([command, *flags]), input=size):
                args = split(path)
                r = parallel(["-k", *args, job], stdin_path=None if "--pipepart" in args else path)
                self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
                problem = difference(r.stdout, want)
                if problem:
                    self.fail(f"parallel {name}: {problem}")

    def test_predict_json(self):
        self.check(PREDICT_JSON, "small", splits())

    def test_predict_tsv(self):
        self.check(PREDICT_TSV, "small", SPLITS_TSV)

    def test_complete_json(self):
        self.check(COMPLETE_JSON, "small", splits())

    def test_complete_tsv(self):
        self.check(COMPLETE_TSV, "small", SPLITS_TSV)

    def test_score_json(self):
        self.check(SCORE_JSON, "small", splits())

    def test_score_tsv(self):
        self.check(SCORE_TSV, "small", SPLITS_TSV)

    def test_thousand_lines(self):
        # About 50 KB: blocks of 8k piped, or parts of 5k read in place.
        splits = [("--pipe -j2 --block 8k", lambda f: ["--pipe", "-j2", "--block", "8k"]),
                  ("--pipepart -j2 --block 5k",
                   lambda f: ["--pipepart", "-a", f, "-j2", "--block", "5k"])]
        if QUICK:
            self.check(PREDICT_JSON, "big", splits[1:])
            return
        for what in (PREDICT_JSON, COMPLETE_JSON, SCORE_JSON):
            self.check(what, "big", splits)

    def test_one_or_two_lines_a_job(self):
        # The smallest batches: each phrase alone, or two together (the
        # first 40 lines).
        splits = [("--pipe -j2 -N 1", lambda f: ["--pipe", "-j2", "-N", "1"]),
                  ("--pipe -j2 -N 2", lambda f: ["--pipe", "-j2", "-N", "2"])]
        for what in (PREDICT_JSON, COMPLETE_JSON, SCORE_JSON):
            self.check(what, "head", splits[1:] if QUICK else splits)

    def test_error_records_keep_their_place(self):
        # Lines with no word the vocabulary knows get their error record where
        # they stand; the jobs that read them fail (exit 4), the others go on.
        with open(INPUTS["small"], encoding="utf-8") as f:
            lines = f.read().splitlines()[:120]
        for i in (0, 33, 34, 90):
            lines[i] = "zqxxv zqkkj"
        path = os.path.join(TMP, "errors.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
        with open(path, "rb") as f:
            want = subprocess.run([NEXTWORD, "predict", "-m", os.path.join(DATA, "stories"),
                                   "-f", "json", "-q"], stdin=f, capture_output=True,
                                  env=environment(), timeout=TIMEOUT, check=False)
        self.assertEqual(want.returncode, cli_common.INPUT)
        job = f"{shlex.quote(NEXTWORD)} predict -m {shlex.quote(os.path.join(DATA, 'stories'))}" \
              " -t 1 -f json -q"
        r = parallel(["-k", "--pipe", "-j2", "-N", "10", job], stdin_path=path)
        self.assertEqual(r.returncode, 3, "three jobs of ten lines hold a bad line")
        records = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual([i for i, x in enumerate(records) if x.get("exit_code") == 4],
                         [0, 33, 34, 90])
        problem = difference(r.stdout, want.stdout)
        if problem:
            self.fail(f"parallel --pipe -j2 -N 10: {problem}")


class ManyHosts(unittest.TestCase):
    """Two hosts played by fake_ssh.sh: the model, and the binary or not, go
    by --basefile, the jobs read them from their host's folder. A binary not
    sent is run by its absolute path, as if installed at the same place on
    every host."""

    # The files sent: dir/./name keeps `name` as the path on the host.
    MODEL_FILES = ("vocab.json", "weights.safetensors", "lexicon.tsv")

    def setUp(self):
        self.root = tempfile.mkdtemp(dir=TMP, prefix="hosts-")
        self.hosts = os.path.join(self.root, "hosts")
        self.cwd = os.path.join(self.root, "run")  # empty: no ./nextword, no ./stories here
        os.makedirs(self.hosts)
        os.makedirs(self.cwd)
        self.binary = os.path.join(os.path.dirname(NEXTWORD), ".", os.path.basename(NEXTWORD))
        self.model = [os.path.join(DATA, ".", "stories", name) for name in self.MODEL_FILES]
        self.sent = [os.path.basename(NEXTWORD)] + \
                    [os.path.join("stories", name) for name in self.MODEL_FILES]

    def run_on_hosts(self, login, split, what, size, basefiles, extra=()):
        command, flags = what
        binary = "./" + os.path.basename(NEXTWORD) if self.binary in basefiles else NEXTWORD
        job = " ".join([shlex.quote(binary), command, "-m", "./stories", "-t", "1", *flags])
        log = os.path.join(self.hosts, "calls.log")
        if os.path.exists(log):
            os.remove(log)
        args = ["--ssh", FAKE_SSH, *login, *[a for f in basefiles for a in ("--basefile", f)],
                *extra, "-k", *split, job]
        path = input_of(command, size)
        return parallel(args, stdin_path=None if "--pipepart" in split else path, cwd=self.cwd,
                        env=environment(FAKE_SSH_ROOT=self.hosts))

    def calls(self):
        """host -> the commands fake_ssh.sh ran there."""
        out = {}
        with open(os.path.join(self.hosts, "calls.log"), encoding="utf-8") as f:
            for line in f:
                host, _, command = line.rstrip("\n").partition("\t")
                out.setdefault(host, []).append(command)
        return out

    def check_both_hosts_worked(self, files_sent):
        """Each host received `files_sent` files by rsync and ran jobs."""
        calls = self.calls()
        self.assertEqual(sorted(calls), ["hostA", "hostB"])
        for host, commands in calls.items():
            rsyncs = [c for c in commands if c.startswith("rsync --server")]
            jobs = [c for c in commands if "GNU_Parallel_worker" in c]
            self.assertEqual(len(rsyncs), files_sent, (host, [c[:80] for c in commands]))
            self.assertGreater(len(jobs), 0, f"{host} ran no job")

    def test_two_hosts_send_binary_and_model(self):
        # The hosts keep the files from one run to the next (rsync sends
        # them again, as differences).
        split = ["--pipe", "--block", "2k"]
        for what in (PREDICT_JSON,) if QUICK else (PREDICT_JSON, COMPLETE_JSON, SCORE_TSV):
            with self.subTest(command=" ".join([what[0], *what[1]])):
                r = self.run_on_hosts(["-S", "1/hostA,1/hostB"], split, what, "small",
                                      [self.binary, *self.model])
                self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
                self.check_both_hosts_worked(len(self.sent))
                sources = [NEXTWORD] + [os.path.join(DATA, "stories", n) for n in self.MODEL_FILES]
                for host in ("hostA", "hostB"):
                    for name, source in zip(self.sent, sources):
                        with open(os.path.join(self.hosts, host, name), "rb") as a, \
                                open(source, "rb") as b:
                            self.assertTrue(a.read() == b.read(), f"{host}/{name} is not {source}")
                problem = difference(r.stdout, one_process(what, "small"))
                if problem:
                    self.fail(f"parallel -S 1/hostA,1/hostB --pipe --block 2k: {problem}")

    def test_sshloginfile_pipepart_cleanup(self):
        logins = os.path.join(self.root, "logins")
        with open(logins, "w", encoding="utf-8") as f:
            f.write("# two hosts, one job slot each\n1/hostA\n1/me@hostB\n")
        # The binary sent, then installed (the model sent both times).
        for what, size, sent in ((SCORE_JSON, "small", [self.binary, *self.model]),
                                 (PREDICT_JSON, "big", self.model)):
            with self.subTest(command=" ".join([what[0], *what[1]]), input=size,
                              binary="sent" if len(sent) > len(self.model) else "installed"):
                path = input_of(what[0], size)
                r = self.run_on_hosts(["--sshloginfile", logins],
                                      ["--pipepart", "-a", path, "--block", "-3"], what, size,
                                      sent, extra=["--cleanup"])
                self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
                self.check_both_hosts_worked(len(sent))
                for host in ("hostA", "hostB"):
                    left = [os.path.join(d, n) for d, _, names in
                            os.walk(os.path.join(self.hosts, host)) for n in names]
                    self.assertEqual(left, [], f"--cleanup left files on {host}")
                problem = difference(r.stdout, one_process(what, size))
                if problem:
                    self.fail(f"parallel --sshloginfile --pipepart --block -3: {problem}")

    def test_jobs_read_the_model_sent_to_their_host(self):
        # No model sent: `-m ./stories` finds nothing on the hosts, although
        # this machine has it (the binary is the installed one; `-m stories`,
        # a name, would find the installed model).
        r = self.run_on_hosts(["-S", "1/hostA,1/hostB"], ["--pipe", "--block", "4k"],
                              PREDICT_JSON, "small", [])
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stdout, b"")
        self.assertRegex(r.stderr.decode(errors="replace"), r"nextword: \./stories/\S+: cannot open")
        self.check_both_hosts_worked(0)


if __name__ == "__main__":
    missing = [tool for tool in ("parallel", "rsync") if shutil.which(tool) is None]
    if missing:
        print(f"parallel_test: skipped: {' and '.join(missing)} not installed "
              f"(apt-get install {' '.join(missing)}; cmake/install-deps.sh --test installs them)")
        sys.exit(77)
    cli_common.main(sys.modules[__name__])
