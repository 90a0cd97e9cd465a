// fld's one error type. Everything that can go wrong because of input (a spec, SQL text, a data
// record, a corrupt file) or the environment (I/O, a held lock) is reported by throwing
// fld::Error, which carries a kind and a message that already says where and what. Callers that
// wrap a library (yaml-cpp, CLI11, LMDB, nlohmann-json) translate its exceptions at the one place
// that calls it. `main` maps the kind to the process exit code (see ExitCodeFor).
// Programmer errors are assertions, not Errors.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace fld {

enum class ErrorKind : int {
  kUsage = 2,       // bad command line, spec, SQL or configuration: nothing ran
  kRuntime = 1,     // a failure while running: bad data record, arithmetic error
  kLocked = 3,      // the storage folder is held by another live process
  kCorruption = 4,  // a log or checkpoint failed its checks; nothing was deleted
  kIo = 5,          // an I/O call failed (disk full, EIO); the process stopped cleanly
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message) : std::runtime_error(std::move(message)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

inline int ExitCodeFor(ErrorKind kind) {
  return static_cast<int>(kind);
}

template <typename... Args>
[[noreturn]] void Fail(ErrorKind kind, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(kind, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace fld
