#include "serve/call.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "views/records.h"

namespace nextword::serve {
namespace {

using json = nlohmann::json;

// Deeper bodies are refused before they are parsed: no request needs more
// than 2 levels, and a parser's work should not grow with a hostile depth.
constexpr int kMaxDepth = 32;

ApiError bad(const std::string& message) { return {400, "invalid_request", message}; }

// The deepest nesting of arrays and objects in `body`, outside strings.
int depth_of(std::string_view body) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : body) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// The fields of one request body, each taken once by its reader; what is
// left at the end is an unknown field.
class Fields {
 public:
  explicit Fields(const json& body) : body_(body) {
    for (const auto& item : body.items()) left_.insert(item.key());
  }

  bool given(const std::string& name) const {
    const auto at = body_.find(name);
    return at != body_.end() && !at->is_null();
  }

  const json* take(const std::string& name) {
    left_.erase(name);
    const auto at = body_.find(name);
    return at == body_.end() || at->is_null() ? nullptr : &*at;
  }

  void integer(const std::string& name, int& value, int64_t low, int64_t high) {
    const json* v = take(name);
    if (v == nullptr) return;
    if (!v->is_number_integer()) throw bad(name + ": must be a whole number");
    // Non-negative numbers come as unsigned; those past int64 are out of range anyway.
    const bool huge =
        v->is_number_unsigned() &&
        v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (huge || v->get<int64_t>() < low || v->get<int64_t>() > high) {
      throw bad(name + ": must be from " + std::to_string(low) + " to " + std::to_string(high));
    }
    value = static_cast<int>(v->get<int64_t>());
  }

  template <typename Number>
  void number(const std::string& name, Number& value, double low, double high) {
    const json* v = take(name);
    if (v == nullptr) return;
    if (!v->is_number()) throw bad(name + ": must be a number");
    const double x = v->get<double>();
    if (!(x >= low && x <= high)) {
      throw bad(name + ": must be from " + views::fixed(low, 2) + " to " + views::fixed(high, 2));
    }
    value = static_cast<Number>(x);
  }

  void flag(const std::string& name, bool& value) {
    const json* v = take(name);
    if (v == nullptr) return;
    if (!v->is_boolean()) throw bad(name + ": must be true or false");
    value = v->get<bool>();
  }

  void text(const std::string& name, const json& v, std::string& value) const {
    if (!v.is_string()) throw bad(name + ": must be a string");
    value = v.get<std::string>();
    if (value.size() > kMaxTextBytes) {
      throw bad(name + ": " + std::to_string(value.size()) + " bytes, more than the " +
                std::to_string(kMaxTextBytes) + " a text may have");
    }
  }

  void texts(const std::string& name, const json& v, std::vector<std::string>& values) const {
    if (!v.is_array()) throw bad(name + ": must be an array of strings");
    if (v.size() > kMaxTexts) {
      throw bad(name + ": " + std::to_string(v.size()) + " items, more than the " +
                std::to_string(kMaxTexts) + " one request may have");
    }
    for (size_t i = 0; i < v.size(); ++i) {
      std::string value;
      text(name + "[" + std::to_string(i) + "]", v[i], value);
      values.push_back(std::move(value));
    }
  }

  // "phrase" (one record) or "phrases" (results), exactly one of them;
  // without `batches`, only the first.
  void inputs(const std::string& one, const std::string& many, Call& call, bool batches = true) {
    const json* single = take(one);
    const json* several = batches ? take(many) : nullptr;
    if (single != nullptr && several != nullptr)
      throw bad("give " + one + " or " + many + ", not both");
    if (single != nullptr) {
      text(one, *single, call.texts.emplace_back());
    } else if (several != nullptr) {
      call.batch = true;
      texts(many, *several, call.texts);
    } else {
      throw bad("missing field: " + one + (batches ? " (or " + many + ")" : ""));
    }
  }

  void finish() const {
    if (!left_.empty()) throw bad("unknown field: " + *left_.begin());
  }

 private:
  const json& body_;
  std::set<std::string> left_;
};

void read_complete(Fields& f, CompleteOptions& o) {
  f.integer("k", o.k, 1, 1 << 16);
  f.flag("no_repeat", o.no_repeat);
  f.flag("learn", o.learn);
  f.number("learn_weight", o.lambda, 0, 1);
  f.number("learn_decay", o.decay, 0, 1);
  f.number("learn_context_weight", o.context_weight, 0, 1);
  f.number("learn_context_sharpness", o.context_theta, 0, 1000);
  f.number("learn_temperature", o.model_temperature, 0.05, 100);
  if (o.lambda + o.context_weight > 1) {
    throw bad(
        "learn_weight and learn_context_weight: their sum is over 1, the model's share "
        "would be negative");
  }
}

void read_generate(Fields& f, Call& call) {
  GenerateOptions& o = call.generate;
  f.integer("n", o.max_words, 1, 100000);
  bool greedy = false;
  f.flag("greedy", greedy);
  if (greedy) {
    // Plain greedy, as `generate --greedy`: no sampling and no guard to set.
    for (const char* other : {"temperature", "top_k", "top_p", "no_repeat_ngram",
                              "presence_penalty", "repeat_window"}) {
      if (f.given(other)) throw bad(std::string("greedy: not with ") + other);
    }
    o.guard = RepetitionGuard::off();
  }
  f.number("temperature", o.temperature, 0, 100);
  f.integer("top_k", o.top_k, 0, 1 << 24);
  f.number("top_p", o.top_p, 0, 1);
  f.integer("no_repeat_ngram", o.guard.ngram, 0, 64);
  f.number("presence_penalty", o.guard.penalty, 0, 100);
  f.integer("repeat_window", o.guard.window, 1, 1 << 20);
  if (const json* seed = f.take("seed")) {
    if (!seed->is_number_integer() || (!seed->is_number_unsigned() && seed->get<int64_t>() < 0)) {
      throw bad("seed: must be a whole number from 0 to 18446744073709551615");
    }
    o.seed = seed->get<uint64_t>();
  }
  f.flag("stream", call.stream);
}

}  // namespace

std::string error_body(const ApiError& error) {
  return views::dump(
             {{"error",
               {{"code", error.status}, {"type", error.type}, {"message", error.message}}}}) +
         "\n";
}

const char* endpoint_name(Endpoint endpoint) {
  switch (endpoint) {
    case Endpoint::kPredict: return "predict";
    case Endpoint::kAttention: return "attention";
    case Endpoint::kComplete: return "complete";
    case Endpoint::kScore: return "score";
    case Endpoint::kLens: return "lens";
    case Endpoint::kTrace: return "trace";
    case Endpoint::kAttribute: return "attribute";
    case Endpoint::kGenerate: return "generate";
  }
  return "?";
}

Call read_call(Endpoint endpoint, std::string_view body) {
  if (depth_of(body) > kMaxDepth) {
    throw ApiError{400, "invalid_json",
                   "nested deeper than " + std::to_string(kMaxDepth) + " levels"};
  }
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {  // a syntax error, or a number out of range
    std::string what = e.what();
    if (const size_t at = what.find("] "); at != std::string::npos) what.erase(0, at + 2);
    throw ApiError{400, "invalid_json", what};
  }
  if (!j.is_object()) throw bad("the body must be a JSON object");
  Call call;
  call.endpoint = endpoint;
  Fields f(j);
  switch (endpoint) {
    case Endpoint::kPredict:
      f.inputs("phrase", "phrases", call);
      f.integer("k", call.k, 1, 1 << 24);
      f.flag("explain", call.explain);
      break;
    case Endpoint::kAttention:
      f.inputs("phrase", "phrases", call);
      f.integer("k", call.k, 1, 1 << 24);
      if (const json* format = f.take("format")) {
        f.text("format", *format, call.format);
        if (call.format != "json" && call.format != "html" && call.format != "page") {
          throw bad("format: must be \"json\", \"html\" or \"page\"");
        }
        if (call.format == "html" && call.batch) throw bad("format: \"html\" draws one phrase");
      }
      if (const json* word = f.take("word")) f.text("word", *word, call.word);
      break;
    case Endpoint::kComplete:
      f.inputs("text", "texts", call);
      read_complete(f, call.complete);
      break;
    case Endpoint::kScore: f.inputs("text", "texts", call); break;
    case Endpoint::kLens:
      f.inputs("phrase", "phrases", call);
      f.integer("k", call.look.top_k, 1, 1 << 24);
      f.flag("mid", call.look.mid);
      f.flag("all_positions", call.look.all_positions);
      break;
    case Endpoint::kTrace:
      f.inputs("phrase", "phrases", call);
      if (const json* only = f.take("only")) {
        if (only->is_string()) {
          f.text("only", *only, call.look.only.emplace_back());
        } else {
          f.texts("only", *only, call.look.only);
        }
      }
      break;
    case Endpoint::kAttribute:
      f.inputs("phrase", "phrases", call);
      if (const json* word = f.take("word")) f.text("word", *word, call.word);
      break;
    case Endpoint::kGenerate:
      f.inputs("phrase", "phrases", call, false);
      read_generate(f, call);
      break;
  }
  f.finish();
  return call;
}

}  // namespace nextword::serve
