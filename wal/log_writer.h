// Appends records to the write-ahead log. Owned by the controller's thread.
//
// Durability: Append() writes a record with one write(2); Sync() makes every appended record
// durable with fdatasync. A failed write or sync throws fld::Error(kIo) and poisons the writer:
// it never retries (Linux may have dropped the dirty pages, so a retried fsync could "succeed"
// with the data gone); the process stops and the next run recovers from what is durable.
// Creating a segment fsyncs the new file and the directory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fld::wal {

class LogWriter {
 public:
  // Starts a new segment in `dir` whose first record will be `first_seq`.
  LogWriter(std::string dir, uint64_t first_seq);
  ~LogWriter();
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  void Append(uint64_t seq, std::string_view payload);
  void Sync();
  // Closes the current segment (synced) and starts a new one at `first_seq`.
  void Rotate(uint64_t first_seq);
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t unsynced_bytes() const { return unsynced_; }
  const std::string& segment_path() const { return path_; }

 private:
  void OpenSegment(uint64_t first_seq);
  void WriteAll(const void* data, size_t n);
  std::string dir_, path_;
  int fd_ = -1;
  uint64_t next_seq_ = 0;
  uint64_t bytes_written_ = 0, unsynced_ = 0;
  bool poisoned_ = false;
};

// Segment file name for a first sequence number.
std::string SegmentName(uint64_t first_seq);
// fsyncs a directory (after creating, renaming or deleting entries in it).
void SyncDir(const std::string& dir);

}  // namespace fld::wal
