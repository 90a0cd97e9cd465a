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
// - Write() only formats into a memory buffer (the controller releases it once the steps are durable).
//   Flush(false) releases the buffer: a writer thread of this connector writes it to the file while
//   the caller goes on (the next Flush first waits for that write: one buffer in flight at most,
//   so a slow reader of standard output holds the pipeline back as before). Flush(true) waits,
//   writes what is left and fsyncs; TruncateTo and the destructor wait too (released bytes are
//   written even when the run ends on an error; unreleased ones are dropped).
// - Every system call is checked: a failure throws fld::Error(kIo, "<path>: <strerror>") from the
//   call that meets it or, for the writer's, from the next Flush or TruncateTo; the
//   connector then refuses further use (an fsync that failed is never retried: the kernel may
//   have dropped the dirty pages).
// - Position() counts the bytes written so far, buffered and in-flight ones included;
//   TruncateTo(pos) flushes and cuts the file back to pos (a position this connector reported).
// Owned and called by the controller's thread only (the writer thread is internal).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

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
  uint64_t Position() const override { return released_ + buffer_.size(); }
  void TruncateTo(uint64_t position) override;
  std::string Describe() const override;

  // For resume: cuts the file back to `position` (as Position() reported it before) and continues
  // writing there. Same as TruncateTo; named for the caller's intent.
  void ResumeAt(uint64_t position) { TruncateTo(position); }

 private:
  void WriteOut();                                // the buffer to the file, on this thread (no fsync)
  void WaitForWriter();                           // the write in flight done; throws its failure
  void WriterLoop();                              // the writer thread
  [[noreturn]] void IoFailure(const char* what);  // marks the connector failed, throws kIo with errno
  void CheckUsable() const;
  bool WriteAll(const std::string& text, size_t* done);  // write() until done or an error (errno set)

  Options options_;
  Schema schema_;
  CsvWriter csv_;
  JsonWriter json_;
  int fd_ = -1;
  std::string buffer_;
  std::vector<std::string> slices_;  // Write's per-slice text (kept: their capacity is reused)
  uint64_t written_ = 0;             // bytes in the file (the writer's while a write is in flight)
  uint64_t released_ = 0;            // bytes in the file once the write in flight is done
  uint64_t records_ = 0;
  bool failed_ = false;

  // The writer thread (started by the first Flush(false) with bytes to write) and what it shares
  // with the caller, under mu_: the caller touches in_flight_ and written_ only while !busy_.
  std::thread writer_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string in_flight_;  // released bytes being written
  bool busy_ = false;      // in_flight_ holds a write the writer has not finished
  bool stop_ = false;      // the destructor asks the writer to end
  int writer_errno_ = 0;   // the writer's failure, reported by the next call
};

// Builds a file_output connector from the transport config ({path}) and the format object
// ({name: csv|json, config}); `truncate` as in FileOutputConnector::Options.
std::unique_ptr<OutputConnector> MakeFileOutput(const nlohmann::json& transport_config, const nlohmann::json& format,
                                                const Schema& schema, const ConnectorContext& ctx,
                                                bool truncate = true);

}  // namespace fld
