#include "wal/log_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "wal/crc32c.h"
#include "wal/log_format.h"

namespace fld::wal {

namespace fs = std::filesystem;

std::vector<std::pair<uint64_t, std::string>> ListSegments(const std::string& dir) {
  std::vector<std::pair<uint64_t, std::string>> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() != 24 || name.substr(20) != ".log") continue;
    bool digits = std::all_of(name.begin(), name.begin() + 20, [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) continue;
    out.emplace_back(std::stoull(name.substr(0, 20)), e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

[[noreturn]] void Corrupt(const std::string& path, uint64_t offset, const std::string& what) {
  Fail(ErrorKind::kCorruption,
       "{}: log corrupted at offset {}: {}; refusing to start (nothing was deleted; "
       "`fld run --reset SPEC` starts over)",
       path, offset, what);
}

// True when a whole, checksummed record starts anywhere after `pos`: then the damage at pos is
// not a torn tail (a crash only ever cuts the end of the log) but corruption. `want` is the
// number of the record expected at pos: a record after it can only be numbered want..want+n for
// the n records that fit, and that (with the type) is checked first, so the checksum is computed
// at few places and the scan stays linear even when the bytes after pos look like lengths.
bool ValidRecordAfter(const std::string& data, size_t pos, uint64_t want) {
  const uint64_t most = (data.size() - pos) / kRecordHeaderSize;
  for (size_t p = pos + 1; p + kRecordHeaderSize <= data.size(); ++p) {
    uint32_t len, crc;
    uint64_t seq;
    std::memcpy(&len, data.data() + p, 4);
    if (len > data.size() - p - kRecordHeaderSize) continue;
    std::memcpy(&seq, data.data() + p + 8, 8);
    if (seq < want || seq - want > most || data[p + 16] != static_cast<char>(RecordType::kStep)) continue;
    std::memcpy(&crc, data.data() + p + 4, 4);
    if (Crc32c(0, data.data() + p + 8, kRecordHeaderSize - 8 + len) == crc) return true;
  }
  return false;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(ErrorKind::kIo, "{}: cannot read log segment", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

LogContents ReadLog(const std::string& dir, uint64_t after_seq) {
  LogContents out;
  out.last_seq = after_seq;
  auto segs = ListSegments(dir);
  std::optional<uint64_t> expected;  // next sequence number
  for (size_t s = 0; s < segs.size(); ++s) {
    const auto& [first, path] = segs[s];
    const bool last = s + 1 == segs.size();
    out.segments.push_back(path);
    std::string data = ReadFile(path);
    if (data.size() < kSegmentHeaderSize) {
      if (last) {
        out.torn_tail = TornTail{path, 0, "segment header cut off"};
        break;
      }
      Corrupt(path, 0, "segment header is cut off");
    }
    if (std::memcmp(data.data(), kSegmentMagic, 8) != 0) Corrupt(path, 0, "not a log segment (bad magic)");
    uint64_t hdr_first;
    std::memcpy(&hdr_first, data.data() + 8, 8);
    if (hdr_first != first)
      Corrupt(path, 8, fmt::format("header says first record {}, name says {}", hdr_first, first));
    if (expected && first != *expected)
      Corrupt(path, 0, fmt::format("expected a segment starting at record {} (a segment is missing)", *expected));
    size_t pos = kSegmentHeaderSize;
    while (pos < data.size()) {
      const size_t rest = data.size() - pos;
      const uint64_t want = expected ? *expected : first;  // the number of the record at pos
      if (rest < kRecordHeaderSize) {
        if (last && !ValidRecordAfter(data, pos, want)) {
          out.torn_tail = TornTail{path, pos, "record header cut off"};
          break;
        }
        Corrupt(path, pos, "record header cut off");
      }
      uint32_t len, crc;
      uint64_t seq;
      std::memcpy(&len, data.data() + pos, 4);
      std::memcpy(&crc, data.data() + pos + 4, 4);
      std::memcpy(&seq, data.data() + pos + 8, 8);
      uint8_t type = static_cast<uint8_t>(data[pos + 16]);
      const size_t end = pos + kRecordHeaderSize + len;
      const bool cut = len > kMaxRecordSize || end > data.size();
      const bool bad_crc = !cut && Crc32c(0, data.data() + pos + 8, end - pos - 8) != crc;
      if (cut || bad_crc) {
        if (last && !ValidRecordAfter(data, pos, want)) {
          out.torn_tail = TornTail{path, pos, cut ? "final record cut off" : "checksum mismatch in the final record"};
          break;
        }
        if (cut) Corrupt(path, pos, fmt::format("record length {} runs past the end of the segment", len));
        Corrupt(path, pos, fmt::format("checksum mismatch in record {}", seq));
      }
      if (type != static_cast<uint8_t>(RecordType::kStep))
        Corrupt(path, pos, fmt::format("unknown record type {}", type));
      if (seq != want) Corrupt(path, pos, fmt::format("record {} where record {} was expected", seq, want));
      expected = seq + 1;
      if (seq > after_seq) {
        if (out.records.empty() && seq != after_seq + 1)
          Corrupt(path, pos, fmt::format("the log resumes at record {} but the checkpoint ends at {}", seq, after_seq));
        out.records.push_back({seq, data.substr(pos + kRecordHeaderSize, len)});
        out.last_seq = seq;
      }
      pos = end;
    }
    if (!expected) expected = first;
  }
  return out;
}

}  // namespace fld::wal
