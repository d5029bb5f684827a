// nextword memory: counts a training text into the model's memory.bin (an
// n-gram model of every token: train/ngram_memory.h), and fits the mixture
// weights on a development text in WikiText's format (predict/memory_mixture.h).
#include <sys/resource.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/file_output.h"
#include "base/threading.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/progress.h"
#include "eval/memory_fit.h"
#include "eval/wikitext.h"
#include "format/file_bytes.h"
#include "predict/memory_mixture.h"
#include "predict/scorer.h"
#include "text/documents.h"
#include "train/ngram_memory.h"

namespace nextword::cli {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double peak_memory_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

struct MemoryCommand {
  ModelOptions model;
  std::vector<std::string> files;
  std::string output, dev, tokens, query, format = "text";
  MemoryOptions options;
  CompletionOptions completion;

  void add_to(CLI::App& c) {
    model.add_to(c);
    c.add_option("text", files,
                 "The training text (documents as for train); none, with --dev: fit the weights "
                 "of the memory already there (-o, or the model's memory.bin) again");
    c.add_option("-o,--output", output, "File to write (default: memory.bin beside vocab.json)");
    c.add_option("--order", options.order, "n: contexts of up to n - 1 tokens")
        ->check(CLI::Range(1, kMemoryMaxOrder))
        ->capture_default_str();
    c.add_option("--cutoffs", options.cutoffs,
                 "Smallest count kept at orders 2, 3, ... (the last repeats; each at least "
                 "the one before; default 1: everything)")
        ->delimiter(',');
    c.add_option("--dev", dev,
                 "Fit the mixture weights on this development text, WikiText-tokenized "
                 "(without it every weight is --lambda)")
        ->type_name("FILE");
    c.add_option("--tokens", tokens,
                 "Also write the counted tokens to FILE as text, for other n-gram toolkits: "
                 "one document a line after its bos, each token its vocabulary word (a word "
                 "outside the vocabulary as the unk token)")
        ->type_name("FILE");
    c.add_option("--query", query,
                 "Score FILE with the memory alone and time its lookups (no TEXT): each line "
                 "after a bos, each whitespace-separated word its vocabulary id (else the "
                 "unk token's), every word scored; perplexity and lookups a second")
        ->type_name("FILE");
    c.add_option("--lambda", options.lambda, "The weight of every bucket without --dev")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    c.add_option("-f,--format", format, "Summary on stdout: text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  int run() {
    set_threading(Threading::kRows, available_cores());
    const auto start = std::chrono::steady_clock::now();
    ModelOptions without = model;
    without.no_memory = true;
    ModelPaths paths = without.paths();
    Model m = load_model(paths);
    if (output.empty()) {
      output = (std::filesystem::path(paths.vocab).parent_path() / "memory.bin").string();
    }
    Progress progress;
    auto say = [&progress](const std::string& what) { progress.message("memory: " + what); };
    if (!query.empty()) return score_query(m);
    if (files.empty()) return refit(m, say, start);
    say("reading " + std::to_string(files.size()) + " file(s)");
    std::vector<int> stream;
    {
      const std::vector<Document> documents = read_documents(files, m.config.tokenizer);
      stream = document_stream(m, documents);
    }
    if (stream.empty()) throw input_error("memory: the text has no words");
    if (!tokens.empty()) write_tokens(m, stream);
    MemoryTables tables;
    try {
      tables = build_memory(stream, m.vocab, options, say);
    } catch (const std::invalid_argument& e) {
      throw Error(ExitCode::kUsage, std::string("memory: ") + e.what());
    }
    std::vector<int>().swap(stream);
    const double build_seconds = seconds_since(start);
    nlohmann::ordered_json fit;
    if (!dev.empty()) {
      say("fitting the mixture weights on " + dev);
      fit = fit_weights(
          m, Memory::from_file(FileBytes::from_bytes(output, memory_bytes(tables)), m.vocab));
      tables.header.lambdas = fit["lambdas"].get<std::vector<double>>();
    }
    const std::string bytes = memory_bytes(tables);
    write_file_atomically(output, bytes);
    report_summary(tables.header, &tables, bytes.size(), build_seconds, seconds_since(start), fit);
    return 0;
  }

  // --tokens: the stream as words, a document (from one bos to the next) a line.
  void write_tokens(const Model& m, const std::vector<int>& stream) const {
    std::string text;
    for (size_t i = 0; i < stream.size(); ++i) {
      if (stream[i] == m.bos_id) {
        if (i > 0) text += '\n';
        continue;
      }
      if (!text.empty() && text.back() != '\n') text += ' ';
      text += m.vocab.word(stream[i]);
    }
    text += '\n';
    write_file_atomically(tokens, text);
  }

  // --query: the memory alone on a text of words, its lookups timed (for
  // side-by-side runs with other n-gram toolkits: tests/bench/kenlm_compare.py).
  int score_query(const Model& m) const {
    const std::shared_ptr<const Memory> memory = Memory::open(output, m.vocab);
    const std::string text = read_text_file(query);
    std::vector<std::vector<int>> lines;
    int64_t unknown = 0;
    for (size_t at = 0; at < text.size();) {
      size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      std::vector<int> ids;
      const std::string_view line = std::string_view(text).substr(at, end - at);
      for (size_t i = 0; i < line.size();) {
        const size_t first = line.find_first_not_of(" \t\r", i);
        if (first == std::string_view::npos) break;
        const size_t last = std::min(line.find_first_of(" \t\r", first), line.size());
        int id = m.vocab.find(line.substr(first, last - first));
        if (id < 0) {
          id = m.unk_id;
          ++unknown;
        }
        ids.push_back(id);
        i = last;
      }
      if (!ids.empty()) lines.push_back(std::move(ids));
      at = end + 1;
    }
    if (lines.empty()) throw input_error(query + ": no words to score");
    const auto start = std::chrono::steady_clock::now();
    double total = 0;
    int64_t count = 0;
    std::vector<int> context;
    for (const std::vector<int>& ids : lines) {
      context.assign(1, m.bos_id);
      for (const int id : ids) {
        total += std::log(memory->probability(memory->find(context), id));
        context.push_back(id);
        ++count;
      }
    }
    const double seconds = seconds_since(start);
    nlohmann::ordered_json j = {
        {"file", query},       {"memory", output},
        {"tokens", count},     {"unknown", unknown},
        {"total_ln_p", total}, {"perplexity", std::exp(-total / static_cast<double>(count))},
        {"seconds", seconds},  {"lookups_per_s", static_cast<double>(count) / seconds}};
    if (format == "json") {
      write_line(j.dump());
    } else {
      char line[300];
      std::snprintf(line, sizeof line,
                    "memory       %s\ntokens       %lld (%lld outside the vocabulary)\n"
                    "perplexity   %.2f (the memory alone)\nlookups      %.0f a second",
                    output.c_str(), static_cast<long long>(count), static_cast<long long>(unknown),
                    std::exp(-total / static_cast<double>(count)),
                    static_cast<double>(count) / seconds);
      write_line(line);
    }
    return 0;
  }

  // No text: the memory already written gets weights fitted on --dev.
  int refit(Model& m, const std::function<void(const std::string&)>& say,
            std::chrono::steady_clock::time_point start) {
    if (dev.empty()) {
      throw Error(ExitCode::kUsage, "memory: give the training TEXT, or --dev to fit again");
    }
    say("fitting the weights of " + output + " on " + dev);
    const std::shared_ptr<const Memory> memory = Memory::open(output, m.vocab);
    const nlohmann::ordered_json fit = fit_weights(m, memory);
    const std::string bytes =
        memory_with_lambdas(*memory, fit["lambdas"].get<std::vector<double>>());
    write_file_atomically(output, bytes);
    report_summary(memory->header(), nullptr, bytes.size(), 0, seconds_since(start), fit);
    return 0;
  }

  // Scores the development text with `memory` (its weights as they are),
  // then fits each bucket's weight to the transformer's and the memory's
  // probabilities of each word: "lambdas", and the perplexities.
  nlohmann::ordered_json fit_weights(Model& m, std::shared_ptr<const Memory> memory) const {
    const Wikitext text =
        read_wikitext(read_text_file(dev), m.config.tokenizer, m.config.unk_token);
    if (text.scored() == 0) throw input_error(dev + ": no WikiText token to score");
    const std::optional<Lexicon> lexicon = completion.load_lexicon(m.paths);
    const MemoryFit fit =
        fit_memory_weights(m, std::move(memory), text, lexicon ? &*lexicon : nullptr);
    return {{"file", dev},
            {"tokens", fit.tokens},
            {"mixed_nats", fit.mixed_nats},
            {"transformer_nats", fit.transformer_nats},
            {"memory_nats", fit.memory_nats},
            {"perplexity", fit.perplexity},
            {"transformer_perplexity", fit.transformer_perplexity},
            {"memory_perplexity", fit.memory_perplexity},
            {"lambdas", fit.lambdas}};
  }

  // `counted`: the tables just built (each order's n-grams before pruning).
  void report_summary(const MemoryHeader& h, const MemoryTables* counted, size_t bytes,
                      double build_seconds, double seconds,
                      const nlohmann::ordered_json& fit) const {
    nlohmann::ordered_json orders = nlohmann::ordered_json::array();
    for (int k = 1; k <= h.order; ++k) {
      const auto K = static_cast<size_t>(k - 1);
      orders.push_back({{"order", k},
                        {"distinct", counted ? counted->distinct[K] : h.entries[K]},
                        {"kept", h.entries[K]},
                        {"cutoff", h.cutoffs[K]},
                        {"discounts", h.discounts[K]}});
      if (counted && k >= 2) orders.back()["at_least"] = counted->at_least[K];
    }
    nlohmann::ordered_json j = {{"file", output},     {"bytes", bytes},
                                {"tokens", h.tokens}, {"order", h.order},
                                {"orders", orders},   {"build_seconds", build_seconds},
                                {"seconds", seconds}, {"peak_memory_mb", peak_memory_mb()},
                                {"fit", fit}};
    if (format == "json") {
      write_line(j.dump());
      return;
    }
    char line[400];
    std::string out;
    std::snprintf(line, sizeof line,
                  "memory       %s, %.1f MB\ntokens       %llu\norder        %d\n"
                  "time         %.1f s to count and estimate, %.1f s in all; peak memory %.0f MB",
                  output.c_str(), static_cast<double>(bytes) / 1e6,
                  static_cast<unsigned long long>(h.tokens), h.order, build_seconds, seconds,
                  peak_memory_mb());
    out += line;
    for (const auto& o : orders) {
      std::snprintf(line, sizeof line, "\n  order %d    %llu distinct, %llu kept (count >= %u)",
                    o["order"].get<int>(), o["distinct"].get<unsigned long long>(),
                    o["kept"].get<unsigned long long>(), o["cutoff"].get<unsigned>());
      out += line;
    }
    if (!fit.is_null()) {
      std::snprintf(line, sizeof line,
                    "\nfitted on    %s (%llu tokens): perplexity %.2f mixed, %.2f transformer, "
                    "%.2f memory",
                    dev.c_str(), fit["tokens"].get<unsigned long long>(),
                    fit["perplexity"].get<double>(), fit["transformer_perplexity"].get<double>(),
                    fit["memory_perplexity"].get<double>());
      out += line;
    }
    write_line(out);
  }
};

}  // namespace

CLI::App* add_memory_command(CLI::App& app, std::function<int()>& run) {
  return add_command<MemoryCommand>(
      app, "memory",
      "Count a training text into the model's memory (memory.bin: an n-gram model mixed with "
      "the transformer), fitting its weights on a development text (--dev)",
      run);
}

}  // namespace nextword::cli
