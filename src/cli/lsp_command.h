// nextword lsp [-m DIR] [-k N] [--learn] [--history FILE] [--languages LIST]
// [--trigger-characters CHARS]: the command line's options of the Language
// Server Protocol front end (src/lsp).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace nextword {

CLI::App* add_lsp_command(CLI::App& app, std::function<int()>& run);

}  // namespace nextword
