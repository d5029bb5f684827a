// What a result looks like, whoever asked for it: one record per phrase (or
// text), as text, TSV or JSON. The command line prints these records one per
// line; the HTTP server answers with the JSON ones, byte for byte the same.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "complete/completer.h"
#include "model/model_file.h"
#include "predict/predictor.h"
#include "predict/scorer.h"
#include "predict/word_scores.h"

namespace nextword::views {

enum class Format { kText, kJson, kTsv };

// The float's shortest round-trip decimal, as a double: 0.1f prints as 0.1,
// not 0.10000000149011612. Every float in a JSON record goes through it.
double shortest(float value);
// A record as one line of JSON, fields in the documented order; invalid
// UTF-8 (from a phrase) is replaced rather than refused.
std::string dump(const nlohmann::ordered_json& record);
// {"phrase", "tokens", "ids", "unknown", "truncated"}: how a record starts;
// a subword model's adds "token_unit": "piece" after "tokens".
nlohmann::ordered_json input_json(const Model& model, const std::string& phrase,
                                  const Encoded& input);
// printf's %.Nf.
std::string fixed(double value, int decimals);

// One line (no trailing newline) per phrase; with `explain` lines (see
// attention_view.h), text records add them below, indented, and JSON records
// carry them as "explain".
std::string prediction_record(const Model& model, const std::string& phrase, const Prediction& p,
                              Format format, const std::vector<std::string>& explain = {});
// Every weight of p.attention as [layer][head][query][key], each float as its
// shortest round-trip decimal (the attention record, bertviz and HTML views).
nlohmann::ordered_json attention_layers(const Model& model, const Prediction& p);
// {"phrase", "tokens", "ids", "unknown", "truncated", "attention": [l][h][q][k], "predictions"}
std::string attention_record(const Model& model, const std::string& phrase, const Prediction& p);
// The record written in place of a phrase that could not be predicted.
std::string error_record(const std::string& phrase, const Error& error, Format format);
// `nextword info`
std::string model_info(const Model& model, Format format);

// `complete`'s record: text (words two spaces apart), TSV (word<TAB>probability...)
// or JSON {"text", "context", "prefix", "suggestions": [{"word", "probability", "source"}]}.
std::string completion_record(const std::string& text, const Completion& c, Format format);

// `generate`'s result: the phrase with the words added as text (sentences
// capitalized), and as JSON {"phrase", "words", "text"}.
struct Generated {
  std::string phrase;
  std::vector<std::string> words;
  std::string text;
};
Generated generated(const Model& model, const std::string& phrase, const std::vector<int>& ids);
// A word model's `words` written after `text` as `generate` writes them:
// joined as running text (text/tokenizer.h), sentences capitalized when the
// model reads lowercase.
std::string written_text(const Model& model, std::string text,
                         const std::vector<std::string>& words);
std::string generate_record(const Generated& g, Format format);

// `score`'s record of one stream (a line, or a whole document): `source` is
// {"text", the line} or {"document", the file}; `tokens` and `ids` the
// stream's, `words` its scores (predict/word_scores.h). Text: KenLM's query
// format (a subword model's word=id+id...); TSV: logprob, perplexity, OOV,
// words; JSON {source, "tokens", "ids", "words": [{"word", "id" (a subword
// model: "ids", its pieces'), "logprob", "rank", "unknown"}], "logprob",
// "perplexity", "oov"}.
std::string score_record(const Model& model, const std::pair<const char*, std::string>& source,
                         const std::vector<std::string>& tokens, const std::vector<int>& ids,
                         const std::vector<WordScore>& words, Format format);
// e^(-logprob / words); NaN for no words.
double perplexity(double logprob, long words);

}  // namespace nextword::views
