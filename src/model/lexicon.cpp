#include "model/lexicon.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <unordered_set>

#include "base/error.h"
#include "format/file_bytes.h"
#include "text/utf8.h"

namespace nextword {
namespace {

// A word may hold any valid UTF-8 but whitespace and control characters,
// so that it is one token of the tokenizer and one field of the line.
const char* word_fault(std::string_view word) {
  if (word.empty()) return "the word is empty";
  for (const char c : word) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F || c == ' ') return "the word holds a space or control character";
  }
  if (!is_valid_utf8(word)) return "the word is not valid UTF-8";
  return nullptr;
}

// Most frequent first, then by word.
bool lexicon_order(const LexiconEntry& a, const LexiconEntry& b) {
  return a.count != b.count ? a.count > b.count : a.word < b.word;
}

}  // namespace

bool is_lexicon_word(std::string_view word) { return word_fault(word) == nullptr; }

void sort_lexicon(Lexicon& lexicon) {
  std::sort(lexicon.entries.begin(), lexicon.entries.end(), lexicon_order);
}

Lexicon parse_lexicon(const std::string& path, std::string_view text) {
  if (static_cast<int64_t>(text.size()) > kMaxLexiconBytes) {
    throw model_error(path, "", "larger than " + std::to_string(kMaxLexiconBytes >> 20) + " MiB");
  }
  Lexicon lexicon;
  std::unordered_set<std::string_view> seen;
  int64_t number = 0;
  for (size_t start = 0; start < text.size();) {
    ++number;
    const size_t newline = text.find('\n', start);
    const std::string_view line = text.substr(
        start, newline == std::string_view::npos ? std::string_view::npos : newline - start);
    start = newline == std::string_view::npos ? text.size() : newline + 1;
    auto fail = [&](const std::string& what) {
      return model_error(path + ":" + std::to_string(number), "", what);
    };
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) throw fail("expected WORD<TAB>COUNT");
    const std::string_view word = line.substr(0, tab), digits = line.substr(tab + 1);
    if (const char* fault = word_fault(word)) throw fail(fault);
    int64_t count = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (digits.empty() || digits[0] < '1' || digits[0] > '9' || ec != std::errc() ||
        end != digits.data() + digits.size()) {
      throw fail(
          "the count is not a whole number from 1 to 2^63 - 1 without a sign or leading "
          "zero: \"" +
          std::string(digits.substr(0, 40)) + "\"");
    }
    if (!seen.insert(word).second) throw fail("\"" + std::string(word) + "\" appears twice");
    lexicon.entries.push_back({std::string(word), count});
  }
  // As train writes it, the file is in order already.
  if (!std::is_sorted(lexicon.entries.begin(), lexicon.entries.end(), lexicon_order)) {
    sort_lexicon(lexicon);
  }
  return lexicon;
}

Lexicon read_lexicon(const std::string& path) {
  const std::shared_ptr<FileBytes> file =
      FileBytes::open(path, FileLimits{static_cast<size_t>(kMaxLexiconBytes), "a lexicon.tsv"});
  return parse_lexicon(path, file->text());
}

std::string format_lexicon(const Lexicon& lexicon) {
  std::string out;
  for (const LexiconEntry& e : lexicon.entries) {
    out += e.word;
    out += '\t';
    out += std::to_string(e.count);
    out += '\n';
  }
  return out;
}

std::optional<Lexicon> read_lexicon_beside(const std::string& vocab_path) {
  const std::filesystem::path beside =
      std::filesystem::path(vocab_path).parent_path() / "lexicon.tsv";
  std::error_code ec;
  if (!std::filesystem::exists(beside, ec)) return std::nullopt;
  return read_lexicon(beside.string());
}

}  // namespace nextword
