#include "serve/api.h"

#include <array>

#include "serve/page.h"
#include "views/records.h"

namespace nextword::serve {
namespace {

constexpr std::array<Endpoint, kEndpoints> kAll = {
    Endpoint::kPredict, Endpoint::kAttention, Endpoint::kComplete,  Endpoint::kScore,
    Endpoint::kLens,    Endpoint::kTrace,     Endpoint::kAttribute, Endpoint::kGenerate};

// Compares in a time that depends on the length of `given` only, not on
// where it differs from `key`.
bool same_secret(std::string_view given, std::string_view key) {
  if (key.empty()) return false;
  size_t differ = given.size() ^ key.size();
  for (size_t i = 0; i < given.size(); ++i) {
    differ |=
        static_cast<unsigned char>(given[i]) ^ static_cast<unsigned char>(key[i % key.size()]);
  }
  return differ == 0;
}

}  // namespace

Api::Api(const Model& model, const ServerOptions& options)
    : options_(options), model_info_(views::model_info(model, views::Format::kJson) + "\n") {}

bool Api::authorized(std::string_view authorization, std::string_view api_key) const {
  if (options_.api_key.empty()) return true;
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.starts_with(kBearer)) authorization.remove_prefix(kBearer.size());
  return same_secret(authorization, options_.api_key) || same_secret(api_key, options_.api_key);
}

std::variant<Route, ApiError> Api::find(std::string_view method, std::string_view target,
                                        std::string_view authorization,
                                        std::string_view api_key) const {
  std::string_view path = target.substr(0, target.find('?'));
  // The absolute form (RFC 9112, 3.2.2), as a proxy may send it: its path.
  for (const std::string_view scheme : {"http://", "https://"}) {
    if (path.starts_with(scheme)) {
      const size_t slash = path.find('/', scheme.size());
      path = slash == std::string_view::npos ? "/" : path.substr(slash);
    }
  }
  Route route;
  bool post = false;
  if (path == "/") {
    route.name = "page";
  } else if (path == "/health") {
    route.name = "health";
  } else if (path == "/v1/model") {
    route.name = "model";
  } else if (path == "/metrics") {
    route.name = "metrics";
  } else {
    for (const Endpoint e : kAll) {
      if (path == std::string("/v1/") + endpoint_name(e)) route = {endpoint_name(e), e};
    }
    if (!route.endpoint) return ApiError{404, "not_found", "no such route: " + std::string(path)};
    post = true;
  }
  const std::string allowed = post ? "POST" : "GET, HEAD";
  if (method == "OPTIONS" && !options_.cors_origin.empty()) return Route{"preflight", {}};
  const bool fits = post ? method == "POST" : method == "GET" || method == "HEAD";
  if (!fits) {
    return ApiError{405, "method_not_allowed",
                    std::string(path) + " takes " + allowed + ", not " + std::string(method),
                    allowed};
  }
  if (route.name != "page" && route.name != "health" && !authorized(authorization, api_key)) {
    return ApiError{401, "unauthorized",
                    "a key is needed: \"Authorization: Bearer KEY\" or \"X-API-Key: KEY\""};
  }
  return route;
}

Response Api::get(const Route& route) const {
  Response r;
  if (route.name == "page") {
    r.content_type = "text/html; charset=utf-8";
    r.body = std::string(live_page());
  } else if (route.name == "health") {
    r.body = "{\"status\":\"ok\"}\n";
  } else if (route.name == "model") {
    r.body = model_info_;
  } else if (route.name == "preflight") {
    r.status = 204;
    r.content_type.clear();
    r.headers = {{"Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS"},
                 {"Access-Control-Allow-Headers", "Content-Type, Authorization, X-API-Key"},
                 {"Access-Control-Max-Age", "600"}};
  }
  decorate(r);
  return r;
}

Response Api::error(const ApiError& e) const {
  Response r{e.status, "application/json", error_body(e), {}};
  if (!e.allow.empty()) r.headers.emplace_back("Allow", e.allow);
  if (e.status == 401) r.headers.emplace_back("WWW-Authenticate", "Bearer");
  decorate(r);
  return r;
}

void Api::decorate(Response& r) const {
  if (options_.cors_origin.empty()) return;
  r.headers.emplace_back("Access-Control-Allow-Origin", options_.cors_origin);
  r.headers.emplace_back("Vary", "Origin");
}

}  // namespace nextword::serve
