// nextword lsp's server: the Language Server Protocol's messages in, its
// responses and notifications out, over the documents an editor opened.
// No I/O of its own: lsp/stdio.h runs it over stdin and stdout.
//
// Every request gets exactly one response: its result, or an error with
// the protocol's code (-32002 before initialize, -32601 for an unknown
// method, -32602 for params that do not fit, -32800 once canceled, -32803
// for a document over the cap). A notification that does not fit is a log
// line; unknown ones, "$/..." included, are ignored.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "complete/completer.h"
#include "lsp/document.h"
#include "lsp/settings.h"
#include "model/lexicon_index.h"
#include "model/model_file.h"

namespace nextword::lsp {

// The most a message's body may hold, and a document's text (the completer
// reads only the end of the text before the cursor; a document this large
// is not prose being typed).
constexpr size_t kMaxMessageBytes = size_t{64} << 20;
constexpr size_t kMaxDocumentBytes = size_t{16} << 20;

// JSON-RPC's and LSP's error codes.
enum ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kServerNotInitialized = -32002,
  kRequestFailed = -32803,
  kRequestCancelled = -32800,
};

struct ServerSetup {
  Settings settings;         // the command line's; the editor's settings apply on top
  std::string history_text;  // what settings.history held at start
  // Reads a history file the editor names (throws Error naming the file
  // and line when it is not plain text).
  std::function<std::string(const std::string& path)> read_history;
  std::string version;  // serverInfo.version
};

class Server {
 public:
  using Send = std::function<void(const nlohmann::json& message)>;
  using Log = std::function<void(const std::string& line)>;

  // `lexicon` may be null; the model and lexicon must outlive the server.
  Server(const Model& model, const LexiconIndex* lexicon, ServerSetup setup, Send send, Log log);
  ~Server();

  // Handles one message (a parsed body).
  void receive(const nlohmann::json& message);
  // A frame or body that is not a message: answered as an error with id null.
  void refuse(int code, const std::string& what);
  // Marks request `id` canceled ($/cancelRequest read ahead of the messages
  // still waiting). receive() answers it -32800 when it comes.
  void cancel(const nlohmann::json& id);

  bool initialized() const { return initialized_; }
  bool shut_down() const { return shut_down_; }
  // After the exit notification: the code to exit with (0 after shutdown, else 1).
  std::optional<int> exit_code() const { return exit_code_; }
  Encoding encoding() const { return encoding_; }

 private:
  struct OpenDocument;

  void request(const nlohmann::json& id, const std::string& method, const nlohmann::json& params);
  void notification(const std::string& method, const nlohmann::json& params);
  nlohmann::json initialize(const nlohmann::json& params);
  nlohmann::json completion(const nlohmann::json& params);
  void did_open(const nlohmann::json& params);
  void did_change(const nlohmann::json& params);
  void did_save(const nlohmann::json& params);
  void did_change_configuration(const nlohmann::json& params);
  // Applies the editor's settings (`where` names them in messages).
  void apply(const nlohmann::json& settings, const std::string& where);
  // Logs `problems` and shows them to the person (window/showMessage).
  void warn(const std::vector<std::string>& problems, int type = 2);
  void respond_error(const nlohmann::json& id, int code, const std::string& message);
  // Whether request `id` was canceled (and forgets it).
  bool take_canceled(const nlohmann::json& id);
  // The open document params.textDocument.uri names (a ParamsError if none) ...
  OpenDocument& open_document(const nlohmann::json& params);
  // ... whose text `method` needs (an Error if it was over the cap).
  OpenDocument& document(const nlohmann::json& params, const std::string& method);
  // The document's text fits the cap, or is dropped with a warning.
  void check_size(const std::string& uri, OpenDocument& document);

  const Model& model_;
  const LexiconIndex* lexicon_;
  ServerSetup setup_;
  Send send_;
  Log log_;
  Encoding encoding_ = Encoding::kUtf16;
  bool initialized_ = false;
  bool shut_down_ = false;
  std::optional<int> exit_code_;
  std::unordered_map<std::string, std::unique_ptr<OpenDocument>> documents_;
  // A completer with the options and the history learned, not used itself:
  // each document's completer starts as a copy (made at the first need).
  std::optional<Completer> fresh_completer_;
  std::set<std::string> canceled_;  // ids as JSON text
};

}  // namespace nextword::lsp
