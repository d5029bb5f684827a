#include "cli/bench_timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace nextword::cli {

std::vector<std::vector<double>> time_in_turns(double seconds, size_t min_runs,
                                               const std::vector<Task>& tasks) {
  using Steady = std::chrono::steady_clock;
  auto since = [](Steady::time_point t) {
    return std::chrono::duration<double>(Steady::now() - t).count();
  };
  for (const Task& task : tasks) task.run();
  std::vector<std::vector<double>> times(tasks.size());
  const auto start = Steady::now();
  while (times[0].size() < min_runs || since(start) < seconds) {
    for (size_t i = 0; i < tasks.size(); ++i) {
      const auto turn = Steady::now();
      do {
        for (int r = 0; r < tasks[i].repeats; ++r) {
          const auto t0 = Steady::now();
          tasks[i].run();
          times[i].push_back(since(t0));
        }
      } while (since(turn) < tasks[i].turn_seconds);
    }
  }
  return times;
}

double best(const std::vector<double>& times) {
  return *std::min_element(times.begin(), times.end());
}

double median(std::vector<double> times) {
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2),
                   times.end());
  return times[times.size() / 2];
}

std::string num(double value, int decimals, int width) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%*.*f", width, decimals, value);
  return buffer;
}

}  // namespace nextword::cli
