// A model file's bytes, read-only: memory-mapped for regular files (so that
// safetensors weights are used in place, never copied) and read into memory
// otherwise (pipes, /dev/stdin, process substitution).
//
// Never more than the format allows: a file (or a device, or a pipe that
// never ends) larger than its Limits is refused while it is read, and the
// first bytes of a pipe are checked as soon as they come, so /dev/zero or
// /dev/urandom given as a model is refused at once rather than read until
// memory runs out.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace nextword {

struct FileLimits {
  size_t most_bytes;  // refused above this (docs/usage.md, "Errors and exit codes")
  const char* kind;   // what the file is, for the message ("a vocab.json")
  // Called on the first bytes of a file that is not mapped (at least 64 KiB,
  // or all of it when shorter), before the rest is read: throws model_error
  // when they cannot start such a file. May be null.
  void (*check_start)(const std::string& path, std::string_view first) = nullptr;
};

// First bytes of a JSON file: after any whitespace, one of `openers`
// ("{" for weights.json, "[{" for vocab.json).
void check_json_start(const std::string& path, std::string_view first, std::string_view openers);
// check_json_start for a file holding one JSON object (weights.json,
// checkpoint.json), in the shape FileLimits::check_start takes.
void check_json_object_start(const std::string& path, std::string_view first);

class FileBytes {
 public:
  // Throws model_error naming `path` when it cannot be opened or read, or
  // breaks `limits`.
  static std::shared_ptr<FileBytes> open(const std::string& path, const FileLimits& limits);
  // Bytes already in memory, named `path` in messages (tests and fuzzers).
  static std::shared_ptr<FileBytes> from_bytes(const std::string& path, std::string bytes);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  const std::string& path() const { return path_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view text() const { return {data_, size_}; }
  bool mapped() const { return mapping_ != nullptr; }

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
