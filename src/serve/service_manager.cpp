#include "serve/service_manager.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "base/error.h"

// systemd's two protocols, written here rather than linked from libsystemd:
// that library (and the five it loads) cost every nextword process about a
// millisecond at start, `nextword --version` included, for what `serve`
// alone needs. Both are systemd's documented, stable interfaces, meant to be
// spoken without it: sd_listen_fds(3) (LISTEN_PID, LISTEN_FDS, the sockets
// from fd 3 on) and sd_notify(3) (a datagram of "KEY=VALUE" lines to the
// AF_UNIX socket named in NOTIFY_SOCKET, "@" for the abstract namespace).
namespace nextword::serve {
namespace {

constexpr int kListenFdsStart = 3;  // SD_LISTEN_FDS_START

// A whole decimal number, or -1.
long parse_number(const char* text) {
  if (text == nullptr) return -1;
  const std::string_view s(text);
  long value = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size() && value >= 0 ? value : -1;
}

// The sockets passed to this process (0 when none are, or they are another
// process's), or -errno; the variables are unset either way, so that a child
// does not take them for its own.
int listen_fds() {
  const char* pid_text = std::getenv("LISTEN_PID");
  const char* fds_text = std::getenv("LISTEN_FDS");
  int count = 0;
  // As sd_listen_fds reads them: no LISTEN_PID, another pid or no
  // LISTEN_FDS is none; a LISTEN_PID or LISTEN_FDS that is no number, an
  // error.
  const long pid = parse_number(pid_text);
  const long fds = parse_number(fds_text);
  if (pid_text != nullptr && pid < 0) {
    count = -EINVAL;
  } else if (pid_text != nullptr && pid == static_cast<long>(::getpid()) && fds_text != nullptr) {
    if (fds < 0 || fds > 1024) {
      count = -EINVAL;
    } else {
      count = static_cast<int>(fds);
      for (int fd = kListenFdsStart; fd < kListenFdsStart + count; ++fd) {
        const int flags = ::fcntl(fd, F_GETFD);
        if (flags < 0 || ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
          count = -errno;
          break;
        }
      }
    }
  }
  ::unsetenv("LISTEN_PID");
  ::unsetenv("LISTEN_FDS");
  ::unsetenv("LISTEN_FDNAMES");
  return count;
}

// Whether fd is a listening TCP socket (IPv4 or IPv6).
bool is_listening_tcp(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISSOCK(info.st_mode)) return false;
  int value = 0;
  socklen_t length = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &length) != 0 || value != SOCK_STREAM) {
    return false;
  }
  length = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) != 0 || value == 0) {
    return false;
  }
  sockaddr_storage address{};
  length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return false;
  return address.ss_family == AF_INET || address.ss_family == AF_INET6;
}

// One datagram to $NOTIFY_SOCKET, when there is one; a failure to tell is
// not the server's to fail on, as with sd_notify.
void notify(std::string_view state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr) return;
  const std::string_view name(path);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (name.size() < 2 || name.size() >= sizeof address.sun_path ||
      (name[0] != '/' && name[0] != '@')) {
    return;
  }
  std::memcpy(address.sun_path, name.data(), name.size());
  if (name[0] == '@') address.sun_path[0] = '\0';  // the abstract namespace
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  (void)::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                 reinterpret_cast<const sockaddr*>(&address), length);
  ::close(fd);
}

}  // namespace

int inherited_listener() {
  const int count = listen_fds();
  if (count < 0) {
    throw Error(ExitCode::kUsage, std::string("LISTEN_FDS: ") + std::strerror(-count));
  }
  if (count == 0) return -1;
  if (count > 1) {
    throw Error(ExitCode::kUsage, "LISTEN_FDS: systemd passed " + std::to_string(count) +
                                      " sockets; nextword serve listens on one (one "
                                      "ListenStream= in nextword.socket)");
  }
  const int fd = kListenFdsStart;
  if (!is_listening_tcp(fd)) {
    throw Error(ExitCode::kUsage,
                "LISTEN_FDS: the socket systemd passed is not a listening "
                "TCP socket (ListenStream=ADDRESS:PORT in nextword.socket)");
  }
  return fd;
}

void notify_ready(const std::string& status) { notify("READY=1\nSTATUS=" + status); }

void notify_stopping() { notify("STOPPING=1"); }

}  // namespace nextword::serve
