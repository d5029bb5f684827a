#include "lsp/stdio.h"

#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <thread>

#include "base/file_output.h"
#include "lsp/framing.h"

namespace nextword::lsp {
namespace {

using nlohmann::json;

// What the reading thread hands over: a message, a frame or body that is
// not one, or the end of input.
struct Incoming {
  enum Kind { kMessage, kRefused, kEnd } kind = kMessage;
  json message;
  std::string error;  // kRefused: why (answered as a parse error)
};

// The messages read and not yet handled, shared by both threads (the
// reading one may outlive the server: it is left blocked in read() at exit).
class Inbox {
 public:
  // Waits while kMaxWaiting are waiting (a client writing faster than the
  // server answers is held back, not buffered without end).
  void push(Incoming item) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return items_.size() < kMaxWaiting; });
    items_.push_back(std::move(item));
    ready_.notify_one();
  }
  Incoming pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !items_.empty(); });
    Incoming item = std::move(items_.front());
    items_.pop_front();
    room_.notify_one();
    return item;
  }
  void cancel(const json& id) {
    const std::lock_guard lock(mutex_);
    canceled_.push_back(id);
  }
  std::vector<json> take_canceled() {
    const std::lock_guard lock(mutex_);
    return std::exchange(canceled_, {});
  }

 private:
  static constexpr size_t kMaxWaiting = 256;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<Incoming> items_;
  std::vector<json> canceled_;
};

Incoming refused(std::string why) { return {Incoming::kRefused, {}, std::move(why)}; }

// Reads frames from `in` until its end, parsing their bodies.
void read_messages(int in, const std::shared_ptr<Inbox>& inbox) {
  FrameReader reader(kMaxMessageBytes);
  std::string buffer(size_t{64} << 10, '\0');
  Frame frame;
  for (;;) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (reader.partial()) inbox->push(refused("end of input inside a message"));
      inbox->push({Incoming::kEnd, {}, {}});
      return;
    }
    reader.feed(std::string_view(buffer.data(), static_cast<size_t>(n)));
    while (reader.next(frame)) {
      if (!frame.ok) {
        inbox->push(refused(frame.error));
        continue;
      }
      Incoming item;
      try {
        item.message = json::parse(frame.body);
      } catch (const json::parse_error& e) {
        // "[json.exception.parse_error.101] parse error at line 1, ...": the part after "] ".
        const std::string what = e.what();
        const size_t cut = what.find("] ");
        inbox->push(
            refused("body: not JSON: " + (cut == std::string::npos ? what : what.substr(cut + 2))));
        continue;
      }
      if (item.message.is_object() && item.message.value("method", json()) == "$/cancelRequest") {
        const json& params = item.message.value("params", json());
        if (params.is_object() && params.contains("id")) inbox->cancel(params["id"]);
      }
      inbox->push(std::move(item));
    }
  }
}

}  // namespace

int serve_stdio(const Model& model, const LexiconIndex* lexicon, ServerSetup setup, int in, int out,
                const Server::Log& log) {
  bool gone = false;
  auto send = [&](const json& message) {
    if (gone) return;
    const std::string body = message.dump(-1, ' ', false, json::error_handler_t::replace);
    if (!write_all(out, frame(body))) {
      gone = true;
      log(std::string("stdout: cannot write: ") + std::strerror(errno));
    }
  };
  Server server(model, lexicon, std::move(setup), send, log);
  auto inbox = std::make_shared<Inbox>();
  std::thread(read_messages, in, inbox).detach();
  for (;;) {
    Incoming item = inbox->pop();
    if (item.kind == Incoming::kEnd) return server.shut_down() ? 0 : 1;
    for (const json& id : inbox->take_canceled()) server.cancel(id);
    if (item.kind == Incoming::kRefused) {
      server.refuse(kParseError, item.error);
    } else {
      server.receive(item.message);
    }
    if (gone) return 1;
    if (const auto code = server.exit_code()) return *code;
  }
}

}  // namespace nextword::lsp
