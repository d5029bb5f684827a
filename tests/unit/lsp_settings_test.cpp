// nextword lsp's settings by the command's flag names (src/lsp/settings.h).
#include <catch2/catch.hpp>

#include "lsp/settings.h"

using nextword::lsp::apply_settings;
using nextword::lsp::Settings;
using nlohmann::json;

TEST_CASE("settings apply by the flags' long names, nested or not", "[lsp_settings]") {
  Settings s;
  CHECK(apply_settings(json::parse(R"({"top-k": 3, "no-repeat": true, "learn": true,
      "learn-weight": 0.5, "languages": "markdown, text", "trigger-characters": " "})"),
                       "initializationOptions", s)
            .empty());
  CHECK(s.complete.k == 3);
  CHECK(s.complete.no_repeat);
  CHECK(s.complete.learn);
  CHECK(s.complete.lambda == 0.5);
  CHECK(s.languages == std::vector<std::string>{"markdown", "text"});
  CHECK(s.trigger_characters == " ");
  CHECK(s.enabled_for("text"));
  CHECK_FALSE(s.enabled_for("plaintext"));
  CHECK(
      apply_settings(json::parse(R"({"nextword": {"languages": ["*"]}})"), "settings", s).empty());
  CHECK(s.enabled_for("rust"));
  CHECK(apply_settings(json(), "settings", s).empty());
}

TEST_CASE("a setting that does not fit is named and not applied", "[lsp_settings]") {
  Settings s;
  const auto problems = apply_settings(
      json::parse(R"({"top-k": 0, "learn": "yes", "learn-decay": 2, "k": 1, "languages": [1]})"),
      "settings", s);
  CHECK(problems ==
        std::vector<std::string>{"settings.k: unknown setting (settings: top-k, no-repeat, learn, "
                                 "learn-weight, learn-decay, learn-context-weight, "
                                 "learn-context-sharpness, learn-temperature, history, languages, "
                                 "trigger-characters)",
                                 "settings.languages: not a list of languageIds",
                                 "settings.learn: not true or false",
                                 "settings.learn-decay: not a number from 0.0 to 1.0",
                                 "settings.top-k: not a whole number from 1 to 65536"});
  CHECK(s.complete.k == 6);
  CHECK_FALSE(s.complete.learn);
  // Fine one by one, not together: none applied.
  const auto sum = apply_settings(
      json::parse(R"({"learn-weight": 0.6, "learn-context-weight": 0.5, "top-k": 2})"), "settings",
      s);
  REQUIRE(sum.size() == 1);
  CHECK(sum[0].starts_with("settings: learn-weight and learn-context-weight: their sum 1.1"));
  CHECK(s.complete.k == 6);
  CHECK(apply_settings(json::parse("[1]"), "settings", s) ==
        std::vector<std::string>{"settings: not an object of settings"});
}
