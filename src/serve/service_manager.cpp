#include "serve/service_manager.h"

#include <systemd/sd-daemon.h>

#include <cstring>

#include "base/error.h"

namespace nextword::serve {

int inherited_listener() {
  const int count = sd_listen_fds(1);
  if (count < 0) {
    throw Error(ExitCode::kUsage, std::string("LISTEN_FDS: ") + std::strerror(-count));
  }
  if (count == 0) return -1;
  if (count > 1) {
    throw Error(ExitCode::kUsage, "LISTEN_FDS: systemd passed " + std::to_string(count) +
                                      " sockets; nextword serve listens on one (one "
                                      "ListenStream= in nextword.socket)");
  }
  const int fd = SD_LISTEN_FDS_START;
  if (sd_is_socket_inet(fd, AF_UNSPEC, SOCK_STREAM, 1, 0) <= 0) {
    throw Error(ExitCode::kUsage,
                "LISTEN_FDS: the socket systemd passed is not a listening "
                "TCP socket (ListenStream=ADDRESS:PORT in nextword.socket)");
  }
  return fd;
}

void notify_ready(const std::string& status) {
  sd_notify(0, ("READY=1\nSTATUS=" + status).c_str());
}

void notify_stopping() { sd_notify(0, "STOPPING=1"); }

}  // namespace nextword::serve
