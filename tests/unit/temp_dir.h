// A fresh directory for a test's files, removed with everything in it when
// the test is done; and the message a load fails with.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"

namespace nextword::testing {

struct TempDir {
  std::filesystem::path dir;
  TempDir() {
    static int counter = 0;
    dir = std::filesystem::temp_directory_path() /
          ("nextword-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
  }
  ~TempDir() { std::filesystem::remove_all(dir); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `bytes` to dir/name and returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return (dir / name).string();
  }
};

// The message of the error of kind `code` that `run()` throws; fails the
// test when it throws none or another kind.
template <typename Run>
std::string error_of(ExitCode code, Run run) {
  try {
    run();
  } catch (const Error& e) {
    CHECK(e.code() == code);
    return e.message();
  }
  FAIL("it did not fail");
  return "";
}

// The message of the model error `load()` throws; fails the test when it
// throws none.
template <typename Load>
std::string model_error_of(Load load) {
  return error_of(ExitCode::kModel, load);
}

}  // namespace nextword::testing
