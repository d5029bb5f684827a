// The record path of `predict` and `attention`: phrases in, exactly one
// record per phrase out, in order; a phrase that cannot be predicted gets an
// error record in its place and the stream goes on.
#pragma once

#include <functional>
#include <string>

#include "cli/line_reader.h"
#include "model/model_file.h"
#include "predict/predictor.h"
#include "views/attention_page.h"
#include "views/attention_view.h"
#include "views/records.h"

namespace nextword::cli {

// The views' names every command that prints records uses.
using views::AttentionChoice;
using views::Color;
using views::Format;

// What an attention record shows.
enum class View { kJson, kText, kSvg, kHtml, kBertviz };

struct RecordOptions {
  int top_k = 5;
  Format format = Format::kText;
  bool quiet = false;          // no notes (unknown words, truncation)
  bool attention = false;      // attention records instead of prediction records
  View view = View::kJson;     // ... of this kind
  AttentionChoice choice;      // ... showing this layer and head
  Color color = Color::kNone;  // ... in these colors (text)
  bool explain = false;        // prediction records say which words were looked at
  int batch = 64;              // phrases from the input predicted together, at most
};

// Where the lines go: stdout and stderr in the binary, strings in the fuzzer.
struct RecordSink {
  std::function<void(const std::string&)> record;  // one result line
  std::function<void(const std::string&)> report;  // one stderr line, after "nextword: "
};

// The record of one predicted phrase, after its notes; `where` prefixes the
// notes ("<stdin>:3: ", or "").
void write_prediction(const Model& model, const std::string& phrase, const Prediction& p,
                      const std::string& where, const RecordOptions& options,
                      const RecordSink& sink);

// Reads `input` to its end. Lines already waiting are predicted together, up
// to options.batch in one forward pass; a line typed by hand is answered as
// soon as it is read. Returns the exit status: 0, or 4 when some line had no
// prediction.
int stream_records(const Model& model, Predictor& predictor, LineReader& input,
                   const RecordOptions& options, const RecordSink& sink);

}  // namespace nextword::cli
