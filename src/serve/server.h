// `nextword serve`: the JSON API and the live page over HTTP (docs/serving.md,
// "nextword serve"). One thread runs every connection (Boost.Beast on Asio: a slow
// client costs a socket, not a thread); `threads` workers, each with its own
// run state over the one mapped model, answer the calls, batching those of
// one kind that wait together.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "model/lexicon.h"
#include "model/lexicon_index.h"
#include "model/model_file.h"

namespace nextword::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                    // 0: any free port (the line on stderr names it)
  int threads = 1;                    // workers
  std::string api_key;                // when set, every route but / and /health needs it
  std::string cors_origin;            // when set, browsers of this origin may call the API
  size_t max_body = size_t{1} << 20;  // bytes of a request body, declared or chunked
  int max_connections = 512;          // open at once; more are answered 503 and closed
  double header_timeout = 10;         // seconds for a whole request header (and an idle keep-alive)
  double body_timeout = 30;           // seconds for a whole request body
  double write_timeout = 30;          // seconds for each write to a client
  size_t queue = 256;                 // calls waiting for a worker, at most (more: 503)
  int batch = 64;                     // texts of one kind run in one forward pass, at most
  int listen_fd = -1;  // a listening socket to accept on instead of host:port (systemd's)
};

// Serves until SIGTERM or SIGINT, then stops accepting, finishes the
// requests in flight and returns. `log` hears one line once listening
// ("listening on http://HOST:PORT"), which systemd hears too when it runs
// the server (serve/service_manager.h). Throws Error(kUsage) when the
// address cannot be bound.
void serve(const Model& model, const Lexicon* lexicon, const LexiconIndex* index,
           const ServerOptions& options, const std::function<void(const std::string&)>& log);

}  // namespace nextword::serve
