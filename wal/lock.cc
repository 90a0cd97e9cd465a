#include "wal/lock.h"

#include <fcntl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/error.h"

namespace fld {

namespace {

std::string LockPath(const std::string& dir) {
  return dir + "/lock";
}

std::optional<LockHolder> ParseHolder(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  LockHolder h;
  if (!(in >> h.pid >> h.host >> h.started)) return std::nullopt;
  return h;
}

}  // namespace

StorageLock StorageLock::Acquire(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) Fail(ErrorKind::kIo, "{}: cannot create the storage folder: {}", dir, ec.message());
  const std::string path = LockPath(dir);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) Fail(ErrorKind::kIo, "{}: cannot open the lock file: {}", path, std::strerror(errno));
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (::fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EAGAIN || err == EACCES) {
      auto h = ParseHolder(path);
      if (h)
        Fail(ErrorKind::kLocked, "{}: storage is in use by another fld run (pid {} on host {}, started {})", dir,
             h->pid, h->host, h->started);
      Fail(ErrorKind::kLocked, "{}: storage is in use by another fld run", dir);
    }
    Fail(ErrorKind::kIo, "{}: cannot lock: {}", path, std::strerror(err));
  }
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  std::string who = fmt::format("{} {} {:%Y-%m-%dT%H:%M:%SZ}\n", static_cast<long>(::getpid()), host,
                                fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
  // Write first, then cut the rest: a refused process reading the file meanwhile sees the new
  // holder's first line, never an empty file (it reads only the first line's fields).
  if (::pwrite(fd, who.data(), who.size(), 0) != static_cast<ssize_t>(who.size()) ||
      ::ftruncate(fd, static_cast<off_t>(who.size())) != 0) {
    int err = errno;
    ::close(fd);
    Fail(ErrorKind::kIo, "{}: cannot record the lock holder: {}", path, std::strerror(err));
  }
  return StorageLock(fd);
}

std::optional<LockHolder> StorageLock::Holder(const std::string& dir) {
  const std::string path = LockPath(dir);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  int rc = ::fcntl(fd, F_OFD_GETLK, &fl);
  ::close(fd);
  if (rc != 0 || fl.l_type == F_UNLCK) return std::nullopt;
  auto h = ParseHolder(path);
  return h ? h : std::optional<LockHolder>(LockHolder{});
}

std::optional<LockHolder> StorageLock::LastHolder(const std::string& dir) {
  return ParseHolder(LockPath(dir));
}

StorageLock::~StorageLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace fld
