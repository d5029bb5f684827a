// The server's call reader (src/serve/call.h): the fields of each endpoint
// with the command line's ranges, and the reason for every refusal.
#include "serve/call.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace nextword::serve;

TEST_CASE("read_call: fields, ranges and the reason for a refusal", "[call]") {
  const Call call = read_call(Endpoint::kGenerate,
                              R"({"phrase": "once", "n": 3, "temperature": 0.5, "top_k": 4,
                                  "top_p": 0.9, "seed": 18446744073709551615, "stream": true})");
  CHECK(call.texts == std::vector<std::string>{"once"});
  CHECK_FALSE(call.batch);
  CHECK(call.generate.max_words == 3);
  CHECK(call.generate.temperature == 0.5f);
  CHECK(call.generate.top_k == 4);
  CHECK(call.generate.top_p == 0.9f);
  CHECK(call.generate.seed == 18446744073709551615ULL);
  CHECK(call.stream);
  // The repetition guard: on unless said otherwise, its fields, and greedy
  // without it (and without anything to set on it).
  CHECK(call.generate.guard.ngram == 4);
  const Call guarded = read_call(Endpoint::kGenerate, R"({"phrase": "a", "no_repeat_ngram": 3,
                                 "presence_penalty": 0.5, "repeat_window": 40})");
  CHECK(guarded.generate.guard.ngram == 3);
  CHECK(guarded.generate.guard.penalty == 0.5f);
  CHECK(guarded.generate.guard.window == 40);
  const Call greedy = read_call(Endpoint::kGenerate, R"({"phrase": "a", "greedy": true})");
  CHECK_FALSE(greedy.generate.guard.on());
  CHECK(greedy.generate.temperature == 0.0f);
  CHECK(read_call(Endpoint::kGenerate, R"({"phrase": "a", "greedy": false})").generate.guard.on());
  const Call batch =
      read_call(Endpoint::kComplete, R"({"texts": ["a", "b c"], "k": 2, "learn": true})");
  CHECK(batch.batch);
  CHECK(batch.texts == std::vector<std::string>{"a", "b c"});
  CHECK(batch.complete.k == 2);
  CHECK(batch.complete.learn);
  CHECK(read_call(Endpoint::kTrace, R"({"phrase": "a", "only": "blocks.*"})").look.only ==
        std::vector<std::string>{"blocks.*"});

  const auto refusal = [](Endpoint e, const std::string& body) {
    try {
      read_call(e, body);
    } catch (const ApiError& error) {
      return std::to_string(error.status) + " " + error.type + ": " + error.message;
    }
    return std::string("accepted");
  };
  CHECK(refusal(Endpoint::kPredict, R"({"phrase": "a", "k": 0})") ==
        "400 invalid_request: k: must be from 1 to 16777216");
  CHECK(refusal(Endpoint::kPredict, R"({"phrase": "a", "k": 18446744073709551615})") ==
        "400 invalid_request: k: must be from 1 to 16777216");
  CHECK(refusal(Endpoint::kPredict, R"({"phrase": "a", "k": -1})") ==
        "400 invalid_request: k: must be from 1 to 16777216");
  CHECK(refusal(Endpoint::kPredict, R"({"phrase": "a", "k": 1.5})") ==
        "400 invalid_request: k: must be a whole number");
  CHECK(refusal(Endpoint::kPredict, R"({"phrase": "a", "top_p": 1})") ==
        "400 invalid_request: unknown field: top_p");
  CHECK(refusal(Endpoint::kPredict, R"({"k": 1})") ==
        "400 invalid_request: missing field: phrase (or phrases)");
  CHECK(refusal(Endpoint::kGenerate, R"({"phrases": ["a"]})") ==
        "400 invalid_request: missing field: phrase");  // generate takes one phrase
  CHECK(refusal(Endpoint::kGenerate, R"({"phrase": "a", "greedy": true, "top_k": 3})") ==
        "400 invalid_request: greedy: not with top_k");
  CHECK(refusal(Endpoint::kGenerate, R"({"phrase": "a", "no_repeat_ngram": 65})") ==
        "400 invalid_request: no_repeat_ngram: must be from 0 to 64");
  CHECK(refusal(Endpoint::kPredict, R"({"phrase": "a", "phrases": ["b"]})") ==
        "400 invalid_request: give phrase or phrases, not both");
  CHECK(refusal(Endpoint::kPredict, R"({"phrases": ["a", 2]})") ==
        "400 invalid_request: phrases[1]: must be a string");
  CHECK(refusal(Endpoint::kPredict, R"({"phrase": null})") ==
        "400 invalid_request: missing field: phrase (or phrases)");
  CHECK(refusal(Endpoint::kPredict, "[" + std::string(40, '[') + std::string(41, ']')) ==
        "400 invalid_json: nested deeper than 32 levels");
  CHECK(refusal(Endpoint::kPredict, "\"a\"") ==
        "400 invalid_request: the body must be a JSON object");
  CHECK(refusal(Endpoint::kPredict, R"({"phrase": ")" + std::string(65537, 'a') + "\"}") ==
        "400 invalid_request: phrase: 65537 bytes, more than the 65536 a text may have");
  CHECK(refusal(Endpoint::kComplete, R"({"text": "a", "learn_weight": 0.5,
                                         "learn_context_weight": 0.6})")
            .starts_with("400 invalid_request: learn_weight and learn_context_weight"));
  CHECK(refusal(Endpoint::kPredict, R"({"phrase": "a", "k": 1e999})")
            .starts_with("400 invalid_json"));
  CHECK(refusal(Endpoint::kPredict, "{\"phrase\": \"caf\xc3\"}").starts_with("400 invalid_json"));
}
