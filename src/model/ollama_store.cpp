#include "model/ollama_store.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "format/file_bytes.h"
#include "format/json_scan.h"

namespace nextword {

namespace fs = std::filesystem;

namespace {

constexpr const char* kModelLayer = "application/vnd.ollama.image.model";
constexpr const char* kDefaultHost = "registry.ollama.ai";
constexpr const char* kLibrary = "library";
// A manifest names a handful of layers in well under a kilobyte.
constexpr size_t kMaxManifestBytes = size_t{1} << 20;

// A part of a model's name or its tag, as ollama spells them: letters,
// digits, '_', '.' and '-' (a host also ':', for its port), not starting
// with '.' or '-': never "", "." or "..", never a path of its own.
bool is_part(const std::string& part, bool host) {
  if (part.empty() || part.front() == '.' || part.front() == '-') return false;
  return std::all_of(part.begin(), part.end(), [host](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-' || (host && c == ':');
  });
}

// HOST/NAMESPACE/MODEL and TAG, the path of a manifest under manifests/.
struct Reference {
  std::array<std::string, 3> parts;
  std::string tag;
};

// NAME:TAG as ollama lists it: MODEL of its library, NAMESPACE/MODEL of its
// registry, HOST/NAMESPACE/MODEL of another host.
std::string shown_name(const Reference& r) {
  std::string name = r.parts[2];
  if (r.parts[0] != kDefaultHost || r.parts[1] != kLibrary) name = r.parts[1] + "/" + name;
  if (r.parts[0] != kDefaultHost) name = r.parts[0] + "/" + name;
  return name + ":" + r.tag;
}

Reference parse_reference(const std::string& reference) {
  const std::string given = kOllamaPrefix + reference;
  auto refuse = [&](const std::string& why) {
    return model_error(given, "",
                       "not an ollama model's name: " + why +
                           " (MODEL, NAMESPACE/MODEL or HOST/NAMESPACE/MODEL, then :TAG; each "
                           "part letters, digits, '_', '.' and '-', not starting with '.' or '-')");
  };
  const size_t slash = reference.rfind('/');
  const size_t colon = reference.find(':', slash == std::string::npos ? 0 : slash + 1);
  const std::string name = reference.substr(0, colon);
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t end = name.find('/', start);
    parts.push_back(name.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!is_part(parts[i], parts.size() == 3 && i == 0)) {
      throw refuse("a part \"" + parts[i] + "\"");
    }
  }
  if (parts.size() > 3) throw refuse(std::to_string(parts.size()) + " parts");
  Reference r{{kDefaultHost, kLibrary, ""}, colon == std::string::npos ? "latest" : ""};
  if (colon != std::string::npos) r.tag = reference.substr(colon + 1);
  if (!is_part(r.tag, false)) throw refuse("a tag \"" + r.tag + "\"");
  std::copy(parts.begin(), parts.end(), r.parts.end() - static_cast<std::ptrdiff_t>(parts.size()));
  return r;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// The regular files of `dir` whose names are parts, sorted.
std::vector<std::string> part_files(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (is_part(name, false) && entry.is_regular_file(ec)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool is_sha256(const std::string& digest) {
  const std::string_view prefix = "sha256:";
  if (digest.size() != prefix.size() + 64 || !digest.starts_with(prefix)) return false;
  return std::all_of(
      digest.begin() + static_cast<std::ptrdiff_t>(prefix.size()), digest.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      });
}

// The model layer of the manifest at `path`, its blob checked; nullopt when
// the manifest names no model layer.
std::optional<OllamaModel> read_manifest(const fs::path& store, const std::string& path,
                                         const std::string& name) {
  const std::shared_ptr<FileBytes> file = FileBytes::open(
      path, FileLimits{kMaxManifestBytes, "an ollama manifest", check_json_object_start});
  size_t offset = 0;
  if (const std::optional<json_scan::Node> skeleton = json_scan::scan(file->text(), &offset)) {
    if (std::optional<std::string> key = json_scan::first_duplicate(*skeleton)) {
      throw model_error(path, *key, "appears twice in its object");
    }
  }
  const nlohmann::json manifest = json_scan::parse_small(file->text(), path, "");
  if (!manifest.is_object()) throw model_error(path, "", "not an ollama manifest (a JSON object)");
  const auto layers = manifest.find("layers");
  std::vector<size_t> found;
  for (size_t i = 0; layers != manifest.end() && layers->is_array() && i < layers->size(); ++i) {
    const nlohmann::json& layer = (*layers)[i];
    if (layer.is_object() && layer.value("mediaType", nlohmann::json()) == kModelLayer) {
      found.push_back(i);
    }
  }
  if (found.empty()) return std::nullopt;
  if (found.size() > 1) {
    throw model_error(path, "layers",
                      std::to_string(found.size()) + " " + kModelLayer + " layers (layers." +
                          std::to_string(found[0]) + " and layers." + std::to_string(found[1]) +
                          "); nextword reads a model of one file");
  }
  const std::string field = "layers." + std::to_string(found[0]);
  const nlohmann::json& layer = (*layers)[found[0]];
  const nlohmann::json digest = layer.value("digest", nlohmann::json());
  if (!digest.is_string() || !is_sha256(digest.get<std::string>())) {
    throw model_error(path, field + ".digest",
                      (digest.is_null() ? std::string("missing") : digest.dump()) +
                          ", not \"sha256:\" and 64 hex digits");
  }
  const nlohmann::json size = layer.value("size", nlohmann::json());
  if (!size.is_number_unsigned()) {
    throw model_error(
        path, field + ".size",
        (size.is_null() ? std::string("missing") : size.dump()) + ", not the blob's size in bytes");
  }
  OllamaModel m{name, path,
                (store / "blobs" / ("sha256-" + digest.get<std::string>().substr(7))).string(),
                size.get<uint64_t>()};
  const std::string pull = " (`ollama pull " + name + "` fetches it again)";
  std::error_code ec;
  if (!fs::is_regular_file(m.blob, ec)) {
    throw model_error(path, field + ".digest", "its blob " + m.blob + " is missing" + pull);
  }
  const uintmax_t has = fs::file_size(m.blob, ec);
  if (ec || has != m.bytes) {
    throw model_error(path, field + ".size",
                      std::to_string(m.bytes) + " bytes, but its blob " + m.blob + " has " +
                          (ec ? "an unknown size" : std::to_string(has)) + pull);
  }
  std::ifstream in(m.blob, std::ios::binary);
  std::array<char, 4> magic{};
  in.read(magic.data(), magic.size());
  if (std::string_view(magic.data(), magic.size()) != "GGUF") {
    throw model_error(
        m.blob, "",
        "not a GGUF file (the model layer of " + path + "); nextword reads ollama's GGUF models");
  }
  return m;
}

}  // namespace

bool is_ollama_reference(const std::string& value) { return value.starts_with(kOllamaPrefix); }

std::string ollama_store() {
  const char* set = std::getenv("OLLAMA_MODELS");
  if (set != nullptr && *set != '\0') return set;
  const char* home = std::getenv("HOME");
  return home != nullptr && *home != '\0' ? std::string(home) + "/.ollama/models" : "";
}

OllamaModel find_ollama_model(const std::string& store, const std::string& reference) {
  const Reference r = parse_reference(reference);
  const std::string given = kOllamaPrefix + reference;
  if (store.empty()) {
    throw model_error(given, "", "no ollama store: neither $OLLAMA_MODELS nor $HOME is set");
  }
  std::error_code ec;
  if (!fs::is_directory(store, ec)) {
    throw model_error(store, "",
                      "no ollama store here (ollama's models are looked for in $OLLAMA_MODELS, "
                      "else ~/.ollama/models)");
  }
  const fs::path dir = fs::path(store) / "manifests" / r.parts[0] / r.parts[1] / r.parts[2];
  const std::string path = (dir / r.tag).string();
  const std::string name = shown_name(r);
  const std::string model = name.substr(0, name.rfind(':'));
  if (!fs::is_regular_file(path, ec)) {
    const std::vector<std::string> tags = part_files(dir);
    throw model_error(path, "",
                      "no manifest: ollama has no " + name +
                          (tags.empty() ? " (`ollama pull " + name + "` fetches it)"
                                        : " (the tags of " + model + ": " + joined(tags) + ")"));
  }
  std::optional<OllamaModel> m = read_manifest(store, path, name);
  if (!m) throw model_error(path, "layers", std::string("no ") + kModelLayer + " layer");
  return *m;
}

std::vector<OllamaListed> ollama_models(const std::string& store) {
  std::vector<OllamaListed> listed;
  std::error_code ec;
  if (store.empty() || !fs::is_directory(store, ec)) return listed;
  // manifests/HOST/NAMESPACE/MODEL/TAG: three levels of directories, then files.
  std::vector<std::pair<Reference, fs::path>> level{{Reference{}, fs::path(store) / "manifests"}};
  for (size_t depth = 0; depth < 3; ++depth) {
    std::vector<std::pair<Reference, fs::path>> next;
    for (const auto& [r, dir] : level) {
      for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
        const std::string part = entry.path().filename().string();
        if (!is_part(part, depth == 0) || !entry.is_directory(ec)) continue;
        Reference deeper = r;
        deeper.parts[depth] = part;
        next.emplace_back(deeper, entry.path());
      }
    }
    level = std::move(next);
  }
  for (auto& [r, dir] : level) {
    for (const std::string& tag : part_files(dir)) {
      r.tag = tag;
      OllamaListed entry{shown_name(r), std::nullopt, std::nullopt};
      try {
        entry.model = read_manifest(store, (dir / tag).string(), entry.name);
        if (!entry.model) continue;  // no model layer: not a model
      } catch (const Error& e) {
        entry.error = e;
      }
      listed.push_back(std::move(entry));
    }
  }
  std::sort(listed.begin(), listed.end(),
            [](const OllamaListed& a, const OllamaListed& b) { return a.name < b.name; });
  return listed;
}

}  // namespace nextword
