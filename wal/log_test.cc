// The write-ahead log's writer and reader (wal/log_format.h): round trips across segments, the
// recovery policy (a torn tail is cut, anything else is corruption naming file and offset), and
// the CRC32C every record carries.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/common/temp_dir.h"
#include "wal/crc32c.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace fld::wal {
namespace {

namespace fs = std::filesystem;

// A payload that differs per record, of varying length (0 included), with every byte value.
std::string Payload(uint64_t seq) {
  std::string s;
  const size_t n = seq % 5 == 0 ? 0 : (seq * 37) % 151;
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>((seq * 131 + i * 7) & 0xFF));
  return s;
}

// Writes records [first, last] into dir, starting a new segment before each record whose
// number is in `rotate_before`. Returns the segment paths in order.
std::vector<std::string> WriteLog(const std::string& dir, uint64_t first, uint64_t last,
                                  const std::vector<uint64_t>& rotate_before = {}) {
  LogWriter w(dir, first);
  std::vector<std::string> segs{w.segment_path()};
  for (uint64_t s = first; s <= last; ++s) {
    if (std::find(rotate_before.begin(), rotate_before.end(), s) != rotate_before.end() && s != first) {
      w.Rotate(s);
      segs.push_back(w.segment_path());
    }
    w.Append(s, Payload(s));
  }
  w.Sync();
  return segs;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// Offsets where each record of a segment starts (parsed from the lengths), plus the file size.
std::vector<uint64_t> RecordOffsets(const std::string& data) {
  std::vector<uint64_t> out;
  size_t pos = kSegmentHeaderSize;
  while (pos + kRecordHeaderSize <= data.size()) {
    out.push_back(pos);
    uint32_t len;
    std::memcpy(&len, data.data() + pos, 4);
    pos += kRecordHeaderSize + len;
  }
  REQUIRE(pos == data.size());
  out.push_back(pos);
  return out;
}

// Runs ReadLog expecting kCorruption; returns the message.
std::string CorruptionOf(const std::string& dir, uint64_t after_seq) {
  try {
    ReadLog(dir, after_seq);
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::kCorruption);
    return e.what();
  }
  FAIL("ReadLog accepted a corrupted log");
  return "";
}

void CheckRecords(const LogContents& log, uint64_t first, uint64_t last) {
  REQUIRE(log.records.size() == (last >= first ? last - first + 1 : 0));
  for (uint64_t s = first; s <= last; ++s) {
    const LogRecord& r = log.records[s - first];
    REQUIRE(r.seq == s);
    REQUIRE(r.payload == Payload(s));
  }
}

TEST_CASE("CRC32C matches the published test vectors", "[wal]") {
  const char* digits = "123456789";
  CHECK(Crc32c(0, digits, 9) == 0xE3069283u);
  CHECK(Crc32c(0, "", 0) == 0u);
  CHECK(Crc32c(0, "a", 1) == 0xC1D04330u);
  // RFC 3720 (iSCSI) appendix B.4.
  unsigned char buf[32];
  std::memset(buf, 0, sizeof buf);
  CHECK(Crc32c(0, buf, 32) == 0x8A9136AAu);
  std::memset(buf, 0xFF, sizeof buf);
  CHECK(Crc32c(0, buf, 32) == 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<unsigned char>(i);
  CHECK(Crc32c(0, buf, 32) == 0x46DD794Eu);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<unsigned char>(31 - i);
  CHECK(Crc32c(0, buf, 32) == 0x113FDB5Cu);
  // Extending a CRC over pieces equals the CRC of the whole, whatever the split (the
  // slicing-by-8 loop and the byte loop agree).
  std::string text = "The quick brown fox jumps over the lazy dog, 0123456789 times over";
  const uint32_t whole = Crc32c(0, text.data(), text.size());
  for (size_t cut = 0; cut <= text.size(); ++cut)
    REQUIRE(Crc32c(Crc32c(0, text.data(), cut), text.data() + cut, text.size() - cut) == whole);
  // The CPU's instruction (where Crc32c uses it) and the tables agree on every length and
  // alignment, from any starting value.
  std::mt19937 rng(5);
  std::string bytes(4099, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  CHECK(Crc32cPortable(0, "123456789", 9) == 0xE3069283u);
  for (int round = 0; round < 2000; ++round) {
    const size_t at = rng() % 16, n = rng() % (bytes.size() - 16);
    const uint32_t seed = round % 3 == 0 ? 0 : static_cast<uint32_t>(rng());
    REQUIRE(Crc32c(seed, bytes.data() + at, n) == Crc32cPortable(seed, bytes.data() + at, n));
  }
}

TEST_CASE("log: segment names are the first record number, zero-padded to 20 digits", "[wal]") {
  CHECK(SegmentName(1) == "00000000000000000001.log");
  CHECK(SegmentName(18446744073709551615ull) == "18446744073709551615.log");
}

TEST_CASE("log: round trip across segments and rotations", "[wal]") {
  TempDir t;
  auto segs = WriteLog(t.File("wal"), 1, 50, {11, 21, 31, 41});
  REQUIRE(segs.size() == 5);
  REQUIRE(fs::path(segs[2]).filename() == SegmentName(21));
  // Stray files are not segments.
  WriteAll(t.File("wal") + "/notes.txt", "hello");
  WriteAll(t.File("wal") + "/0000000000000000000x.log", "FLDWAL01");
  REQUIRE(ListSegments(t.File("wal")).size() == 5);

  LogContents all = ReadLog(t.File("wal"), 0);
  CheckRecords(all, 1, 50);
  CHECK(all.last_seq == 50);
  CHECK(!all.torn_tail);
  CHECK(all.segments == segs);

  SECTION("records after a checkpoint start at after_seq + 1") {
    for (uint64_t after : {1, 10, 11, 23, 40, 49}) {
      LogContents log = ReadLog(t.File("wal"), after);
      CheckRecords(log, after + 1, 50);
      CHECK(log.last_seq == 50);
    }
    LogContents none = ReadLog(t.File("wal"), 50);
    CHECK(none.records.empty());
    CHECK(none.last_seq == 50);
  }
  SECTION("segments the checkpoint covers may be gone") {
    fs::remove(segs[0]);
    fs::remove(segs[1]);
    CheckRecords(ReadLog(t.File("wal"), 20), 21, 50);
    CheckRecords(ReadLog(t.File("wal"), 25), 26, 50);
    // ... but not when the checkpoint needs them.
    std::string msg = CorruptionOf(t.File("wal"), 5);
    CHECK_THAT(msg, Catch::Contains(segs[2]));
    CHECK_THAT(msg, Catch::Contains("resumes at record 21 but the checkpoint ends at 5"));
  }
  SECTION("a writer continuing after the last record extends the log") {
    {
      LogWriter w(t.File("wal"), 51);
      for (uint64_t s = 51; s <= 60; ++s) w.Append(s, Payload(s));
      w.Sync();
    }
    CheckRecords(ReadLog(t.File("wal"), 0), 1, 60);
  }
}

TEST_CASE("log: an absent folder or a header-only segment is an empty log", "[wal]") {
  TempDir t;
  LogContents empty = ReadLog(t.File("wal"), 7);
  CHECK(empty.records.empty());
  CHECK(empty.segments.empty());
  CHECK(empty.last_seq == 7);

  { LogWriter w(t.File("wal"), 1); }
  REQUIRE(fs::file_size(t.File("wal") + "/" + SegmentName(1)) == kSegmentHeaderSize);
  LogContents only_header = ReadLog(t.File("wal"), 0);
  CHECK(only_header.records.empty());
  CHECK(only_header.segments.size() == 1);
  CHECK(!only_header.torn_tail);
  CHECK(only_header.last_seq == 0);
}

TEST_CASE("log: a header-only last segment after a rotation (a checkpoint) is whole", "[wal]") {
  TempDir t;
  {
    LogWriter w(t.File("wal"), 1);
    for (uint64_t s = 1; s <= 5; ++s) w.Append(s, Payload(s));
    w.Rotate(6);
  }
  LogContents log = ReadLog(t.File("wal"), 0);
  CheckRecords(log, 1, 5);
  CHECK(log.segments.size() == 2);
  CHECK(!log.torn_tail);
  LogContents after = ReadLog(t.File("wal"), 5);
  CHECK(after.records.empty());
  CHECK(after.last_seq == 5);

  SECTION("a header-only segment followed by a segment that skips its number is a gap") {
    { LogWriter w(t.File("wal"), 7); }
    std::string msg = CorruptionOf(t.File("wal"), 0);
    CHECK_THAT(msg, Catch::Contains(SegmentName(7)));
    CHECK_THAT(msg, Catch::Contains("a segment is missing"));
  }
}

TEST_CASE("log: a torn tail at every offset of the last record is cut there, nothing before is lost", "[wal]") {
  TempDir t;
  auto segs = WriteLog(t.File("wal"), 1, 12, {7});
  const std::string last = segs.back();
  const std::string data = ReadAll(last);
  auto offs = RecordOffsets(data);  // records 7..12, then the end
  REQUIRE(offs.size() == 7);
  const uint64_t start = offs[offs.size() - 2], end = offs.back();
  REQUIRE(end - start > kRecordHeaderSize + 10);

  // Cut exactly at the record boundary: a whole log ending at record 11.
  WriteAll(last, data.substr(0, start));
  LogContents whole = ReadLog(t.File("wal"), 0);
  CheckRecords(whole, 1, 11);
  CHECK(!whole.torn_tail);

  for (uint64_t cut = start + 1; cut < end; ++cut) {
    INFO("segment cut to " << cut << " bytes (last record at " << start << ".." << end << ")");
    WriteAll(last, data.substr(0, cut));
    LogContents log = ReadLog(t.File("wal"), 0);
    CheckRecords(log, 1, 11);
    REQUIRE(log.last_seq == 11);
    REQUIRE(log.torn_tail);
    CHECK(log.torn_tail->path == last);
    CHECK(log.torn_tail->offset == start);
    CHECK(log.torn_tail->what == (cut - start < kRecordHeaderSize ? "record header cut off" : "final record cut off"));
    // From a checkpoint inside the last segment too.
    LogContents after = ReadLog(t.File("wal"), 8);
    CheckRecords(after, 9, 11);
    REQUIRE(after.torn_tail);
    CHECK(after.torn_tail->offset == start);
  }

  SECTION("cutting the torn end and writing on gives a whole log") {
    WriteAll(last, data.substr(0, start + 5));
    LogContents log = ReadLog(t.File("wal"), 0);
    REQUIRE(log.torn_tail);
    fs::resize_file(log.torn_tail->path, log.torn_tail->offset);
    {
      LogWriter w(t.File("wal"), log.last_seq + 1);
      for (uint64_t s = log.last_seq + 1; s <= 20; ++s) w.Append(s, Payload(s));
      w.Sync();
    }
    LogContents again = ReadLog(t.File("wal"), 0);
    CheckRecords(again, 1, 20);
    CHECK(!again.torn_tail);
  }
}

TEST_CASE("log: a segment header cut off in the last segment is a torn tail at offset 0", "[wal]") {
  TempDir t;
  auto segs = WriteLog(t.File("wal"), 1, 9, {5});
  // A fresh segment (as a rotation or a resumed run creates) whose header write was cut.
  std::string next = t.File("wal") + "/" + SegmentName(10);
  std::string header(kSegmentMagic, 8);
  uint64_t first = 10;
  header.append(reinterpret_cast<const char*>(&first), 8);
  for (size_t cut = 0; cut < kSegmentHeaderSize; ++cut) {
    INFO("header cut to " << cut << " bytes");
    WriteAll(next, header.substr(0, cut));
    LogContents log = ReadLog(t.File("wal"), 0);
    CheckRecords(log, 1, 9);
    REQUIRE(log.torn_tail);
    CHECK(log.torn_tail->path == next);
    CHECK(log.torn_tail->offset == 0);
  }
  // The same cut in a segment that is not the last is corruption.
  fs::remove(next);
  std::string data = ReadAll(segs[0]);
  WriteAll(segs[0], data.substr(0, 10));
  std::string msg = CorruptionOf(t.File("wal"), 0);
  CHECK_THAT(msg, Catch::Contains(segs[0]));
  CHECK_THAT(msg, Catch::Contains("offset 0"));
}

TEST_CASE("log: a bad checksum on the final record or garbage after it is a torn tail", "[wal]") {
  TempDir t;
  auto segs = WriteLog(t.File("wal"), 1, 6);
  const std::string data = ReadAll(segs[0]);
  auto offs = RecordOffsets(data);
  const uint64_t start = offs[offs.size() - 2];

  SECTION("flipped byte in the final record") {
    std::string d = data;
    d[d.size() - 1] ^= 0x40;
    WriteAll(segs[0], d);
    LogContents log = ReadLog(t.File("wal"), 0);
    CheckRecords(log, 1, 5);
    REQUIRE(log.torn_tail);
    CHECK(log.torn_tail->offset == start);
    CHECK(log.torn_tail->what == "checksum mismatch in the final record");
  }
  SECTION("zeros appended (a file extended but never written)") {
    WriteAll(segs[0], data + std::string(100, '\0'));
    LogContents log = ReadLog(t.File("wal"), 0);
    CheckRecords(log, 1, 6);
    REQUIRE(log.torn_tail);
    CHECK(log.torn_tail->offset == data.size());
  }
  SECTION("random garbage appended") {
    std::string junk;
    for (int i = 0; i < 300; ++i) junk.push_back(static_cast<char>((i * 7919 + 13) & 0xFF));
    WriteAll(segs[0], data + junk);
    LogContents log = ReadLog(t.File("wal"), 0);
    CheckRecords(log, 1, 6);
    REQUIRE(log.torn_tail);
    CHECK(log.torn_tail->offset == data.size());
  }
}

TEST_CASE("log: a bit flip in any byte of a middle record is corruption naming file and offset", "[wal]") {
  TempDir t;
  // Record 5 is in the middle of the first segment; record 12 in the middle of the last one.
  auto segs = WriteLog(t.File("wal"), 1, 16, {9});
  for (int which = 0; which < 2; ++which) {
    const std::string path = segs[which];
    const std::string data = ReadAll(path);
    auto offs = RecordOffsets(data);
    const size_t rec = 3;  // the 4th record of the segment: 4 or 12
    const uint64_t start = offs[rec], end = offs[rec + 1];
    for (uint64_t b = start; b < end; ++b) {
      for (int bit : {0, 7}) {
        INFO(path << ": flipped bit " << bit << " of byte " << b << " (record at " << start << ".." << end << ")");
        std::string d = data;
        d[b] ^= static_cast<char>(1 << bit);
        WriteAll(path, d);
        std::string msg = CorruptionOf(t.File("wal"), 0);
        CHECK_THAT(msg, Catch::Contains(path));
        CHECK_THAT(msg, Catch::Contains(fmt::format("offset {}:", start)));
        CHECK_THAT(msg, Catch::Contains("nothing was deleted"));
        // Also when the checkpoint lies beyond the damaged record: every record is checked.
        (void)CorruptionOf(t.File("wal"), 14);
      }
    }
    WriteAll(path, data);
    CheckRecords(ReadLog(t.File("wal"), 0), 1, 16);
  }
}

TEST_CASE("log: damage at the end of a segment that is not the last is corruption", "[wal]") {
  TempDir t;
  auto segs = WriteLog(t.File("wal"), 1, 10, {6});
  const std::string data = ReadAll(segs[0]);
  auto offs = RecordOffsets(data);
  const uint64_t start = offs[offs.size() - 2];
  SECTION("its final record cut off") {
    for (uint64_t cut = start + 1; cut < data.size(); cut += 3) {
      INFO("first segment cut to " << cut);
      WriteAll(segs[0], data.substr(0, cut));
      std::string msg = CorruptionOf(t.File("wal"), 0);
      CHECK_THAT(msg, Catch::Contains(segs[0]));
      CHECK_THAT(msg, Catch::Contains(fmt::format("offset {}:", start)));
    }
  }
  SECTION("its final record lost whole (a cut on a record boundary) leaves a gap") {
    WriteAll(segs[0], data.substr(0, start));
    std::string msg = CorruptionOf(t.File("wal"), 0);
    CHECK_THAT(msg, Catch::Contains(segs[1]));
    CHECK_THAT(msg, Catch::Contains("expected a segment starting at record 5"));
  }
  SECTION("a bad checksum in its final record") {
    std::string d = data;
    d[d.size() - 1] ^= 1;
    WriteAll(segs[0], d);
    std::string msg = CorruptionOf(t.File("wal"), 0);
    CHECK_THAT(msg, Catch::Contains(segs[0]));
    CHECK_THAT(msg, Catch::Contains("checksum mismatch in record 5"));
  }
}

TEST_CASE("log: a missing middle segment is corruption", "[wal]") {
  TempDir t;
  auto segs = WriteLog(t.File("wal"), 1, 30, {11, 21});
  fs::remove(segs[1]);
  for (uint64_t after : {0, 5, 10}) {
    std::string msg = CorruptionOf(t.File("wal"), after);
    CHECK_THAT(msg, Catch::Contains(segs[2]));
    CHECK_THAT(msg, Catch::Contains("expected a segment starting at record 11 (a segment is missing)"));
  }
  // Gone from the end too: the last segment deleted leaves a shorter but whole log.
  WriteLog(t.File("wal") + "2", 1, 30, {11, 21});
  fs::remove(t.File("wal") + "2/" + SegmentName(21));
  CheckRecords(ReadLog(t.File("wal") + "2", 0), 1, 20);
}

TEST_CASE("log: a damaged segment header is corruption", "[wal]") {
  TempDir t;
  auto segs = WriteLog(t.File("wal"), 1, 10, {6});
  const std::string data = ReadAll(segs[1]);
  SECTION("bad magic, even in the last segment") {
    std::string d = data;
    d[3] ^= 1;
    WriteAll(segs[1], d);
    std::string msg = CorruptionOf(t.File("wal"), 0);
    CHECK_THAT(msg, Catch::Contains(segs[1]));
    CHECK_THAT(msg, Catch::Contains("offset 0: not a log segment"));
  }
  SECTION("first record number disagrees with the name") {
    std::string d = data;
    d[8] ^= 4;
    WriteAll(segs[1], d);
    std::string msg = CorruptionOf(t.File("wal"), 0);
    CHECK_THAT(msg, Catch::Contains(segs[1]));
    CHECK_THAT(msg, Catch::Contains("offset 8"));
  }
  SECTION("a record with a valid checksum but the wrong sequence number") {
    // Rewrite the second segment as if it held records 7.. (record 6 lost, checksums fine).
    fs::remove(segs[1]);
    {
      LogWriter w(t.File("wal") + "/tmp", 7);
      w.Append(7, Payload(7));
      w.Sync();
      std::string rec = ReadAll(w.segment_path()).substr(kSegmentHeaderSize);
      std::string seg = data.substr(0, kSegmentHeaderSize) + rec;
      WriteAll(segs[1], seg);
    }
    std::string msg = CorruptionOf(t.File("wal"), 0);
    CHECK_THAT(msg, Catch::Contains(segs[1]));
    CHECK_THAT(msg, Catch::Contains("record 7 where record 6 was expected"));
  }
}

TEST_CASE("log: the writer refuses a record number out of order", "[wal]") {
  TempDir t;
  LogWriter w(t.File("wal"), 5);
  w.Append(5, "x");
  try {
    w.Append(7, "y");
    FAIL("out-of-order append was accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kRuntime);
  }
  w.Sync();
  CHECK(ReadLog(t.File("wal"), 4).records.size() == 1);
  CHECK(w.unsynced_bytes() == 0);
  CHECK(w.bytes_written() == kRecordHeaderSize + 1);
}

}  // namespace
}  // namespace fld::wal

namespace fld::wal {
namespace {

TEST_CASE("log: a torn or damaged large record is judged in linear time", "[wal]") {
  // A payload whose every 4 bytes read as a plausible record length (as logged rows of
  // integers such as 1048576 do) must not make the search for a whole record after the damage
  // compute a checksum at every byte.
  TempDir t;
  std::string big;
  for (int i = 0; i < (4 << 20) / 4; ++i) big.append("\x00\x00\x10\x00", 4);
  {
    LogWriter w(t.File("wal"), 1);
    w.Append(1, Payload(1));
    w.Append(2, big);
    w.Append(3, Payload(3));
    w.Sync();
  }
  const std::string path = t.File("wal") + "/" + SegmentName(1);
  const std::string data = ReadAll(path);
  auto offs = RecordOffsets(data);
  auto t0 = std::chrono::steady_clock::now();
  WriteAll(path, data.substr(0, offs[2] - 100));  // record 2 torn
  LogContents log = ReadLog(t.File("wal"), 0);
  REQUIRE(log.torn_tail);
  CHECK(log.torn_tail->offset == offs[1]);
  CheckRecords(log, 1, 1);
  std::string d = data;
  d[offs[1] + 1000] ^= 1;  // record 2 damaged, record 3 whole after it: corruption
  WriteAll(path, d);
  std::string msg = CorruptionOf(t.File("wal"), 0);
  CHECK_THAT(msg, Catch::Contains(fmt::format("offset {}:", offs[1])));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(secs < 2.0);
}

}  // namespace
}  // namespace fld::wal
