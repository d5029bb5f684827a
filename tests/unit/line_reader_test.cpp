// LineReader (src/cli/line_reader.h) on a real pipe(2): lines with "\n" or
// "\r\n", a last line without one, ready() as documented (true only when a
// whole line or the end is already there), and the 64 KiB cap on one line.
#include "cli/line_reader.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/record_stream.h"
#include "model/model_file.h"
#include "predict/predictor.h"
#include "views/records.h"

using nextword::cli::LineReader;

namespace {

// Both ends of a pipe, closed when the test is done.
struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    if (read >= 0) ::close(read);
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void put(const std::string& bytes) const {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(write, bytes.data() + done, bytes.size() - done);
      REQUIRE(n > 0);
      done += static_cast<size_t>(n);
    }
  }
  void close_write() {
    if (write >= 0) ::close(write);
    write = -1;
  }
};

// Bytes that differ from position to position, so that a kept tail can be
// told from any other part of the line.
std::string pattern(size_t n) {
  std::string s(n, ' ');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 26) % 26);
  return s;
}

}  // namespace

TEST_CASE("lines come without their \\n or \\r\\n, the last one without a newline too",
          "[line_reader]") {
  Pipe pipe;
  pipe.put("once upon\r\na time\n\nthere\r\r\nwas");
  pipe.close_write();
  LineReader reader(pipe.read);
  std::vector<std::string> lines;
  std::string line;
  bool cut = true;
  while (reader.next(line, &cut)) {
    CHECK_FALSE(cut);
    lines.push_back(line);
  }
  // Only one \r before the \n is part of the line end.
  CHECK(lines == std::vector<std::string>{"once upon", "a time", "", "there\r", "was"});
  CHECK_FALSE(reader.next(line));  // the end stays the end
}

TEST_CASE("ready() is true only when a whole line or the end is already there", "[line_reader]") {
  Pipe pipe;
  LineReader reader(pipe.read);
  CHECK_FALSE(reader.ready());  // nothing written: it does not wait
  pipe.put("half a li");
  CHECK_FALSE(reader.ready());  // a partial line is not a line yet
  pipe.put("ne\nnext");
  CHECK(reader.ready());
  std::string line;
  REQUIRE(reader.next(line));
  CHECK(line == "half a line");
  CHECK_FALSE(reader.ready());  // "next" has no newline yet
  pipe.close_write();
  CHECK(reader.ready());  // the end: next() returns at once
  REQUIRE(reader.next(line));
  CHECK(line == "next");
  CHECK(reader.ready());
  CHECK_FALSE(reader.next(line));
}

TEST_CASE("a line longer than 64 KiB keeps its last 64 KiB and says it was cut", "[line_reader]") {
  STATIC_REQUIRE(LineReader::kMaxLine == 65536);
  const std::string long_line = pattern(3 * LineReader::kMaxLine + 1234);
  Pipe pipe;
  // More than a pipe holds: written while the reader reads.
  std::thread writer([&pipe, &long_line] {
    pipe.put(long_line);
    pipe.close_write();
  });
  LineReader reader(pipe.read);
  std::string line;
  bool cut = false;
  REQUIRE(reader.next(line, &cut));
  writer.join();
  CHECK(cut);
  CHECK(line.size() == LineReader::kMaxLine);
  CHECK(line == long_line.substr(long_line.size() - LineReader::kMaxLine));
  CHECK_FALSE(reader.next(line, &cut));
}

TEST_CASE("the cut is reported once, for its own line, and the next line is whole",
          "[line_reader]") {
  const nextword::Model fruit = nextword::load_model(
      nextword::ModelPaths::in_directory(std::string(NEXTWORD_DATA_DIR) + "/examples/fruit"));
  // Long enough that a read ends inside it after the cap is passed, however
  // the pipe splits it.
  std::string text;
  while (text.size() <= 4 * LineReader::kMaxLine) text += "banana ";
  text += "apple\nphone apple\n";
  Pipe pipe;
  std::thread writer([&pipe, &text] {
    pipe.put(text);
    pipe.close_write();
  });
  LineReader reader(pipe.read);
  nextword::Predictor predictor(fruit);
  nextword::cli::RecordOptions options;
  options.quiet = false;
  std::vector<std::string> records, notes;
  const nextword::cli::RecordSink sink{[&](const std::string& r) { records.push_back(r); },
                                       [&](const std::string& n) { notes.push_back(n); }};
  const int status = nextword::cli::stream_records(fruit, predictor, reader, options, sink);
  writer.join();
  CHECK(status == 0);
  CHECK(records.size() == 2);
  REQUIRE(notes.size() == 2);
  CHECK(notes[0] == "<stdin>:1: note: line longer than 64 KiB: only its last 64 KiB were read");
  CHECK(notes[1] == "<stdin>:1: note: phrase cut to its last 8 tokens (max_len)");
  // The second line is predicted as written: as the phrase "phone apple".
  nextword::Predictor alone(fruit);
  CHECK(records[1] ==
        nextword::views::prediction_record(
            fruit, "phone apple", alone.predict("phone apple", options.top_k), options.format));
}

TEST_CASE("a long line keeps its last 64 KiB however the reads split it", "[line_reader]") {
  // Whether the newline arrives in the read that passes the cap or later,
  // the line returned is the same: its last kMaxLine bytes.
  for (const size_t length : {LineReader::kMaxLine + 1, LineReader::kMaxLine + 100,
                              2 * LineReader::kMaxLine - 3, 5 * LineReader::kMaxLine}) {
    for (const std::string ending : {"\n", "\r\n"}) {
      const std::string long_line = pattern(length);
      Pipe pipe;
      std::thread writer([&pipe, &long_line, ending] {
        pipe.put(long_line + ending + "short\n");
        pipe.close_write();
      });
      LineReader reader(pipe.read);
      std::string line;
      bool cut = false;
      REQUIRE(reader.next(line, &cut));
      CHECK(cut);
      CHECK(line == long_line.substr(length - LineReader::kMaxLine));
      REQUIRE(reader.next(line, &cut));
      CHECK_FALSE(cut);
      CHECK(line == "short");
      writer.join();
    }
  }
  // Exactly kMaxLine bytes is not cut.
  Pipe pipe;
  const std::string exact = pattern(LineReader::kMaxLine);
  std::thread writer([&pipe, &exact] {
    pipe.put(exact + "\n");
    pipe.close_write();
  });
  LineReader reader(pipe.read);
  std::string line;
  bool cut = true;
  REQUIRE(reader.next(line, &cut));
  CHECK_FALSE(cut);
  CHECK(line == exact);
  writer.join();
}
