// One client connection: requests read under limits and deadlines, their
// calls handed to the workers, the answers written back; keep-alive between
// requests, and server-sent events for a streamed generation.
//
// The limits are enforced while reading, before the bytes are kept: a
// request line over 8 KiB is answered 414; a header field over 8 KiB, more
// than 100 fields or a header over 64 KiB, 431; a body declared over
// max_body, 413 before any of it is read, and a chunked one as soon as it
// passes max_body. A whole header must come within header_timeout and a
// whole body within body_timeout, or the connection is closed: a client
// sending a byte a second holds one socket for that long, and no thread.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "serve/api.h"
#include "serve/metrics.h"
#include "serve/server.h"
#include "serve/work_queue.h"

namespace nextword::serve {

class Connection;

// What every connection shares, used on the I/O thread only (but the queue).
struct Shared {
  Shared(const Model& model, const ServerOptions& o)
      : options(o), api(model, o), queue(o.queue, static_cast<size_t>(o.batch)) {}

  const ServerOptions& options;
  Api api;
  WorkQueue queue;
  Metrics metrics;
  std::unordered_set<Connection*> open;
  bool stopping = false;             // no new requests: finish those in flight
  std::function<void()> all_closed;  // called when stopping and the last one closes
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket socket, Shared& shared);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts reading requests; with `refuse` (too many connections), answers
  // 503 and closes instead.
  void start(bool refuse);
  // On shutdown: closes the connection if it waits for a request; one in
  // flight is answered first, then closed.
  void stop_if_idle();

 private:
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

  void read_header();
  void on_header(boost::beast::error_code ec);
  void read_body();
  void on_body(boost::beast::error_code ec);
  // The request is whole: answer it now or hand its call to a worker.
  void dispatch();
  void send(Response response);
  void send_error(const ApiError& error, bool close);
  // Writes what waits in outbox_, in order, then reads the next request
  // (or closes).
  void write_next();
  void close();
  // The ApiError for a header that broke a limit while it was read.
  ApiError header_error(boost::beast::error_code ec) const;
  ApiError body_too_large() const;
  void start_stream(std::unique_ptr<Job> job);
  // Until the call's answer is sent: notes a client that hangs up (gone_).
  void watch();

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  Shared& shared_;
  bool idle_ = true;         // waiting for a request's header
  bool keep_alive_ = false;  // read another request after this answer
  bool closed_ = false;
  bool watching_ = false;  // watch() waits for the socket
  Route route_{kOtherRoute, {}};
  std::chrono::steady_clock::time_point received_;
  // Bytes to write, in order; `last_` after them ends the connection.
  std::deque<std::string> outbox_;
  bool writing_ = false;
  bool last_ = false;
  // A streamed generation's reader went away: the worker stops.
  std::shared_ptr<std::atomic<bool>> gone_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace nextword::serve
