#include "views/records.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "format/gguf.h"
#include "text/running_text.h"

namespace nextword::views {
namespace {

using json = nlohmann::ordered_json;

// The k most probable next tokens (a subword model's pieces).
json candidates_json(const Model& model, const Prediction& p) {
  json list = json::array();
  for (const Candidate& c : p.top) {
    list.push_back({{"word", model.vocab.word(c.id)},
                    {"id", c.id},
                    {"probability", shortest(c.probability)},
                    {"logit", shortest(c.logit)}});
  }
  return list;
}

// The k most probable next words: a subword model's whole words, or the
// vocabulary's.
json predictions_json(const Model& model, const Prediction& p) {
  if (!model.subword) return candidates_json(model, p);
  json list = json::array();
  for (const NextWord& w : p.words) {
    list.push_back(
        {{"word", w.word}, {"probability", shortest(static_cast<float>(w.probability))}});
  }
  return list;
}

// A record's predictions; a subword model's next pieces too, as "pieces".
void add_predictions(json& record, const Model& model, const Prediction& p) {
  record["predictions"] = predictions_json(model, p);
  if (model.subword) record["pieces"] = candidates_json(model, p);
}

std::string human_bytes(double bytes) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB"};
  size_t unit = 0;
  while (bytes >= 1000 && unit + 1 < std::size(units)) bytes /= 1000, ++unit;
  return unit == 0 ? fixed(bytes, 0) + " bytes" : fixed(bytes, 1) + " " + units[unit];
}

}  // namespace

double shortest(float value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer - 1, value);
  *result.ptr = '\0';
  return std::strtod(buffer, nullptr);
}

std::string dump(const json& j) {
  // Phrases may hold invalid UTF-8; replace it rather than fail.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json input_json(const Model& model, const std::string& phrase, const Encoded& input) {
  json record = {{"phrase", phrase}, {"tokens", input.tokens}};
  // A subword model's tokens are labelled pieces.
  if (model.subword) record["token_unit"] = "piece";
  record["ids"] = input.ids;
  record["unknown"] = input.unknown;
  record["truncated"] = input.truncated;
  // The memory's weight for this context, whether or not the record's
  // numbers mix it in (the inspection views show the transformer's own).
  if (model.memory) {
    record["memory_weight"] =
        shortest(static_cast<float>(model.memory->lambda(model.memory->find(input.ids, false))));
  }
  return record;
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string prediction_record(const Model& model, const std::string& phrase, const Prediction& p,
                              Format format, const std::vector<std::string>& explain) {
  if (format == Format::kJson) {
    json record = input_json(model, phrase, p.input);
    add_predictions(record, model, p);
    if (!explain.empty()) record["explain"] = explain;
    return dump(record);
  }
  std::string line;
  const bool tsv = format == Format::kTsv;
  auto add = [&](std::string_view word, double probability) {
    if (!line.empty()) line += tsv ? "\t" : "  ";
    line += word;
    line += tsv ? '\t' : ' ';
    line += fixed(probability, tsv ? 6 : 4);
  };
  if (model.subword) {
    for (const NextWord& w : p.words) add(w.word, w.probability);
  } else {
    for (const Candidate& c : p.top) add(model.vocab.word(c.id), c.probability);
  }
  for (const std::string& why : explain) line += "\n  " + why;
  return line;
}

json attention_layers(const Model& model, const Prediction& p) {
  const Config& c = model.config;
  const auto T = p.input.ids.size();
  json layers = json::array();
  const float* a = p.attention.data();
  for (int l = 0; l < c.n_layers; ++l) {
    json heads = json::array();
    for (int h = 0; h < c.n_heads; ++h) {
      json rows = json::array();
      for (size_t q = 0; q < T; ++q) {
        json row = json::array();
        for (size_t k = 0; k < T; ++k) row.push_back(shortest(*a++));
        rows.push_back(std::move(row));
      }
      heads.push_back(std::move(rows));
    }
    layers.push_back(std::move(heads));
  }
  return layers;
}

std::string attention_record(const Model& model, const std::string& phrase, const Prediction& p) {
  json record = input_json(model, phrase, p.input);
  record["attention"] = attention_layers(model, p);
  add_predictions(record, model, p);
  return dump(record);
}

std::string error_record(const std::string& phrase, const Error& error, Format format) {
  if (format != Format::kJson) return "";  // an empty line keeps the records aligned
  return dump({{"phrase", phrase},
               {"error", error.message()},
               {"exit_code", static_cast<int>(error.code())}});
}

std::string model_info(const Model& model, Format format) {
  json tensors = json::array();
  for (const TensorSpec& t : model.weights.tensors()) {
    tensors.push_back({{"name", t.name}, {"shape", t.shape}});
  }
  json info = {{"vocab_file", model.paths.vocab},
               {"vocab_bytes", model.vocab_file_bytes},
               {"weights_file", model.paths.weights},
               {"weights_bytes", model.weights_file_bytes},
               {"format", "nextword"},
               {"version", 1},
               {"parameters", model.weights.parameter_count()},
               {"vocab_size", model.vocab.size()},
               {"config", config_to_json(model.config)},
               {"tensors", tensors}};
  info["config"]["norm_eps"] = shortest(model.config.norm_eps);
  std::vector<std::pair<std::string, std::string>> gguf_lines;  // the file's own, for the text
  if (model.gguf) {
    const GgufFile& g = *model.gguf;
    info.erase("vocab_file");
    info.erase("vocab_bytes");
    info["format"] = "gguf";
    info["version"] = g.version();
    json metadata = json::object();
    for (const auto& [key, value] : g.metadata()) {
      // general.* says what the model is (name, licence, source); the
      // tokenizer's arrays are too long to show.
      if (key.starts_with("general.") || !value.is_array()) {
        metadata[std::string(key)] = g.value_text(value);
      }
    }
    std::map<std::string, std::pair<int, uint64_t>> types;  // name -> tensors, bytes
    uint64_t total = 0;
    for (const GgufTensor& t : g.tensors()) {
      auto& [count, bytes] = types[ggml_type_info(t.type).name];
      ++count;
      bytes += t.bytes;
      total += t.bytes;
    }
    json type_list = json::object();
    std::string type_text;
    for (const auto& [name, counted] : types) {
      const double share = total > 0 ? static_cast<double>(counted.second) / total : 0;
      type_list[name] = {{"tensors", counted.first}, {"bytes", counted.second}, {"share", share}};
      if (!type_text.empty()) type_text += ", ";
      type_text += name + " " + std::to_string(counted.first) + " tensors (" +
                   fixed(100 * share, 1) + "% of " + human_bytes(static_cast<double>(total)) + ")";
    }
    // The tokenizer the metadata names (the config says only "pieces").
    const std::string tokenizer(g.string("tokenizer.ggml.model", ""));
    const std::string pre(g.string("tokenizer.ggml.pre", tokenizer == "gpt2" ? "default" : ""));
    info["gguf"] = {{"architecture", g.string("general.architecture", "")},
                    {"tokenizer", tokenizer},
                    {"pre_tokenizer", pre},
                    {"metadata", metadata},
                    {"types", type_list}};
    gguf_lines.emplace_back("architecture", std::string(g.string("general.architecture", "")));
    gguf_lines.emplace_back("tokenizer model",
                            tokenizer == "gpt2" ? "gpt2 (byte-level BPE, pre-tokenizer " + pre + ")"
                                                : tokenizer + " (SentencePiece)");
    gguf_lines.emplace_back("tensor types", type_text);
    for (const auto& [key, value] : metadata.items()) {
      if (key.starts_with("general.") && key != "general.architecture") {
        gguf_lines.emplace_back(key, value.get<std::string>());
      }
    }
  }
  std::string memory_text;
  if (model.memory) {
    const MemoryHeader& h = model.memory->header();
    json entries = json::array();
    for (int k = 0; k < h.order; ++k) entries.push_back(h.entries[static_cast<size_t>(k)]);
    info["memory"] = {{"file", model.memory->path()},
                      {"bytes", model.memory->file_bytes()},
                      {"order", h.order},
                      {"tokens", h.tokens},
                      {"entries", entries}};
    memory_text = model.memory->path() + " (" + std::to_string(model.memory->file_bytes()) +
                  " bytes, order " + std::to_string(h.order) + ", " + entries.dump() +
                  " n-grams of " + std::to_string(h.tokens) + " tokens)";
  }
  if (format == Format::kJson) return dump(info);

  std::string text;
  size_t width = 16;
  for (const TensorSpec& t : model.weights.tensors()) width = std::max(width, t.name.size() + 4);
  for (const auto& [key, value] : gguf_lines) width = std::max(width, key.size() + 2);
  auto line = [&text, width](const std::string& key, const std::string& value) {
    text += key + std::string(width - key.size(), ' ') + value + "\n";
  };
  if (model.gguf) {
    line("file", model.paths.weights + " (" + std::to_string(model.weights_file_bytes) +
                     " bytes, GGUF version " + std::to_string(model.gguf->version()) +
                     ", memory-mapped, " + std::to_string(model.vocab.size()) + " tokens)");
    for (const auto& [key, value] : gguf_lines) line(key, value);
  } else {
    line("vocab.json", model.paths.vocab + " (" + std::to_string(model.vocab_file_bytes) +
                           " bytes, " + std::to_string(model.vocab.size()) + " words)");
    line("weights", model.paths.weights + " (" + std::to_string(model.weights_file_bytes) +
                        " bytes, format nextword version 1" +
                        (model.weights.owns_storage() ? "" : ", memory-mapped") + ")");
  }
  if (model.memory) line("memory", memory_text);
  line("parameters", std::to_string(model.weights.parameter_count()) + " (" +
                         human_bytes(static_cast<double>(model.weights.parameter_count()) * 4) +
                         " as float32)");
  for (const auto& [key, value] : info["config"].items()) {
    line(key, value.is_string() ? value.get<std::string>() : value.dump());
  }
  text += "tensors:\n";
  for (const TensorSpec& t : model.weights.tensors()) {
    line("  " + t.name, json(t.shape).dump());
  }
  text.pop_back();
  return text;
}

std::string completion_record(const std::string& text, const Completion& c, Format format) {
  std::string line;
  if (format == Format::kJson) {
    json list = json::array();
    for (const Suggestion& s : c.suggestions) {
      list.push_back(
          {{"word", s.word}, {"probability", s.probability}, {"source", source_name(s.source)}});
    }
    return dump(
        {{"text", text}, {"context", c.context}, {"prefix", c.prefix}, {"suggestions", list}});
  }
  for (const Suggestion& s : c.suggestions) {
    if (!line.empty()) line += format == Format::kTsv ? "\t" : "  ";
    line += s.word;
    if (format == Format::kTsv) {
      line += '\t';
      line += fixed(s.probability, 6);
    }
  }
  return line;
}

Generated generated(const Model& model, const std::string& phrase, const std::vector<int>& ids) {
  if (model.subword) {
    // The pieces written out as llama2.c's run.c writes them, the phrase's
    // own included: the space sentencepiece puts before the first piece goes.
    const PieceTokenizer& pieces = *model.subword;
    Generated g{phrase, {}, {}};
    int previous = -1;
    for (const int id : pieces.encode(phrase))
      g.text += pieces.decode(std::exchange(previous, id), id);
    for (const int id : ids) {
      g.words.push_back(pieces.decode(std::exchange(previous, id), id));
      g.text += g.words.back();
    }
    return g;
  }
  Generated g{phrase, {}, {}};
  for (int id : ids) g.words.emplace_back(model.vocab.word(id));
  g.text = written_text(model, phrase, g.words);
  return g;
}

std::string written_text(const Model& model, std::string text,
                         const std::vector<std::string>& words) {
  const size_t from = text.size();
  append_as_text(text, words);
  // A cased model writes its own capitals (and knows "U.S. Army" is no
  // sentence start); a lowercased one's text gets them back.
  if (model.config.tokenizer.lowercase) capitalize_sentences(text, from);
  return text;
}

std::string generate_record(const Generated& g, Format format) {
  if (format != Format::kJson) return g.text;
  return dump({{"phrase", g.phrase}, {"words", g.words}, {"text", g.text}});
}

double perplexity(double logprob, long words) {
  return words > 0 ? std::exp(-logprob / static_cast<double>(words))
                   : std::numeric_limits<double>::quiet_NaN();
}

std::string score_record(const Model& m, const std::pair<const char*, std::string>& source,
                         const std::vector<std::string>& tokens, const std::vector<int>& ids,
                         const std::vector<WordScore>& words, Format format) {
  double logprob = 0;
  int oov = 0;
  json list = json::array();
  std::string text;
  for (const WordScore& w : words) {
    logprob += w.logprob;
    oov += w.unknown;
    if (format == Format::kJson) {
      json entry = {{"word", w.word}};
      // A subword model's word: its pieces' ids.
      if (m.subword) {
        entry["ids"] = w.ids;
      } else {
        entry["id"] = w.ids[0];
      }
      entry["logprob"] = w.logprob;
      entry["rank"] = w.rank;
      entry["unknown"] = w.unknown;
      list.push_back(std::move(entry));
    } else if (format == Format::kText) {
      text += w.word;
      text += '=';
      for (size_t i = 0; i < w.ids.size(); ++i) {
        if (i > 0) text += '+';
        text += std::to_string(w.ids[i]);
      }
      text += ' ';
      text += fixed(w.logprob, 4);
      text += '\t';
    }
  }
  const double p = perplexity(logprob, static_cast<long>(words.size()));
  if (format == Format::kTsv) {
    return fixed(logprob, 6) + "\t" + fixed(p, 6) + "\t" + std::to_string(oov) + "\t" +
           std::to_string(words.size());
  }
  if (format == Format::kText)
    return text + "Total: " + fixed(logprob, 4) + " OOV: " + std::to_string(oov);
  json r = {{source.first, source.second}, {"tokens", tokens}, {"ids", ids}, {"words", list}};
  r["logprob"] = logprob;
  r["perplexity"] = words.empty() ? json(nullptr) : json(p);
  r["oov"] = oov;
  return dump(r);
}

}  // namespace nextword::views
