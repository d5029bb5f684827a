// What the tests of binary file readers share (text/subword.h,
// model/llama2c.h): little-endian fields appended to a file being built, a
// file's bytes, and the one-line message a reader refuses bytes with.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "base/error.h"

namespace nextword::testing {

inline void put_int(std::string& out, int32_t v) {
  out.append(reinterpret_cast<const char*>(&v), 4);
}
inline void put_float(std::string& out, float v) {
  out.append(reinterpret_cast<const char*>(&v), 4);
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);  // a case reading ../shared is tagged [shared] (tests/CMakeLists.txt)
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The message of the model_error `f` throws, or "(no error)".
inline std::string model_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kModel);
    return e.message();
  }
  return "(no error)";
}

}  // namespace nextword::testing
