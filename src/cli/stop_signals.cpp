#include "cli/stop_signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <utility>

namespace nextword::cli {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

volatile std::sig_atomic_t g_signal = 0;
int g_pipe[2] = {-1, -1};  // the handler writes a byte to [1]; poll() watches [0]

void on_stop_signal(int signal) {
  g_signal = signal;
  if (g_pipe[1] >= 0) {
    const char byte = 1;
    (void)!::write(g_pipe[1], &byte, 1);  // async-signal-safe; a full pipe is readable already
  }
}

}  // namespace

void catch_stop_signals() {
  static bool caught = false;
  if (std::exchange(caught, true)) return;
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  // Restarted system calls: a record being written is written whole; a wait
  // for input is a poll() on stop_descriptor() too, which ends at once.
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (const int signal : kStopSignals) {
    struct sigaction old {};
    sigaction(signal, nullptr, &old);
    if (old.sa_handler != SIG_IGN) sigaction(signal, &action, nullptr);
  }
}

int stop_signal() { return g_signal; }

int stop_descriptor() { return g_pipe[0]; }

const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

}  // namespace nextword::cli
