// Progress of long jobs (train, eval) on stderr: a live bar on a terminal,
// one JSON object per line otherwise, so logs stay machine-readable.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace nextword::cli {

class Progress {
 public:
  Progress();  // decides from whether stderr is a terminal
  ~Progress();

  bool live() const { return live_; }
  // A terminal shows `bar_text` redrawn in place; a log gets `record` as a line.
  void update(double fraction, const std::string& bar_text, const nlohmann::ordered_json& record);
  // A message on a line of its own (after the bar, if one is shown).
  void message(const std::string& text);
  void finish();  // ends the bar's line

 private:
  bool live_ = false;
  bool drawn_ = false;
};

// 75 -> "1m15s", 4000 -> "1h06m"
std::string format_duration(double seconds);

}  // namespace nextword::cli
