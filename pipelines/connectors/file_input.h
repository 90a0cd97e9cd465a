// The file_input connector: reads CSV or JSON-lines records from a file, a growing file, a folder
// or glob of files, or standard input, and hands them to the pipeline in batches of at most
// max_batch_size records. Reading never blocks: Read returns the records available now.
//
// Sources (transport config {path, follow}):
// - a file: read to its end, then AtEnd();
// - a file with `follow: true`: like `tail -F`, never ends; lines appended later are read as
//   they arrive (a line counts once its terminator is written). A rename of the file (log
//   rotation) is noticed: the old file is read to its end, then the new file at the path from
//   its start. A file that shrinks below what was read (truncation) is an error;
// - a folder (every regular file in it whose name does not start with '.') or a glob whose last
//   component has wildcards (`incoming/*.csv`): files are taken in name order, each read once to
//   its end (write a file elsewhere and rename it in). Without `follow` the input ends when no
//   untaken file is left; with it, new files are picked up as they appear. A file that changes
//   (size or modification time) after it was taken is an error naming it;
// - standard input (path "-"): read as it arrives, ends when the pipe closes.
//
// Promises:
// - Records are lines (a CSV record continues over line breaks inside a quoted field). LF and CRLF
//   endings are accepted, the last line of a finished file may lack one, blank lines are skipped,
//   and with CSV `headers: true` each file's first line is skipped.
// - A malformed record ends the batch before it: Read returns the good records before it, and
//   the next Read throws fld::Error(kRuntime, "<path>:<line>:<col>: <message>") without taking
//   anything. Position() and records() always describe the last record returned.
// - Position() is what the journal records after a step ({"offset", "line"} plus "ino" for a
//   followed file, "file" and "files" for a folder, "pending" for standard input's bytes of an
//   unfinished line); CheckpointState() adds what Seek needs (a folder's taken files). Seek
//   continues exactly there; for standard input it continues the counters and keeps the
//   pending bytes, which the new stream continues.
// Owned and called by the controller's thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/thread_pool.h"
#include "formats/csv.h"
#include "formats/json.h"
#include "pipelines/connectors/connector.h"

namespace fld {

// Buffered, non-blocking line splitting over a file descriptor, with a mark the reader can rewind
// to: bytes after the mark are kept in memory until the next Mark().
class LineReader {
 public:
  enum class Next : uint8_t {
    kLine,  // *line holds the next line
    kWait,  // no whole line now (a pipe with nothing to read, or a followed file at its end)
    kEnd,   // the input ended
  };

  LineReader() = default;
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Takes ownership of fd (unless it is standard input) and treats it as being at `offset`.
  // With `wait_at_eof`, a regular file's end means "wait for more" (follow).
  void Reset(int fd, uint64_t offset, std::string display_path, bool wait_at_eof);
  // Bytes that come before what the descriptor gives (standard input's unfinished line).
  void Preload(std::string_view bytes);
  // The next line without its terminator (LF or CRLF); the view lives until the next call. At
  // the end of an input that ended, a last line without terminator is returned. Throws
  // fld::Error(kIo) when read() fails.
  Next NextLine(std::string_view* line);
  // From now on the end of the file is its end (a followed file that was rotated away).
  void StopWaiting() { wait_at_eof_ = false; }
  // True when the input is known to have ended with nothing left (checks without blocking).
  bool AtEof();
  uint64_t offset() const { return base_ + pos_; }
  uint64_t bytes_read() const { return base_ + end_; }
  std::string_view unconsumed() const { return {buf_.data() + pos_, end_ - pos_}; }
  void Mark() { mark_ = pos_; }
  // The bytes from the mark to the read position, and the file offset of the first: each line
  // read since the last Mark() lies in them (the view lives until the next read).
  std::string_view SinceMark() const { return {buf_.data() + mark_, pos_ - mark_}; }
  uint64_t mark_offset() const { return base_ + mark_; }
  void Rewind() { pos_ = mark_; }
  // Back to an offset() taken since the last Mark().
  void RewindTo(uint64_t offset) { pos_ = static_cast<size_t>(offset - base_); }
  int fd() const { return fd_; }
  // Not a regular file (a pipe, a terminal): poll() on fd() tells when there is more to read.
  bool pollable() const { return poll_first_; }
  void Close();

 private:
  enum class Fill : uint8_t { kData, kWait, kEof };
  Fill FillBuffer();

  int fd_ = -1;
  std::string path_;
  std::vector<char> buf_;
  size_t mark_ = 0, pos_ = 0, end_ = 0;
  uint64_t base_ = 0;  // file offset of buf_[0]
  bool eof_ = false;
  bool wait_at_eof_ = false;
  bool poll_first_ = false;  // not a regular file: poll before read so read never blocks
};

class FileInputConnector : public InputConnector {
 public:
  enum class Format : uint8_t { kCsv, kJson };
  struct Options {
    std::string path;           // as configured (for messages)
    std::string resolved_path;  // what is opened; "-" = standard input
    bool follow = false;
    Format format = Format::kCsv;
    CsvOptions csv;
    bool headers = false;  // CSV: skip each file's first line
    JsonUpdateFormat update_format = JsonUpdateFormat::kInsertDelete;
    bool append_only = false;  // a JSON delete record is an error
    size_t max_batch_size = 10000;
    ThreadPool* pool = nullptr;  // parses a batch's records in parallel slices
  };
  static constexpr size_t kDefaultMaxBatchSize = 10000;

  // Opens the file (a folder or glob: lists it); throws fld::Error(kUsage) when it cannot.
  FileInputConnector(Options options, const Schema& schema);

  using InputConnector::Read;
  Batch Read(size_t max_records) override;
  bool AtEnd() const override { return at_end_; }
  size_t max_batch_size() const override { return options_.max_batch_size; }
  uint64_t records() const override { return records_; }
  nlohmann::json Position() const override;
  nlohmann::json CheckpointState() const override;
  void Seek(const nlohmann::json& position) override;
  void ReplayTarget(const nlohmann::json& position) override;
  void ReplayedTo(const nlohmann::json& position) override;
  std::string Describe() const override;
  bool Replayable() const override { return mode_ != Mode::kStdin; }
  int WaitFd() const override;
  ~FileInputConnector() override;
  // With a pool: the reads served by parallel slices, and those a slice's parse failure handed
  // back to the serial loop (which then reports the malformed record). A rejection on input that
  // parses serially would be a slicing bug costing only time: tests check both counts.
  uint64_t parallel_reads() const { return parallel_reads_; }
  uint64_t parallel_rejects() const { return parallel_rejects_; }

 private:
  enum class Mode : uint8_t { kFile, kFollow, kStdin, kFiles };
  struct FileStamp {
    uint64_t size = 0;
    int64_t mtime_ns = 0;
  };

  // The file being read, for messages: "incoming/b.csv" in folder mode, else the configured path.
  std::string Where() const;
  std::string InFolder(const std::string& name) const;  // folder mode: a file's name for messages
  void OpenFile(const std::string& path, uint64_t offset, uint64_t line);
  // Follow: true when the path now names another file than the one being read (rotation). Throws
  // on truncation. Checks at most every few milliseconds.
  bool Rotated();
  // Folder mode: the untaken files in name order; opens the first. False when there is none.
  bool OpenNextFile();
  void CheckTakenFiles(bool force);  // a taken file that changed is an error
  void FinishFile();                 // folder mode: the current file was read to its end
  // Follow + Seek: the file with inode `ino` in the path's folder (a rotated file), or "".
  std::string FindByInode(uint64_t ino) const;
  // Follow: the path itself when it has inode `ino`, else FindByInode.
  std::string FileWithInode(uint64_t ino) const;
  // With a pool of several workers: takes the whole one-line records available in the current
  // file (up to max_records; CSV: not a record whose quotes span lines), then parses them in
  // fixed slices in parallel (CSV or JSON, a parser per slice), giving the batch the serial loop
  // would. Returns false, having consumed nothing, when there is nothing of that kind to take or
  // a record is malformed (the serial loop then reports it in order).
  bool ReadParallel(size_t max_records, Batch* out);

  Options options_;
  Mode mode_ = Mode::kFile;
  std::string folder_, pattern_;  // folder mode: where to look and the name pattern ("" = all)
  Schema schema_;
  std::vector<PhysType> types_;
  CsvParser csv_;
  JsonParser json_;
  // ReadParallel: one parser per slice (parsers keep scratch state), of the input's format, each
  // on cache lines of its own (the threads write their parsers' state row after row).
  template <class Parser>
  struct alignas(64) SliceParser {
    Parser parser;
  };
  std::vector<SliceParser<CsvParser>> csv_slice_parsers_;
  std::vector<std::pair<uint64_t, uint32_t>> spans_;  // ReadParallel's records (kept: no regrowth per batch)
  std::vector<SliceParser<JsonParser>> json_slice_parsers_;
  uint64_t parallel_reads_ = 0, parallel_rejects_ = 0;
  LineReader reader_;
  std::string record_;                      // a CSV record spanning lines
  std::string current_;                     // folder mode: the file being read ("" when none)
  std::map<std::string, FileStamp> taken_;  // folder mode: files read to their end
  std::vector<std::string> queue_;          // folder mode: untaken files of the last scan, last first
  std::string display_folder_;              // folder mode: the folder as configured, for messages
  uint64_t ino_ = 0;                        // follow: the inode of the file being read
  uint64_t replay_ino_ = 0;                 // follow, replaying: the inode the step ended in
  bool rotating_ = false;                   // follow: the path was renamed away; draining the old file
  // Follow (a file or a folder): inotify, readable when the followed file grows or a name appears
  // in its folder; -1 when the kernel gives none (then WaitFd is -1 and the controller polls).
  int notify_fd_ = -1;
  int file_watch_ = -1;  // follow: the watch on the file being read
  void WatchFolder(const std::string& folder);
  void WatchFile(const std::string& path);
  void StopWatching(const std::string& what);  // a watch failed: no descriptor, WaitFd is -1
  void DrainNotifications();
  uint64_t offset_ = 0, line_ = 0, records_ = 0;
  bool at_end_ = false;
  std::chrono::steady_clock::time_point last_check_{}, last_scan_{}, last_taken_check_{};
};

// Builds a file_input connector from the transport config ({path, follow}) and the format object
// ({name: csv|json, config}); errors name the key and ctx.where.
std::unique_ptr<InputConnector> MakeFileInput(const nlohmann::json& transport_config, const nlohmann::json& format,
                                              const Schema& schema, const ConnectorContext& ctx,
                                              std::optional<size_t> max_batch_size);

// "dir/path" for a relative path, the path itself when absolute, empty dir, or "-".
std::string ResolvePath(const std::string& base_dir, const std::string& path);

}  // namespace fld
