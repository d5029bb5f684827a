// How `nextword bench` times things (bench_command.cpp, bench_products.cpp):
// a figure and its yardstick in turns, so that both see the same load on a
// shared, noisy machine.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace nextword::cli {

// One task of a measurement: `run` is timed `repeats` times in a row per
// turn, and again while the turn is shorter than `turn_seconds`.
struct Task {
  std::function<void()> run;
  int repeats = 1;
  double turn_seconds = 0;
};

// The tasks take turns, round after round, until `seconds` have passed and
// each ran at least `min_runs` times. Each task runs once first to warm up.
// Returns each task's times, in seconds.
std::vector<std::vector<double>> time_in_turns(double seconds, size_t min_runs,
                                               const std::vector<Task>& tasks);

double best(const std::vector<double>& times);
double median(std::vector<double> times);

// `value` with `decimals` decimals, right-aligned in `width` characters.
std::string num(double value, int decimals, int width = 0);

}  // namespace nextword::cli
