#include "serve/worker.h"

#include <algorithm>
#include <exception>
#include <new>
#include <optional>

#include "base/error.h"
#include "predict/generate.h"
#include "predict/word_scores.h"
#include "text/tokenizer.h"
#include "views/attention_page.h"
#include "views/attention_view.h"
#include "views/inspect_records.h"
#include "views/records.h"

namespace nextword::serve {
namespace {

using views::Format;

// Lines of a "texts" batch of complete whose contexts run together, as
// `complete`'s stdin stream runs at most --batch (64) of them.
constexpr size_t kCompleteBatch = 64;

// What an engine error is to a client: the command line's exit 4 (and a
// usage error that depends on the model, such as a word it does not know)
// is 422; anything else is the server's fault.
Answer error_answer(const Error& e) {
  if (e.code() == ExitCode::kInput || e.code() == ExitCode::kUsage) {
    return {422, error_body({422, "unprocessable", e.message()})};
  }
  return {500, error_body({500, "internal", e.message()})};
}

// {"results": [records]} from records that are JSON already.
std::string results(const std::vector<std::string>& records) {
  std::string body = "{\"results\":[";
  for (size_t i = 0; i < records.size(); ++i) body += (i ? "," : "") + records[i];
  return body + "]}\n";
}

// Runs `make` for each text of `call`: a single text's record, or the batch
// of them with an error record in place of a text that fails as input.
template <typename Make>
Answer answer_each(const Call& call, Make make) {
  try {
    if (!call.batch) return {200, make(call.texts.front()) + "\n"};
    std::vector<std::string> records;
    for (const std::string& text : call.texts) {
      try {
        records.push_back(make(text));
      } catch (const Error& e) {
        if (e.code() != ExitCode::kInput) throw;
        records.push_back(views::error_record(text, e, Format::kJson));
      }
    }
    return {200, results(records)};
  } catch (const Error& e) {
    return error_answer(e);
  }
}

}  // namespace

int batch_key(const Call& call) {
  switch (call.endpoint) {
    case Endpoint::kPredict: return call.explain ? 1 : 0;
    case Endpoint::kAttention: return 2;
    case Endpoint::kScore: return 3;
    default: return -1;
  }
}

Worker::Worker(const Model& model, const Lexicon* lexicon, const LexiconIndex* index)
    : model_(model), lexicon_(lexicon), index_(index), predictor_(model), scorer_(model) {}

std::vector<Answer> Worker::run(std::span<const Call* const> calls) {
  try {
    switch (calls.front()->endpoint) {
      case Endpoint::kPredict:
      case Endpoint::kAttention: return predict(calls);
      case Endpoint::kScore: return score(calls);
      default: break;
    }
    std::vector<Answer> answers;
    for (const Call* call : calls) answers.push_back(one(*call));
    return answers;
  } catch (const Error& e) {
    return std::vector<Answer>(calls.size(), error_answer(e));
  } catch (const std::bad_alloc&) {
    return std::vector<Answer>(calls.size(),
                               Answer{503, error_body({503, "overloaded", "out of memory"})});
  } catch (const std::exception& e) {
    return std::vector<Answer>(calls.size(), Answer{500, error_body({500, "internal", e.what()})});
  }
}

std::vector<Answer> Worker::predict(std::span<const Call* const> calls) {
  // Every text of every call in one forward pass, in order; a text that is
  // no input gets its error instead.
  std::vector<Encoded> inputs;
  std::vector<std::optional<Error>> errors;
  int k = 1;
  bool with_attention = false;
  for (const Call* call : calls) {
    k = std::max(k, call->k);
    with_attention = with_attention || call->endpoint == Endpoint::kAttention || call->explain;
    for (const std::string& text : call->texts) {
      try {
        inputs.push_back(encode(model_, text));
        errors.emplace_back();
      } catch (const Error& e) {
        if (e.code() != ExitCode::kInput) throw;
        errors.emplace_back(e);
      }
    }
  }
  // The attention view shows the transformer's own predictions: with a
  // memory, its calls' texts run again without the mixture.
  std::vector<size_t> own;  // indices into inputs of attention calls' texts
  if (model_.memory) {
    size_t at = 0, index = 0;
    for (const Call* call : calls) {
      for (size_t i = 0; i < call->texts.size(); ++i, ++at) {
        if (!errors[at]) {
          if (call->endpoint == Endpoint::kAttention) own.push_back(index);
          ++index;
        }
      }
    }
  }
  std::vector<Encoded> own_inputs;
  for (const size_t i : own) own_inputs.push_back(inputs[i]);
  // The top k of a larger k is the same list cut (ranking is a total order).
  std::vector<Prediction> predictions = predictor_.predict(std::move(inputs), k, with_attention);
  if (!own.empty()) {
    predictor_.set_mixing(false);
    std::vector<Prediction> transformer = predictor_.predict(std::move(own_inputs), k, true);
    predictor_.set_mixing(true);
    for (size_t j = 0; j < own.size(); ++j) predictions[own[j]] = std::move(transformer[j]);
  }
  std::vector<Answer> answers;
  size_t at = 0, next = 0;
  for (const Call* call : calls) {
    size_t i = 0;
    answers.push_back(answer_each(*call, [&](const std::string& text) {
      const std::optional<Error>& error = errors[at + i++];
      if (error) throw *error;
      Prediction& p = predictions[next++];
      p.top.resize(std::min(p.top.size(), static_cast<size_t>(call->k)));
      if (call->endpoint == Endpoint::kAttention) return attention(*call, text, p);
      return views::prediction_record(
          model_, text, p, Format::kJson,
          call->explain ? views::explain_lines(model_, p) : std::vector<std::string>{});
    }));
    at += call->texts.size();
  }
  return answers;
}

std::string Worker::attention(const Call& call, const std::string& text, const Prediction& p) {
  if (call.format == "html") return views::attention_html(model_, text, p);
  if (call.format == "page") {
    return views::dump(views::attention_page_data(
        model_, text, p, views::attribution_word(model_, call.word, "word")));
  }
  return views::attention_record(model_, text, p);
}

std::vector<Answer> Worker::score(std::span<const Call* const> calls) {
  std::vector<Encoded> inputs;
  std::vector<std::vector<int>> streams;
  for (const Call* call : calls) {
    for (const std::string& text : call->texts) {
      inputs.push_back(encode_text(model_, text));
      streams.push_back(inputs.back().ids);
    }
  }
  std::vector<std::vector<TokenScore>> scores;
  scorer_.score(streams, scores);
  std::vector<Answer> answers;
  size_t next = 0;
  for (const Call* call : calls) {
    answers.push_back(answer_each(*call, [&](const std::string& text) {
      const Encoded& in = inputs[next];
      add_spelling(model_, unknown_words_, in.tokens, in.ids, scores[next], lexicon_);
      std::vector<WordScore> words = word_scores(model_, in.tokens, in.ids, scores[next++]);
      if (model_.subword) rank_words(predictor_, in.ids, words);
      return views::score_record(model_, {"text", text}, in.tokens, in.ids, words, Format::kJson);
    }));
  }
  return answers;
}

Answer Worker::one(const Call& call) {
  if (call.endpoint != Endpoint::kComplete) {
    return answer_each(call, [&](const std::string& text) { return record(call, text, nullptr); });
  }
  // One typing session per call, as one `complete` process: a "texts" batch
  // is its successive states, their contexts run together as a stream's.
  Completer completer(model_, index_, call.complete);
  size_t done = 0;
  return answer_each(call, [&](const std::string& text) {
    if (call.batch && done % kCompleteBatch == 0) {
      completer.prefetch(
          std::span(call.texts).subspan(done, std::min(kCompleteBatch, call.texts.size() - done)));
    }
    ++done;
    return record(call, text, &completer);
  });
}

std::string Worker::record(const Call& call, const std::string& text, Completer* completer) {
  using views::Look;
  views::LookOptions look = call.look;
  switch (call.endpoint) {
    case Endpoint::kComplete:
      return views::completion_record(text, completer->complete(text), Format::kJson);
    case Endpoint::kLens:
      return views::look_record(model_, Look::kLens, text, encode(model_, text), look,
                                Format::kJson);
    case Endpoint::kTrace:
      return views::look_record(model_, Look::kTrace, text, encode(model_, text), look,
                                Format::kJson, "only");
    case Endpoint::kAttribute:
      look.word = views::attribution_word(model_, call.word, "word");
      return views::look_record(model_, Look::kAttribute, text, encode(model_, text), look,
                                Format::kJson);
    case Endpoint::kGenerate: {
      const std::vector<int> ids =
          generate(predictor_, encode(model_, text), call.generate,
                   [&call](int) { return !(call.cancelled && call.cancelled->load()); });
      return views::generate_record(views::generated(model_, text, ids), Format::kJson);
    }
    default: throw Error(ExitCode::kFailure, "not a one-by-one endpoint");
  }
}

Answer Worker::stream(const Call& call, const EventSink& events) {
  try {
    const std::string& phrase = call.texts.front();
    int index = 0;
    const std::vector<int> ids =
        generate(predictor_, encode(model_, phrase), call.generate, [&](int id) {
          return events(views::dump({{"word", model_.vocab.word(id)}, {"index", index++}}));
        });
    return {200,
            views::generate_record(views::generated(model_, phrase, ids), Format::kJson) + "\n"};
  } catch (const Error& e) {
    return error_answer(e);
  }
}

}  // namespace nextword::serve
