// The DOM-free JSON scanner against nlohmann's parser as the oracle: the
// same verdict on hand-picked texts and on random edits of weights files.
#include "format/json_scan.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "model/weights_file.h"
#include "test_models.h"

using namespace nextword;
using nlohmann::json;

namespace {

// nlohmann's verdict on the syntax, or nullopt when it stopped at a number
// beyond double's range (out_of_range.406) before reaching the end: such a
// number is valid JSON, which our reader refuses later as a number that is
// not a finite float32.
std::optional<bool> nlohmann_accepts(const std::string& text) {
  try {
    const json parsed = json::parse(text);
    return true;
  } catch (const json::out_of_range&) {
    return std::nullopt;
  } catch (const json::parse_error&) {
    return false;
  }
}

bool scans(const std::string& text) {
  size_t offset = 0;
  return json_scan::scan(text, &offset).has_value();
}

}  // namespace

TEST_CASE("the scanner accepts exactly the JSON nlohmann accepts", "[weights][json]") {
  const std::vector<std::string> cases = {"0",
                                          "-0",
                                          "01",
                                          "1.",
                                          ".5",
                                          "-",
                                          "1e",
                                          "1e+",
                                          "1E+5",
                                          "-1.5e-300",
                                          "2.",
                                          "[-00]",
                                          "[]",
                                          "[1,]",
                                          "[,1]",
                                          "[1 2]",
                                          "[[1],[2,3]]",
                                          " [ 1 , 2 ] ",
                                          "{}",
                                          "{\"a\":1,}",
                                          "{\"a\" 1}",
                                          "{a:1}",
                                          "{\"a\":1}x",
                                          "\"\"",
                                          "\"\\u00e9\"",
                                          "\"\\uD83D\\uDE00\"",
                                          "\"\\uD83D\"",
                                          "\"\\uDE00\"",
                                          "\"\\x\"",
                                          "\"\t\"",
                                          "\"\xc3\xa9\"",
                                          "\"\xc3\"",
                                          "\"\xed\xa0\x80\"",
                                          "\"\xf4\x90\x80\x80\"",
                                          "\"\xc0\xaf\"",
                                          "true",
                                          "tru",
                                          "nul",
                                          "null",
                                          "falsee",
                                          "",
                                          "   ",
                                          "[true,false,null,{\"x\":[\"y\"]}]"};
  for (const std::string& text : cases) {
    INFO(text);
    CHECK(std::optional<bool>(scans(text)) == nlohmann_accepts(text));
  }
  CHECK(scans("[1e400]"));  // JSON, though beyond double (and float32)
  // Random byte edits of a real weights file, against nlohmann as the oracle.
  const Model m = testing::random_model(testing::small_config(), true, true, 1);
  std::mt19937 rng(5);
  const std::string alphabet = "{}[]\",:.-+eE0123456789 \\tfnu\x80\xff";
  int valid = 0, compared = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text = weights_json(m.config, m.weights, trial % 2 == 0);
    for (int edits = 1 + trial % 3; edits > 0; --edits) {
      text[rng() % text.size()] = alphabet[rng() % alphabet.size()];
    }
    const std::optional<bool> theirs = nlohmann_accepts(text);
    if (!theirs) continue;
    INFO(text);
    REQUIRE(scans(text) == *theirs);
    ++compared;
    valid += *theirs ? 1 : 0;
  }
  CHECK(compared > 2900);
  CHECK(valid > 100);  // the edits leave some documents valid
}
