// libFuzzer: raw request bodies through the server's handler layer (the
// calls read by serve/call.cpp, run by a worker as the server runs them) on
// the hand-written fruit model. The first byte picks the endpoint; the rest
// is the body. Every answer is 200, 400 or 422 (never a 5xx for anything a
// client sends), its body is JSON (a record, {"results": [...]}, or
// {"error": {"code", "type", "message"}} with the answer's status), and a
// streamed generation's events are JSON too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "kernel_family.h"
#include "model/model_file.h"
#include "serve/call.h"
#include "serve/worker.h"

namespace {

using nextword::serve::Answer;
using nextword::serve::ApiError;
using nextword::serve::Call;
using nextword::serve::Endpoint;

const nextword::Model& fruit() {
  static const nextword::Model model =
      nextword::load_model(nextword::ModelPaths::in_directory(NEXTWORD_FRUIT_DIR));
  return model;
}

void check_json(std::string_view text, int status) {
  const auto j = nlohmann::json::parse(text);  // throws (and so fails) on anything else
  if (status != 200 && (j["error"]["code"] != status || !j["error"]["type"].is_string() ||
                        !j["error"]["message"].is_string())) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return -1;
  nextword::fuzz::use_kernel_family_of(size);
  static nextword::serve::Worker worker(fruit(), nullptr, nullptr);
  const auto endpoint = static_cast<Endpoint>(data[0] % nextword::serve::kEndpoints);
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  Call call;
  try {
    call = nextword::serve::read_call(endpoint, body);
  } catch (const ApiError& e) {
    if (e.status != 400) std::abort();
    check_json(nextword::serve::error_body(e), e.status);
    return 0;
  }
  if (call.generate.max_words > 64) return -1;  // long generations only cost time
  Answer answer;
  if (call.stream) {
    answer = worker.stream(call, [](const std::string& event) {
      check_json(event, 200);
      return true;
    });
  } else {
    const Call* calls[] = {&call};
    answer = worker.run(calls).front();
  }
  if (answer.status != 200 && answer.status != 422) std::abort();
  if (answer.body.empty() || answer.body.back() != '\n') std::abort();
  if (call.format != "html") check_json(answer.body, answer.status);
  return 0;
}
