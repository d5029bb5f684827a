#include "text/documents.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "base/bounded_read.h"
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
  const FileDescriptor file = open_text_file(path);
  const int fd = file.fd;
  const auto too_large = [&](size_t most, const char* what) {
    return Error(ExitCode::kInput,
                 path + ": larger than " + std::to_string(most >> 20) + " MiB, " + what);
  };
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
      static_cast<uint64_t>(info.st_size) > kMaxTextBytes) {
    throw too_large(kMaxTextBytes, "the most a text file may hold");
  }
  // A NUL byte is never text: /dev/zero, or a binary file given by mistake,
  // is refused at its first one rather than read to the end.
  std::string text;
  const size_t most = S_ISREG(info.st_mode) ? kMaxTextBytes : pipe_limit(kMaxTextBytes);
  const ReadEnd end =
      read_bounded(fd, most, text, [&](const std::string& all, std::string_view fresh) {
        const size_t at = fresh.find('\0');
        if (at != std::string_view::npos) {
          throw Error(ExitCode::kInput, path + ": byte " +
                                            std::to_string(all.size() - fresh.size() + at) +
                                            ": a NUL byte: not a text file");
        }
      });
  if (end == ReadEnd::kFailed) {
    throw Error(ExitCode::kIo, path + ": cannot read: " + std::strerror(errno));
  }
  if (end == ReadEnd::kTooLarge) {
    throw too_large(most, most == kMaxTextBytes
                              ? "the most a text file may hold"
                              : "half the memory free, the most a pipe may bring");
  }
  return text;
}

std::vector<Document> read_documents(const std::vector<std::string>& paths,
                                     const TokenizerOptions& options) {
  std::vector<Document> documents;
  for (const std::string& path : paths) split_documents(read_text_file(path), options, documents);
  return documents;
}

}  // namespace nextword
