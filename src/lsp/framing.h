// The Language Server Protocol's base protocol: each message is a header of
// "Name: value\r\n" fields, an empty line, and a body of exactly
// Content-Length bytes (JSON). A stream of bytes comes in pieces of any
// size: a message split over many reads, or several in one.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

namespace nextword::lsp {

// A header longer than this without its empty line is refused.
constexpr size_t kMaxHeaderBytes = size_t{8} << 10;

// One message's body, or what was wrong with a frame (its body, when its
// length was known, is skipped: the next frame is read after it).
struct Frame {
  bool ok = true;
  std::string body;   // ok: the message's bytes
  std::string error;  // !ok: "Content-Length: ..." etc., one line
};

// "Content-Length: N\r\n\r\n" + body.
std::string frame(std::string_view body);

class FrameReader {
 public:
  // Bodies over `max_body` bytes are refused, and skipped without being kept.
  explicit FrameReader(size_t max_body) : max_body_(max_body) {}

  // Adds the next bytes of the stream.
  void feed(std::string_view bytes);
  // The next whole frame, in order; false when none is complete yet.
  bool next(Frame& frame);
  // Bytes of an unfinished frame held (at the end of the stream: one cut short).
  bool partial() const { return buffer_.size() > read_ || skip_ > 0; }

 private:
  // Reads frames out of buffer_ into frames_.
  void parse();
  // Parses the header in [read_, end); sets body_ or skip_, or adds an error.
  void parse_header(size_t end);

  size_t max_body_;
  std::string buffer_;
  size_t read_ = 0;       // buffer_[..read_] is consumed
  bool in_body_ = false;  // a header was read: body_length_ bytes follow
  size_t body_length_ = 0;
  size_t skip_ = 0;  // bytes of a refused body still to skip
  std::deque<Frame> frames_;
};

}  // namespace nextword::lsp
