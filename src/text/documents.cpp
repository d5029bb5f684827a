#include "text/documents.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "base/error.h"
#include "text/tokenizer.h"

namespace nextword {
namespace {

std::string_view trim(std::string_view line) {
  const char* space = " \t\r\n\v\f";
  const size_t first = line.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return line.substr(first, line.find_last_not_of(space) - first + 1);
}

}  // namespace

void split_documents(const std::string& text, const TokenizerOptions& options,
                     std::vector<Document>& out) {
  Document current;
  auto finish = [&] {
    if (!current.empty()) out.push_back(std::move(current));
    current.clear();
  };
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    const std::string_view content = trim(line);
    if (content.empty() || content == "<|endoftext|>") {
      finish();
    } else {
      for (std::string& word : tokenize(line, options)) current.push_back(std::move(word));
    }
    start = end + 1;
  }
  finish();
}

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw Error(ExitCode::kIo, path + ": is a directory, expected a text file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ExitCode::kIo, path + ": cannot open: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(ExitCode::kIo, path + ": cannot read: " + std::strerror(errno));
  return std::move(text).str();
}

std::vector<Document> read_documents(const std::vector<std::string>& paths,
                                     const TokenizerOptions& options) {
  std::vector<Document> documents;
  for (const std::string& path : paths) split_documents(read_text_file(path), options, documents);
  return documents;
}

}  // namespace nextword
