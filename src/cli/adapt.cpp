#include "cli/adapt.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "base/error.h"
#include "base/file_output.h"
#include "base/threading.h"
#include "eval/memory_fit.h"
#include "eval/wikitext_eval.h"
#include "format/file_bytes.h"
#include "model/lexicon.h"
#include "model/lexicon_index.h"
#include "model/vocab_index.h"
#include "model/weights_file.h"
#include "predict/scorer.h"
#include "text/documents.h"
#include "text/utf8.h"
#include "train/corpus.h"
#include "train/initial_weights.h"
#include "train/ngram_memory.h"

namespace nextword::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The model directory being written, beside where it goes (the same file
// system, so that publishing it is one rename); removed unless published.
class Staging {
 public:
  explicit Staging(const fs::path& out) : out_(out) {
    const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
    std::error_code ec;
    fs::create_directories(parent, ec);
    dir_ = parent / ("." + out.filename().string() + ".adapting-" + std::to_string(::getpid()));
    fs::remove_all(dir_, ec);
    if (!fs::create_directory(dir_, ec)) {
      throw Error(ExitCode::kIo,
                  dir_.string() + ": cannot make the model's directory: " + ec.message());
    }
  }
  ~Staging() {
    std::error_code ec;
    if (!published_) fs::remove_all(dir_, ec);
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  const fs::path& dir() const { return dir_; }
  std::string file(const char* name) const { return (dir_ / name).string(); }

  // Moves the directory into place (an existing one, with force, replaced).
  void publish() {
    std::error_code ec;
    fs::path old;
    if (fs::exists(out_, ec)) {
      old = out_.parent_path() /
            ("." + out_.filename().string() + ".replaced-" + std::to_string(::getpid()));
      fs::rename(out_, old, ec);
      if (ec) throw Error(ExitCode::kIo, out_.string() + ": cannot replace: " + ec.message());
    }
    fs::rename(dir_, out_, ec);
    if (ec) {
      if (!old.empty()) fs::rename(old, out_, ec);
      throw Error(ExitCode::kIo, out_.string() + ": cannot write: " + ec.message());
    }
    published_ = true;
    if (!old.empty()) fs::remove_all(old, ec);
  }

 private:
  fs::path out_, dir_;
  bool published_ = false;
};

// A text file as a person's writing: not empty, not binary (read_text_file
// refuses a NUL byte; here, more than one byte in twenty outside UTF-8).
std::string read_person_text(const std::string& path) {
  std::string text = read_text_file(path);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw input_error(path + ": empty: adapt learns from a person's own text");
  }
  size_t invalid = 0;
  for (const char *p = text.data(), *end = p + text.size(); p < end;) {
    const size_t n = utf8_sequence_length(p, end);
    if (n == 0) ++invalid;
    p += n == 0 ? 1 : n;
  }
  if (invalid * 20 > text.size()) {
    throw input_error(path + ": not text: " + std::to_string(invalid * 100 / text.size()) +
                      "% of its bytes are not UTF-8");
  }
  return text;
}

int64_t count_tokens(const std::vector<Document>& documents) {
  int64_t n = 0;
  for (const Document& d : documents) n += static_cast<int64_t>(d.size());
  return n;
}

// Every tenth document is held out (to fit the memory's weights on and to
// measure); a text of fewer than ten documents is first cut into ten pieces.
void hold_out(std::vector<Document> documents, std::vector<Document>& train,
              std::vector<Document>& held) {
  if (documents.size() < 10) {
    const int64_t words = count_tokens(documents);
    const auto piece = static_cast<size_t>((words + 9) / 10);
    std::vector<Document> pieces;
    for (const Document& d : documents) {
      for (size_t at = 0; at < d.size(); at += piece) {
        pieces.emplace_back(
            d.begin() + static_cast<std::ptrdiff_t>(at),
            d.begin() + static_cast<std::ptrdiff_t>(std::min(d.size(), at + piece)));
      }
    }
    documents = std::move(pieces);
  }
  for (size_t i = 0; i < documents.size(); ++i) {
    (i % 10 == 9 ? held : train).push_back(std::move(documents[i]));
  }
}

// Documents as a text to score, every word scored.
Wikitext as_wikitext(const std::vector<Document>& documents) {
  Wikitext text;
  for (const Document& d : documents) {
    text.documents.push_back({d, std::vector<char>(d.size(), 1)});
    text.wikitext_tokens += static_cast<int64_t>(d.size());
  }
  return text;
}

// The base's lexicon with the text's words, the text weighing as much as the
// whole base lexicon (each of its counts scaled by the two totals' ratio), so
// that the person's words outside the vocabulary are spelled and offered as
// often as their own writing has them, not as rarely as Wikipedia does.
Lexicon merged_lexicon(const std::optional<Lexicon>& base, const Lexicon& text, int64_t& added) {
  std::unordered_map<std::string, int64_t> counts;
  int64_t base_total = 0, text_total = 0;
  if (base) {
    counts.reserve(base->entries.size() + text.entries.size());
    for (const LexiconEntry& e : base->entries) {
      counts[e.word] += e.count;
      base_total += e.count;
    }
  }
  for (const LexiconEntry& e : text.entries) text_total += e.count;
  const double scale = base_total > 0 && text_total > 0
                           ? static_cast<double>(base_total) / static_cast<double>(text_total)
                           : 1.0;
  added = 0;
  for (const LexiconEntry& e : text.entries) {
    int64_t& count = counts[e.word];
    if (count == 0) ++added;
    count += std::max<int64_t>(1, std::llround(static_cast<double>(e.count) * scale));
  }
  Lexicon merged;
  merged.entries.reserve(counts.size());
  for (auto& [word, count] : counts) merged.entries.push_back({word, count});
  sort_lexicon(merged);
  return merged;
}

double held_out_perplexity(const Model& model, const Wikitext& held, const Lexicon* lexicon) {
  return evaluate_wikitext(model, held, lexicon, WikitextEvalOptions{}).perplexity();
}

std::string file_names(const std::vector<std::string>& paths) {
  std::string names;
  for (const std::string& p : paths) {
    if (!names.empty()) names += ", ";
    names += fs::path(p).filename().string();
  }
  return names;
}

}  // namespace

AdaptSummary adapt(const AdaptOptions& o, const AdaptHooks& hooks) {
  const auto start = Clock::now();
  auto say = [&](const std::string& what) {
    if (hooks.message) hooks.message("adapt: " + what);
  };
  if (o.texts.empty()) throw usage_error("adapt: no text given");
  if (o.out_dir.empty()) throw usage_error("adapt: give -o DIR or --name NAME");
  if (!(o.passes > 0) || o.steps < 0 || o.minutes < 0 || !(o.lr > 0) || o.batch < 1) {
    throw usage_error(
        "adapt: --passes and --lr must be positive, --steps and --minutes not negative");
  }
  std::error_code ec;
  const fs::path out = fs::absolute(o.out_dir, ec);
  if (fs::exists(out, ec) && !o.force) {
    throw usage_error(o.out_dir + ": exists; give --force to replace it");
  }
  if (fs::equivalent(out, o.base, ec)) {
    throw usage_error(o.out_dir + ": is the base model; adapt never changes it");
  }

  // The base, whole: a model that does not load is refused before any work.
  Model base = load_model(ModelPaths::in_directory(o.base));
  const std::optional<Lexicon> base_lexicon = read_lexicon_beside(base.paths.vocab);

  AdaptSummary s;
  say("reading " + file_names(o.texts));
  std::vector<Document> documents;
  for (const std::string& path : o.texts) {
    split_documents(read_person_text(path), base.config.tokenizer, documents);
  }
  s.words = count_tokens(documents);
  s.documents = static_cast<int64_t>(documents.size());
  if (s.words < kMinAdaptWords) {
    throw input_error("adapt: the text has " + std::to_string(s.words) +
                      " words; adapting needs at least " + std::to_string(kMinAdaptWords) +
                      " (a few pages of the person's writing)");
  }
  const Lexicon text_lexicon = count_words(documents, base.config.unk_token, base.config.bos_token);
  std::vector<Document> train_part, held;
  hold_out(documents, train_part, held);
  s.held_out_words = count_tokens(held);
  const Wikitext held_text = as_wikitext(held);

  Staging staging(out);
  set_threading(Threading::kRows, o.threads > 0 ? o.threads : available_cores());
  say("scoring the held-out " + with_commas(s.held_out_words) + " words with the base model");
  s.base_perplexity = held_out_perplexity(base, held_text, base_lexicon ? &*base_lexicon : nullptr);

  // Fine-tuning: the base's shape and weights, a low rate, a short
  // warmup-stable-decay schedule, no dropout (data/english/ablations.md,
  // "Adapting to a person's mail", says how it was chosen).
  TrainOptions t;
  take_model_shape(t, base, o.base);
  t.corpus = o.texts;
  t.out_dir = staging.dir().string();
  t.batch = o.batch;
  const int64_t tokens = count_tokens(train_part) + static_cast<int64_t>(train_part.size());
  const int64_t per_step = static_cast<int64_t>(t.batch) * t.model.max_len;
  t.steps = o.steps > 0 ? o.steps
                        : std::max<int>(
                              1, static_cast<int>(std::ceil(o.passes * static_cast<double>(tokens) /
                                                            static_cast<double>(per_step))));
  t.warmup = std::min(20, t.steps / 10);
  t.lr = o.lr;
  t.min_lr = o.lr / 10;
  t.schedule = "wsd";
  t.decay_fraction = 0.3f;
  t.shuffle = true;
  t.dropout = 0;
  t.val_fraction = 0;
  t.eval_every = 0;
  t.log_every = 1;
  t.checkpoint_every = -1;
  t.threads = o.threads;
  t.seed = o.seed;
  s.steps = t.steps;
  say("fine-tuning on " + with_commas(count_tokens(train_part)) + " words, " +
      std::to_string(t.steps) + " steps");
  const auto train_start = Clock::now();
  TrainHooks th;
  th.on_progress = hooks.progress;
  bool out_of_time = false;
  th.should_stop = [&] {
    if (o.minutes > 0 && seconds_since(train_start) > o.minutes * 60) out_of_time = true;
    return out_of_time || (hooks.should_stop && hooks.should_stop());
  };
  const TrainSummary trained = train(t, train_part, th);
  s.steps_done = trained.steps_done;
  s.stopped = trained.stopped;
  s.train_seconds = seconds_since(train_start);

  // The weights as the base keeps them (16-bit floats), and its indexes.
  ModelPaths paths{staging.file("vocab.json"), staging.file("weights.json"), ""};
  Model adapted = load_model(paths);
  set_threading(Threading::kRows, o.threads > 0 ? o.threads : available_cores());
  write_file_atomically(staging.file("weights.safetensors"),
                        weights_safetensors(adapted.config, adapted.weights, TensorDtype::kF16));
  fs::remove(paths.weights, ec);
  adapted = load_model(ModelPaths::in_directory(staging.dir().string()));
  const Lexicon lexicon = merged_lexicon(base_lexicon, text_lexicon, s.lexicon_words_added);

  // Fine-tuning that leaves the held-out words less likely than the base's
  // own transformer did (a text like the base's training text, which the
  // base already knows, read at a rate that shakes it) is not kept: the
  // base's weights are, byte for byte.
  say("scoring the held-out words with the fine-tuned transformer");
  s.transformer_perplexity = held_out_perplexity(adapted, held_text, &lexicon);
  std::shared_ptr<const Memory> base_memory = std::move(base.memory);
  const double base_alone = held_out_perplexity(base, held_text, &lexicon);
  base.memory = std::move(base_memory);
  if (s.transformer_perplexity > base_alone) {
    say("fine-tuning made the held-out perplexity worse (" +
        std::to_string(std::lround(s.transformer_perplexity)) + " against the base's " +
        std::to_string(std::lround(base_alone)) + "): the base's weights are kept");
    fs::remove(staging.file("weights.safetensors"), ec);
    const fs::path to = staging.dir() / fs::path(base.paths.weights).filename();
    fs::copy_file(base.paths.weights, to, fs::copy_options::overwrite_existing, ec);
    if (ec) throw Error(ExitCode::kIo, to.string() + ": cannot write: " + ec.message());
    adapted = load_model(ModelPaths::in_directory(staging.dir().string()));
    s.transformer_perplexity = base_alone;
    s.kept_base_weights = true;
  }
  const std::string lexicon_tsv = format_lexicon(lexicon);
  write_file_atomically(staging.file("lexicon.tsv"), lexicon_tsv);
  LexiconIndexSource source = LexiconIndexSource::of(adapted);
  source.lexicon_bytes = lexicon_tsv.size();
  write_file_atomically(staging.file("lexicon.bin"), LexiconIndex::bytes_of(lexicon, source));
  write_file_atomically(
      staging.file("vocab.bin"),
      vocab_index_bytes(adapted.vocab, static_cast<uint64_t>(adapted.vocab_file_bytes)));

  // The memory: the text's counts, its weights fitted on the held-out part
  // with a memory that has not seen it, then counted again over all of it.
  s.perplexity = s.transformer_perplexity;
  if (base.memory) {
    MemoryOptions mo;
    mo.order = base.memory->order();
    say("counting the text's n-grams (order " + std::to_string(mo.order) + ")");
    MemoryTables tables = build_memory(document_stream(adapted, train_part), adapted.vocab, mo);
    say("fitting the memory's weights on the held-out words");
    const MemoryFit fit = fit_memory_weights(
        adapted,
        Memory::from_file(FileBytes::from_bytes("memory.bin", memory_bytes(tables)), adapted.vocab),
        held_text, &lexicon);
    s.perplexity = fit.perplexity;
    tables = build_memory(document_stream(adapted, documents), adapted.vocab, mo);
    tables.header.lambdas = fit.lambdas;
    write_file_atomically(staging.file("memory.bin"), memory_bytes(tables));
    s.memory = true;
  }

  const std::string base_name = o.base_name.empty() ? o.base : o.base_name;
  char headline[300];
  std::snprintf(headline, sizeof headline,
                "held-out %s words of the text: perplexity %.1f (%s: %.1f); %d fine-tuning steps "
                "in %s s",
                with_commas(s.held_out_words).c_str(), s.perplexity, base_name.c_str(),
                s.base_perplexity, s.steps_done,
                std::to_string(std::lround(s.train_seconds)).c_str());
  nlohmann::ordered_json card = {
      {"text", "adapted from " + base_name + " on " + with_commas(s.words) + " words of " +
                   file_names(o.texts)},
      {"headline", headline},
      {"base", base_name},
      {"adapted",
       {{"texts", o.texts},
        {"words", s.words},
        {"documents", s.documents},
        {"held_out_words", s.held_out_words},
        {"steps", s.steps_done},
        {"planned_steps", s.steps},
        {"lr", o.lr},
        {"batch", o.batch},
        {"memory", s.memory},
        {"lexicon_words_added", s.lexicon_words_added},
        {"base_perplexity", s.base_perplexity},
        {"transformer_perplexity", s.transformer_perplexity},
        {"perplexity", s.perplexity},
        {"train_seconds", std::round(s.train_seconds * 10) / 10}}}};
  write_file_atomically(staging.file("card.json"), card.dump(2) + "\n");
  staging.publish();
  s.out_dir = out.string();
  s.seconds = seconds_since(start);
  return s;
}

}  // namespace nextword::cli
