#!/usr/bin/env python3
"""The error matrix's hostile cases: files that never end or are
enormous, writes that fail (full devices, full disks, read-only places, a
file limit), competing trainers and stop signals. Each function takes a
scratch folder and returns (number of cases, failures); error_matrix.py
runs them all.

Full disks are real: a small tmpfs mounted here when the test runs as root
(skipped with a message otherwise); the same failures are also injected
through a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored), which needs no
privilege and always runs.
"""
import json
import os
import resource
import select
import shlex
import signal
import stat
import subprocess
import time

NEXTWORD = DATA = None
OK, USAGE, MODEL, INPUT, IO, STOPPED = 0, 2, 3, 4, 5, 130
SMALL = ["--d-model", "8", "--layers", "1", "--heads", "1", "--d-k", "4", "--d-v", "4",
         "--d-ff", "8", "--context", "8", "--batch", "2", "--threads", "1"]
# Its weights.json takes 12 KB, its checkpoint.json 32 KB.
WIDER = ["--d-model", "16", "--layers", "1", "--heads", "2", "--d-k", "8", "--d-v", "8",
         "--d-ff", "16", "--context", "8", "--batch", "2", "--threads", "1"]
# A file size limit above what an OpenMP runtime needs to start (LLVM's
# libomp sizes a 1 KiB shared-memory file) and below every file it stops.
LIMIT = 8192


def setup(nextword, data):
    global NEXTWORD, DATA
    NEXTWORD, DATA = nextword, data


def write_corpus(path, lines=200):
    with open(path, "w", encoding="utf-8") as f:
        f.write("the cat sat on the mat . the dog sat on the log .\n" * lines)


def endless_cases(tmp):
    """Model files that never end or are enormous: devices, pipes
    and sparse files are refused within seconds, while they are read, each
    with one line and exit 3; process substitution still works."""
    d = os.path.join(DATA, "stories")
    vocab, weights = os.path.join(d, "vocab.json"), os.path.join(d, "weights.json")
    noise = os.path.join(tmp, "noise.safetensors")
    os.symlink("/dev/urandom", noise)
    huge_weights, huge_vocab = os.path.join(tmp, "huge.json"), os.path.join(tmp, "hugevocab.json")
    zero_run, huge_run = os.path.join(tmp, "zero-run"), os.path.join(tmp, "huge-run")
    os.mkdir(zero_run)
    os.mkdir(huge_run)
    os.symlink("/dev/zero", os.path.join(zero_run, "checkpoint.json"))
    huge_checkpoint = os.path.join(huge_run, "checkpoint.json")
    for path, size in ((huge_weights, 20 << 30), (huge_vocab, 1 << 30), (huge_checkpoint, 70 << 30)):
        with open(path, "wb") as f:
            f.truncate(size)  # sparse: no disk used
    q = shlex.quote
    cases = [
        ("weights /dev/zero", f"predict --vocab {q(vocab)} --weights /dev/zero x",
         "nextword: /dev/zero: not JSON: byte 0 cannot start a document here"),
        ("weights /dev/urandom", f"predict --vocab {q(vocab)} --weights /dev/urandom x",
         "nextword: /dev/urandom: not JSON"),
        ("vocab /dev/zero", f"predict --vocab /dev/zero --weights {q(weights)} x",
         "nextword: /dev/zero: not JSON"),
        ("safetensors of /dev/urandom", f"predict --vocab {q(vocab)} --weights {q(noise)} x",
         "noise.safetensors: not safetensors: the first 8 bytes give a header of"),
        ("endless blank pipe", f"predict --vocab {q(vocab)} --weights <(yes ' ') x",
         "not JSON: its first 64 KiB are blank"),
        ("sparse 20 GiB weights.json", f"predict --vocab {q(vocab)} --weights {q(huge_weights)} x",
         "huge.json: larger than 16384 MiB, the most a weights.json may hold"),
        ("sparse 1 GiB vocab.json", f"predict --vocab {q(huge_vocab)} --weights {q(weights)} x",
         "hugevocab.json: larger than 256 MiB, the most a vocab.json may hold"),
        ("lexicon /dev/zero", f"complete -m {q(d)} --lexicon /dev/zero",
         "nextword: /dev/zero: larger than 256 MiB, the most a lexicon.tsv may hold"),
        ("checkpoint.json that is /dev/zero", f"train --resume {q(zero_run)}",
         "checkpoint.json: not JSON: byte 0 cannot start a document here"),
        ("sparse 70 GiB checkpoint.json", f"train --resume {q(huge_run)}",
         "checkpoint.json: larger than 65536 MiB, the most a checkpoint.json may hold"),
    ]
    # Text inputs (eval, score --document, train): a NUL byte is never text.
    code = {name: MODEL for name, _, _ in cases}
    for name, args, message, status in [
            ("eval /dev/urandom", f"eval /dev/urandom -m {q(d)}", ": a NUL byte: not a text file",
             INPUT),
            ("score --document /dev/zero", f"score --document /dev/zero -m {q(d)}",
             "nextword: /dev/zero: byte 0: a NUL byte: not a text file", INPUT),
            ("train /dev/zero", f"train /dev/zero -o {q(os.path.join(tmp, 'z'))}",
             "nextword: /dev/zero: not a regular file (train reads its text again to resume)", IO),
            ("history /dev/zero", f"complete -m {q(d)} --history /dev/zero",
             "nextword: /dev/zero:1: holds a control character (NUL)", INPUT),
            ("history endless pipe", f"complete -m {q(d)} --history <(yes hello)",
             "larger than 16 MiB, the most a history pipe may bring", INPUT)]:
        cases.append((name, args, message))
        code[name] = status
    failures = []
    for name, args, message in cases:
        try:
            r = subprocess.run(["bash", "-c", f"exec {q(NEXTWORD)} {args} </dev/null"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=30, check=False)
        except subprocess.TimeoutExpired:
            failures.append(f"{name}: still reading after 30 s")
            continue
        lines = r.stderr.splitlines()
        if r.returncode != code[name] or r.stdout or len(lines) != 1 or message not in r.stderr:
            failures.append(f"{name}: exit {r.returncode}, stdout {r.stdout[:80]!r}, "
                            f"stderr {r.stderr.strip()[:300]!r}")
    # Process substitution, a pipe of a real model, keeps working.
    r = subprocess.run(["bash", "-c", f"{q(NEXTWORD)} predict --vocab <(cat {q(vocab)}) "
                        f"--weights <(cat {q(weights)}) 'once upon a'"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60,
                       check=False)
    if r.returncode != 0 or not r.stdout.startswith("time "):
        failures.append(f"process substitution: exit {r.returncode}, {r.stdout[:80]!r}, "
                        f"{r.stderr.strip()[:200]!r}")
    r = subprocess.run(["bash", "-c", f"echo 'once upon a' | {q(NEXTWORD)} complete -m {q(d)} "
                        "--history <(echo 'hello there') -f tsv"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60,
                       check=False)
    if r.returncode != 0 or not r.stdout.startswith("a\t"):
        failures.append(f"history by process substitution: exit {r.returncode}, "
                        f"{r.stdout[:80]!r}, {r.stderr.strip()[:200]!r}")
    for path in (noise, huge_weights, huge_vocab, huge_checkpoint):
        os.remove(path)
    return len(cases) + 2, failures


def lock_cases(tmp):
    """One trainer per directory: a second `train -o DIR` or
    `train --resume DIR` is refused at once naming the running one's pid;
    after that one is killed with SIGKILL, its lock blocks nothing."""
    corpus, out = os.path.join(tmp, "lock.txt"), os.path.join(tmp, "locked")
    write_corpus(corpus)
    small = SMALL
    first = subprocess.Popen([NEXTWORD, "train", corpus, "-o", out, "--steps", "10000000",
                              "--checkpoint-every", "1", *small],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    failures = []
    try:
        lock, checkpoint = os.path.join(out, "train.lock"), os.path.join(out, "checkpoint.json")
        for _ in range(300):
            if os.path.exists(checkpoint) and os.path.exists(lock) and open(lock).read():
                break
            time.sleep(0.1)
        message = "%s: another nextword train is running on it (pid %d)" % (out, first.pid)
        for name, args in (("second train -o", ["train", corpus, "-o", out, "--steps", "2",
                                                *small]),
                           ("train --resume", ["train", "--resume", out])):
            r = subprocess.run([NEXTWORD, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=60, check=False)
            if r.returncode != IO or r.stdout or r.stderr.strip() != "nextword: " + message:
                failures.append("%s while another runs: exit %d, %r" % (name, r.returncode,
                                                                         r.stderr.strip()))
    finally:
        first.kill()
        first.wait()
    r = subprocess.run([NEXTWORD, "train", corpus, "-o", out, "--steps", "2", *small],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60,
                       check=False)
    if r.returncode != 0:
        failures.append("train after a killed run: exit %d, %r" % (r.returncode, r.stderr[-200:]))
    return 3, failures


def expect(failures, name, r, code, message, stdout="", progress=False):
    """One run's verdict: the exit code, exactly one stderr line holding
    `message` (with `progress`, train's: its last line), and `stdout`
    (nothing by default) on stdout."""
    err = r.stderr if isinstance(r.stderr, str) else r.stderr.decode("utf-8", "replace")
    out = r.stdout if isinstance(r.stdout, str) else (r.stdout or b"").decode("utf-8", "replace")
    lines = err.splitlines()
    if progress:
        lines = lines[-1:]
    if (r.returncode != code or (stdout is not None and out != stdout)
            or len(lines) != 1 or message not in lines[0] or "internal error" in err):
        failures.append(f"{name}: exit {r.returncode} (expected {code}), stdout {out[:80]!r}, "
                        f"stderr {err.strip()[:300]!r}")


def run(args, stdin=None, stdout=subprocess.PIPE, limit=None, timeout=60):
    """The binary on `args`; with `limit`, under a file size limit of that
    many bytes whose excess fails a write with EFBIG (SIGXFSZ ignored)."""
    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return subprocess.run([NEXTWORD, *args], input=stdin, stdout=stdout, stderr=subprocess.PIPE,
                          timeout=timeout, check=False, preexec_fn=limited if limit else None)


def snapshot(folder):
    """Every file of `folder` and its bytes."""
    files = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            files[name] = f.read()
    return files


def earlier_files(folder):
    """A new `folder` with a weights file and a page already in it, for
    outputs that must leave them as they were: their paths."""
    os.mkdir(folder)
    paths = os.path.join(folder, "w.json"), os.path.join(folder, "page.html")
    for path in paths:
        with open(path, "w", encoding="utf-8") as f:
            f.write("the file that was there before\n")
    return paths


def kept(failures, name, folder, before):
    """The files of `folder` are byte for byte `before`: none changed, none
    left behind (no temporary, no train.lock)."""
    after = snapshot(folder)
    if after != before:
        changed = sorted(set(after) ^ set(before) | {n for n in before if after.get(n) != before[n]})
        failures.append(f"{name}: {folder} changed: {changed}")


def stdout_cases(tmp):
    """stdout on a full device (/dev/full): every command that prints
    results fails with exit 5 and one line, at its first record."""
    fruit = os.path.join(DATA, "examples", "fruit")
    text = os.path.join(tmp, "fruit.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.write("banana apple pie\n")
    runs = [("predict", ["predict", "-m", fruit, "banana apple"], None),
            ("predict stream", ["predict", "-m", fruit], b"banana apple\nphone apple\n"),
            ("attention", ["attention", "-m", fruit, "banana apple"], None),
            ("complete stream", ["complete", "-m", fruit], b"banana ap\n"),
            ("score stream", ["score", "-m", fruit], b"banana apple pie\n"),
            ("lens", ["lens", "-m", fruit, "banana apple"], None),
            ("trace", ["trace", "-m", fruit, "banana apple"], None),
            ("attribute", ["attribute", "-m", fruit, "banana apple"], None),
            ("info", ["info", "-m", fruit], None),
            ("eval", ["eval", "-m", fruit, text], None),
            ("generate", ["generate", "-m", fruit, "-n", "2", "banana apple"], None)]
    failures = []
    with open("/dev/full", "wb") as full:
        for name, args, stdin in runs:
            expect(failures, name + " > /dev/full", run(args, stdin=stdin, stdout=full), IO,
                   "nextword: standard output: cannot write: No space left on device", None)
    return len(runs), failures


def output_file_cases(tmp):
    """Output files that cannot be written: a full device, a directory, a
    read-only place, a file size limit. Exit 5, one line naming the file,
    what was there before left as it was and no temporary behind."""
    fruit = os.path.join(DATA, "examples", "fruit")
    weights = os.path.join(fruit, "weights.json")
    corpus = os.path.join(tmp, "corpus.txt")
    write_corpus(corpus)
    failures, count = [], 0
    page = ["attention", "-m", fruit, "-f", "html", "banana apple", "-o"]
    # As root, a full device of our own: a binary that replaced the file it
    # was given (as builds before the error matrix did) would replace only that.
    full = "/dev/full"
    if os.geteuid() == 0:
        try:
            os.mknod(os.path.join(tmp, "full"), 0o666 | stat.S_IFCHR, os.makedev(1, 7))
            full = os.path.join(tmp, "full")
        except OSError as e:
            print(f"note: cannot make a device node ({e}): /dev/full itself is used")
    for name, args, message in [
            ("convert -o a full device", ["convert", weights, full],
             f"nextword: {full}: cannot write: No space left on device"),
            ("attention -o a full device", page + [full],
             f"nextword: {full}: cannot write: No space left on device"),
            ("convert -o a directory", ["convert", weights, tmp],
             f"nextword: {tmp}: is a directory, expected a file"),
            ("attention -o a directory", page + [tmp],
             f"nextword: {tmp}: is a directory, expected a file"),
            ("train -o a file", ["train", corpus, "-o", corpus, "--steps", "2", *SMALL],
             f"nextword: {corpus}: cannot make the model directory: Not a directory")]:
        count += 1
        expect(failures, name, run(args), IO, message)
    if not stat.S_ISCHR(os.stat(full).st_mode):
        failures.append(f"{full} is no longer a device")

    # A file size limit (always runs): what was there before stays.
    out = os.path.join(tmp, "out")
    target, html = earlier_files(out)
    before = snapshot(out)
    for name, args, path in [
            ("convert over a file, past the size limit",
             ["convert", os.path.join(DATA, "stories", "weights.safetensors"), target], target),
            ("attention -o over a file, past the size limit", page + [html], html)]:
        count += 1
        expect(failures, name, run(args, limit=LIMIT), IO, f"nextword: {path}: cannot write: File too large")
        kept(failures, name, out, before)
    # train into a directory holding an earlier model: the new one cannot be
    # written, the earlier one stays whole and usable.
    model = os.path.join(tmp, "earlier")
    r = run(["train", corpus, "-o", model, "--steps", "4", *SMALL])
    before = snapshot(model)
    count += 1
    expect(failures, "train over an earlier model, past the size limit",
           run(["train", corpus, "-o", model, "--steps", "4", *WIDER], limit=LIMIT),
           IO, "cannot write: File too large", progress=True)
    kept(failures, "train past the size limit", model, before)
    r = run(["predict", "-m", model, "the cat"])
    if r.returncode != OK or not r.stdout:
        failures.append(f"the earlier model after a failed train: exit {r.returncode}")
    # stdout into a regular file that reaches the size limit.
    count += 1
    with open(os.path.join(tmp, "records.txt"), "wb") as sink:
        expect(failures, "predict stream into a file past the size limit",
               run(["predict", "-m", fruit, "-f", "json"], stdin=b"banana apple\n" * 200,
                   stdout=sink, limit=LIMIT),
               IO, "nextword: standard output: cannot write: File too large", None)
    n, more = read_only_cases(tmp, page, weights, corpus)
    return count + n, failures + more


def mounted(folder, options):
    """A tmpfs at `folder` (root only): True when it is there."""
    os.makedirs(folder, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", folder],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
    if r.returncode != 0:
        print(f"note: cannot mount a tmpfs ({r.stderr.strip()}): its cases are skipped")
    return r.returncode == 0


def unmount(folder):
    subprocess.run(["umount", folder], check=False)


def read_only_cases(tmp, page, weights, corpus):
    """A read-only directory: a read-only tmpfs as root (root writes through
    permissions), a folder without write permission otherwise."""
    folder = os.path.join(tmp, "read-only")
    if os.geteuid() == 0:
        if not mounted(folder, "ro,size=64k"):
            return 0, []
        why = "Read-only file system"
    else:
        os.mkdir(folder, 0o555)
        why = "Permission denied"
    failures = []
    try:
        for name, args, message in [
                ("convert into a read-only directory", ["convert", weights, folder + "/w.json"],
                 f"{folder}/w.json: cannot write: {why}"),
                ("attention -o into a read-only directory", page + [folder + "/a.html"],
                 f"{folder}/a.html: cannot write: {why}"),
                ("train -o in a read-only directory",
                 ["train", corpus, "-o", folder + "/m", "--steps", "2", *SMALL],
                 f"{folder}/m: cannot make the model directory: {why}")]:
            expect(failures, name, run(args), IO, message)
    finally:
        if os.geteuid() == 0:
            unmount(folder)
    return 3, failures


def fill(folder):
    """Fills the file system of `folder` to its last byte."""
    fd = os.open(os.path.join(folder, "filler"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        while os.write(fd, b"\0" * 4096) > 0:
            pass
    except OSError:
        pass
    os.close(fd)


def full_disk_cases(tmp):
    """A disk that really fills (a 64 KiB tmpfs, as root): train, convert,
    attention -o and stdout each end with exit 5 and one line, and what the
    disk held before stays whole."""
    if os.geteuid() != 0:
        print("note: not root, so no tmpfs: the full-disk cases are skipped "
              "(the file size limit cases stand in for them)")
        return 0, []
    disk = os.path.join(tmp, "disk")
    if not mounted(disk, "size=64k"):
        return 0, []
    failures = []
    try:
        # train: the first saves fit, a later one does not. The checkpoint
        # before it stays, and the model is usable.
        corpus, model = os.path.join(tmp, "disk-corpus.txt"), os.path.join(disk, "m")
        write_corpus(corpus, 300)
        expect(failures, "train on a disk that fills",
               run(["train", corpus, "-o", model, "--steps", "20", "--checkpoint-every", "5",
                    *WIDER, "-f", "json"]),
               IO, f"{model}/", None, progress=True)
        names = sorted(os.listdir(model))
        if names != ["checkpoint.json", "lexicon.bin", "lexicon.tsv", "vocab.json", "weights.json"]:
            failures.append(f"train on a full disk left {names}")
        with open(os.path.join(model, "checkpoint.json"), encoding="utf-8") as f:
            step = json.load(f)["step"]
        r = run(["predict", "-m", model, "the cat"])
        if step != 5 or r.returncode != OK or not r.stdout:
            failures.append(f"train on a full disk: checkpoint step {step}, predict exit "
                            f"{r.returncode}")
        subprocess.run(["rm", "-rf", model], check=True)
        # A file written before the disk filled stays as it was.
        old = os.path.join(disk, "old")
        target, page = earlier_files(old)
        fill(disk)
        before = snapshot(old)
        default = os.path.join(DATA, "stories", "weights.safetensors")
        fruit = os.path.join(DATA, "examples", "fruit")
        for name, args, path in [
                ("convert onto a full disk", ["convert", default, target], target),
                ("attention -o onto a full disk",
                 ["attention", "-m", fruit, "-f", "html", "banana apple", "-o", page], page)]:
            expect(failures, name, run(args), IO,
                   f"nextword: {path}: cannot write: No space left on device")
            kept(failures, name, old, before)
        fill(disk)  # in case a temporary held something when it was removed
        with open(os.path.join(old, "records.txt"), "wb") as sink:
            expect(failures, "predict stream into a file on a full disk",
                   run(["predict", "-m", fruit, "-f", "json"], stdin=b"banana apple\n" * 200,
                       stdout=sink),
                   IO, "nextword: standard output: cannot write: No space left on device", None)
    finally:
        unmount(disk)
    return 4, failures


def read_lines(stream, n, seconds):
    """The first `n` lines of `stream` (bytes), waiting at most `seconds`."""
    data, deadline = b"", time.monotonic() + seconds
    while data.count(b"\n") < n and time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.1)
        if ready:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                break
            data += chunk
    return data


def stream_signal_cases(tmp):
    """A stream waiting for its next line, stopped by SIGTERM, SIGHUP or
    Ctrl-C: the records already written are whole, one line says why, exit
    130, at once."""
    d = os.path.join(DATA, "stories")
    streams = [["predict", "-f", "json"], ["complete", "-f", "json"], ["score", "-f", "json"],
               ["lens", "-f", "json"], ["attention"]]
    stops = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]
    failures = []
    for args in streams:
        for sig in stops:
            name = f"{args[0]} stream stopped by {sig.name}"
            p = subprocess.Popen([NEXTWORD, *args, "-m", d], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            p.stdin.write(b"once upon a\nthe little girl\n")
            p.stdin.flush()
            out = read_lines(p.stdout, 2, 30)
            p.send_signal(sig)
            try:
                code = p.wait(timeout=10)  # stdin still open: only the signal ends it
            except subprocess.TimeoutExpired:
                p.kill()
                code = p.wait()
                failures.append(f"{name}: still running 10 s after the signal")
            out += p.stdout.read()
            err = p.stderr.read().decode("utf-8", "replace").splitlines()
            p.stdin.close()
            p.stdout.close()
            p.stderr.close()
            records = out.decode("utf-8", "replace").split("\n")
            whole = records[-1] == "" and all(json.loads(r) is not None for r in records[:-1])
            stop = f"nextword: stopped by {sig.name}; every record before it was written whole"
            if code != STOPPED or len(records) != 3 or not whole or err[-1:] != [stop]:
                failures.append(f"{name}: exit {code}, {len(records) - 1} records, stderr {err}")
    return len(streams) * len(stops), failures + flood_signal_cases(tmp)


def flood_signal_cases(tmp):
    """SIGTERM while a stream writes as fast as its reader takes: the output
    ends after a whole record, every record in it is whole."""
    d = os.path.join(DATA, "stories")
    path = os.path.join(tmp, "flood.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("once upon a time there was a little girl named lily\n" * 20000)
    failures = []
    for args in (["predict", "-f", "json"], ["attention"]):
        with open(path, "rb") as stdin:
            p = subprocess.Popen([NEXTWORD, *args, "-m", d, "-t", "1"], stdin=stdin,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out = b""
        while len(out) < 200_000:
            chunk = p.stdout.read(4096)
            if not chunk:
                break
            out += chunk
            time.sleep(0.001)
        p.send_signal(signal.SIGTERM)
        out += p.stdout.read()
        code = p.wait(timeout=30)
        err = p.stderr.read().decode("utf-8", "replace").strip()
        p.stdout.close()
        p.stderr.close()
        lines = out.split(b"\n")
        bad = 0
        for line in lines[:-1]:
            try:
                json.loads(line)
            except ValueError:
                bad += 1
        if code != STOPPED or lines[-1] != b"" or bad or not 0 < len(lines) - 1 < 20000 or \
                "stopped by SIGTERM" not in err:
            failures.append(f"{args[0]} flood stopped by SIGTERM: exit {code}, "
                            f"{len(lines) - 1} records, {bad} not whole, "
                            f"ends {lines[-1][-40:]!r}, stderr {err[-200:]!r}")
    return failures


def train_signal_cases(tmp):
    """SIGTERM and SIGHUP during training, as Ctrl-C: the step ends, the
    model is saved and usable, exit 130, the directory holds only the model."""
    corpus = os.path.join(tmp, "signal.txt")
    write_corpus(corpus)
    failures = []
    for sig in (signal.SIGTERM, signal.SIGHUP):
        out = os.path.join(tmp, "stopped-" + sig.name)
        p = subprocess.Popen([NEXTWORD, "train", corpus, "-o", out, "--steps", "10000000",
                              "--checkpoint-every", "50", *SMALL],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        checkpoint = os.path.join(out, "checkpoint.json")
        for _ in range(300):
            if os.path.exists(checkpoint):
                break
            time.sleep(0.1)
        p.send_signal(sig)
        try:
            code = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            code = p.wait()
        err = p.stderr.read().decode("utf-8", "replace")
        p.stdout.close()
        p.stderr.close()
        names = sorted(os.listdir(out))
        r = run(["predict", "-m", out, "the cat"])
        if code != STOPPED or "interrupted at step" not in err or r.returncode != OK or \
                names != ["checkpoint.json", "lexicon.bin", "lexicon.tsv", "vocab.json", "weights.json"]:
            failures.append(f"train stopped by {sig.name}: exit {code}, files {names}, "
                            f"predict exit {r.returncode}, stderr {err[-200:]!r}")
    return 2, failures


def checkpoint_cases(tmp):
    """`train --resume DIR` of a checkpoint.json edited by hand: refused with
    exit 3 naming the file and field, before memory is allocated for it
    (builds before the error matrix crashed on an empty vocabulary, ran a batch of
    0, and ended two of these in an internal error)."""
    corpus, run_dir = os.path.join(tmp, "resume.txt"), os.path.join(tmp, "resumed")
    write_corpus(corpus)
    r = run(["train", corpus, "-o", run_dir, "--steps", "2", *SMALL])
    path = os.path.join(run_dir, "checkpoint.json")
    with open(path, encoding="utf-8") as f:
        good = json.load(f)

    def edited(edit):
        j = json.loads(json.dumps(good))
        edit(j)
        return json.dumps(j)
    cases = [
        ("a checkpoint that is an array", "[1]", "checkpoint.json: format: not a nextword checkpoint"),
        ("a checkpoint with a number for params", edited(lambda j: j.update(params=5)),
         "checkpoint.json: params: must be a string of base64 float32 values"),
        ("a checkpoint with a word twice",
         edited(lambda j: j.update(vocab=j["vocab"][:-1] + [j["vocab"][2]])),
         "checkpoint.json: vocab: [9]: duplicate word"),
        ("a checkpoint with a batch of 0", edited(lambda j: j["options"].update(batch=0)),
         "checkpoint.json: options: train: --batch must be at least 1"),
        ("a checkpoint with an empty vocabulary", edited(lambda j: j.update(vocab=[])),
         "checkpoint.json: vocab: holds 0 words, fewer than 3"),
        ("a checkpoint without its bos token",
         edited(lambda j: j.update(vocab=["<unk>", "x"] + j["vocab"][2:])),
         'checkpoint.json: vocab: has no entry for bos_token "<bos>"'),
        ("a checkpoint whose options need 2^20 wide layers",
         edited(lambda j: j["options"]["model"].update(d_model=1 << 20)),
         "checkpoint.json: params: holds 464 float32 values, its options need"),
        ("a checkpoint with adam_m cut short", edited(lambda j: j.update(adam_m="AAAA")),
         "checkpoint.json: adam_m: does not hold 464 float32 values"),
    ]
    failures = []
    if r.returncode != OK:
        return len(cases), [f"checkpoint cases: the first run failed: {r.stderr[-200:]!r}"]
    for name, text, message in cases:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        expect(failures, name, run(["train", "--resume", run_dir]), MODEL, message)
    return len(cases), failures


ALL = (endless_cases, checkpoint_cases, lock_cases, stdout_cases, output_file_cases, full_disk_cases,
       stream_signal_cases, train_signal_cases)
