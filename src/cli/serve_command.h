// nextword serve [-m DIR] [--host H] [--port P] [-t N] [--api-key KEY] ...:
// the command line's options of the HTTP front end (src/serve).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace nextword {

CLI::App* add_serve_command(CLI::App& app, std::function<int()>& run);

}  // namespace nextword
