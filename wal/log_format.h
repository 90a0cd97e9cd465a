// The write-ahead log's on-disk format (also described in man/fld-storage.5).
//
// The log is a sequence of segment files in <storage>/wal/, named by the sequence number of their
// first record, zero-padded to 20 digits: 00000000000000000001.log. Sequence numbers are step
// numbers: record k describes step k, and consecutive records have consecutive numbers, across
// segments too, so a missing record or segment is detected.
//
// Segment header (16 bytes):  "FLDWAL01" | first_seq u64
// Record:                     length u32 | crc u32 | seq u64 | type u8 | payload[length]
//   - all integers little-endian;
//   - crc = CRC32C over (seq, type, payload) bytes as written;
//   - type 1 = a step record (payload: see pipelines/journal.h).
//
// Recovery policy (like RocksDB's kTolerateCorruptedTailRecords for the tail only):
//   - a record cut off at the end of the LAST segment (short header, short payload, or a bad
//     checksum on the final record) is the normal result of a crash: it is cut off;
//   - anything else — a bad checksum with data after it, a bad header, a sequence gap, a damaged
//     segment that is not the last — is corruption: recovery refuses, says which file and
//     offset, and deletes nothing.
#pragma once

#include <cstdint>

namespace fld::wal {

inline constexpr char kSegmentMagic[8] = {'F', 'L', 'D', 'W', 'A', 'L', '0', '1'};
inline constexpr size_t kSegmentHeaderSize = 16;
inline constexpr size_t kRecordHeaderSize = 17;  // length, crc, seq, type
inline constexpr uint32_t kMaxRecordSize = 1u << 30;

enum class RecordType : uint8_t { kStep = 1 };

}  // namespace fld::wal
