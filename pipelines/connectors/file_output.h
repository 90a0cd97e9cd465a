// The file_output connector: appends a view's changes to a file as CSV (columns, then the
// weight) or JSON lines ({"insert": ...} / {"delete": ...}).
//
// Promises:
// - Opening creates the file's folder when it does not exist (like `mkdir -p`; each folder it
//   creates is made durable by an fsync of its parent) and fails with fld::Error(kIo) naming the
//   folder when it cannot (a path component is a file, permission denied).
// - Opening creates the file and, by default, truncates it (a fresh run). With truncate = false
//   (resume) the content is kept and writing continues at its end; ResumeAt(pos) cuts it back to
//   a position recorded earlier.
// - Write() only formats into a memory buffer (the controller releases it once the steps are durable);
//   Flush(durable) writes the buffer out and, when durable, fsyncs. Every system call is checked:
//   a failure throws fld::Error(kIo, "<path>: <strerror>") and the connector refuses further use
//   (an fsync that failed is never retried: the kernel may have dropped the dirty pages).
// - Position() counts the bytes written so far, buffered ones included; TruncateTo(pos) flushes
//   and cuts the file back to pos (a position this connector reported).
// Owned and called by the controller's thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/common/thread_pool.h"
#include "formats/csv.h"
#include "formats/json.h"
#include "pipelines/connectors/connector.h"

namespace fld {

class FileOutputConnector : public OutputConnector {
 public:
  enum class Format : uint8_t { kCsv, kJson };
  struct Options {
    std::string path;           // as configured (for messages)
    std::string resolved_path;  // what is opened; "-" = standard output (no truncation, no seeking)
    Format format = Format::kCsv;
    bool headers = false;        // CSV: write a header line into an empty file
    bool truncate = true;        // false: keep the content and continue at its end (resume)
    ThreadPool* pool = nullptr;  // formats large batches in parallel slices (appended in order)
  };

  FileOutputConnector(Options options, const Schema& schema);
  ~FileOutputConnector() override;

  void Write(const Batch& delta, uint64_t step) override;
  void Flush(bool durable) override;
  uint64_t records() const override { return records_; }
  uint64_t Position() const override { return written_ + buffer_.size(); }
  void TruncateTo(uint64_t position) override;
  std::string Describe() const override;

  // For resume: cuts the file back to `position` (as Position() reported it before) and continues
  // writing there. Same as TruncateTo; named for the caller's intent.
  void ResumeAt(uint64_t position) { TruncateTo(position); }

 private:
  void WriteOut();                                // the buffer to the file (no fsync)
  [[noreturn]] void IoFailure(const char* what);  // marks the connector failed, throws kIo with errno
  void CheckUsable() const;

  Options options_;
  Schema schema_;
  CsvWriter csv_;
  JsonWriter json_;
  int fd_ = -1;
  std::string buffer_;
  std::vector<std::string> slices_;  // Write's per-slice text (kept: their capacity is reused)
  uint64_t written_ = 0;             // bytes in the file
  uint64_t records_ = 0;
  bool failed_ = false;
};

// Builds a file_output connector from the transport config ({path}) and the format object
// ({name: csv|json, config}); `truncate` as in FileOutputConnector::Options.
std::unique_ptr<OutputConnector> MakeFileOutput(const nlohmann::json& transport_config, const nlohmann::json& format,
                                                const Schema& schema, const ConnectorContext& ctx,
                                                bool truncate = true);

}  // namespace fld
