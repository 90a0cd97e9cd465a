#include "wal/log_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/common/error.h"
#include "wal/crc32c.h"
#include "wal/log_format.h"

namespace fld::wal {

std::string SegmentName(uint64_t first_seq) {
  return fmt::format("{:020}.log", first_seq);
}

void SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) Fail(ErrorKind::kIo, "{}: cannot open directory to sync it: {}", dir, std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) Fail(ErrorKind::kIo, "{}: fsync of the directory failed: {}", dir, std::strerror(err));
}

LogWriter::LogWriter(std::string dir, uint64_t first_seq) : dir_(std::move(dir)) {
  std::error_code ec;
  const bool created = std::filesystem::create_directories(dir_, ec);
  if (ec) Fail(ErrorKind::kIo, "{}: cannot create the log folder: {}", dir_, ec.message());
  // A new folder is durable only once the folder holding it is synced.
  if (created) SyncDir(std::filesystem::path(dir_).parent_path().string());
  OpenSegment(first_seq);
}

LogWriter::~LogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void LogWriter::WriteAll(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      poisoned_ = true;
      Fail(ErrorKind::kIo, "{}: write failed: {}", path_, std::strerror(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void LogWriter::OpenSegment(uint64_t first_seq) {
  path_ = dir_ + "/" + SegmentName(first_seq);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) Fail(ErrorKind::kIo, "{}: cannot create log segment: {}", path_, std::strerror(errno));
  char header[kSegmentHeaderSize];
  std::memcpy(header, kSegmentMagic, 8);
  std::memcpy(header + 8, &first_seq, 8);
  WriteAll(header, sizeof header);
  next_seq_ = first_seq;
  unsynced_ = sizeof header;
  Sync();
  SyncDir(dir_);
}

void LogWriter::Append(uint64_t seq, std::string_view payload) {
  if (poisoned_) Fail(ErrorKind::kIo, "{}: the log failed earlier; refusing to write", path_);
  if (seq != next_seq_)
    Fail(ErrorKind::kRuntime, "{}: internal error: log record {} appended where {} was expected", path_, seq,
         next_seq_);
  if (payload.size() > kMaxRecordSize) Fail(ErrorKind::kRuntime, "log record of {} bytes is too large", payload.size());
  std::string rec(kRecordHeaderSize, '\0');
  uint32_t len = static_cast<uint32_t>(payload.size());
  uint8_t type = static_cast<uint8_t>(RecordType::kStep);
  std::memcpy(&rec[0], &len, 4);
  std::memcpy(&rec[8], &seq, 8);
  std::memcpy(&rec[16], &type, 1);
  rec.append(payload);
  uint32_t crc = Crc32c(0, rec.data() + 8, rec.size() - 8);
  std::memcpy(&rec[4], &crc, 4);
  WriteAll(rec.data(), rec.size());
  bytes_written_ += rec.size();
  unsynced_ += rec.size();
  ++next_seq_;
}

void LogWriter::Sync() {
  if (poisoned_) Fail(ErrorKind::kIo, "{}: the log failed earlier; refusing to sync", path_);
  if (unsynced_ == 0) return;
  if (::fdatasync(fd_) != 0) {
    poisoned_ = true;
    Fail(ErrorKind::kIo, "{}: fsync failed: {}; stopping (a failed fsync is never retried)", path_,
         std::strerror(errno));
  }
  unsynced_ = 0;
}

void LogWriter::Rotate(uint64_t first_seq) {
  Sync();
  ::close(fd_);
  fd_ = -1;
  OpenSegment(first_seq);
}

}  // namespace fld::wal
