// Errors that reach the user, each with the exit code documented in docs/usage.md.
//
// The engine reports every problem as an nextword::Error so that the front end
// can print exactly one line on stderr and exit with a code a script can test.
#pragma once

#include <stdexcept>
#include <string>

namespace nextword {

enum class ExitCode : int {
  kOk = 0,
  kFailure = 1,  // unexpected internal failure
  kUsage = 2,    // bad command line
  kModel = 3,    // a model file (vocab.json, weights.json) is missing or invalid
  kInput = 4,    // a phrase cannot be predicted
  kIo = 5,       // reading or writing a file other than the model failed
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message)
      : std::runtime_error(message), code_(code), message_(message) {}
  ExitCode code() const { return code_; }
  // The whole message; what() stops at a NUL byte a phrase may hold.
  const std::string& message() const { return message_; }

 private:
  ExitCode code_;
  std::string message_;
};

// "FILE: FIELD: what" -- the shape of every model-file message.
inline Error model_error(const std::string& file, const std::string& field,
                         const std::string& what) {
  return Error(ExitCode::kModel,
               field.empty() ? file + ": " + what : file + ": " + field + ": " + what);
}

inline Error input_error(const std::string& what) { return Error(ExitCode::kInput, what); }

inline Error usage_error(const std::string& what) { return Error(ExitCode::kUsage, what); }

}  // namespace nextword
