// Fields of our binary files (data/FORMAT.md: all numbers little-endian, as
// the machines we build for), read from and appended to bytes at any
// alignment.
#pragma once

#include <cstring>
#include <string>

namespace nextword {

template <class T>
T read_field(const char* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

template <class T>
void append_field(std::string& out, T value) {
  char bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  out.append(bytes, sizeof value);
}

}  // namespace nextword
