#!/usr/bin/env python3
"""The Debian package, as Debian users take it in (docs/usage.md, "Install
the package"):

  - `cpack -G DEB` in the build folder writes nextword_VERSION_amd64.deb,
    VERSION that of `nextword --version` and of CHANGELOG.md;
  - lintian reports neither an error nor a warning;
  - `dpkg-deb --contents` holds the binary, the man page, the completion,
    both models under /usr/share/nextword/models, copyright, changelog, the
    documentation (README.md, docs/*.md and data/'s, as in the repository,
    every link between them holding), the service and its /etc/default
    file, and nothing else; its Depends are
    the packages owning the libraries the binary links (read here from the
    binary's NEEDED entries and `dpkg -S`, not from dpkg-shlibdeps);
  - the changelog is CHANGELOG.md's releases, newest first;
  - a fresh Debian 12 root made by mmdebstrap from the Debian archive, where
    `apt-get install ./nextword_*.deb` resolves the dependencies; inside it
    tests/package/in_root.sh runs predict, models, man -w (whose SEE ALSO
    names the documents), lists the documentation, the completion
    and `systemd-analyze verify` of the unit;
  - that root booted by systemd-nspawn with nextword.socket enabled:
    tests/package/boot_probe.sh's first connection starts the service,
    which answers it; it runs as its own user with the key postinst made as
    a credential, 401 without the key and 200 with it, and stops cleanly;
  - `systemd-analyze security --offline=yes` rates the unit at most 2.0.

The root takes about a minute to make and seconds to boot (network to
deb.debian.org needed: without it the test fails, never skips). Needs root
(mmdebstrap, chroot, systemd-nspawn).

    python3 tests/package/package_test.py build/nextword build
"""
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

NEXTWORD = BUILD = None
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = ROOT = DEB = BOOTED = None
MAX_EXPOSURE = 2.0
# The root's commands run in the environment of a fresh login there, none
# of this process's (NEXTWORD_MODEL and the like).
CLEAN = "env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8"


# Where the package puts the documentation: README.md, docs/ and data/'s
# documents, laid out as in the repository.
DOC = "/usr/share/doc/nextword/"
# Files of the repository the documents link to which the package does not
# carry in DOC: CHANGELOG.md is there as Debian's changelog.gz, the English
# model's ablations.md beside the model in /usr/share/nextword/models/english,
# and the example model and the PyTorch reference are the source tree's.
SOURCE_ONLY_LINKS = {"CHANGELOG.md", "data/english/ablations.md", "data/examples/fruit",
                     "tests/reference/nextword_ref.py"}


def documents():
    """The documents the package carries in DOC, as repository paths."""
    docs = sorted("docs/" + f for f in os.listdir(os.path.join(SOURCE, "docs"))
                  if f.endswith(".md"))
    return ["README.md"] + docs + ["data/README.md", "data/FORMAT.md", "data/ablations.md"]


def run(*args, **kw):
    return subprocess.run(args, capture_output=True, text=True, check=False, **kw)


def result(name, folder=None):
    with open(os.path.join(folder or RESULTS, name), encoding="utf-8", newline="") as f:
        return f.read()


def setUpModule():
    global RESULTS, ROOT, DEB, BOOTED
    version = run(NEXTWORD, "--version").stdout.split()[-1]
    for old in glob.glob(os.path.join(BUILD, "nextword_*.deb")):
        os.remove(old)
    r = run("cpack", "-G", "DEB", cwd=BUILD)
    if r.returncode != 0:
        raise AssertionError("cpack -G DEB failed:\n" + r.stdout[-3000:] + r.stderr[-3000:])
    DEB = os.path.join(BUILD, f"nextword_{version}_amd64.deb")
    if not os.path.isfile(DEB):
        raise AssertionError(f"cpack wrote no {DEB}: {os.listdir(BUILD)}")
    tmp = tempfile.mkdtemp(prefix="nextword-package-")
    ROOT, RESULTS = os.path.join(tmp, "root"), os.path.join(tmp, "results")
    BOOTED = os.path.join(ROOT, "var", "lib", "nextword-probe")
    name = os.path.basename(DEB)
    here = os.path.join(SOURCE, "tests", "package")
    r = run("mmdebstrap", "--variant=apt",
            "--include=man-db,bash-completion,systemd,systemd-sysv,dbus",
            f"--customize-hook=copy-in {DEB} {here}/in_root.sh /tmp",
            "--customize-hook=mkdir -p \"$1/tmp/results\"",
            f"--customize-hook=chroot \"$1\" {CLEAN} apt-get install -y --no-install-recommends "
            f"/tmp/{name} >\"$1/tmp/results/apt\" 2>&1",
            f"--customize-hook=chroot \"$1\" {CLEAN} /tmp/in_root.sh",
            f"--customize-hook=sync-out /tmp/results {RESULTS}",
            # For the boot: the socket enabled, and the probe that runs after it.
            f"--customize-hook=copy-in {here}/boot_probe.sh /usr/local/sbin",
            f"--customize-hook=copy-in {here}/boot_probe.service /etc/systemd/system",
            "--customize-hook=chroot \"$1\" systemctl enable nextword.socket boot_probe",
            "bookworm", ROOT)
    if r.returncode != 0:
        raise AssertionError("mmdebstrap could not make the Debian 12 root and install the "
                             "package in it (deb.debian.org reachable?):\n" + r.stderr[-4000:])
    # The root booted: systemd runs nextword.service, boot_probe.sh looks at
    # it and powers off. No machined or D-Bus here: --register=no, --keep-unit;
    # its own network namespace, so that port 8080 is free whatever the host runs.
    r = run("timeout", "600", "systemd-nspawn", "--quiet", "--register=no", "--keep-unit",
            "--private-network", f"--directory={ROOT}", "--boot", "--console=pipe")
    if not os.path.exists(os.path.join(BOOTED, "done")):
        raise AssertionError(f"systemd-nspawn --boot exited {r.returncode} before the probe "
                             "finished:\n" + r.stdout[-3000:] + r.stderr[-3000:])


def tearDownModule():
    if ROOT and not os.environ.get("NEXTWORD_KEEP_ROOT"):  # kept to look into a failure
        shutil.rmtree(os.path.dirname(ROOT), ignore_errors=True)


class Package(unittest.TestCase):
    def test_lintian_no_errors_or_warnings(self):
        r = run("lintian", "--allow-root", "--fail-on", "error,warning", DEB)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotRegex(r.stdout, r"(?m)^[EW]: ")

    def test_contents(self):
        r = run("dpkg-deb", "--contents", DEB)
        self.assertEqual(r.returncode, 0, r.stderr)
        files = {line.split()[5][1:] for line in r.stdout.splitlines()
                 if not line.startswith("d")}
        models = {f"/usr/share/nextword/models/{m}/{f}" for m in ("english", "stories")
                  for f in ("card.json", "lexicon.tsv", "lexicon.bin", "vocab.json", "vocab.bin",
                            "weights.safetensors")}
        # The English model's memory (mapped at load), and each lexicon's and
        # vocabulary's index, made at build time.
        models.add("/usr/share/nextword/models/english/memory.bin")
        self.assertEqual(files, {
            "/usr/bin/nextword", "/usr/share/man/man1/nextword.1.gz",
            "/usr/share/bash-completion/completions/nextword",
            "/usr/share/doc/nextword/copyright", "/usr/share/doc/nextword/changelog.gz",
            "/usr/share/nextword/models/english/ablations.md",
            "/lib/systemd/system/nextword.service", "/lib/systemd/system/nextword.socket",
            "/etc/default/nextword"} | models | {DOC + d for d in documents()})
        control = run("dpkg-deb", "--ctrl-tarfile", DEB)
        self.assertEqual(run("dpkg-deb", "-f", DEB, "Package").stdout.strip(), "nextword")
        self.assertEqual(control.returncode, 0)

    def test_documentation_is_the_repository_s_with_its_links_holding(self):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["dpkg-deb", "-x", DEB, tmp], check=True)
            root = tmp + DOC
            broken = []
            for name in documents():
                with open(os.path.join(root, name), "rb") as f:
                    installed = f.read()
                with open(os.path.join(SOURCE, name), "rb") as f:
                    self.assertEqual(installed, f.read(), name)
                for target in re.findall(r"\]\(([^)#\s]+)", installed.decode()):
                    if re.match(r"[a-z]+:", target):  # https: and mailto: are not files
                        continue
                    path = os.path.normpath(os.path.join(os.path.dirname(name), target))
                    if not os.path.exists(os.path.join(root, path)) and \
                            path not in SOURCE_ONLY_LINKS:
                        broken.append(f"{name}: {target}")
            self.assertEqual(broken, [])
            # Each link left out on purpose is still a link of the documents.
            for path in SOURCE_ONLY_LINKS:
                self.assertTrue(os.path.exists(os.path.join(SOURCE, path)), path)

    def test_depends_are_the_linked_libraries_packages(self):
        depends = run("dpkg-deb", "-f", DEB, "Depends").stdout
        named = {d.split()[0] for d in depends.strip().split(", ")}
        needed = re.findall(r"NEEDED\s+(\S+)", run("objdump", "-p", NEXTWORD).stdout)
        owners = set()
        for lib in needed:
            path = run("/sbin/ldconfig", "-p").stdout
            found = re.search(rf"^\s+{re.escape(lib)} \(libc6,x86-64\) => (\S+)$", path, re.M)
            self.assertTrue(found, lib)
            real = os.path.realpath(found.group(1))
            owner = run("dpkg", "-S", real)
            if owner.returncode != 0:  # merged /usr: dpkg knows the /lib path
                owner = run("dpkg", "-S", real.replace("/usr/lib/", "/lib/", 1))
            self.assertEqual(owner.returncode, 0, owner.stderr)
            owners.add(owner.stdout.split(":")[0])
        self.assertEqual(named, owners, f"Depends: {depends}; NEEDED: {needed}")

    def test_changelog_is_changelog_md(self):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["dpkg-deb", "-x", DEB, tmp], check=True)
            with gzip.open(os.path.join(tmp, "usr/share/doc/nextword/changelog.gz"), "rt") as f:
                debian = f.read()
        with open(os.path.join(SOURCE, "CHANGELOG.md"), encoding="utf-8") as f:
            released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - ", f.read(), re.M)
        self.assertEqual(re.findall(r"^nextword \((\S+)\) unstable; urgency=medium$", debian,
                                    re.M), released)
        self.assertEqual(released[0], run(NEXTWORD, "--version").stdout.split()[-1])
        checked = run("dpkg-parsechangelog", "-l-", "--all", input=debian)
        self.assertEqual(checked.returncode, 0, checked.stderr)
        self.assertNotIn("warning", checked.stderr)


class InstalledInDebian12(unittest.TestCase):
    def ok(self, step):
        self.assertEqual(result(step + ".rc").strip(), "0", result(step + ".err"))
        self.assertEqual(result(step + ".err"), "")
        return result(step)

    def test_apt_installed_it(self):
        log = result("apt")
        self.assertIn("Setting up nextword (", log)

    def test_version(self):
        self.assertEqual(self.ok("version"), run(NEXTWORD, "--version").stdout)

    def test_predict_with_the_installed_default_model(self):
        self.assertEqual(self.ok("predict").split()[0], "States")
        self.assertEqual(self.ok("stories").split()[0], "time")

    def test_models_lists_the_installed_models(self):
        models = [json.loads(line) for line in self.ok("models_json").splitlines()]
        self.assertEqual([(m["name"], m["directory"], m["default"]) for m in models],
                         [("english", "/usr/share/nextword/models/english", True),
                          ("stories", "/usr/share/nextword/models/stories", False)])
        self.assertTrue(self.ok("models").startswith("english (default)\n"))

    def test_man_page(self):
        self.assertEqual(self.ok("man_w"), "/usr/share/man/man1/nextword.1.gz\n")
        page = self.ok("man")
        self.assertRegex(page, r"(?m)^NAME\n\s+nextword - ")
        # SEE ALSO names each installed document, where the package put it.
        see_also = page[page.index("\nSEE ALSO\n"):]
        self.assertIn(DOC.rstrip("/"), " ".join(see_also.split()))
        named = re.findall(r"(?m)^\s+((?:docs/|data/)?[\w.]+\.md)$", see_also)
        self.assertEqual(sorted(named), sorted(documents()[:-1]))
        self.assertEqual(sorted(self.ok("docs").split()), sorted(
            os.path.basename(d) for d in documents() if d.startswith("docs/")))

    def test_bash_completion(self):
        listed = self.ok("completion").split()
        self.assertIn("predict", listed)
        self.assertIn("--model", listed)

    def test_the_service_as_systemd_runs_it(self):
        self.assertEqual(self.ok("key_mode"), "600 root\n")
        self.assertEqual((result("enabled"), result("enabled.rc")),
                         ("disabled\ndisabled\n", "1\n"))

        def booted(name):
            return result(name, BOOTED)

        # Started by the first connection to the socket, answering it.
        self.assertEqual(booted("before"), "active\ninactive\n", booted("journal"))
        self.assertEqual(booted("active"), "active\n", booted("journal"))
        self.assertNotEqual(booted("uid").strip(), "0")  # DynamicUser
        self.assertIn("--api-key-file /run/credentials/nextword.service/api-key",
                      booted("cmdline"))
        self.assertRegex(booted("nokey"), r"^HTTP/1\.[01] 401 ")
        answer = booted("key")
        self.assertRegex(answer, r"^HTTP/1\.[01] 200 ")
        record = json.loads(answer.split("\r\n\r\n", 1)[1])
        self.assertEqual(record["predictions"][0]["word"], "States")
        # SIGTERM from `systemctl stop`: the server finishes and exits 0.
        self.assertEqual(booted("stopped"), "Result=success\nExecMainStatus=0\n")
        self.assertRegex(booted("journal"), r"nextword: listening on http://127\.0\.0\.1:8080 "
                                            r"\(\d+ workers?; the socket from systemd\)")

    def test_systemd_analyze(self):
        self.ok("verify")  # in the root: its systemd, its man page
        unit = os.path.join(ROOT, "lib/systemd/system/nextword.service")
        r = run("systemd-analyze", "security", "--offline=yes", unit)
        score = re.search(r"Overall exposure level for nextword\.service: (\d+\.\d+) (\w+)", r.stdout)
        self.assertTrue(score, r.stdout[-2000:])
        self.assertLessEqual(float(score.group(1)), MAX_EXPOSURE, r.stdout)
        self.assertEqual(score.group(2), "OK")


if __name__ == "__main__":
    NEXTWORD, BUILD = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=sys.argv[:1], verbosity=2)
