// Lines from standard input, with a way to ask whether another whole line is
// already there without waiting for it: phrases that arrive together (from a
// pipe or a file) are predicted together in one batch, while a line typed at
// a terminal is answered at once.
//
// Memory stays bounded whatever comes in: of a line longer than kMaxLine
// bytes (without its "\n" or "\r\n") only the last kMaxLine are kept, the
// same however the reads split it, and no more than that plus one read is
// held while its end has not come (a prediction needs only the end of the
// phrase: its last max_len words).
//
// A stop signal ends the input too: next() returns no more lines once one
// has come, and a wait for input ends at once.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace nextword::cli {

class LineReader {
 public:
  static constexpr size_t kMaxLine = size_t{1} << 16;

  explicit LineReader(int fd) : fd_(fd) {}
  // Standard input, read until its end or until a stop signal
  // (stop_signals.h): after one, next() returns no more lines (a line not
  // yet whole is dropped), so a stream ends after the batch in progress.
  static LineReader standard_input();

  // The next line, without its "\n" or "\r\n"; false at the end of the
  // input. Waits for input. *cut (when given) tells whether the line was
  // longer than kMaxLine and lost its beginning. Throws Error(kIo) when
  // reading fails.
  bool next(std::string& line, bool* cut = nullptr);
  // True when next() would return without waiting.
  bool ready();
  // The lines that arrived together, for one batch: waits for the first,
  // then takes those already waiting, up to `most` lines. False at the end of
  // the input. cut[i] is next()'s *cut for lines[i].
  bool next_batch(std::vector<std::string>& lines, std::vector<char>& cut, int most);

  // The note for a line that lost its beginning (after "<stdin>:N: ").
  static constexpr const char* kCutNote =
      "note: line longer than 64 KiB: only its last 64 KiB were read";

 private:
  // Appends one read()'s worth; notes the end of input; keeps a partial line
  // to its last kMaxLine bytes.
  void fill();
  // The position of the next '\n' at or after start_, or npos.
  size_t find_newline();

  int fd_;
  std::string buffer_;
  size_t start_ = 0;    // buffer_[start_..] is not returned yet
  size_t scanned_ = 0;  // buffer_[start_..scanned_) holds no '\n'
  bool cut_ = false;    // the partial line lost its beginning
  bool end_ = false;
};

}  // namespace nextword::cli
