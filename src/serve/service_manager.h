// `nextword serve` under a service manager (systemd; docs/serving.md, "Run the
// server as a service"): the listening socket it hands over when it listens for
// the server (socket activation, nextword.socket), and the readiness and
// stopping it is told of (Type=notify). Outside systemd none of this does
// anything.
#pragma once

#include <string>

namespace nextword::serve {

// The listening socket systemd passed to this process ($LISTEN_FDS and
// $LISTEN_PID, which it then unsets), or -1 when it passed none. Throws
// Error(kUsage) when it passed more than one, or one that is not a
// listening TCP socket.
int inherited_listener();

// Tells systemd ($NOTIFY_SOCKET) that the server answers, with a status
// line for `systemctl status`; that it is stopping.
void notify_ready(const std::string& status);
void notify_stopping();

}  // namespace nextword::serve
