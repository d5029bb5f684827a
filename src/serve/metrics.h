// What /metrics reports, in Prometheus's text format: requests, errors and
// latency by endpoint, the calls waiting for a worker and the open
// connections.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace nextword::serve {

class Metrics {
 public:
  // A request answered: its route ("predict", "health", ..., "other"), its
  // status and the seconds from its last byte read to its answer's start.
  void answered(const std::string& route, int status, double seconds);
  // The text of /metrics, with the gauges read now.
  std::string text(size_t queue_depth, size_t connections) const;

  // The latency histogram's upper bounds, in seconds.
  static constexpr std::array<double, 10> kBounds = {0.0005, 0.001, 0.002, 0.005, 0.01,
                                                     0.02,   0.05,  0.1,   0.5,   2.0};

 private:
  struct Latency {
    std::array<uint64_t, kBounds.size()> buckets{};  // cumulative counts are summed on output
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (route, status) -> count
  std::map<std::string, Latency> latency_;
};

}  // namespace nextword::serve
