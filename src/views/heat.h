// The color scale of every attention picture (terminal, SVG and HTML page):
// weight 0 is a dark blue-grey, weight 1 a warm yellow, through red.
#pragma once

#include <string>

namespace nextword::views {

struct Rgb {
  int r, g, b;
};

// The color of an attention weight w (clamped to [0, 1]).
Rgb heat(float w);
// "#rrggbb"
std::string hex(Rgb c);
// "37%": a weight in whole percent.
std::string percent(float w);

}  // namespace nextword::views
