// Whether a file made from another (an index from its source) is not older
// than it: an older one was made from an earlier source.
#pragma once

#include <sys/stat.h>

#include <tuple>

namespace nextword {

inline bool not_older(const struct stat& made, const struct stat& source) {
  return std::tie(made.st_mtim.tv_sec, made.st_mtim.tv_nsec) >=
         std::tie(source.st_mtim.tv_sec, source.st_mtim.tv_nsec);
}

}  // namespace nextword
