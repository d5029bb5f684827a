#include "views/heat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nextword::views {
namespace {

constexpr Rgb kHeatStops[] = {{30, 32, 48}, {170, 60, 60}, {250, 200, 70}};

}  // namespace

Rgb heat(float w) {
  w = std::clamp(w, 0.0f, 1.0f);
  const Rgb* stops = kHeatStops;
  const float x = w * 2.0f;
  const int i = std::min(1, static_cast<int>(x));
  const float f = x - static_cast<float>(i);
  auto mix = [f](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  return {mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g),
          mix(stops[i].b, stops[i + 1].b)};
}

std::string hex(Rgb c) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", c.r, c.g, c.b);
  return buffer;
}

std::string percent(float w) {
  return std::to_string(static_cast<int>(std::lround(w * 100))) + "%";
}

}  // namespace nextword::views
