// model/ollama_store.h: a store laid out by hand (manifests/HOST/NAMESPACE/
// MODEL/TAG, blobs/sha256-HEX) read as ollama lays it out: the names it
// lists and takes, the store's place from the environment, and what it
// leaves alone. Each error's exact line is tests/cli/ollama_test.py's.
#include "model/ollama_store.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "temp_dir.h"

using namespace nextword;
using nextword::testing::model_error_of;
using nextword::testing::TempDir;

namespace {

namespace fs = std::filesystem;

const std::string kHex(64, 'a');

// A store in `dir` whose blob sha256-aaa...a is 8 bytes of a GGUF file's start.
void blob(const TempDir& dir) {
  fs::create_directories(dir.dir / "blobs");
  dir.write("blobs/sha256-" + kHex, std::string("GGUF\3\0\0\0", 8));
}

// A manifest at manifests/PATH naming that blob as its model layer.
void manifest(const TempDir& dir, const std::string& path) {
  fs::create_directories((dir.dir / "manifests" / path).parent_path());
  dir.write("manifests/" + path,
            R"({"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.model",)"
            R"("digest":"sha256:)" +
                kHex + R"(","size":8}]})");
}

std::vector<std::string> names(const std::string& store) {
  std::vector<std::string> found;
  for (const OllamaListed& listed : ollama_models(store)) {
    CHECK(listed.model.has_value());
    found.push_back(listed.name);
  }
  return found;
}

}  // namespace

TEST_CASE("ollama: a name's three forms and its default tag", "[ollama]") {
  TempDir store;
  blob(store);
  manifest(store, "registry.ollama.ai/library/tiny/latest");
  manifest(store, "registry.ollama.ai/someone/tiny/q8_0");
  manifest(store, "hf.co/user/Repo-GGUF/Q4_K_M");
  manifest(store, "localhost:5000/team/tiny/v1.2");
  const std::string root = store.dir.string();
  const std::string blob_path = root + "/blobs/sha256-" + kHex;
  for (const auto& [reference, name, file] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"tiny", "tiny:latest", "registry.ollama.ai/library/tiny/latest"},
           {"tiny:latest", "tiny:latest", "registry.ollama.ai/library/tiny/latest"},
           {"library/tiny", "tiny:latest", "registry.ollama.ai/library/tiny/latest"},
           {"registry.ollama.ai/library/tiny", "tiny:latest",
            "registry.ollama.ai/library/tiny/latest"},
           {"someone/tiny:q8_0", "someone/tiny:q8_0", "registry.ollama.ai/someone/tiny/q8_0"},
           {"hf.co/user/Repo-GGUF:Q4_K_M", "hf.co/user/Repo-GGUF:Q4_K_M",
            "hf.co/user/Repo-GGUF/Q4_K_M"},
           {"localhost:5000/team/tiny:v1.2", "localhost:5000/team/tiny:v1.2",
            "localhost:5000/team/tiny/v1.2"}}) {
    INFO(reference);
    const OllamaModel m = find_ollama_model(root, reference);
    CHECK(m.name == name);
    CHECK(m.manifest == root + "/manifests/" + file);
    CHECK(m.blob == blob_path);
    CHECK(m.bytes == 8);
  }
  CHECK(names(root) == std::vector<std::string>{"hf.co/user/Repo-GGUF:Q4_K_M",
                                                "localhost:5000/team/tiny:v1.2",
                                                "someone/tiny:q8_0", "tiny:latest"});
}

TEST_CASE("ollama: the listing takes manifests at their depth, and nothing else", "[ollama]") {
  TempDir store;
  blob(store);
  manifest(store, "registry.ollama.ai/library/tiny/latest");
  // Not manifests: a file at another depth, hidden files and directories,
  // a directory where a tag would be, a partial download's name.
  manifest(store, "registry.ollama.ai/library/stray");
  manifest(store, "registry.ollama.ai/library/tiny/deeper/latest");
  manifest(store, "registry.ollama.ai/library/tiny/.hidden");
  manifest(store, "registry.ollama.ai/.library/tiny/latest");
  manifest(store, "registry.ollama.ai/library/tiny/latest-partial~");
  CHECK(names(store.dir.string()) == std::vector<std::string>{"tiny:latest"});
  CHECK(ollama_models((store.dir / "nowhere").string()).empty());
  CHECK(ollama_models("").empty());
  // A store with no manifests folder yet (ollama made, nothing pulled).
  TempDir empty;
  CHECK(ollama_models(empty.dir.string()).empty());
  CHECK(model_error_of([&] { find_ollama_model(empty.dir.string(), "tiny"); })
            .starts_with(empty.dir.string() + "/manifests/registry.ollama.ai/library/tiny/latest: "
                                              "no manifest: "));
}

TEST_CASE("ollama: the store is $OLLAMA_MODELS, else ~/.ollama/models", "[ollama]") {
  const char* saved_models = std::getenv("OLLAMA_MODELS");
  const char* saved_home = std::getenv("HOME");
  const std::string models = saved_models ? saved_models : "";
  const std::string home = saved_home ? saved_home : "";
  ::setenv("OLLAMA_MODELS", "/srv/ollama", 1);
  ::setenv("HOME", "/home/someone", 1);
  CHECK(ollama_store() == "/srv/ollama");
  ::setenv("OLLAMA_MODELS", "", 1);  // empty is unset, as ollama reads it
  CHECK(ollama_store() == "/home/someone/.ollama/models");
  ::unsetenv("OLLAMA_MODELS");
  CHECK(ollama_store() == "/home/someone/.ollama/models");
  ::unsetenv("HOME");
  CHECK(ollama_store().empty());
  saved_models ? ::setenv("OLLAMA_MODELS", models.c_str(), 1) : ::unsetenv("OLLAMA_MODELS");
  saved_home ? ::setenv("HOME", home.c_str(), 1) : ::unsetenv("HOME");
  CHECK(is_ollama_reference("ollama:tiny"));
  CHECK(!is_ollama_reference("./ollama:tiny"));
  CHECK(!is_ollama_reference("ollama"));
}
