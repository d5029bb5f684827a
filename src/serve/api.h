// The API's routes, apart from the connection that carries them: what a
// request's method, target and key ask for, checked before its body is read;
// the answers of the GET routes; and the call of a POST route's body. The
// fuzzer (tests/fuzz/fuzz_api.cpp) drives this layer with raw requests.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "model/model_file.h"
#include "serve/call.h"
#include "serve/server.h"

namespace nextword::serve {

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
};

// GET  /  /health  /v1/model  /metrics;  POST /v1/ENDPOINT;  OPTIONS for CORS.
struct Route {
  std::string name;  // "page", "health", "model", "metrics", "preflight", or the endpoint's
  std::optional<Endpoint> endpoint;
};

// The route's name for a request that has none (404 and the like).
inline constexpr const char* kOtherRoute = "other";

class Api {
 public:
  Api(const Model& model, const ServerOptions& options);

  // The route of `method` `target` (a query string is ignored), or what
  // answers it at once: 404, 405 (with the methods allowed), 401 (a missing
  // or wrong key: "Authorization: Bearer KEY" or "X-API-Key: KEY").
  std::variant<Route, ApiError> find(std::string_view method, std::string_view target,
                                     std::string_view authorization,
                                     std::string_view api_key) const;
  // The answer of a route without a call (the page, health, the model,
  // CORS's preflight); metrics are the server's.
  Response get(const Route& route) const;
  // An error as a response.
  Response error(const ApiError& error) const;
  // Headers every response carries (CORS's, when an origin is allowed).
  void decorate(Response& response) const;

 private:
  bool authorized(std::string_view authorization, std::string_view api_key) const;

  const ServerOptions& options_;
  std::string model_info_;  // info -f json, once
};

}  // namespace nextword::serve
