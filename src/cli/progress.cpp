#include "cli/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace nextword::cli {

Progress::Progress() : live_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { finish(); }

void Progress::update(double fraction, const std::string& bar_text,
                      const nlohmann::ordered_json& record) {
  if (!live_) {
    std::fprintf(stderr, "%s\n", record.dump().c_str());
    return;
  }
  constexpr int kWidth = 24;
  const int filled = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * kWidth));
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kWidth - filled), '.');
  std::fprintf(stderr, "\r\033[K[%s] %s", bar.c_str(), bar_text.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::message(const std::string& text) {
  finish();
  std::fprintf(stderr, "nextword: %s\n", text.c_str());
}

void Progress::finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

std::string format_duration(double seconds) {
  const auto s = static_cast<long>(std::lround(std::max(seconds, 0.0)));
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%ldh%02ldm", s / 3600, s % 3600 / 60);
  } else if (s >= 60) {
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%lds", s);
  }
  return text;
}

}  // namespace nextword::cli
