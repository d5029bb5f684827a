#include "model/file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace nextword {
namespace {

Error open_error(const std::string& path, const char* what) {
  return model_error(path, "", std::string(what) + ": " + std::strerror(errno));
}

// Closes the descriptor whatever happens.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::shared_ptr<FileBytes> FileBytes::open(const std::string& path) {
  std::shared_ptr<FileBytes> file(new FileBytes(path));
  const Descriptor d{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (d.fd < 0) throw open_error(path, "cannot open");
  struct stat info {};
  if (::fstat(d.fd, &info) != 0) throw open_error(path, "cannot read");
  if (S_ISDIR(info.st_mode)) throw model_error(path, "", "is a directory, expected a file");
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
  // Not mappable: read it all.
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(d.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw open_error(path, "cannot read");
    if (n == 0) break;
    file->copy_.append(buffer, static_cast<size_t>(n));
  }
  file->data_ = file->copy_.data();
  file->size_ = file->copy_.size();
  return file;
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
