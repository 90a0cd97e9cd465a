// The one-writer lock of a storage folder: an open-file-description lock (fcntl F_OFD_SETLK) on
// <storage>/lock, held for the life of the StorageLock object. The kernel drops it the moment
// the holder dies (kill -9 included), so a new process — here or on another machine that mounts
// the volume — can take over at once. The file also records who holds it (pid, host, start
// time) so a refused process can name the holder.
#pragma once

#include <optional>
#include <string>

namespace fld {

struct LockHolder {
  long pid = 0;
  std::string host;
  std::string started;  // UTC, ISO 8601
};

class StorageLock {
 public:
  // Takes the lock or throws fld::Error(kLocked) naming the holder.
  static StorageLock Acquire(const std::string& storage_dir);
  // Who holds the lock now, without taking it; nullopt when nobody does.
  static std::optional<LockHolder> Holder(const std::string& storage_dir);
  // The holder recorded in the lock file (also after the holder died).
  static std::optional<LockHolder> LastHolder(const std::string& storage_dir);

  StorageLock(StorageLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  StorageLock& operator=(StorageLock&&) = delete;
  ~StorageLock();

 private:
  explicit StorageLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace fld
