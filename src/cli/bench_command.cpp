// nextword bench: how fast this machine loads and runs a model, in the spirit
// of llama-bench. Every figure is measured in this run, side by side with its
// yardstick (OpenBLAS's sgemm peak, nlohmann's DOM), because the machine may
// be shared and noisy: ratios taken together hold, absolute times drift.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>

#include "base/error.h"
#include "base/file_output.h"
#include "base/random.h"
#include "base/threading.h"
#include "cli/bench_products.h"
#include "cli/bench_timing.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "complete/completer.h"
#include "math/kernel_paths.h"
#include "math/layers.h"
#include "math/sgemm_peak.h"
#include "model/weights_file.h"
#include "predict/generate.h"
#include "predict/predictor.h"
#include "predict/word_search.h"
#include "text/running_text.h"

namespace nextword::cli {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::ordered_json;

// A size line of /proc/self/status ("VmRSS", "VmHWM": the peak since the
// last reset), in bytes; 0 when unknown.
int64_t status_bytes(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1)) * 1024;
  }
  return 0;
}
// Sets the peak back to the current size (Linux 4.0+); false if it cannot.
bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

// The yardstick for our loader: nlohmann's DOM parse of the whole file.
size_t nlohmann_dom_parse(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const nlohmann::json parsed = nlohmann::json::parse(bytes.str());
  return parsed.size();
}

// One batch's forward pass, as forward_flops counts it: a word model's
// predict (the pass and its top 5), a subword model's pass alone (its predict
// searches whole words, many passes more).
void forward(Predictor& predictor, const std::vector<Encoded>& inputs) {
  if (predictor.model().subword) {
    (void)predictor.next_logits(std::span<const Encoded>(inputs));
  } else {
    (void)predictor.predict(inputs, 5);
  }
}

struct BenchCommand {
  ModelOptions model;
  int threads = 0;
  std::vector<int> batches{1, 16, 64};
  std::vector<int> lengths{8, 64};
  double seconds = 0.5;
  bool skip_json = false;
  bool products = false;
  std::string format = "text";

  void add_to(CLI::App& c) {
    model.add_to(c);
    c.add_option("-t,--threads", threads, "Threads (default: every core)")
        ->check(CLI::Range(1, 1024));
    c.add_option("-b,--batch-sizes", batches, "Phrases per forward pass")
        ->delimiter(',')
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    c.add_option("-l,--lengths", lengths, "Tokens per phrase (at most the model's max_len)")
        ->delimiter(',')
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    c.add_option("--seconds", seconds, "Time spent on each measurement")
        ->check(CLI::Range(0.01, 60.0))
        ->capture_default_str();
    c.add_flag("--no-json-loader", skip_json,
               "Skip timing the JSON loader against nlohmann's DOM on a temporary file");
    c.add_flag("--products", products,
               "Time the prediction products alone against OpenBLAS's sgemm, one thread, at the "
               "model's shapes and a d_model 512 model's, for 1 to 128 rows");
    c.add_option("-f,--format", format, "Output: text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  int run() const {
    const int n = threads > 0 ? threads : available_cores();
    set_threading(Threading::kRows, n);
    const ModelPaths paths = model.paths();
    const Model m = load_model(paths);
    const Config& c = m.config;
    if (products) {
      const json report = bench_products(c, seconds);
      write_line(format == "json" ? report.dump() : products_as_text(report));
      return 0;
    }
    for (int length : lengths) {
      if (length > c.max_len) {
        throw Error(ExitCode::kUsage, "--lengths: " + std::to_string(length) +
                                          " tokens is more than the model's max_len " +
                                          std::to_string(c.max_len));
      }
    }
    json report;
    report["model"] = {{"weights", paths.weights},
                       {"bytes", m.weights_file_bytes},
                       {"parameters", m.weights.parameter_count()},
                       {"memory_mapped", !m.weights.owns_storage()}};
    report["threads"] = n;
    report["kernels"] = kernel_path_name(kernel_path());
    report["load_ms"] =
        1e3 * median(time_in_turns(seconds, 3, {{[&] { (void)load_model(paths); }}})[0]);
    if (!skip_json) report["json_loader"] = json_loader(m);

    // The yardstick, OpenBLAS's sgemm on a large square product on every
    // thread (math/sgemm_peak.h), is timed in turns with each batch below, so that both see the
    // same load on a shared machine; each batch is compared with its own.
    SgemmPeak sgemm;
    double best_peak = 0;

    Predictor predictor(m);
    json runs = json::array();
    for (int length : lengths) {
      for (int batch : batches) {
        std::vector<Encoded> inputs(static_cast<size_t>(batch));
        uint64_t seed = 1;
        for (Encoded& e : inputs) {
          for (int t = 0; t < length; ++t) {
            int id = static_cast<int>(splitmix64(seed++) % static_cast<uint64_t>(c.vocab_size));
            if (t == 0 && m.bos_id >= 0) id = m.bos_id;
            e.ids.push_back(id);
          }
        }
        // Blocks of forward passes (a tenth of the time each), then two
        // products; the best of each is kept, so the first pass after the
        // products evicted the weights from the cache does not count.
        const auto times = time_in_turns(
            seconds, 3,
            {{[&] { forward(predictor, inputs); }, 1, seconds / 10}, {[&] { sgemm.run(); }, 2}});
        const std::vector<int> sizes(static_cast<size_t>(batch), length);
        const double flops = forward_flops(c, sizes), t = best(times[0]);
        const double peak = sgemm.flops() / best(times[1]) / 1e9;
        best_peak = std::max(best_peak, peak);
        runs.push_back({{"batch", batch},
                        {"tokens", length},
                        {"median_ms", 1e3 * median(times[0])},
                        {"best_ms", 1e3 * t},
                        {"tokens_per_s", batch * length / t},
                        {"gflops", flops / t / 1e9},
                        {"sgemm_peak_gflops", peak},
                        {"fraction_of_peak", flops / t / 1e9 / peak}});
      }
    }
    report["sgemm_peak_gflops"] = best_peak;
    report["runs"] = std::move(runs);
    if (m.subword) report["word_search"] = word_search(m);
    report["keystrokes"] = keystrokes(m);
    write_line(format == "json" ? report.dump() : as_text(report));
    return 0;
  }

  // A subword model's whole next words (predict/word_search.h) after a
  // phrase, as `predict` runs them: its partial words side by side, and one
  // at a time as before, timed in turns.
  json word_search(const Model& m) const {
    const Encoded input = encode(m, "Once upon a time, there was a little", Unknowns::kAllow);
    auto search = [&](bool side_by_side) {
      Predictor predictor(m);
      WordSearch options;
      options.side_by_side = side_by_side;
      (void)next_words(predictor, input, 10, options);
    };
    const auto times =
        time_in_turns(seconds, 3, {{[&] { search(true); }}, {[&] { search(false); }}});
    const double side = median(times[0]), alone = median(times[1]);
    return {{"pieces", input.ids.size()},
            {"side_by_side_ms", 1e3 * side},
            {"one_at_a_time_ms", 1e3 * alone},
            {"speedup", alone / side}};
  }

  // The latency of `complete` per keystroke, as its stdin stream sees them:
  // a text the model writes itself (200 words sampled at temperature 1,
  // seed 1) typed one character at a time, each state of it one call, on
  // one thread like `complete`. Contexts grow to max_len tokens and past it.
  // A keystroke that starts a word runs the forward pass; the others only
  // filter what it gave. The text is unguarded (predict/repetition.h), so
  // that builds from before the guard type the same text.
  json keystrokes(const Model& m) const {
    set_threading(Threading::kRows, 1);
    Predictor predictor(m);
    const GenerateOptions options{
        .max_words = 200, .temperature = 1.0f, .seed = 1, .guard = RepetitionGuard::off()};
    std::vector<std::string> words;
    // From the bos token alone, or a lone <unk> for a model without one; a
    // model with neither (a GGUF file of byte-level BPE, GPT-2's or Qwen's)
    // from "The", since generation cannot start from nothing.
    const std::string start = m.config.has_bos() ? ""
                              : m.unk_id >= 0    ? std::string(m.vocab.word(m.unk_id))
                                                 : "The";
    for (const int id : generate(predictor, encode(m, start, Unknowns::kAllow), options)) {
      words.emplace_back(m.vocab.word(id));
    }
    std::string text;
    append_as_text(text, words);
    const std::optional<LexiconIndex> lexicon = CompletionOptions{}.load_lexicon_index(m);
    Completer completer(m, lexicon ? &*lexicon : nullptr, {});
    std::vector<double> all, new_word, inside;
    for (size_t i = 0; i <= text.size(); ++i) {
      if (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
      const int passes = completer.forward_passes();
      const auto t0 = Clock::now();
      (void)completer.complete(std::string_view(text).substr(0, i));
      const double ms = 1e3 * std::chrono::duration<double>(Clock::now() - t0).count();
      all.push_back(ms);
      (completer.forward_passes() > passes ? new_word : inside).push_back(ms);
    }
    return {{"keystrokes", all.size()},
            {"words", words.size()},
            {"median_ms", quantile(all, 0.5)},
            {"p90_ms", quantile(all, 0.9)},
            {"new_word_median_ms", quantile(new_word, 0.5)},
            {"inside_word_median_ms", quantile(inside, 0.5)}};
  }

  // Our JSON loader against nlohmann's DOM parse (the parse alone, before any
  // conversion to floats) on the same file: the weights as numbers.
  json json_loader(const Model& m) const {
    const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                       ("nextword-bench-" + std::to_string(::getpid()) + ".json");
    write_file_atomically(file.string(),
                          encode_weights(m.config, m.weights, WeightsFormat::kJsonNumbers));
    struct Remove {
      std::filesystem::path path;
      ~Remove() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
      }
    } remove{file};
    // Peak memory of each, above what the process held before (first, while
    // the heap holds nothing freed by earlier runs).
    auto peak_of = [](const std::function<void()>& f) -> int64_t {
      ::malloc_trim(0);
      const int64_t before = status_bytes("VmRSS");
      if (!reset_peak_rss()) return -1;
      f();
      return status_bytes("VmHWM") - before;
    };
    const int64_t ours_peak = peak_of([&] { (void)read_weights(file.string()); });
    const int64_t dom_peak = peak_of([&] { (void)nlohmann_dom_parse(file); });
    // Timed in turns, so that both see the same load on a shared machine.
    const auto times = time_in_turns(
        seconds, 5,
        {{[&] { (void)read_weights(file.string()); }}, {[&] { (void)nlohmann_dom_parse(file); }}});
    const double ours = median(times[0]), dom = median(times[1]);
    json result = {{"bytes", std::filesystem::file_size(file)},
                   {"ours_ms", 1e3 * ours},
                   {"nlohmann_dom_ms", 1e3 * dom},
                   {"speedup", dom / ours}};
    if (ours_peak >= 0) {
      result["float32_bytes"] = m.weights.parameter_count() * 4;
      result["ours_peak_bytes"] = ours_peak;
      result["nlohmann_dom_peak_bytes"] = dom_peak;
    }
    return result;
  }

  static std::string as_text(const json& r) {
    auto get = [](const json& j, const char* key) { return j[key].get<double>(); };
    std::string out;
    const json& model = r["model"];
    out += "model        " + model["weights"].get<std::string>() + " (" +
           num(get(model, "bytes"), 0) + " bytes, " + num(get(model, "parameters"), 0) +
           " parameters" + (model["memory_mapped"].get<bool>() ? ", memory-mapped" : "") + ")\n";
    out += "threads      " + num(get(r, "threads"), 0) +
           " (OpenMP splits the products' rows; OpenBLAS single-threaded)\n";
    out += "kernels      " + r["kernels"].get<std::string>() +
           " (NEXTWORD_KERNELS: plain, avx2, avx512)\n";
    out += "load         " + num(get(r, "load_ms"), 2) + " ms\n";
    if (r.contains("json_loader")) {
      const json& j = r["json_loader"];
      out += "json loader  " + num(get(j, "ours_ms"), 1) + " ms vs nlohmann DOM " +
             num(get(j, "nlohmann_dom_ms"), 1) + " ms: " + num(get(j, "speedup"), 1) +
             "x faster, on " + num(get(j, "bytes") / 1e6, 1) + " MB of numbers\n";
      if (j.contains("ours_peak_bytes")) {
        out += "             peak memory " + num(get(j, "ours_peak_bytes") / 1e6, 1) + " MB vs " +
               num(get(j, "nlohmann_dom_peak_bytes") / 1e6, 1) +
               " MB (the floats: " + num(get(j, "float32_bytes") / 1e6, 1) + " MB)\n";
      }
    }
    out += "sgemm peak   " + num(get(r, "sgemm_peak_gflops"), 1) +
           " GFLOPS (1024^3, every thread; timed in turns with each batch)\n\n";
    out += "batch  tokens  median ms   best ms    tokens/s   GFLOPS    peak  of peak\n";
    for (const json& run : r["runs"]) {
      out += num(get(run, "batch"), 0, 5) + num(get(run, "tokens"), 0, 8) +
             num(get(run, "median_ms"), 3, 11) + num(get(run, "best_ms"), 3, 10) +
             num(get(run, "tokens_per_s"), 0, 12) + num(get(run, "gflops"), 1, 9) +
             num(get(run, "sgemm_peak_gflops"), 1, 8) +
             num(100 * get(run, "fraction_of_peak"), 1, 8) + "%\n";
    }
    if (r.contains("word_search")) {
      const json& s = r["word_search"];
      out += "\nword search  " + num(get(s, "side_by_side_ms"), 1) +
             " ms median with a depth's partial words side by side, " +
             num(get(s, "one_at_a_time_ms"), 1) +
             " ms one at a time: " + num(get(s, "speedup"), 1) + "x, the 10 best words after " +
             num(get(s, "pieces"), 0) + " pieces";
    }
    const json& k = r["keystrokes"];
    out += "\ncomplete     " + num(get(k, "median_ms"), 3) + " ms median per keystroke (p90 " +
           num(get(k, "p90_ms"), 3) + " ms; starting a word, with its forward pass, " +
           num(get(k, "new_word_median_ms"), 3) + " ms; inside a word " +
           num(get(k, "inside_word_median_ms"), 3) + " ms), typing " + num(get(k, "words"), 0) +
           " words in " + num(get(k, "keystrokes"), 0) + " keystrokes, 1 thread";
    return out;
  }
};

}  // namespace

CLI::App* add_bench_command(CLI::App& app, std::function<int()>& run) {
  return add_command<BenchCommand>(
      app, "bench",
      "Measure load time, latency, throughput and GFLOPS against this machine's sgemm", run);
}

}  // namespace nextword::cli
