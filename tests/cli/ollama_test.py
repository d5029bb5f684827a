#!/usr/bin/env python3
"""ollama's models (docs/usage.md, "Bring a GGUF model"): `--model
ollama:NAME[:TAG]` reads ollama's manifest of NAME:TAG in its store
($OLLAMA_MODELS, else ~/.ollama/models) and runs the GGUF blob of its model
layer; `nextword models` lists them after the folder models. Each store
here is laid out by the test itself, as ollama lays it out, its blobs small
llama models written by the tests' own GGUF writer
(tests/reference/gguf_writer.py), so nothing of ../shared is needed.

    python3 tests/cli/ollama_test.py build/nextword data
"""
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

import cli_common
from cli_common import MODEL, run

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import gguf_writer as w  # noqa: E402

MODEL_LAYER = "application/vnd.ollama.image.model"
NO_MODEL_LAYER = "layers: no application/vnd.ollama.image.model layer"
NAME_RULE = ("(MODEL, NAMESPACE/MODEL or HOST/NAMESPACE/MODEL, then :TAG; each part letters, "
             "digits, '_', '.' and '-', not starting with '.' or '-')")
TOKENS = (["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
          + ["\u2581", "\u2581t", "\u2581th", "\u2581the", "\u2581c", "\u2581ca", "\u2581cat",
             "\u2581s", "\u2581sa", "\u2581sat", "\u2581o", "\u2581on"])
D, FF, HEADS, KV = 8, 16, 2, 1


def llama(seed):
    """A 1-layer llama GGUF file of random weights: each seed its own model."""
    rng = random.Random(seed)
    g = w.Gguf()
    g.add("general.architecture", w.STRING, "llama")
    g.add("general.name", w.STRING, "tiny %d" % seed)
    for key, value in {"context_length": 32, "embedding_length": D, "block_count": 1,
                       "feed_forward_length": FF, "attention.head_count": HEADS,
                       "attention.head_count_kv": KV}.items():
        g.add("llama." + key, w.U32, value)
    g.add("tokenizer.ggml.model", w.STRING, "llama")
    g.add_array("tokenizer.ggml.tokens", w.STRING, TOKENS)
    g.add_array("tokenizer.ggml.scores", w.F32, [0.0] * 259 + [-float(i) for i in range(12)])
    V, head = len(TOKENS), D // HEADS
    for name, shape in {"token_embd.weight": [D, V], "blk.0.attn_norm.weight": [D],
                        "blk.0.attn_q.weight": [D, D], "blk.0.attn_k.weight": [D, KV * head],
                        "blk.0.attn_v.weight": [D, KV * head], "blk.0.attn_output.weight": [D, D],
                        "blk.0.ffn_norm.weight": [D], "blk.0.ffn_gate.weight": [D, FF],
                        "blk.0.ffn_up.weight": [D, FF], "blk.0.ffn_down.weight": [FF, D],
                        "output_norm.weight": [D]}.items():
        n = 1
        for x in shape:
            n *= x
        values = [1.0] * n if len(shape) == 1 else [rng.gauss(0, 0.3) for _ in range(n)]
        g.tensor(name, shape, w.F32_TYPE, w.floats_bytes(values))
    return g.bytes()


class Store:
    """An ollama store in `root`: blobs/sha256-HEX and manifests/HOST/NAMESPACE/MODEL/TAG."""

    def __init__(self, root):
        self.root = root
        os.makedirs(os.path.join(root, "blobs"), exist_ok=True)
        os.makedirs(os.path.join(root, "manifests"), exist_ok=True)

    def blob(self, data):
        """Stores `data` as ollama does; its digest and size, as a layer gives them."""
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        with open(self.blob_path(digest), "wb") as f:
            f.write(data)
        return digest, len(data)

    def blob_path(self, digest):
        return os.path.join(self.root, "blobs", digest.replace(":", "-"))

    def manifest_path(self, name, tag):
        parts = name.split("/")
        parts = ["registry.ollama.ai", "library"][:3 - len(parts)] + parts
        return os.path.join(self.root, "manifests", *parts, tag)

    def manifest(self, name, tag, text):
        path = self.manifest_path(name, tag)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text if isinstance(text, str) else json.dumps(text))
        return path

    def pull(self, name, tag, model_bytes=None, layers=None):
        """NAME:TAG as `ollama pull` leaves it: a config, the model layer (when
        model_bytes), a template and params; or these `layers` as given."""
        if layers is None:
            layers = []
            if model_bytes is not None:
                digest, size = self.blob(model_bytes)
                layers.append({"mediaType": MODEL_LAYER, "digest": digest, "size": size})
            for kind, data in (("template", b"{{ .Prompt }}"), ("params", b'{"stop":["</s>"]}')):
                digest, size = self.blob(data)
                layers.append({"mediaType": "application/vnd.ollama.image." + kind,
                               "digest": digest, "size": size})
        digest, size = self.blob(b'{"model_format":"gguf","model_family":"llama"}')
        return self.manifest(name, tag, {
            "schemaVersion": 2,
            "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
            "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                       "digest": digest, "size": size},
            "layers": layers})


class Ollama(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="nextword-ollama-")
        cls.store = Store(os.path.join(cls.tmp.name, "store"))
        cls.first, cls.second = llama(1), llama(2)
        cls.store.pull("tiny", "latest", cls.first)
        cls.store.pull("tiny", "small", cls.first)  # another tag of the same blob
        cls.store.pull("tiny", "other", cls.second)
        cls.store.pull("someone/tiny", "latest", cls.second)
        cls.store.pull("hf.co/user/repo", "Q8", cls.first)
        cls.store.pull("cloud", "latest")  # a cloud model's manifest: no model layer
        cls.first_blob = cls.store.blob_path("sha256:" + hashlib.sha256(cls.first).hexdigest())
        cls.second_blob = cls.store.blob_path("sha256:" + hashlib.sha256(cls.second).hexdigest())
        cls.env = {"OLLAMA_MODELS": cls.store.root}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def ran(self, *args, env=None):
        """stdout and stderr of a run that succeeds, their bytes kept: the top
        word of these random models may be one of their byte pieces, not
        UTF-8. stderr is empty but for `score`'s summary."""
        r = run(*args, env={**self.env, **(env or {})}, errors="surrogateescape")
        self.assertEqual(r.returncode, 0, (args, r.stderr))
        self.assertTrue(r.stdout.strip(), args)
        if args[0] != "score":
            self.assertEqual(r.stderr, "", args)
        return r.stdout, r.stderr

    def refused(self, message, *args, env=None):
        r = run(*(args or ("predict", "-m", "ollama:tiny", "the cat")),
                env={**self.env, **(env or {})})
        self.assertEqual((r.returncode, r.stdout), (MODEL, ""), r.stderr)
        self.assertEqual(r.stderr, "nextword: %s\n" % message)

    def test_a_name_runs_its_blob_as_the_file_does(self):
        commands = [["predict", "-k", "4", "the cat"], ["predict", "-f", "json", "the cat sat"],
                    ["generate", "--greedy", "-n", "8", "the cat"],
                    ["score", "the cat sat on the"],
                    ["complete", "the cat s"], ["tokenize", "the cat sat"]]
        models = {"ollama:tiny": self.first_blob, "ollama:tiny:latest": self.first_blob,
                  "ollama:tiny:small": self.first_blob, "ollama:tiny:other": self.second_blob,
                  "ollama:someone/tiny": self.second_blob,
                  "ollama:someone/tiny:latest": self.second_blob,
                  "ollama:hf.co/user/repo:Q8": self.first_blob,
                  "ollama:registry.ollama.ai/library/tiny:other": self.second_blob}
        for args in commands:
            by_file = {blob: self.ran(args[0], "--model", blob, *args[1:])
                       for blob in (self.first_blob, self.second_blob)}
            if args[0] != "tokenize":  # the two models share their vocabulary, not their weights
                self.assertNotEqual(by_file[self.first_blob], by_file[self.second_blob], args)
            for model, blob in models.items():
                with self.subTest(args=args, model=model):
                    self.assertEqual(self.ran(args[0], "--model", model, *args[1:]),
                                     by_file[blob])
        # $NEXTWORD_MODEL too, as the model a command given no --model loads.
        self.assertEqual(self.ran("generate", "--greedy", "-n", "8", "the cat",
                                  env={"NEXTWORD_MODEL": "ollama:tiny:other"}),
                         self.ran("generate", "--greedy", "--model", self.second_blob, "-n", "8",
                                  "the cat"))

    def test_models_lists_them_after_the_folder_models(self):
        r = run("models", "-f", "json", env=self.env)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        listed = [json.loads(line) for line in r.stdout.splitlines()]
        names = [m["name"] for m in listed]
        ollama = ["ollama:hf.co/user/repo:Q8", "ollama:someone/tiny:latest", "ollama:tiny:latest",
                  "ollama:tiny:other", "ollama:tiny:small"]
        self.assertEqual(names, ["english", "stories"] + ollama)
        blobs = [self.first_blob, self.second_blob, self.first_blob, self.second_blob,
                 self.first_blob]
        manifests = [self.store.manifest_path(n, t) for n, t in (
            ("hf.co/user/repo", "Q8"), ("someone/tiny", "latest"), ("tiny", "latest"),
            ("tiny", "other"), ("tiny", "small"))]
        for m, blob, manifest in zip(listed[2:], blobs, manifests):
            self.assertEqual(m, {"name": m["name"], "default": False, "directory": blob,
                                 "parameters": None, "vocabulary": None, "text": "",
                                 "headline": "", "base": "", "bytes": os.path.getsize(blob),
                                 "manifest": manifest})
        # Every name it lists runs.
        for name in ollama:
            self.ran("predict", "-m", name, "the")  # asserts it succeeds
        r = run("models", "--names", env=self.env)
        self.assertEqual((r.returncode, r.stdout, r.stderr),
                         (0, "\n".join(["english", "stories"] + ollama) + "\n", ""))
        # The text form: as a folder model's, the blob's size in bytes for the
        # parameters and words; the default marked, by its name (tiny:small
        # and tiny:latest share a blob).
        r = run("models", env={**self.env, "NEXTWORD_MODEL": "ollama:tiny:small"})
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertTrue(r.stdout.startswith("english\n"), r.stdout)
        self.assertIn("\nstories\n", r.stdout)
        self.assertTrue(r.stdout.endswith(
            "ollama:tiny:latest\n  %d bytes, %s\n"
            "ollama:tiny:other\n  %d bytes, %s\n"
            "ollama:tiny:small (default)\n  %d bytes, %s\n" % (
                len(self.first), self.first_blob, len(self.second), self.second_blob,
                len(self.first), self.first_blob)), r.stdout)
        self.assertEqual(r.stdout.count("(default)"), 1, r.stdout)

    def test_models_without_a_store_lists_the_folder_models_alone(self):
        for env in ({"OLLAMA_MODELS": os.path.join(self.tmp.name, "nowhere")},
                    {"OLLAMA_MODELS": "", "HOME": os.path.join(self.tmp.name, "nowhere")}):
            with self.subTest(env=env):
                r = run("models", "--names", env=env)
                self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "english\nstories\n", ""))

    def test_a_broken_manifest_is_reported_and_the_others_listed(self):
        store = Store(os.path.join(self.tmp.name, "broken-store"))
        store.pull("good", "latest", self.first)
        store.pull("lost", "latest", layers=[{"mediaType": MODEL_LAYER,
                                              "digest": "sha256:" + "0" * 64, "size": 5}])
        env = {"OLLAMA_MODELS": store.root}
        r = run("models", "-f", "json", env=env)
        self.assertEqual(r.returncode, MODEL, r.stderr)
        self.assertEqual(r.stderr, "nextword: %s: layers.0.digest: its blob %s is missing "
                         "(`ollama pull lost:latest` fetches it again)\n"
                         % (store.manifest_path("lost", "latest"),
                            store.blob_path("sha256:" + "0" * 64)))
        names = [json.loads(line)["name"] for line in r.stdout.splitlines()]
        self.assertEqual(names, ["english", "stories", "ollama:good:latest"])
        # --names reads no model: the broken one is named with the others.
        r = run("models", "--names", env=env)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(r.stdout.splitlines()[2:], ["ollama:good:latest", "ollama:lost:latest"])

    def test_the_store_in_home_when_ollama_models_is_unset(self):
        home = os.path.join(self.tmp.name, "home")
        Store(os.path.join(home, ".ollama", "models")).pull("homely", "latest", self.second)
        expected = self.ran("predict", "--model", self.second_blob, "the cat")[0]
        # OLLAMA_MODELS unset (cli_common points it at nothing), then empty.
        unset = {k: v for k, v in os.environ.items() if k != "OLLAMA_MODELS"}
        for env in ({**unset, "HOME": home}, {**unset, "HOME": home, "OLLAMA_MODELS": ""}):
            with self.subTest(ollama_models=env.get("OLLAMA_MODELS")):
                r = subprocess.run([cli_common.NEXTWORD, "predict", "--model", "ollama:homely",
                                    "the cat"], capture_output=True, text=True,
                                   errors="surrogateescape", env=env, check=False)
                self.assertEqual((r.returncode, r.stdout, r.stderr), (0, expected, ""))
                r = subprocess.run([cli_common.NEXTWORD, "models", "--names"],
                                   capture_output=True, text=True, env=env, check=False)
                self.assertEqual(r.stdout.splitlines()[2:], ["ollama:homely:latest"])
        self.refused("%s/.ollama/models: no ollama store here (ollama's models are looked for "
                     "in $OLLAMA_MODELS, else ~/.ollama/models)" % self.tmp.name,
                     env={"HOME": self.tmp.name, "OLLAMA_MODELS": ""})
        self.refused("ollama:tiny: no ollama store: neither $OLLAMA_MODELS nor $HOME is set",
                     env={"HOME": "", "OLLAMA_MODELS": ""})

    def test_each_error_is_one_line_naming_the_file_and_field(self):
        missing = os.path.join(self.tmp.name, "no-store")
        self.refused("%s: no ollama store here (ollama's models are looked for in "
                     "$OLLAMA_MODELS, else ~/.ollama/models)" % missing,
                     env={"OLLAMA_MODELS": missing})
        self.refused("%s: no manifest: ollama has no tiny:big (the tags of tiny: latest, other, "
                     "small)" % self.store.manifest_path("tiny", "big"),
                     "generate", "-m", "ollama:tiny:big", "the")
        self.refused("%s: no manifest: ollama has no nosuch:latest (`ollama pull nosuch:latest` "
                     "fetches it)" % self.store.manifest_path("nosuch", "latest"),
                     "predict", "-m", "ollama:nosuch", "the")
        self.refused("%s: no manifest: ollama has no someone/nosuch:7b (`ollama pull "
                     "someone/nosuch:7b` fetches it)"
                     % self.store.manifest_path("someone/nosuch", "7b"),
                     "score", "-m", "ollama:someone/nosuch:7b", "the")
        self.refused("%s: %s" % (self.store.manifest_path("cloud", "latest"), NO_MODEL_LAYER),
                     "predict", "-m", "ollama:cloud", "the")

        store = Store(os.path.join(self.tmp.name, "bad-store"))
        env = {"OLLAMA_MODELS": store.root}
        good_digest, good_size = store.blob(self.first)
        text_digest, text_size = store.blob(b"not a GGUF file at all")

        def layer(digest=good_digest, size=good_size, kind=MODEL_LAYER):
            return {"mediaType": kind, "digest": digest, "size": size}

        license_layer = layer(kind="application/vnd.ollama.image.license")
        cases = [
            ("text", "not json at all", "not valid JSON: parse error at line 1, column 2: "
             "syntax error while parsing value - invalid literal; last read: 'no' (byte 2)"),
            ("list", "[1, 2]", "not an ollama manifest (a JSON object)"),
            ("nolayers", {"schemaVersion": 2}, NO_MODEL_LAYER),
            ("licensed", {"layers": [license_layer]}, NO_MODEL_LAYER),
            ("twice", {"layers": [layer(), license_layer, layer()]},
             "layers: 2 application/vnd.ollama.image.model layers (layers.0 and layers.2); "
             "nextword reads a model of one file"),
            ("dup", '{"layers": [], "layers": []}', "layers: appears twice in its object"),
            ("md5", {"layers": [license_layer, layer(digest="md5:" + "0" * 32)]},
             'layers.1.digest: "md5:00000000000000000000000000000000", not "sha256:" and 64 '
             "hex digits"),
            ("short", {"layers": [layer(digest="sha256:" + "a" * 63)]},
             'layers.0.digest: "sha256:%s", not "sha256:" and 64 hex digits' % ("a" * 63)),
            ("traversal", {"layers": [layer(digest="sha256:../../../etc/passwd")]},
             'layers.0.digest: "sha256:../../../etc/passwd", not "sha256:" and 64 hex digits'),
            ("nodigest", {"layers": [{"mediaType": MODEL_LAYER, "size": 3}]},
             'layers.0.digest: missing, not "sha256:" and 64 hex digits'),
            ("nosize", {"layers": [{"mediaType": MODEL_LAYER, "digest": good_digest}]},
             "layers.0.size: missing, not the blob's size in bytes"),
            ("negative", {"layers": [layer(size=-1)]},
             "layers.0.size: -1, not the blob's size in bytes"),
            ("lost", {"layers": [layer(digest="sha256:" + "F" * 64)]},
             "layers.0.digest: its blob %s is missing (`ollama pull lost:latest` fetches it "
             "again)" % store.blob_path("sha256:" + "F" * 64)),
            ("bigger", {"layers": [license_layer, layer(size=good_size + 1)]},
             "layers.1.size: %d bytes, but its blob %s has %d (`ollama pull bigger:latest` "
             "fetches it again)" % (good_size + 1, store.blob_path(good_digest), good_size)),
        ]
        for name, manifest, message in cases:
            with self.subTest(name=name):
                path = store.manifest(name, "latest", manifest)
                self.refused("%s: %s" % (path, message), "predict", "-m", "ollama:" + name,
                             "the", env=env)
        store.manifest("prose", "latest", {"layers": [layer(text_digest, text_size)]})
        self.refused("%s: not a GGUF file (the model layer of %s); nextword reads ollama's GGUF "
                     "models" % (store.blob_path(text_digest),
                                 store.manifest_path("prose", "latest")),
                     "predict", "-m", "ollama:prose", "the", env=env)
        # What the blob holds is the GGUF reader's to check, naming the blob.
        cut_digest, cut_size = store.blob(self.first[:100])
        store.manifest("cut", "latest", {"layers": [layer(cut_digest, cut_size)]})
        r = run("predict", "-m", "ollama:cut", "the", env=env)
        self.assertEqual((r.returncode, r.stdout), (MODEL, ""), r.stderr)
        self.assertTrue(r.stderr.startswith("nextword: %s: " % store.blob_path(cut_digest)),
                        r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)

    def test_a_name_never_reaches_outside_the_store(self):
        # A manifest and a blob outside the store, where ../ would lead.
        outside = Store(os.path.join(self.tmp.name, "outside"))
        outside.pull("escape", "latest", self.first)
        for reference, part in [
                ("../outside/manifests/registry.ollama.ai/library/escape", 'a part ".."'),
                ("../escape", 'a part ".."'), ("tiny:..", 'a tag ".."'),
                ("tiny:../../../../outside", 'a part "tiny:.."'),
                ("/etc/passwd", 'a part ""'), ("tiny:", 'a tag ""'), ("", 'a part ""'),
                ("a//b", 'a part ""'), ("./tiny", 'a part "."'), ("-tiny", 'a part "-tiny"'),
                ("tiny:.hidden", 'a tag ".hidden"'), ("a/b/c/d", "4 parts"),
                ("a b", 'a part "a b"'), ("tiny:x:y", 'a tag "x:y"')]:
            with self.subTest(reference=reference):
                self.refused("ollama:%s: not an ollama model's name: %s %s"
                             % (reference, part, NAME_RULE),
                             "predict", "-m", "ollama:" + reference, "the")
        # A file or directory here named ollama:... is given as ./ollama:...
        here = os.path.join(self.tmp.name, "here")
        os.makedirs(here, exist_ok=True)
        shutil.copyfile(self.first_blob, os.path.join(here, "ollama:tiny"))
        r = subprocess.run(
            [cli_common.NEXTWORD, "predict", "-m", "./ollama:tiny", "the cat"], cwd=here,
            capture_output=True, text=True, errors="surrogateescape",
            env={**os.environ, **self.env}, check=False)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(r.stdout, self.ran("predict", "-m", self.first_blob, "the cat")[0])


if __name__ == "__main__":
    cli_common.main(sys.modules[__name__])
