#include "serve/metrics.h"

#include <cstdio>

namespace nextword::serve {
namespace {

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

}  // namespace

void Metrics::answered(const std::string& route, int status, double seconds) {
  const std::lock_guard lock(mutex_);
  ++requests_[{route, status}];
  Latency& l = latency_[route];
  for (size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) {
      ++l.buckets[i];
      break;
    }
  }
  ++l.count;
  l.sum += seconds;
}

std::string Metrics::text(size_t queue_depth, size_t connections) const {
  const std::lock_guard lock(mutex_);
  std::string out =
      "# HELP nextword_requests_total Requests answered, by route and HTTP status.\n"
      "# TYPE nextword_requests_total counter\n";
  std::map<std::string, uint64_t> errors;
  for (const auto& [key, count] : requests_) {
    out += "nextword_requests_total{route=\"" + key.first + "\",code=\"" +
           std::to_string(key.second) + "\"} " + std::to_string(count) + "\n";
    if (key.second >= 400) errors[key.first] += count;
  }
  out +=
      "# HELP nextword_errors_total Requests answered with a 4xx or 5xx status, by route.\n"
      "# TYPE nextword_errors_total counter\n";
  for (const auto& [route, count] : errors) {
    out += "nextword_errors_total{route=\"" + route + "\"} " + std::to_string(count) + "\n";
  }
  out +=
      "# HELP nextword_request_duration_seconds From a request's last byte read to its answer, "
      "by route.\n"
      "# TYPE nextword_request_duration_seconds histogram\n";
  for (const auto& [route, l] : latency_) {
    uint64_t below = 0;
    for (size_t i = 0; i < kBounds.size(); ++i) {
      below += l.buckets[i];
      out += "nextword_request_duration_seconds_bucket{route=\"" + route + "\",le=\"" +
             number(kBounds[i]) + "\"} " + std::to_string(below) + "\n";
    }
    out += "nextword_request_duration_seconds_bucket{route=\"" + route + "\",le=\"+Inf\"} " +
           std::to_string(l.count) + "\n";
    out += "nextword_request_duration_seconds_sum{route=\"" + route + "\"} " + number(l.sum) + "\n";
    out += "nextword_request_duration_seconds_count{route=\"" + route + "\"} " +
           std::to_string(l.count) + "\n";
  }
  out +=
      "# HELP nextword_queue_depth Calls waiting for a worker.\n"
      "# TYPE nextword_queue_depth gauge\n"
      "nextword_queue_depth " +
      std::to_string(queue_depth) +
      "\n"
      "# HELP nextword_connections Open client connections.\n"
      "# TYPE nextword_connections gauge\n"
      "nextword_connections " +
      std::to_string(connections) + "\n";
  return out;
}

}  // namespace nextword::serve
