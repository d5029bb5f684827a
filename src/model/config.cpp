#include "model/config.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"

namespace nextword {
namespace {

using nlohmann::json;

class ConfigReader {
 public:
  ConfigReader(const json& config, const std::string& file) : config_(config), file_(file) {
    if (!config_.is_object()) throw model_error(file_, "config", "must be an object");
  }

  Error error(const std::string& key, const std::string& what) const {
    return model_error(file_, "config." + key, what);
  }

  const json* find(const std::string& key) {
    seen_.insert(key);
    auto it = config_.find(key);
    return it == config_.end() ? nullptr : &*it;
  }

  int integer(const std::string& key, int64_t min, int64_t max, const int* fallback) {
    const json* value = find(key);
    if (value == nullptr) {
      if (fallback != nullptr) return *fallback;
      throw error(key, "missing (required)");
    }
    if (!value->is_number_integer()) throw error(key, "must be an integer, got " + value->dump());
    // is_number_integer covers both signed and unsigned storage.
    const bool in_range = value->is_number_unsigned()
                              ? value->get<uint64_t>() <= static_cast<uint64_t>(max) &&
                                    static_cast<int64_t>(value->get<uint64_t>()) >= min
                              : value->get<int64_t>() >= min && value->get<int64_t>() <= max;
    if (!in_range) {
      throw error(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                           ", got " + value->dump());
    }
    return static_cast<int>(value->get<int64_t>());
  }

  bool boolean(const json& object, const std::string& path, const std::string& key, bool fallback) {
    auto it = object.find(key);
    if (it == object.end()) return fallback;
    if (!it->is_boolean()) throw error(path, "must be true or false, got " + it->dump());
    return it->get<bool>();
  }

  bool boolean(const std::string& key, bool fallback) {
    seen_.insert(key);
    return boolean(config_, key, key, fallback);
  }

  template <typename Enum>
  Enum choice(const std::string& key, std::initializer_list<std::pair<const char*, Enum>> options,
              Enum fallback) {
    const json* value = find(key);
    if (value == nullptr) return fallback;
    std::string allowed;
    for (const auto& [name, e] : options) {
      if (value->is_string() && value->get<std::string>() == name) return e;
      allowed += (allowed.empty() ? "\"" : ", \"") + std::string(name) + "\"";
    }
    throw error(key, "must be one of " + allowed + ", got " + value->dump());
  }

  float positive_number(const std::string& key, const json& value) const {
    if (!value.is_number() || !(value.get<double>() > 0.0) || !std::isfinite(value.get<double>()) ||
        !std::isfinite(static_cast<float>(value.get<double>()))) {
      throw error(key, "must be a positive number, got " + value.dump());
    }
    return static_cast<float>(value.get<double>());
  }

  std::string string(const std::string& key, const std::string& fallback) {
    const json* value = find(key);
    if (value == nullptr) return fallback;
    if (!value->is_string() || value->get<std::string>().empty()) {
      throw error(key, "must be a non-empty string, got " + value->dump());
    }
    return value->get<std::string>();
  }

  void reject_unknown_keys() const {
    for (const auto& [key, value] : config_.items()) {
      if (seen_.count(key) == 0) throw error(key, "unknown config field");
    }
  }

 private:
  const json& config_;
  const std::string& file_;
  std::set<std::string> seen_;
};

// adaptive_cutoffs: increasing integers in [1, V - 1]; adaptive_div: a
// number >= 1, only with cutoffs, that leaves every cluster a width >= 1.
void read_adaptive_softmax(ConfigReader& in, Config& c) {
  if (const json* cutoffs = in.find("adaptive_cutoffs")) {
    if (!cutoffs->is_array() || cutoffs->empty()) {
      throw in.error("adaptive_cutoffs", "must be a non-empty array of integers");
    }
    for (size_t i = 0; i < cutoffs->size(); ++i) {
      const json& cutoff = (*cutoffs)[i];
      const std::string at = "adaptive_cutoffs[" + std::to_string(i) + "]";
      const int64_t low = c.adaptive_cutoffs.empty() ? 1 : c.adaptive_cutoffs.back() + 1;
      if (!cutoff.is_number_integer() || cutoff.get<int64_t>() < low ||
          cutoff.get<int64_t>() > c.vocab_size - 1) {
        throw in.error(at, "must be an integer from " + std::to_string(low) +
                               " to vocab_size - 1 = " + std::to_string(c.vocab_size - 1) +
                               " (cutoffs increase), got " + cutoff.dump());
      }
      c.adaptive_cutoffs.push_back(static_cast<int>(cutoff.get<int64_t>()));
    }
  }
  if (const json* div = in.find("adaptive_div")) {
    if (!c.adaptive()) throw in.error("adaptive_div", "only with adaptive_cutoffs");
    c.adaptive_div = in.positive_number("adaptive_div", *div);
    if (c.adaptive_div < 1.0f) {
      throw in.error("adaptive_div", "must be at least 1, got " + div->dump());
    }
  }
  if (c.adaptive() && c.cluster_width(c.clusters() - 1) < 1) {
    throw in.error("adaptive_div", "leaves cluster " + std::to_string(c.clusters() - 1) +
                                       " a projection of width 0 (d_model / adaptive_div^" +
                                       std::to_string(c.clusters()) + " < 1)");
  }
}

}  // namespace

int Config::cluster_words(int i) const {
  const int end = i + 1 < clusters() ? cluster_start(i + 1) : vocab_size;
  return end - cluster_start(i);
}

int Config::cluster_width(int i) const {
  return static_cast<int>(std::floor(d_model / std::pow(double{adaptive_div}, i + 1)));
}

float Config::attention_scale() const {
  return scale == Scale::kSqrtDk ? 1.0f / std::sqrt(static_cast<float>(d_k)) : 1.0f;
}

// rope_pairs and rope_factors, which only rotary positions take.
void read_rotary_options(ConfigReader& in, Config& c) {
  const bool rope = c.positional == Positional::kRope;
  for (const char* key : {"rope_pairs", "rope_factors"}) {
    if (!rope && in.find(key) != nullptr) {
      throw in.error(key, "only with \"positional\": \"rope\"");
    }
  }
  if (!rope) return;
  c.rope_halves = in.choice<bool>("rope_pairs", {{"adjacent", false}, {"halves", true}}, false);
  const json* factors = in.find("rope_factors");
  if (factors == nullptr) return;
  if (!factors->is_array()) {
    throw in.error("rope_factors", "must be an array of numbers, got " + factors->dump());
  }
  for (size_t i = 0; i < factors->size(); ++i) {
    c.rope_factors.push_back(
        in.positive_number("rope_factors[" + std::to_string(i) + "]", (*factors)[i]));
  }
}

void check_config(const Config& c, const std::string& file, const FieldName& field_name) {
  auto error = [&](const std::string& field, const std::string& what) {
    return model_error(file, field_name(field), what);
  };
  if (c.n_layers == 0) return;  // no attention to size
  if (c.n_kv_heads > 0 && c.n_heads % c.n_kv_heads != 0) {
    throw error("n_kv_heads", "must divide n_heads = " + std::to_string(c.n_heads) + ", got " +
                                  std::to_string(c.n_kv_heads));
  }
  // BLAS takes int sizes; keep every derived width well inside them.
  if (int64_t{c.n_heads} * c.d_k > kMaxDimension || int64_t{c.n_heads} * c.d_v > kMaxDimension) {
    throw error("n_heads",
                "n_heads * d_k and n_heads * d_v must be at most " + std::to_string(kMaxDimension));
  }
  if (c.positional != Positional::kRope) return;
  // Rotary positions turn pairs of a head's query and key columns.
  if (c.d_k % 2 != 0) {
    throw error("d_k", "a head's width d_k must be even with \"positional\": \"rope\", got " +
                           std::to_string(c.d_k));
  }
  const auto half = static_cast<size_t>(c.d_k / 2);
  if (!c.rope_factors.empty() && c.rope_factors.size() != half) {
    throw error("rope_factors", "must be d_k / 2 = " + std::to_string(half) + " numbers, got " +
                                    std::to_string(c.rope_factors.size()));
  }
}

Config parse_config(const json& object, const std::string& file) {
  ConfigReader in(object, file);
  Config c;
  c.vocab_size = in.integer("vocab_size", 1, kMaxVocabulary, nullptr);
  c.d_model = in.integer("d_model", 1, kMaxDimension, nullptr);
  c.n_layers = in.integer("n_layers", 0, kMaxLayers, nullptr);
  // Attention sizes only matter when there is a layer to use them.
  const int unused = 0;
  const int* attention_default = c.n_layers == 0 ? &unused : nullptr;
  const int64_t min_attention = c.n_layers == 0 ? 0 : 1;
  c.n_heads = in.integer("n_heads", min_attention, kMaxDimension, attention_default);
  // Grouped-query attention: n_heads / n_kv_heads query heads share each
  // key/value head; without the field every head has its own.
  const int same = 0;
  c.n_kv_heads = in.integer("n_kv_heads", min_attention, kMaxDimension, &same);
  c.d_k = in.integer("d_k", min_attention, kMaxDimension, attention_default);
  c.d_v = in.integer("d_v", min_attention, kMaxDimension, attention_default);
  const int no_ffn = 0;
  c.d_ff = in.integer("d_ff", 0, kMaxDimension, &no_ffn);
  c.activation = in.choice<Activation>("activation",
                                       {{"gelu", Activation::kGelu},
                                        {"relu", Activation::kRelu},
                                        {"swiglu", Activation::kSwiglu},
                                        {"relu2", Activation::kRelu2}},
                                       Activation::kGelu);
  c.max_len = in.integer("max_len", 1, kMaxDimension, nullptr);
  c.positional = in.choice<Positional>("positional",
                                       {{"none", Positional::kNone},
                                        {"learned", Positional::kLearned},
                                        {"sinusoidal", Positional::kSinusoidal},
                                        {"rope", Positional::kRope}},
                                       Positional::kNone);
  if (const json* theta = in.find("rope_theta")) {
    if (c.positional != Positional::kRope) {
      throw in.error("rope_theta", "only with \"positional\": \"rope\"");
    }
    c.rope_theta = in.positive_number("rope_theta", *theta);
  }
  read_rotary_options(in, c);
  c.norm = in.choice<Norm>(
      "norm", {{"none", Norm::kNone}, {"layernorm", Norm::kLayerNorm}, {"rmsnorm", Norm::kRmsNorm}},
      Norm::kNone);
  if (const json* eps = in.find("norm_eps")) c.norm_eps = in.positive_number("norm_eps", *eps);
  c.qk_norm = in.boolean("qk_norm", false);
  c.residual = in.boolean("residual", true);
  c.causal = in.boolean("causal", true);
  c.scale = in.choice<Scale>("scale", {{"sqrt_dk", Scale::kSqrtDk}, {"none", Scale::kNone}},
                             Scale::kSqrtDk);
  c.tied_classifier = in.boolean("tied_classifier", false);
  read_adaptive_softmax(in, c);
  if (const json* tokenizer = in.find("tokenizer")) {
    if (!tokenizer->is_object()) throw in.error("tokenizer", "must be an object");
    for (const auto& [key, value] : tokenizer->items()) {
      if (key != "kind" && key != "lowercase" && key != "split_punctuation") {
        throw in.error("tokenizer." + key, "unknown tokenizer field");
      }
    }
    if (auto kind = tokenizer->find("kind"); kind != tokenizer->end()) {
      if (*kind == "sentencepiece") {
        c.tokenizer.kind = TokenizerKind::kSentencepiece;
      } else if (*kind != "words") {
        throw in.error("tokenizer.kind",
                       "must be one of \"words\", \"sentencepiece\", got " + kind->dump());
      }
    }
    const bool words = c.tokenizer.kind == TokenizerKind::kWords;
    for (const char* key : {"lowercase", "split_punctuation"}) {
      if (!words && tokenizer->contains(key)) {
        throw in.error(std::string("tokenizer.") + key, "only with \"kind\": \"words\"");
      }
    }
    // Sentencepiece pieces keep case and marks as they are.
    c.tokenizer.lowercase = in.boolean(*tokenizer, "tokenizer.lowercase", "lowercase", words);
    c.tokenizer.split_punctuation =
        in.boolean(*tokenizer, "tokenizer.split_punctuation", "split_punctuation", words);
  }
  c.unk_token = in.string("unk_token", "<unk>");
  c.bos_token = in.string("bos_token", "");
  if (c.bos_token == c.unk_token) throw in.error("bos_token", "must differ from unk_token");
  in.reject_unknown_keys();
  check_config(c, file, [](const std::string& field) { return "config." + field; });
  return c;
}

const char* to_string(Positional p) {
  switch (p) {
    case Positional::kLearned: return "learned";
    case Positional::kSinusoidal: return "sinusoidal";
    case Positional::kRope: return "rope";
    case Positional::kNone: break;
  }
  return "none";
}
const char* to_string(Norm n) {
  switch (n) {
    case Norm::kLayerNorm: return "layernorm";
    case Norm::kRmsNorm: return "rmsnorm";
    case Norm::kNone: break;
  }
  return "none";
}
const char* to_string(Activation a) {
  switch (a) {
    case Activation::kRelu: return "relu";
    case Activation::kRelu2: return "relu2";
    case Activation::kSwiglu: return "swiglu";
    case Activation::kGelu: break;
  }
  return "gelu";
}
const char* to_string(Scale s) { return s == Scale::kNone ? "none" : "sqrt_dk"; }

nlohmann::ordered_json config_to_json(const Config& c) {
  nlohmann::ordered_json j = {{"vocab_size", c.vocab_size},
                              {"d_model", c.d_model},
                              {"n_layers", c.n_layers},
                              {"n_heads", c.n_heads}};
  // Only with grouped-query attention, so that other models' files stay as they were.
  if (c.kv_heads() != c.n_heads) j["n_kv_heads"] = c.n_kv_heads;
  j["d_k"] = c.d_k;
  j["d_v"] = c.d_v;
  j["d_ff"] = c.d_ff;
  j["activation"] = to_string(c.activation);
  j["max_len"] = c.max_len;
  j["positional"] = to_string(c.positional);
  // Only with rotary positions, so that other models' files stay as they were.
  if (c.positional == Positional::kRope) j["rope_theta"] = c.rope_theta;
  // Only when not the default, so that other models' files stay as they were.
  if (c.rope_halves) j["rope_pairs"] = "halves";
  if (!c.rope_factors.empty()) j["rope_factors"] = c.rope_factors;
  j["norm"] = to_string(c.norm);
  j["norm_eps"] = c.norm_eps;
  // Only with QK-norm, so that other models' files stay as they were.
  if (c.qk_norm) j["qk_norm"] = true;
  j["residual"] = c.residual;
  j["causal"] = c.causal;
  j["scale"] = to_string(c.scale);
  j["tied_classifier"] = c.tied_classifier;
  // Only with an adaptive softmax, so that other models' files stay as they were.
  if (c.adaptive()) {
    j["adaptive_cutoffs"] = c.adaptive_cutoffs;
    j["adaptive_div"] = c.adaptive_div;
  }
  if (c.subword()) {
    j["tokenizer"] = {{"kind", "sentencepiece"}};
  } else {
    j["tokenizer"] = {{"lowercase", c.tokenizer.lowercase},
                      {"split_punctuation", c.tokenizer.split_punctuation}};
  }
  j["unk_token"] = c.unk_token;
  if (c.has_bos()) j["bos_token"] = c.bos_token;
  return j;
}

}  // namespace nextword
