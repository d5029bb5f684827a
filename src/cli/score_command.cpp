// nextword score [TEXT...]: every word's log-probability given the words
// before it, per line (as KenLM's `query` scores a corpus), or the lines whose
// perplexity lies in a range (corpus filtering), or one whole file.
#include <unistd.h>

#include <limits>
#include <memory>
#include <optional>

#include "base/error.h"
#include "base/threading.h"
#include "cli/commands.h"
#include "cli/line_reader.h"
#include "predict/predictor.h"
#include "predict/scorer.h"
#include "predict/unknown_words.h"
#include "predict/word_scores.h"
#include "text/documents.h"
#include "text/tokenizer.h"
#include "views/records.h"

namespace nextword::cli {
namespace {

using namespace views;

// Totals for the summary on stderr.
struct Tally {
  long lines = 0;
  long words = 0;
  long unknown = 0;
  double logprob = 0;        // every word
  double known_logprob = 0;  // words in the vocabulary only
};

struct ScoreCommand {
  ModelOptions model;
  std::vector<std::string> words;
  std::string format = "text";
  bool quiet = false;
  int batch = 256;
  int threads = 0;
  std::optional<double> min_perplexity, max_perplexity;
  std::string document;
  StrideOption stride;
  std::unique_ptr<UnknownWords> unknown_words;  // q, made at the first word outside the vocabulary
  std::unique_ptr<Predictor> predictor;         // a subword model's word search, for ranks

  void add_to(CLI::App& command) {
    model.add_to(command);
    command.add_option("text", words, "The text to score (no text: one per line from stdin)");
    CLI::Option* f =
        command.add_option("-f,--format", format, "Output: text (KenLM-like), tsv or json")
            ->check(CLI::IsMember({"text", "tsv", "json"}))
            ->capture_default_str();
    command.add_flag("-q,--quiet", quiet, "No summary (lines, words, perplexity) on stderr");
    command.add_option("--batch", batch, "Lines from stdin scored together, at most")
        ->check(CLI::Range(1, 1 << 16))
        ->capture_default_str();
    command.add_option("-t,--threads", threads, "Threads (default: every core)")
        ->check(CLI::Range(1, 1024));
    CLI::Option* low = command.add_option(
        "--min-perplexity", min_perplexity,
        "Print only the input lines whose perplexity is at least this, unchanged");
    CLI::Option* high = command.add_option(
        "--max-perplexity", max_perplexity,
        "Print only the input lines whose perplexity is at most this, unchanged");
    CLI::Option* file = command.add_option("--document", document,
                                           "Score this whole file as one text, as `eval` reads it");
    for (CLI::Option* filter : {low, high}) filter->excludes(f)->excludes(file);
    file->excludes("text");
    stride.add_to(command)->needs(file);
  }

  bool filtering() const { return min_perplexity || max_perplexity; }

  int run() {
    set_threading(Threading::kRows, threads > 0 ? threads : available_cores());
    const Model m = model.load();
    Scorer scorer(m);
    Tally tally;
    if (!document.empty()) {
      score_document(m, scorer, tally);
    } else if (!words.empty()) {
      score_lines(m, scorer, {join(words)}, tally);
    } else {
      LineReader input = LineReader::standard_input();
      std::vector<std::string> lines;
      std::vector<char> cut;
      while (input.next_batch(lines, cut, batch)) {
        for (size_t i = 0; i < lines.size(); ++i) {
          if (cut[i] && !quiet) {
            report("<stdin>:" + std::to_string(tally.lines + 1 + static_cast<long>(i)) + ": " +
                   LineReader::kCutNote);
          }
        }
        score_lines(m, scorer, lines, tally);
      }
    }
    if (!quiet) {
      const std::string what = !document.empty()  ? document
                               : tally.lines == 1 ? "1 line"
                                                  : std::to_string(tally.lines) + " lines";
      report("scored " + what + ", " + std::to_string(tally.words) +
             (tally.words == 1 ? " word (" : " words (") + std::to_string(tally.unknown) +
             " unknown): perplexity " + fixed(perplexity(tally.logprob, tally.words), 4) +
             ", without unknown words " +
             fixed(perplexity(tally.known_logprob, tally.words - tally.unknown), 4));
    }
    return 0;
  }

  void score_lines(const Model& m, Scorer& scorer, const std::vector<std::string>& lines,
                   Tally& tally) {
    std::vector<Encoded> inputs;
    std::vector<std::vector<int>> streams;
    for (const std::string& line : lines) {
      inputs.push_back(encode_text(m, line));
      streams.push_back(inputs.back().ids);
    }
    std::vector<std::vector<TokenScore>> scores;
    scorer.score(streams, scores);
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::vector<WordScore> scored = words_of(m, inputs[i].tokens, inputs[i].ids, scores[i]);
      const double logprob = add(scored, tally);
      ++tally.lines;
      if (filtering()) {
        const double p = perplexity(logprob, static_cast<long>(scored.size()));
        if (p >= min_perplexity.value_or(0) &&
            p <= max_perplexity.value_or(std::numeric_limits<double>::infinity())) {
          write_line(lines[i]);
        }
      } else {
        write_line(record(m, {"text", lines[i]}, inputs[i].tokens, inputs[i].ids, scored));
      }
    }
  }

  void score_document(const Model& m, Scorer& scorer, Tally& tally) {
    const std::vector<Document> documents = read_documents({document}, m.config.tokenizer);
    std::vector<std::vector<int>> stream{document_stream(m, documents)};
    const std::vector<std::string> tokens = document_tokens(m, documents, stream[0]);
    std::vector<std::vector<TokenScore>> scores;
    scorer.score(stream, scores, {}, stride.of(m));
    const std::vector<WordScore> scored = words_of(m, tokens, stream[0], scores[0]);
    add(scored, tally);
    ++tally.lines;
    write_line(record(m, {"document", document}, tokens, stream[0], scored));
  }

  // A stream's scores as words: unknown words spelled (q), a subword
  // model's pieces joined into words, ranked when JSON shows the ranks.
  std::vector<WordScore> words_of(const Model& m, const std::vector<std::string>& tokens,
                                  const std::vector<int>& ids, std::vector<TokenScore>& scores) {
    add_spelling(m, unknown_words, tokens, ids, scores);
    std::vector<WordScore> scored = word_scores(m, tokens, ids, scores);
    if (m.subword && format == "json") {
      if (!predictor) predictor = std::make_unique<Predictor>(m);
      rank_words(*predictor, ids, scored);
    }
    return scored;
  }

  // Adds a stream's words to the tally; returns their sum.
  static double add(const std::vector<WordScore>& scored, Tally& tally) {
    double sum = 0;
    for (const WordScore& w : scored) {
      sum += w.logprob;
      tally.unknown += w.unknown;
      if (!w.unknown) tally.known_logprob += w.logprob;
    }
    tally.words += static_cast<long>(scored.size());
    tally.logprob += sum;
    return sum;
  }

  std::string record(const Model& m, const std::pair<const char*, std::string>& source,
                     const std::vector<std::string>& tokens, const std::vector<int>& ids,
                     const std::vector<WordScore>& scored) const {
    const Format f = format == "json"  ? Format::kJson
                     : format == "tsv" ? Format::kTsv
                                       : Format::kText;
    return score_record(m, source, tokens, ids, scored, f);
  }
};

}  // namespace

CLI::App* add_score_command(CLI::App& app, std::function<int()>& run) {
  return add_command<ScoreCommand>(
      app, "score",
      "Score text word by word: each word's log-probability and rank, per line; or keep the "
      "lines within a perplexity range",
      run);
}

}  // namespace nextword::cli
