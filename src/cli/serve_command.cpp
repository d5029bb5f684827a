// nextword serve: the JSON API and the live page over HTTP (src/serve).
#include "cli/serve_command.h"

#include <memory>
#include <optional>

#include "base/error.h"
#include "base/threading.h"
#include "cli/commands.h"
#include "serve/server.h"
#include "serve/service_manager.h"
#include "text/documents.h"

namespace nextword {
namespace {

// The key of --api-key-file: its first line, without the line's end.
std::string key_in_file(const std::string& path) {
  const std::string text = read_text_file(path);
  const std::string key = text.substr(0, text.find_first_of("\r\n"));
  if (key.empty()) throw Error(ExitCode::kUsage, path + ": api key: the first line is empty");
  return key;
}

struct ServeCommand {
  cli::ModelOptions model;
  serve::ServerOptions options;
  int threads = 0;
  std::string api_key_file;
  CLI::Option* host = nullptr;
  CLI::Option* port = nullptr;

  void add_to(CLI::App& c) {
    model.add_to(c);
    host = c.add_option("--host", options.host,
                        "Address to listen on (loopback by default; 0.0.0.0 or :: for every "
                        "interface; under systemd's socket activation, nextword.socket's)")
               ->capture_default_str();
    port = c.add_option("--port", options.port, "TCP port (0: any free one, named on stderr)")
               ->check(CLI::Range(0, 65535))
               ->capture_default_str();
    c.add_option("-t,--threads", threads, "Workers answering calls (default: every core)")
        ->check(CLI::Range(1, 1024));
    auto* key = c.add_option("--api-key", options.api_key,
                             "Key every route but / and /health needs, as \"Authorization: "
                             "Bearer KEY\" or \"X-API-Key: KEY\"")
                    ->envname("NEXTWORD_API_KEY");
    c.add_option("--api-key-file", api_key_file,
                 "The --api-key read from this file (its first line), so that it is never on a "
                 "command line: the systemd service's credential")
        ->excludes(key);
    c.add_option("--cors-origin", options.cors_origin,
                 "Let pages of this origin call the API from a browser (CORS; off by default)");
    c.add_option("--max-body", options.max_body,
                 "Largest request body in bytes, declared or chunked (larger: 413)")
        ->check(CLI::Range(size_t{1}, size_t{1} << 30))
        ->capture_default_str();
    c.add_option("--max-connections", options.max_connections,
                 "Client connections open at once (more are answered 503)")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    c.add_option("--header-timeout", options.header_timeout,
                 "Seconds a request's whole header may take, and an idle connection may wait")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
    c.add_option("--body-timeout", options.body_timeout, "Seconds a request's whole body may take")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
    c.add_option("--queue", options.queue,
                 "Calls waiting for a worker, at most (more are answered 503)")
        ->check(CLI::Range(size_t{1}, size_t{1} << 20))
        ->capture_default_str();
    c.add_option("--batch", options.batch,
                 "Texts of concurrent calls run in one forward pass, at most")
        ->check(CLI::Range(1, 1 << 16))
        ->capture_default_str();
  }

  int run() {
    options.listen_fd = serve::inherited_listener();
    if (options.listen_fd >= 0 && (host->count() > 0 || port->count() > 0)) {
      throw Error(ExitCode::kUsage,
                  std::string(host->count() > 0 ? "--host" : "--port") +
                      ": systemd passed the listening socket (LISTEN_FDS): its address is "
                      "nextword.socket's ListenStream=");
    }
    if (!api_key_file.empty()) options.api_key = key_in_file(api_key_file);
    options.threads = threads > 0 ? threads : available_cores();
    // Each worker runs its products on its own thread.
    set_threading(Threading::kRows, 1);
    const Model m = model.load();
    const std::optional<Lexicon> lexicon = read_lexicon_beside(m.paths.vocab);
    const std::optional<LexiconIndex> index =
        LexiconIndex::beside(m.paths.vocab, LexiconIndexSource::of(m));
    serve::serve(m, lexicon ? &*lexicon : nullptr, index ? &*index : nullptr, options,
                 [](const std::string& line) { cli::report(line); });
    return 0;
  }
};

}  // namespace

CLI::App* add_serve_command(CLI::App& app, std::function<int()>& run) {
  return cli::add_command<ServeCommand>(
      app, "serve",
      "Serve the JSON API (POST /v1/predict, /v1/complete, ...) and a live page at / over HTTP",
      run);
}

}  // namespace nextword
