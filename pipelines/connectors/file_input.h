// The file_input connector: reads CSV or JSON-lines records from a file (or standard input, path
// "-") and hands them to the pipeline in batches of at most max_batch_size records.
//
// Promises:
// - Records are lines (a CSV record continues over line breaks inside a quoted field). LF and CRLF
//   endings are accepted, the last line may lack one, blank lines are skipped, and with CSV
//   `headers: true` the file's first line is skipped.
// - A malformed record throws fld::Error(kRuntime, "<path>:<line>:<col>: <message>"). That Read
//   returns nothing: Position() and records() still describe the last good record, and a later
//   Read starts again at the failing record.
// - Position() is {"offset": bytes, "line": lines} just after the last record returned; Seek
//   continues exactly there (standard input cannot seek: only its current position or 0 before
//   anything was read is accepted).
// - AtEnd() once the end of the file has been reached and every record returned.
// Owned and called by the controller's thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/csv.h"
#include "formats/json.h"
#include "pipelines/connectors/connector.h"

namespace fld {

// Buffered line splitting over a file descriptor, with a mark the reader can rewind to: bytes
// after the mark are kept in memory until the next Mark().
class LineReader {
 public:
  LineReader() = default;
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Takes ownership of fd (unless it is standard input) and treats it as being at `offset`.
  void Reset(int fd, uint64_t offset, std::string display_path);
  // The next line without its terminator (LF or CRLF). The view lives until the next call.
  // Returns false at the end of the input. Throws fld::Error(kIo) when read() fails.
  bool NextLine(std::string_view* line);
  // True when no byte is left (reads ahead to find out).
  bool AtEof();
  uint64_t offset() const { return base_ + pos_; }
  void Mark() { mark_ = pos_; }
  void Rewind() { pos_ = mark_; }
  int fd() const { return fd_; }

 private:
  bool Fill();  // reads more bytes; false at EOF

  int fd_ = -1;
  std::string path_;
  std::vector<char> buf_;
  size_t mark_ = 0, pos_ = 0, end_ = 0;
  uint64_t base_ = 0;  // file offset of buf_[0]
  bool eof_ = false;
};

class FileInputConnector : public InputConnector {
 public:
  enum class Format : uint8_t { kCsv, kJson };
  struct Options {
    std::string path;           // as configured (for messages)
    std::string resolved_path;  // what is opened; "-" = standard input
    Format format = Format::kCsv;
    CsvOptions csv;
    bool headers = false;  // CSV: skip the first line
    JsonUpdateFormat update_format = JsonUpdateFormat::kInsertDelete;
    size_t max_batch_size = 10000;
  };
  static constexpr size_t kDefaultMaxBatchSize = 10000;

  // Opens the file; throws fld::Error(kUsage) when it cannot be opened.
  FileInputConnector(Options options, const Schema& schema);

  using InputConnector::Read;
  Batch Read(size_t max_records) override;
  bool AtEnd() const override { return at_end_; }
  size_t max_batch_size() const override { return options_.max_batch_size; }
  uint64_t records() const override { return records_; }
  nlohmann::json Position() const override;
  void Seek(const nlohmann::json& position) override;
  std::string Describe() const override;
  bool Replayable() const override { return !IsStdin(); }

 private:
  bool IsStdin() const { return options_.resolved_path == "-"; }

  Options options_;
  Schema schema_;
  std::vector<PhysType> types_;
  CsvParser csv_;
  JsonParser json_;
  LineReader reader_;
  std::string record_;  // a CSV record spanning lines
  uint64_t offset_ = 0, line_ = 0, records_ = 0;
  bool at_end_ = false;
};

// Builds a file_input connector from the transport config ({path}) and the format object
// ({name: csv|json, config}); errors name the key and ctx.where.
std::unique_ptr<InputConnector> MakeFileInput(const nlohmann::json& transport_config, const nlohmann::json& format,
                                              const Schema& schema, const ConnectorContext& ctx,
                                              std::optional<size_t> max_batch_size);

// "dir/path" for a relative path, the path itself when absolute, empty dir, or "-".
std::string ResolvePath(const std::string& base_dir, const std::string& path);

}  // namespace fld
