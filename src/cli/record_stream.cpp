#include "cli/record_stream.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "base/error.h"
#include "text/tokenizer.h"

namespace nextword::cli {

using namespace views;
namespace {

std::string line_label(long number) { return "<stdin>:" + std::to_string(number) + ": "; }

// Predicts lines first+1, first+2, ... in one pass and writes their records
// in order; true when some line had no prediction.
bool predict_lines(const Model& m, Predictor& predictor, const std::vector<std::string>& lines,
                   long first, const RecordOptions& o, const RecordSink& sink) {
  std::vector<Encoded> inputs;
  std::vector<std::optional<Error>> errors(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    try {
      inputs.push_back(encode(m, lines[i]));
    } catch (const Error& e) {
      if (e.code() != ExitCode::kInput) throw;
      errors[i] = e;
    }
  }
  std::vector<Prediction> predictions =
      predictor.predict(std::move(inputs), o.top_k, o.attention || o.explain);
  size_t next = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = line_label(first + 1 + static_cast<long>(i));
    if (errors[i]) {
      sink.report(where + errors[i]->message());
      sink.record(error_record(lines[i], *errors[i], o.format));
    } else {
      write_prediction(m, lines[i], predictions[next++], where, o, sink);
    }
  }
  return std::any_of(errors.begin(), errors.end(), [](const auto& e) { return e.has_value(); });
}

}  // namespace

void write_prediction(const Model& m, const std::string& phrase, const Prediction& p,
                      const std::string& where, const RecordOptions& o, const RecordSink& sink) {
  // JSON records carry "unknown" and "truncated" themselves.
  const bool notes = !o.quiet && o.format != Format::kJson;
  if (notes && p.input.truncated) {
    sink.report(where + "note: phrase cut to its last " + std::to_string(m.config.max_len) +
                " tokens (max_len)");
  }
  if (notes && !p.input.unknown.empty()) {
    sink.report(where + "note: not in the vocabulary: " + join(p.input.unknown));
  }
  if (!o.attention) {
    sink.record(prediction_record(m, phrase, p, o.format,
                                  o.explain ? explain_lines(m, p) : std::vector<std::string>{}));
    return;
  }
  switch (o.view) {
    case View::kJson: sink.record(attention_record(m, phrase, p)); break;
    case View::kText: sink.record(attention_text(m, p, o.choice, o.color)); break;
    case View::kSvg: sink.record(attention_svg(m, p, o.choice)); break;
    case View::kHtml: sink.record(attention_html(m, phrase, p)); break;
    case View::kBertviz: sink.record(attention_bertviz(m, p)); break;
  }
}

int stream_records(const Model& m, Predictor& predictor, LineReader& input, const RecordOptions& o,
                   const RecordSink& sink) {
  int status = 0;
  long number = 0;
  std::vector<std::string> lines;
  std::vector<char> cut;
  while (input.next_batch(lines, cut, o.batch)) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (cut[i] && !o.quiet && o.format != Format::kJson) {
        sink.report(line_label(number + 1 + static_cast<long>(i)) + LineReader::kCutNote);
      }
    }
    if (predict_lines(m, predictor, lines, number, o, sink)) {
      status = static_cast<int>(ExitCode::kInput);
    }
    number += static_cast<long>(lines.size());
  }
  return status;
}

}  // namespace nextword::cli
