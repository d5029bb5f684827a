// A model file's bytes, read-only: memory-mapped for regular files (so that
// safetensors weights are used in place, never copied) and read into memory
// otherwise (pipes, /dev/stdin).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace nextword {

class FileBytes {
 public:
  // Throws model_error naming `path` when it cannot be opened or read.
  static std::shared_ptr<FileBytes> open(const std::string& path);
  // Bytes already in memory, named `path` in messages (tests and fuzzers).
  static std::shared_ptr<FileBytes> from_bytes(const std::string& path, std::string bytes);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  const std::string& path() const { return path_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view text() const { return {data_, size_}; }

  // Gives the whole pages before `p` back to the kernel: a reader that walks a
  // large JSON file once then holds about one page of it at a time instead of
  // the whole file. The bytes stay readable (they are read again from the page
  // cache if touched). Does nothing for a file that was read into memory.
  void release_before(const char* p) const;

 private:
  explicit FileBytes(std::string path) : path_(std::move(path)) {}

  std::string path_;
  const char* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // null when read into `copy_`
  std::string copy_;
};

}  // namespace nextword
