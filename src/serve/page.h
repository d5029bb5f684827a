// The live page at / (src/serve/page.html, embedded at build time): a text
// box whose suggestions, attention, logit lens and attribution follow each
// keystroke, drawn by the same code as `attention -f html`'s page.
#pragma once

#include <string_view>

namespace nextword::serve {

// The page, with the shared drawing code in place; made once.
std::string_view live_page();

}  // namespace nextword::serve
