// Stopping cleanly when asked: Ctrl-C (SIGINT), SIGTERM (what kill, timeout,
// mpirun and service managers send) and SIGHUP (the terminal went away).
//
// Once caught, the process is asked to stop rather than killed: `train`
// finishes its step and saves, a stream of records finishes the batch in
// progress and reads no further, so every record written is whole. The exit
// status is then 130 (docs/usage.md, "Errors and exit codes"). A second signal of
// the same kind stops the process at once.
#pragma once

namespace nextword::cli {

// Installs the handlers (signals the caller's parent ignored stay ignored).
// Safe to call more than once.
void catch_stop_signals();

// The signal that asked to stop, or 0.
int stop_signal();

// A descriptor that becomes readable when a stop signal arrives, for poll()
// beside an input that may never come; -1 before catch_stop_signals().
int stop_descriptor();

// "SIGTERM", "SIGINT", ...
const char* signal_name(int signal);

}  // namespace nextword::cli
