// Runs nextword lsp's server over a pair of file descriptors (stdin and
// stdout): frames are read on a thread of their own, so that a
// $/cancelRequest is seen while the requests before it still wait, and
// every message out is written whole, framed, by one thread.
#pragma once

#include "lsp/server.h"

namespace nextword::lsp {

// Serves until the exit notification (its code: 0 after shutdown, else 1)
// or the end of input (0 after shutdown, else 1); 1 when `out` is gone.
// `log` gets one line per problem.
int serve_stdio(const Model& model, const LexiconIndex* lexicon, ServerSetup setup, int in, int out,
                const Server::Log& log);

}  // namespace nextword::lsp
