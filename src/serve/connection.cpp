#include "serve/connection.h"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <cerrno>
#include <exception>
#include <new>

namespace nextword::serve {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

constexpr size_t kMaxTarget = 8 * 1024;   // bytes of a request line's target
constexpr size_t kMaxField = 8 * 1024;    // bytes of one header field, name and value
constexpr size_t kMaxFields = 100;        // header fields of a request
constexpr size_t kMaxHeader = 64 * 1024;  // bytes of a whole header

std::string_view view(beast::string_view s) { return {s.data(), s.size()}; }

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

// The status line, the headers and the body, as they go on the wire; `close`
// says "Connection: close"; a HEAD answer has the headers only, and so has
// the start of an event stream, whose length is not known (`open_ended`).
std::string wire(const Response& r, bool close, bool head, bool open_ended = false) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " +
                    std::string(http::obsolete_reason(static_cast<http::status>(r.status))) +
                    "\r\nServer: nextword\r\n";
  if (!r.content_type.empty()) out += "Content-Type: " + r.content_type + "\r\n";
  for (const auto& [name, value] : r.headers) out += name + ": " + value + "\r\n";
  if (r.status != 204 && !open_ended)
    out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  if (close) out += "Connection: close\r\n";
  out += "\r\n";
  if (!head) out += r.body;
  return out;
}

}  // namespace

Connection::Connection(net::ip::tcp::socket socket, Shared& shared)
    : stream_(std::move(socket)), shared_(shared) {
  shared_.open.insert(this);
}

Connection::~Connection() {
  shared_.open.erase(this);
  if (shared_.stopping && shared_.open.empty() && shared_.all_closed) shared_.all_closed();
}

void Connection::start(bool refuse) {
  received_ = std::chrono::steady_clock::now();
  if (refuse) {
    send_error({503, "overloaded", "too many connections"}, true);
    return;
  }
  read_header();
}

void Connection::stop_if_idle() {
  keep_alive_ = false;
  if (idle_) close();
}

void Connection::read_header() {
  if (shared_.stopping) return close();
  idle_ = true;
  route_ = Route{kOtherRoute, {}};
  parser_.emplace();
  parser_->header_limit(kMaxHeader);
  parser_->body_limit(shared_.options.max_body);
  stream_.expires_after(seconds(shared_.options.header_timeout));
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
}

ApiError Connection::header_error(beast::error_code ec) const {
  if (ec == http::error::body_limit) return body_too_large();  // declared in the header
  if (ec == http::error::header_limit) {
    // The request line alone too long, or the fields after it.
    const std::string_view read(static_cast<const char*>(buffer_.data().data()),
                                buffer_.data().size());
    if (read.find('\n') == std::string_view::npos || read.find('\n') > kMaxTarget) {
      return {414, "uri_too_long", "the request line is longer than 8 KiB"};
    }
    return {431, "header_too_large", "the header is larger than 64 KiB"};
  }
  return {400, "bad_request", "not an HTTP/1.1 request: " + ec.message()};
}

ApiError Connection::body_too_large() const {
  return {413, "payload_too_large",
          "the body is larger than the " + std::to_string(shared_.options.max_body) +
              " bytes allowed (--max-body)"};
}

void Connection::on_header(beast::error_code ec) {
  if (ec) {
    // The client went away, or let the deadline pass: nothing to answer.
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == net::error::operation_aborted || ec == net::error::connection_reset ||
        ec == net::error::eof) {
      return close();
    }
    return send_error(header_error(ec), true);
  }
  idle_ = false;
  received_ = std::chrono::steady_clock::now();
  const auto& request = parser_->get();
  keep_alive_ = parser_->keep_alive();
  if (request.target().size() > kMaxTarget) {
    return send_error({414, "uri_too_long", "the target is longer than 8 KiB"}, true);
  }
  size_t fields = 0;
  for (const auto& field : request) {
    if (++fields > kMaxFields) {
      return send_error({431, "header_too_large", "more than 100 header fields"}, true);
    }
    if (field.name_string().size() + field.value().size() > kMaxField) {
      return send_error(
          {431, "header_too_large",
           "the header field " + std::string(field.name_string()) + " is longer than 8 KiB"},
          true);
    }
  }
  // A transfer coding other than chunked leaves the body's end unknown:
  // what follows must not be read as another request (RFC 9112, 6.3).
  if (request.count(http::field::transfer_encoding) > 0 && !parser_->chunked()) {
    return send_error({400, "bad_request", "a Transfer-Encoding other than chunked"}, true);
  }
  const auto found =
      shared_.api.find(view(request.method_string()), view(request.target()),
                       view(request[http::field::authorization]), view(request["X-API-Key"]));
  // An answer before the body: the body is not read, so the connection ends.
  if (const ApiError* error = std::get_if<ApiError>(&found)) {
    return send_error(*error, !parser_->is_done());
  }
  route_ = std::get<Route>(found);
  if (parser_->is_done()) return dispatch();
  if (beast::iequals(request[http::field::expect], "100-continue")) {
    outbox_.push_back("HTTP/1.1 100 Continue\r\n\r\n");
    write_next();
  }
  read_body();
}

void Connection::read_body() {
  stream_.expires_after(seconds(shared_.options.body_timeout));
  http::async_read(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_body(ec); });
}

void Connection::on_body(beast::error_code ec) {
  if (ec == http::error::body_limit) return send_error(body_too_large(), true);
  if (ec == beast::error::timeout || ec == http::error::partial_message ||
      ec == net::error::operation_aborted || ec == net::error::connection_reset) {
    return close();
  }
  if (ec) return send_error({400, "bad_request", "the body: " + ec.message()}, true);
  stream_.expires_never();
  dispatch();
}

void Connection::dispatch() {
  const Route& route = route_;
  if (!route.endpoint) {
    if (route.name == "metrics") {
      Response r{200,
                 "text/plain; version=0.0.4; charset=utf-8",
                 shared_.metrics.text(shared_.queue.depth(), shared_.open.size()),
                 {}};
      shared_.api.decorate(r);
      return send(std::move(r));
    }
    return send(shared_.api.get(route));
  }
  auto job = std::make_unique<Job>();
  try {
    job->call = read_call(*route.endpoint, parser_->get().body());
  } catch (const ApiError& e) {
    return send_error(e, false);
  } catch (const std::bad_alloc&) {
    return send_error({503, "overloaded", "out of memory"}, true);
  } catch (const std::exception& e) {
    return send_error({500, "internal", e.what()}, true);
  }
  job->key = batch_key(job->call);
  if (job->call.stream) return start_stream(std::move(job));
  job->call.cancelled = gone_;
  job->done = [self = shared_from_this()](Answer answer) mutable {
    auto& on = self->stream_;
    net::post(on.get_executor(), [self = std::move(self), answer = std::move(answer)] {
      Response r{answer.status, "application/json", std::move(answer.body), {}};
      self->shared_.api.decorate(r);
      self->send(std::move(r));
    });
  };
  if (!shared_.queue.push(std::move(job))) {
    return send_error({503, "overloaded", "every worker is busy and the queue is full; try again"},
                      false);
  }
  watch();
}

void Connection::watch() {
  // While a call runs nothing is read, so a client that hangs up would go
  // unseen until the answer is written: wait for the socket to become
  // readable and look without taking. End of stream or an error: the call
  // is abandoned (a generation stops at its next word). Bytes: a request
  // pipelined behind this one; they stay for the next read.
  watching_ = true;
  stream_.socket().async_wait(
      net::ip::tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
        if (ec == net::error::operation_aborted || !self->watching_) return;
        self->watching_ = false;
        char byte = 0;
        const ssize_t n =
            ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (ec || n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) *self->gone_ = true;
      });
}

void Connection::start_stream(std::unique_ptr<Job> job) {
  // Server-sent events: the header now, an event per word as the worker
  // chooses it, then "event: done" with generate's record; the end of the
  // connection ends the body.
  Response head{200, "text/event-stream", "", {{"Cache-Control", "no-cache"}}};
  shared_.api.decorate(head);
  std::string header = wire(head, true, true, true);
  const auto executor = stream_.get_executor();
  const std::weak_ptr<Connection> weak = weak_from_this();
  const std::shared_ptr<std::atomic<bool>> gone = gone_;
  job->events = [executor, weak, gone](const std::string& event) {
    if (*gone) return false;
    net::post(executor, [weak, bytes = "data: " + event + "\n\n"]() mutable {
      if (const auto self = weak.lock()) {
        self->outbox_.push_back(std::move(bytes));
        self->write_next();
      }
    });
    return true;
  };
  job->done = [self = shared_from_this()](Answer answer) mutable {
    auto& on = self->stream_;
    net::post(on.get_executor(), [self = std::move(self), answer = std::move(answer)] {
      std::string body = answer.body;
      if (body.ends_with('\n')) body.pop_back();
      self->outbox_.push_back(
          (answer.status == 200 ? "event: done\ndata: " : "event: error\ndata: ") + body + "\n\n");
      self->shared_.metrics.answered(
          self->route_.name, answer.status,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - self->received_)
              .count());
      self->last_ = true;
      self->keep_alive_ = false;
      self->write_next();
    });
  };
  outbox_.push_back(std::move(header));
  if (!shared_.queue.push(std::move(job))) {
    outbox_.clear();
    return send_error({503, "overloaded", "every worker is busy and the queue is full; try again"},
                      false);
  }
  write_next();
}

void Connection::send_error(const ApiError& error, bool close) {
  if (close) keep_alive_ = false;
  send(shared_.api.error(error));
}

void Connection::send(Response response) {
  if (watching_) {  // the watch ends with the call: the socket is written, then read again
    watching_ = false;
    beast::error_code ignored;
    stream_.socket().cancel(ignored);
  }
  shared_.metrics.answered(
      route_.name, response.status,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - received_).count());
  const bool head =
      parser_ && parser_->is_header_done() && parser_->get().method() == http::verb::head;
  if (shared_.stopping) keep_alive_ = false;
  outbox_.push_back(wire(response, !keep_alive_, head));
  last_ = true;
  write_next();
}

void Connection::write_next() {
  if (writing_ || closed_) return;
  if (outbox_.empty()) {
    if (!last_) return;
    last_ = false;
    if (keep_alive_ && !shared_.stopping) return read_header();
    return close();
  }
  writing_ = true;
  stream_.expires_after(seconds(shared_.options.write_timeout));
  net::async_write(stream_, net::buffer(outbox_.front()),
                   [self = shared_from_this()](beast::error_code ec, size_t) {
                     self->writing_ = false;
                     self->outbox_.pop_front();
                     if (ec) {
                       *self->gone_ = true;
                       return self->close();
                     }
                     self->write_next();
                   });
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  *gone_ = true;
  beast::error_code ignored;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  stream_.close();
}

}  // namespace nextword::serve
