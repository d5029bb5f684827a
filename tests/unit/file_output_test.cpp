// file_output (src/base/file_output.h) against real failures: /dev/full, a
// directory, a missing folder, and a file size limit (RLIMIT_FSIZE with
// SIGXFSZ ignored) that makes a write fail partway, as a full disk does.
// After a failure the file that was there is byte for byte as before and no
// temporary is left beside it.
#include "base/file_output.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "temp_dir.h"

using nextword::ExitCode;
using nextword::testing::TempDir;

namespace {

// The message of the I/O error `write()` throws.
template <typename Write>
std::string io_error_of(Write write) {
  return nextword::testing::error_of(ExitCode::kIo, write);
}

// While it lives, a write that would make a file larger than `bytes` fails
// with EFBIG instead of killing the process.
struct FileSizeLimit {
  rlimit old{};
  void (*old_handler)(int) = nullptr;
  explicit FileSizeLimit(rlim_t bytes) {
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    old_handler = std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limited{bytes, old.rlim_max};
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, old_handler);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
};

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("write_file_atomically replaces a file whole and keeps its mode", "[file_output]") {
  const TempDir tmp;
  const std::string path = tmp.write("out.json", "old");
  ::chmod(path.c_str(), 0600);
  nextword::write_file_atomically(path, "new content\n");
  CHECK(read(path) == "new content\n");
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);
  CHECK(names_in(tmp.dir) == std::vector<std::string>{"out.json"});
}

TEST_CASE("write_file_atomically through a symbolic link replaces the file it names",
          "[file_output]") {
  const TempDir tmp;
  const std::string target = tmp.write("real.svg", "old");
  const std::string link = (tmp.dir / "link.svg").string();
  std::filesystem::create_symlink(target, link);
  nextword::write_file_atomically(link, "<svg/>");
  CHECK(std::filesystem::is_symlink(link));
  CHECK(read(target) == "<svg/>");
  CHECK(names_in(tmp.dir) == std::vector<std::string>{"link.svg", "real.svg"});
}

TEST_CASE("write_file_atomically refuses what it cannot write, naming the file", "[file_output]") {
  const TempDir tmp;
  const std::string dir = tmp.dir.string();
  CHECK(io_error_of([&] { nextword::write_file_atomically(dir, "x"); }) ==
        dir + ": is a directory, expected a file");
  CHECK(io_error_of([] { nextword::write_file_atomically("/dev/full", "x"); }) ==
        "/dev/full: cannot write: No space left on device");
  const std::string missing = dir + "/absent/out.json";
  CHECK(io_error_of([&] { nextword::write_file_atomically(missing, "x"); }) ==
        missing + ": cannot write: No such file or directory");
  // A device is written in place: nothing is created beside it.
  nextword::write_file_atomically("/dev/null", "discarded");
  CHECK(std::filesystem::is_character_file("/dev/full"));
  CHECK(!std::filesystem::exists("/dev/full.tmp." + std::to_string(::getpid())));
}

TEST_CASE("a write that fails partway leaves the old file and no temporary", "[file_output]") {
  const TempDir tmp;
  const std::string path = tmp.write("weights.json", "the weights that were there\n");
  {
    const FileSizeLimit limit(100);
    CHECK(io_error_of([&] { nextword::write_file_atomically(path, std::string(1000, 'w')); }) ==
          path + ": cannot write: File too large");
  }
  CHECK(read(path) == "the weights that were there\n");
  CHECK(names_in(tmp.dir) == std::vector<std::string>{"weights.json"});
}

TEST_CASE("append_to_file appends, and a failed append is cut back", "[file_output]") {
  const TempDir tmp;
  const std::string path = (tmp.dir / "history.txt").string();
  nextword::append_to_file(path, "once upon a time\n");  // created
  nextword::append_to_file(path, "the end\n");
  CHECK(read(path) == "once upon a time\nthe end\n");
  {
    // Room for 10 more bytes of a 40-byte line: 10 are written, then the
    // limit stops the rest; the file must not end in half a line.
    const FileSizeLimit limit(read(path).size() + 10);
    CHECK(io_error_of([&] { nextword::append_to_file(path, std::string(39, 'x') + "\n"); }) ==
          path + ": cannot write: File too large");
  }
  CHECK(read(path) == "once upon a time\nthe end\n");
  CHECK(io_error_of([] { nextword::append_to_file("/dev/full", "line\n"); }) ==
        "/dev/full: cannot write: No space left on device");
  nextword::append_to_file("/dev/null", "line\n");  // not a regular file: no fsync
  CHECK(io_error_of([&] { nextword::append_to_file(tmp.dir.string(), "line\n"); }) ==
        tmp.dir.string() + ": cannot write: Is a directory");
}

TEST_CASE("write_all writes everything to a pipe and reports a closed one", "[file_output]") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  CHECK(nextword::write_all(fds[1], "record\n"));
  char buffer[16] = {};
  CHECK(::read(fds[0], buffer, sizeof buffer) == 7);
  CHECK(std::string(buffer) == "record\n");
  ::close(fds[0]);
  void (*old)(int) = std::signal(SIGPIPE, SIG_IGN);
  CHECK(!nextword::write_all(fds[1], "lost\n"));
  CHECK(errno == EPIPE);
  std::signal(SIGPIPE, old);
  ::close(fds[1]);
}
