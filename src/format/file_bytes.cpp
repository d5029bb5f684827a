#include "format/file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/bounded_read.h"
#include "base/error.h"

namespace nextword {
namespace {

Error open_error(const std::string& path, const char* what) {
  return model_error(path, "", std::string(what) + ": " + std::strerror(errno));
}

Error too_large(const std::string& path, const FileLimits& limits) {
  return model_error(path, "",
                     "larger than " + std::to_string(limits.most_bytes >> 20) + " MiB, the most " +
                         limits.kind + " may hold");
}

constexpr size_t kStartBytes = size_t{1} << 16;

}  // namespace

std::shared_ptr<FileBytes> FileBytes::open(const std::string& path, const FileLimits& limits) {
  std::shared_ptr<FileBytes> file(new FileBytes(path));
  const FileDescriptor d(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (d.fd < 0) throw open_error(path, "cannot open");
  struct stat info {};
  if (::fstat(d.fd, &info) != 0) throw open_error(path, "cannot read");
  if (S_ISDIR(info.st_mode)) throw model_error(path, "", "is a directory, expected a file");
  if (S_ISREG(info.st_mode) && static_cast<uint64_t>(info.st_size) > limits.most_bytes) {
    throw too_large(path, limits);
  }
  if (S_ISREG(info.st_mode) && info.st_size > 0) {
    const auto size = static_cast<size_t>(info.st_size);
    void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, d.fd, 0);
    if (mapping != MAP_FAILED) {
      file->mapping_ = mapping;
      file->data_ = static_cast<const char*>(mapping);
      file->size_ = size;
      return file;
    }
  }
  // Not mappable (a pipe, a device): read it, checking as it comes.
  const size_t most = pipe_limit(limits.most_bytes);
  bool started = limits.check_start == nullptr;
  const ReadEnd end =
      read_bounded(d.fd, most, file->copy_, [&](const std::string& text, std::string_view) {
        if (!started && text.size() >= kStartBytes) {
          limits.check_start(path, text);
          started = true;
        }
      });
  if (end == ReadEnd::kFailed) throw open_error(path, "cannot read");
  if (end == ReadEnd::kTooLarge && most == limits.most_bytes) throw too_large(path, limits);
  if (end == ReadEnd::kTooLarge) {
    throw model_error(path, "",
                      "larger than " + std::to_string(most >> 20) +
                          " MiB, half the memory free, the most a pipe may bring");
  }
  if (!started) limits.check_start(path, file->copy_);
  file->data_ = file->copy_.data();
  file->size_ = file->copy_.size();
  return file;
}

void check_json_start(const std::string& path, std::string_view first, std::string_view openers) {
  const size_t at = first.find_first_not_of(" \t\r\n");
  if (at == std::string_view::npos) {
    if (first.size() < kStartBytes) return;  // the parser will say
    throw model_error(path, "", "not JSON: its first 64 KiB are blank");
  }
  if (openers.find(first[at]) == std::string_view::npos) {
    throw model_error(path, "",
                      "not JSON: byte " + std::to_string(at) + " cannot start a document here");
  }
}

void check_json_object_start(const std::string& path, std::string_view first) {
  check_json_start(path, first, "{");
}

std::shared_ptr<FileBytes> FileBytes::from_bytes(const std::string& path, std::string bytes) {
  std::shared_ptr<FileBytes> file(new FileBytes(path));
  file->copy_ = std::move(bytes);
  file->data_ = file->copy_.data();
  file->size_ = file->copy_.size();
  return file;
}

FileBytes::~FileBytes() {
  if (mapping_ != nullptr) ::munmap(mapping_, size_);
}

void FileBytes::release_before(const char* p) const {
  if (mapping_ == nullptr || p < data_ || p > data_ + size_) return;
  static const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // From the start every time: the kernel may map pages behind us again when
  // it maps a large page-cache folio around a later fault.
  const size_t end = static_cast<size_t>(p - data_) / page * page;
  if (end > 0) ::madvise(mapping_, end, MADV_DONTNEED);
}

}  // namespace nextword
