// Reads the write-ahead log back for recovery (format and policy: wal/log_format.h).
//
// ReadLog() returns the records with seq > after_seq in order, having checked every checksum and
// the continuity of sequence numbers. A torn record at the very end of the last segment is
// reported in `torn_tail` (file and offset where the whole records end) so the caller can cut
// it; any other damage throws fld::Error(kCorruption) naming the file, the offset and what is
// wrong, and nothing is changed on disk.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fld::wal {

struct LogRecord {
  uint64_t seq = 0;
  std::string payload;
};

struct TornTail {
  std::string path;
  uint64_t offset = 0;  // file size to cut the segment back to
  std::string what;
};

struct LogContents {
  std::vector<LogRecord> records;     // seq > after_seq, consecutive
  std::vector<std::string> segments;  // every segment file, in order (full paths)
  std::optional<TornTail> torn_tail;
  uint64_t last_seq = 0;  // last whole record (or after_seq when none)
};

// Reads every segment in `dir` (absent dir = empty log). Records with seq <= after_seq are
// checked but not returned. The first returned record must be after_seq + 1.
LogContents ReadLog(const std::string& dir, uint64_t after_seq);

// Lists segment files in `dir` with their first sequence numbers, sorted.
std::vector<std::pair<uint64_t, std::string>> ListSegments(const std::string& dir);

}  // namespace fld::wal
