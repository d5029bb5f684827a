// A request to the JSON API, read and checked: which endpoint, its input
// texts and its options, with the command line's names and ranges. Reading
// is strict: malformed JSON, a wrong type, an unknown or missing field, a
// value out of range or a text over the command line's cap is an ApiError
// (400) naming the field, before any work is queued.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "complete/completer.h"
#include "predict/generate.h"
#include "views/inspect_records.h"

namespace nextword::serve {

// An answer that is not a record: HTTP status, a type for programs, and a
// message for people ({"error": {"code", "type", "message"}}).
struct ApiError {
  ApiError(int status_, std::string type_, std::string message_, std::string allow_ = {})
      : status(status_),
        type(std::move(type_)),
        message(std::move(message_)),
        allow(std::move(allow_)) {}
  int status;
  std::string type;
  std::string message;
  std::string allow;  // 405: the methods the route takes
};

// {"error": {"code": status, "type": type, "message": message}} and a newline.
std::string error_body(const ApiError& error);

// The POST endpoints, each the command of the same name.
enum class Endpoint {
  kPredict,
  kAttention,
  kComplete,
  kScore,
  kLens,
  kTrace,
  kAttribute,
  kGenerate
};
// "predict", ...: the command's name, and the last part of /v1/NAME.
const char* endpoint_name(Endpoint endpoint);
inline constexpr int kEndpoints = 8;

// The most bytes one text may have: what the command line keeps of a line.
inline constexpr size_t kMaxTextBytes = size_t{1} << 16;
// The most texts one request may carry ("phrases", "texts").
inline constexpr size_t kMaxTexts = 1024;

struct Call {
  Endpoint endpoint = Endpoint::kPredict;
  // "phrases" or "texts" was given: the answer is {"results": [records]}.
  bool batch = false;
  std::vector<std::string> texts;  // the phrase or text, or each of them

  int k = 5;             // predict, attention, lens (-k); complete uses complete.k
  bool explain = false;  // predict --explain
  CompleteOptions complete;
  views::LookOptions look;  // lens, trace; attribute's word is `word`
  std::string word;         // attribute --word, attention's page ("": the top prediction)
  // attention: "json" (the record), "html" (attention -f html's page) or
  // "page" (the data that page draws, as JSON: what the live page asks for)
  std::string format = "json";
  GenerateOptions generate;
  bool stream = false;  // generate: server-sent events, one word per event
  // Set (by the server) when the client has gone: a generation stops there.
  std::shared_ptr<const std::atomic<bool>> cancelled;
};

// Reads the JSON body of POST /v1/ENDPOINT. Throws ApiError.
Call read_call(Endpoint endpoint, std::string_view body);

}  // namespace nextword::serve
