// libFuzzer: a byte stream from an editor through nextword lsp's framing and
// server (src/lsp), on the hand-written fruit model, after an initialize
// and a didOpen. The first byte sets how the stream is cut into reads.
// Every message the server sends is a JSON-RPC object: a notification with
// a method, or a response with exactly one of result or error, an error
// with an integer code and a message; it never sends more responses than
// it read frames.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "kernel_family.h"
#include "lsp/framing.h"
#include "lsp/server.h"
#include "model/model_file.h"

namespace {

using nlohmann::json;

const nextword::Model& fruit() {
  static const nextword::Model model =
      nextword::load_model(nextword::ModelPaths::in_directory(NEXTWORD_FRUIT_DIR));
  return model;
}

void check(const json& m, size_t& responses) {
  if (!m.is_object() || m.value("jsonrpc", "") != "2.0") std::abort();
  (void)m.dump();  // every string in it serializes
  if (m.contains("method")) return;
  ++responses;
  if (!m.contains("id") || m.contains("result") == m.contains("error")) std::abort();
  if (m.contains("error")) {
    const json& e = m["error"];
    if (!e["code"].is_number_integer() || !e["message"].is_string() ||
        e["message"].get<std::string>().empty()) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return -1;
  nextword::fuzz::use_kernel_family_of(size);
  size_t responses = 0, frames = 2;
  nextword::lsp::Server server(
      fruit(), nullptr, {}, [&](const json& m) { check(m, responses); }, [](const std::string&) {});
  server.receive(json::parse(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}})"));
  server.receive(json::parse(R"({"jsonrpc":"2.0","method":"textDocument/didOpen","params":
      {"textDocument":{"uri":"a","languageId":"markdown","version":1,"text":"I like app"}}})"));
  nextword::lsp::FrameReader reader(1 << 16);
  const size_t cut = 1 + data[0] % 64;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  nextword::lsp::Frame frame;
  for (size_t at = 0; at < stream.size() && !server.exit_code(); at += cut) {
    reader.feed(stream.substr(at, cut));
    while (reader.next(frame) && !server.exit_code()) {
      ++frames;
      if (!frame.ok) {
        server.refuse(nextword::lsp::kParseError, frame.error);
        continue;
      }
      const json message = json::parse(frame.body, nullptr, false);
      if (message.is_discarded()) {
        server.refuse(nextword::lsp::kParseError, "body: not JSON");
      } else {
        server.receive(message);
      }
    }
  }
  if (responses > frames) std::abort();
  return 0;
}
