#include "lsp/server.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "base/error.h"
#include "base/file_output.h"
#include "lsp/params.h"
#include "lsp/prose.h"
#include "text/utf8.h"

namespace nextword::lsp {
namespace {

using nlohmann::json;

// "61.2%", or "<0.1%".
std::string percent(double probability) {
  if (probability < 0.0005) return "<0.1%";
  char s[32];
  std::snprintf(s, sizeof s, "%.1f%%", 100 * probability);
  return s;
}

// The lines of `text` that `before` did not hold (as many times as they are
// new), in order, without those holding control characters (a history file
// is plain text) or nothing but whitespace.
std::string new_lines(const std::string& before, const std::string& text) {
  std::unordered_multiset<std::string_view> old;
  auto each_line = [](const std::string& s, auto&& f) {
    for (size_t start = 0; start < s.size();) {
      size_t end = s.find_first_of("\r\n", start);
      if (end == std::string::npos) end = s.size();
      f(std::string_view(s).substr(start, end - start));
      start = end + 1;
    }
  };
  each_line(before, [&](std::string_view line) { old.insert(line); });
  std::string added;
  each_line(text, [&](std::string_view line) {
    if (const auto it = old.find(line); it != old.end()) {
      old.erase(it);
      return;
    }
    const bool plain =
        std::none_of(line.begin(), line.end(), [](char c) { return is_control(c) && c != '\t'; });
    if (plain && line.find_first_not_of(" \t") != std::string_view::npos) {
      added.append(line).push_back('\n');
    }
  });
  return added;
}

}  // namespace

struct Server::OpenDocument {
  Document text;
  std::string language;
  bool too_large = false;              // dropped: over kMaxDocumentBytes
  std::string saved;                   // the text at open or at the last save (with a history)
  std::optional<Completer> completer;  // made at the first completion
};

Server::Server(const Model& model, const LexiconIndex* lexicon, ServerSetup setup, Send send,
               Log log)
    : model_(model),
      lexicon_(lexicon),
      setup_(std::move(setup)),
      send_(std::move(send)),
      log_(std::move(log)) {
  if (!setup_.settings.history.empty()) setup_.settings.complete.learn = true;
}

Server::~Server() = default;

void Server::cancel(const json& id) { canceled_.insert(id.dump()); }

bool Server::take_canceled(const json& id) { return canceled_.erase(id.dump()) > 0; }

void Server::respond_error(const json& id, int code, const std::string& message) {
  send_({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

void Server::refuse(int code, const std::string& what) {
  log_(what);
  // What a frame's bytes or a parser said may quote bytes that are not
  // UTF-8: escaped, they keep the message JSON.
  respond_error(nullptr, code, escape_bytes(what));
}

void Server::warn(const std::vector<std::string>& problems, int type) {
  for (const std::string& p : problems) {
    log_(p);
    send_({{"jsonrpc", "2.0"},
           {"method", "window/showMessage"},
           {"params", {{"type", type}, {"message", "nextword: " + p}}}});
  }
}

void Server::receive(const json& message) {
  if (!message.is_object()) {
    refuse(kInvalidRequest, "message: not a JSON-RPC message (an object)");
    return;
  }
  const auto id = message.find("id");
  const bool has_id = id != message.end();
  if (has_id && !id->is_number_integer() && !id->is_string()) {
    refuse(kInvalidRequest, "id: not a number or a string");
    return;
  }
  const json reply_id = has_id ? *id : json(nullptr);
  const auto method = message.find("method");
  const auto version = message.find("jsonrpc");
  std::string problem;
  if (version == message.end() || *version != "2.0") {
    problem = "jsonrpc: not \"2.0\"";
  } else if (method == message.end()) {
    // A response to a request of ours: the server sends none, so nothing waits for it.
    if (has_id && (message.contains("result") || message.contains("error"))) return;
    problem = "method: missing";
  } else if (!method->is_string()) {
    problem = "method: not a string";
  }
  if (!problem.empty()) {
    if (has_id) {
      log_(problem);
      respond_error(reply_id, kInvalidRequest, problem);
    } else {
      refuse(kInvalidRequest, problem);
    }
    return;
  }
  const std::string& name = method->get_ref<const std::string&>();
  static const json kNoParams = json::object();
  const auto params_at = message.find("params");
  const json& params = params_at == message.end() ? kNoParams : *params_at;
  if (has_id) {
    request(reply_id, name, params);
  } else {
    notification(name, params);
  }
}

void Server::request(const json& id, const std::string& method, const json& params) {
  if (take_canceled(id)) {
    respond_error(id, kRequestCancelled, method + ": canceled");
    return;
  }
  if (!initialized_ && method != "initialize") {
    respond_error(id, kServerNotInitialized, method + ": the server is not initialized yet");
    return;
  }
  if (shut_down_) {
    respond_error(id, kInvalidRequest, method + ": the server is shut down, only exit may follow");
    return;
  }
  try {
    json result;
    if (method == "initialize") {
      if (initialized_) {
        respond_error(id, kInvalidRequest, "initialize: already initialized");
        return;
      }
      result = initialize(params);
    } else if (method == "shutdown") {
      shut_down_ = true;
      result = nullptr;
    } else if (method == "textDocument/completion") {
      result = completion(params);
    } else {
      respond_error(id, kMethodNotFound, method + ": unknown method");
      return;
    }
    send_({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
  } catch (const ParamsError& e) {
    respond_error(id, kInvalidParams, method + ": " + e.message);
  } catch (const Error& e) {
    respond_error(id, kRequestFailed, method + ": " + e.what());
  }
}

void Server::notification(const std::string& method, const json& params) {
  if (method == "exit") {
    exit_code_ = shut_down_ ? 0 : 1;
    return;
  }
  if (method == "$/cancelRequest") {
    // Every request before it has been answered by now: forget its id.
    if (params.is_object() && params.contains("id")) take_canceled(params["id"]);
    return;
  }
  // Before initialize, notifications are dropped (LSP 3.17).
  if (!initialized_ || method.starts_with("$/")) return;
  try {
    if (method == "textDocument/didOpen") {
      did_open(params);
    } else if (method == "textDocument/didChange") {
      did_change(params);
    } else if (method == "textDocument/didClose") {
      documents_.erase(document_uri(params));
    } else if (method == "textDocument/didSave") {
      did_save(params);
    } else if (method == "workspace/didChangeConfiguration") {
      did_change_configuration(params);
    }
  } catch (const ParamsError& e) {
    log_(method + ": " + e.message);
  } catch (const Error& e) {
    warn({method + ": " + e.what()}, 1);
  }
}

json Server::initialize(const json& params) {
  if (!params.is_object()) bad("params", "not an object");
  // The client's position encodings, in its order of preference; UTF-16
  // when it offers none.
  const json* offered = nullptr;
  if (const auto c = params.find("capabilities"); c != params.end() && c->is_object()) {
    if (const auto g = c->find("general"); g != c->end() && g->is_object()) {
      if (const auto e = g->find("positionEncodings"); e != g->end() && e->is_array()) {
        offered = &*e;
      }
    }
  }
  if (offered != nullptr) {
    for (const json& name : *offered) {
      const Encoding choices[] = {Encoding::kUtf16, Encoding::kUtf8, Encoding::kUtf32};
      const auto it = std::find_if(std::begin(choices), std::end(choices),
                                   [&](Encoding e) { return name == encoding_name(e); });
      if (it != std::end(choices)) {
        encoding_ = *it;
        break;
      }
    }
  }
  if (const auto options = params.find("initializationOptions"); options != params.end()) {
    apply(*options, "initializationOptions");
  }
  initialized_ = true;
  json triggers = json::array();
  const std::string& chars = setup_.settings.trigger_characters;
  for (size_t i = 0; i < chars.size();) {
    const size_t n =
        std::max<size_t>(1, utf8_sequence_length(&chars[i], chars.data() + chars.size()));
    triggers.push_back(chars.substr(i, n));
    i += n;
  }
  return {{"capabilities",
           {{"positionEncoding", encoding_name(encoding_)},
            {"textDocumentSync",
             {{"openClose", true}, {"change", 2}, {"save", {{"includeText", false}}}}},
            {"completionProvider", {{"triggerCharacters", triggers}, {"resolveProvider", false}}}}},
          {"serverInfo", {{"name", "nextword"}, {"version", setup_.version}}}};
}

Server::OpenDocument& Server::open_document(const json& params) {
  const std::string& uri = document_uri(params);
  const auto it = documents_.find(uri);
  if (it == documents_.end()) bad("params.textDocument.uri", "'" + uri + "' is not open");
  return *it->second;
}

Server::OpenDocument& Server::document(const json& params, const std::string& method) {
  OpenDocument& d = open_document(params);
  if (d.too_large) {
    const std::string& uri = document_uri(params);
    throw Error(ExitCode::kInput,
                "'" + uri + "' is over " + std::to_string(kMaxDocumentBytes >> 20) +
                    " MiB, the most a document may hold; " + method + " needs its text");
  }
  return d;
}

void Server::check_size(const std::string& uri, OpenDocument& d) {
  if (d.text.text().size() <= kMaxDocumentBytes) return;
  d.text.set({});
  d.completer.reset();
  d.too_large = true;
  warn({"'" + uri + "' is over " + std::to_string(kMaxDocumentBytes >> 20) +
        " MiB, the most a document may hold: no suggestions in it"},
       1);
}

void Server::did_open(const json& params) {
  const json& item = member(params, "params", "textDocument");
  const std::string& uri =
      text(member(item, "params.textDocument", "uri"), "params.textDocument.uri");
  auto d = std::make_unique<OpenDocument>();
  d->language =
      text(member(item, "params.textDocument", "languageId"), "params.textDocument.languageId");
  d->text.set(text(member(item, "params.textDocument", "text"), "params.textDocument.text"));
  check_size(uri, *d);
  if (!setup_.settings.history.empty()) d->saved = d->text.text();
  documents_[uri] = std::move(d);
}

void Server::did_change(const json& params) {
  OpenDocument& d = open_document(params);
  const std::string& uri = document_uri(params);
  const json& changes = member(params, "params", "contentChanges");
  if (!changes.is_array()) bad("params.contentChanges", "not an array");
  for (size_t i = 0; i < changes.size(); ++i) {
    const std::string path = "params.contentChanges[" + std::to_string(i) + "]";
    const json& change = changes[i];
    const std::string& new_text = text(member(change, path, "text"), path + ".text");
    if (!change.contains("range")) {
      d.text.set(new_text);
      d.too_large = false;
    } else {
      const json& range = change["range"];
      const Position from =
          position_at(member(range, path + ".range", "start"), path + ".range.start");
      const Position to = position_at(member(range, path + ".range", "end"), path + ".range.end");
      if (d.too_large) continue;  // its text is gone: only a full change brings it back
      d.text.replace(from, to, new_text, encoding_);
    }
    check_size(uri, d);
  }
}

void Server::did_save(const json& params) {
  if (setup_.settings.history.empty()) return;
  OpenDocument& d = document(params, "textDocument/didSave");
  const std::string added = new_lines(d.saved, d.text.text());
  d.saved = d.text.text();
  if (!added.empty()) append_to_file(setup_.settings.history, added);
}

void Server::did_change_configuration(const json& params) {
  json settings = params.is_object() && params.contains("settings") ? params["settings"] : json();
  // An editor with nothing to set may send [] or {}.
  if (settings.is_array() && settings.empty()) return;
  const std::string triggers = setup_.settings.trigger_characters;
  apply(settings, "settings");
  if (setup_.settings.trigger_characters != triggers) {
    setup_.settings.trigger_characters = triggers;
    warn({"settings.trigger-characters: fixed at initialize; give them in initializationOptions"});
  }
}

void Server::apply(const json& settings, const std::string& where) {
  const Settings before = setup_.settings;
  warn(apply_settings(settings, where, setup_.settings));
  Settings& now = setup_.settings;
  if (now.history != before.history) {
    try {
      if (!now.history.empty() && !setup_.read_history) {
        throw Error(ExitCode::kUsage, "history files are not read here");
      }
      setup_.history_text = now.history.empty() ? "" : setup_.read_history(now.history);
      for (auto& [uri, d] : documents_) d->saved = d->text.text();
    } catch (const Error& e) {
      warn({where + ".history: " + e.what()}, 1);
      now.history = before.history;
    }
  }
  if (!now.history.empty()) now.complete.learn = true;
  if (now.complete == before.complete && now.history == before.history) return;
  // New options: each document's completer starts again (with the history).
  fresh_completer_.reset();
  for (auto& [uri, d] : documents_) d->completer.reset();
}

json Server::completion(const json& params) {
  OpenDocument& d = document(params, "textDocument/completion");
  const Position at = position_at(member(params, "params", "position"), "params.position");
  json items = json::array();
  if (!setup_.settings.enabled_for(d.language)) {
    return {{"isIncomplete", false}, {"items", std::move(items)}};
  }
  const size_t offset = d.text.offset(at, encoding_);
  const std::string_view before = std::string_view(d.text.text()).substr(0, offset);
  if (!in_prose(before, d.language)) return {{"isIncomplete", true}, {"items", std::move(items)}};
  if (!d.completer) {
    // Each document starts from one completer that learned the history
    // once: a copy costs milliseconds where learning megabytes costs seconds.
    if (!fresh_completer_) {
      fresh_completer_.emplace(model_, lexicon_, setup_.settings.complete);
      if (!setup_.history_text.empty()) fresh_completer_->learn(setup_.history_text);
    }
    d.completer.emplace(*fresh_completer_);
  }
  const Completion c = d.completer->complete(before);
  const json range = {
      {"start", position_json(d.text.position(offset - c.prefix.size(), encoding_))},
      {"end", position_json(d.text.position(offset, encoding_))}};
  char order[24];
  for (size_t i = 0; i < c.suggestions.size(); ++i) {
    const Suggestion& s = c.suggestions[i];
    std::snprintf(order, sizeof order, "%05zu", i);
    items.push_back({{"label", s.word},
                     {"kind", 1},
                     {"detail", percent(s.probability) + " (" + source_name(s.source) + ")"},
                     {"sortText", order},
                     {"filterText", s.word},
                     {"insertTextFormat", 1},
                     {"textEdit", {{"range", range}, {"newText", s.word}}}});
  }
  return {{"isIncomplete", true}, {"items", std::move(items)}};
}

}  // namespace nextword::lsp
