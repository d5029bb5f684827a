#include "serve/server.h"

#include <malloc.h>
#include <sys/socket.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <cerrno>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/threading.h"
#include "serve/connection.h"
#include "serve/service_manager.h"

namespace nextword::serve {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

// A worker thread: takes batches from the queue until it is closed and drained.
void work(const Model& model, const Lexicon* lexicon, const LexiconIndex* index, WorkQueue& queue) {
  set_worker_threads(1);  // the workers are the parallelism: one thread per product
  Worker worker(model, lexicon, index);
  for (;;) {
    std::vector<std::unique_ptr<Job>> batch = queue.pop();
    if (batch.empty()) return;
    if (batch.front()->call.stream) {
      Job& job = *batch.front();
      job.done(worker.stream(job.call, job.events));
      continue;
    }
    std::vector<const Call*> calls;
    for (const auto& job : batch) calls.push_back(&job->call);
    std::vector<Answer> answers = worker.run(calls);
    for (size_t i = 0; i < batch.size(); ++i) batch[i]->done(std::move(answers[i]));
  }
}

class Listener {
 public:
  Listener(net::io_context& io, Shared& shared) : io_(io), acceptor_(io), shared_(shared) {}

  // Binds host:port; returns the address bound (the port the one given,
  // or the one the system chose for 0).
  tcp::endpoint bind(const std::string& host, int port) {
    boost::system::error_code ec;
    const net::ip::address address = net::ip::make_address(host, ec);
    if (ec) throw Error(ExitCode::kUsage, "--host: " + host + " is not an IP address");
    const tcp::endpoint at(address, static_cast<unsigned short>(port));
    acceptor_.open(at.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(at, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      throw Error(ExitCode::kUsage, "--port: cannot listen on " + host + ":" +
                                        std::to_string(port) + ": " + ec.message());
    }
    return acceptor_.local_endpoint();
  }

  // Accepts on `fd`, a socket already listening (systemd's); returns its address.
  tcp::endpoint adopt(int fd) {
    sockaddr_storage address{};
    socklen_t size = sizeof address;
    boost::system::error_code ec;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
      acceptor_.assign(address.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), fd, ec);
    } else {
      ec.assign(errno, boost::system::system_category());
    }
    if (ec) throw Error(ExitCode::kUsage, "LISTEN_FDS: cannot accept on it: " + ec.message());
    return acceptor_.local_endpoint();
  }

  void accept() {
    acceptor_.async_accept(io_, [this](boost::system::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
      if (!ec) {
        const bool full =
            shared_.open.size() >= static_cast<size_t>(shared_.options.max_connections);
        std::make_shared<Connection>(std::move(socket), shared_)->start(full);
      }
      accept();  // errors such as too many open files pass; the next may succeed
    });
  }

  void close() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  }

 private:
  net::io_context& io_;
  tcp::acceptor acceptor_;
  Shared& shared_;
};

}  // namespace

void serve(const Model& model, const Lexicon* lexicon, const LexiconIndex* index,
           const ServerOptions& options, const std::function<void(const std::string&)>& log) {
  // Buffers of 128 KiB and more (request bodies, batch records) are mapped
  // and unmapped, not kept in the heap: otherwise one large free raises
  // glibc's threshold for good, and the bodies of a flood of slow clients
  // stay in the process after they are gone.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  // Declared before the I/O context, so that connections still held by its
  // handlers are gone before what they share.
  Shared shared(model, options);
  net::io_context io(1);
  Listener listener(io, shared);
  const tcp::endpoint at = options.listen_fd >= 0 ? listener.adopt(options.listen_fd)
                                                  : listener.bind(options.host, options.port);

  // Joined on every way out (an exception from the I/O loop too).
  struct Workers {
    WorkQueue& queue;
    std::vector<std::thread> threads;
    ~Workers() {
      queue.close();
      for (std::thread& t : threads) t.join();
    }
  } workers{shared.queue, {}};
  for (int i = 0; i < options.threads; ++i) {
    workers.threads.emplace_back(work, std::cref(model), lexicon, index, std::ref(shared.queue));
  }
  auto guard = std::make_optional(net::make_work_guard(io));
  net::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    // Stop accepting; close the connections that wait for a request; those
    // with one in flight close once it is answered.
    shared.stopping = true;
    notify_stopping();
    listener.close();
    shared.all_closed = [&guard] { guard.reset(); };
    const std::vector<Connection*> open(shared.open.begin(), shared.open.end());
    for (Connection* c : open) c->stop_if_idle();
    if (shared.open.empty()) guard.reset();
  });
  listener.accept();
  const std::string host = at.address().to_string();
  const std::string line = "listening on http://" +
                           (at.address().is_v6() ? "[" + host + "]" : host) + ":" +
                           std::to_string(at.port()) + " (" + std::to_string(options.threads) +
                           (options.threads == 1 ? " worker" : " workers") +
                           (options.listen_fd >= 0 ? "; the socket from systemd)" : ")");
  log(line);
  notify_ready(line);
  // A handler that throws (out of memory, say) costs its connection, not
  // the server: run() goes on where it stopped (Asio's way).
  for (;;) {
    try {
      io.run();
      break;
    } catch (const std::exception& e) {
      log(std::string("error: ") + e.what());
    }
  }
  shared.all_closed = nullptr;
}

}  // namespace nextword::serve
