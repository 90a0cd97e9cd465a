#include "pipelines/connectors/file_input.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fnmatch.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>

#include "core/common/error.h"

namespace fld {

namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

constexpr size_t kInitialBuffer = 1 << 20;

std::string Prefix(const std::string& where, const char* who) {
  return where.empty() ? fmt::format("{}: ", who) : fmt::format("{}: {}: ", where, who);
}

bool Blank(std::string_view s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\r') return false;
  return true;
}

}  // namespace

// ---- LineReader ----

LineReader::~LineReader() {
  Close();
}

void LineReader::Close() {
  if (fd_ > 0) ::close(fd_);
  fd_ = -1;
}

void LineReader::Reset(int fd, uint64_t offset, std::string display_path, bool wait_at_eof) {
  if (fd_ > 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
  path_ = std::move(display_path);
  if (buf_.size() < kInitialBuffer) buf_.resize(kInitialBuffer);
  mark_ = pos_ = end_ = 0;
  base_ = offset;
  eof_ = false;
  wait_at_eof_ = wait_at_eof;
  struct stat st {};
  poll_first_ = fd >= 0 && ::fstat(fd, &st) == 0 && !S_ISREG(st.st_mode);
}

void LineReader::Preload(std::string_view bytes) {
  if (end_ + bytes.size() > buf_.size()) buf_.resize(end_ + bytes.size());
  std::memcpy(buf_.data() + end_, bytes.data(), bytes.size());
  end_ += bytes.size();
}

LineReader::Fill LineReader::FillBuffer() {
  if (eof_) return Fill::kEof;
  if (mark_ > 0) {
    // Drop what precedes the mark; nothing can rewind there any more.
    std::memmove(buf_.data(), buf_.data() + mark_, end_ - mark_);
    base_ += mark_;
    pos_ -= mark_;
    end_ -= mark_;
    mark_ = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
  if (poll_first_) {
    // A pipe or terminal: read only what is there, never wait for the writer.
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, 0);
    if (r < 0 && errno != EINTR) throw Error(ErrorKind::kIo, fmt::format("{}: {}", path_, std::strerror(errno)));
    if (r <= 0) return Fill::kWait;
  }
  for (;;) {
    ssize_t r = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Fill::kWait;
    if (r < 0) throw Error(ErrorKind::kIo, fmt::format("{}: {}", path_, std::strerror(errno)));
    if (r == 0) {
      if (wait_at_eof_) return Fill::kWait;
      eof_ = true;
      return Fill::kEof;
    }
    end_ += static_cast<size_t>(r);
    return Fill::kData;
  }
}

LineReader::Next LineReader::NextLine(std::string_view* line) {
  size_t scanned = 0;  // bytes after pos_ known to hold no '\n'
  for (;;) {
    const char* from = buf_.data() + pos_ + scanned;
    const void* nl = std::memchr(from, '\n', end_ - pos_ - scanned);
    if (nl != nullptr) {
      size_t e = static_cast<size_t>(static_cast<const char*>(nl) - buf_.data());
      size_t len = e - pos_;
      if (len > 0 && buf_[e - 1] == '\r') --len;
      *line = std::string_view(buf_.data() + pos_, len);
      pos_ = e + 1;
      return Next::kLine;
    }
    scanned = end_ - pos_;
    switch (FillBuffer()) {
      case Fill::kData:
        continue;
      case Fill::kWait:
        return Next::kWait;  // an unfinished line stays in the buffer
      case Fill::kEof:
        break;
    }
    if (pos_ == end_) return Next::kEnd;
    size_t len = end_ - pos_;
    if (buf_[end_ - 1] == '\r') --len;
    *line = std::string_view(buf_.data() + pos_, len);
    pos_ = end_;
    return Next::kLine;
  }
}

bool LineReader::AtEof() {
  if (pos_ < end_) return false;
  if (eof_) return true;
  return FillBuffer() == Fill::kEof && pos_ >= end_;
}

// ---- FileInputConnector ----

namespace {

bool HasWildcard(std::string_view s) {
  return s.find_first_of("*?[") != std::string_view::npos;
}

std::string Hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string Unhex(const std::string& hex) {
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) Fail(ErrorKind::kCorruption, "file_input: stored pending bytes are not hexadecimal");
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = val(hex[i]), lo = val(hex[i + 1]);
    if (hi < 0 || lo < 0) Fail(ErrorKind::kCorruption, "file_input: stored pending bytes are not hexadecimal");
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

}  // namespace

std::string ResolvePath(const std::string& base_dir, const std::string& path) {
  if (path == "-" || path.empty() || path.front() == '/' || base_dir.empty()) return path;
  if (base_dir.back() == '/') return base_dir + path;
  return base_dir + "/" + path;
}

FileInputConnector::FileInputConnector(Options options, const Schema& schema)
    : options_(std::move(options)),
      schema_(schema),
      types_(schema.PhysTypes()),
      csv_(schema, options_.csv),
      json_(schema, options_.update_format, options_.append_only) {
  if (options_.max_batch_size == 0) options_.max_batch_size = 1;
  const std::string& path = options_.resolved_path;
  if (path == "-") {
    mode_ = Mode::kStdin;
    reader_.Reset(0, 0, options_.path, false);
    return;
  }
  const fs::path p(path);
  const std::string last = p.filename().string();
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists && HasWildcard(p.parent_path().string()))
    throw Error(ErrorKind::kUsage, fmt::format("file_input: '{}': wildcards are allowed only in the file name, "
                                               "not in the folders above it",
                                               options_.path));
  if (!exists && HasWildcard(last)) {
    mode_ = Mode::kFiles;
    folder_ = p.parent_path().empty() ? "." : p.parent_path().string();
    pattern_ = last;
    display_folder_ = fs::path(options_.path).parent_path().string();
  } else if (exists && S_ISDIR(st.st_mode)) {
    mode_ = Mode::kFiles;
    folder_ = path;
    display_folder_ = options_.path;
  } else {
    mode_ = options_.follow ? Mode::kFollow : Mode::kFile;
    if (options_.follow) WatchFolder(p.parent_path().empty() ? "." : p.parent_path().string());
    OpenFile(path, 0, 0);
    return;
  }
  struct stat dst {};
  if (::stat(folder_.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode))
    throw Error(ErrorKind::kUsage,
                fmt::format("file_input: cannot read the folder '{}': {}", folder_,
                            ::stat(folder_.c_str(), &dst) != 0 ? std::strerror(errno) : "not a folder"));
  if (options_.follow) WatchFolder(folder_);
}

FileInputConnector::~FileInputConnector() {
  if (notify_fd_ >= 0) ::close(notify_fd_);
}

void FileInputConnector::WatchFolder(const std::string& folder) {
  notify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  // A new name: a rotated file's successor (follow) or a file arriving (folder mode).
  uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR;
  if (mode_ == Mode::kFiles) mask |= IN_CLOSE_WRITE;  // a file in the folder was written
  if (notify_fd_ < 0 || ::inotify_add_watch(notify_fd_, folder.c_str(), mask) < 0) StopWatching(folder);
}

void FileInputConnector::StopWatching(const std::string& what) {
  // No inotify (its limits, a file system without it): the controller polls instead.
  spdlog::debug("file_input: {}: no inotify watch on '{}' ({}); polling for new data", options_.path, what,
                std::strerror(errno));
  if (notify_fd_ >= 0) ::close(notify_fd_);
  notify_fd_ = file_watch_ = -1;
}

void FileInputConnector::WatchFile(const std::string& path) {
  if (notify_fd_ < 0) return;
  const int wd = ::inotify_add_watch(notify_fd_, path.c_str(), IN_MODIFY);
  if (wd < 0) return StopWatching(path);
  if (file_watch_ >= 0 && file_watch_ != wd) ::inotify_rm_watch(notify_fd_, file_watch_);
  file_watch_ = wd;
}

void FileInputConnector::DrainNotifications() {
  if (notify_fd_ < 0) return;
  alignas(struct inotify_event) char buf[4096];
  while (::read(notify_fd_, buf, sizeof buf) > 0) {
  }
}

int FileInputConnector::WaitFd() const {
  if (at_end_) return -1;
  if (mode_ != Mode::kFiles && reader_.pollable()) return reader_.fd();  // a pipe or a terminal
  return notify_fd_;
}

std::string FileInputConnector::InFolder(const std::string& name) const {
  return display_folder_.empty() ? name : (fs::path(display_folder_) / name).string();
}

std::string FileInputConnector::Where() const {
  return mode_ == Mode::kFiles ? InFolder(current_) : options_.path;
}

void FileInputConnector::OpenFile(const std::string& path, uint64_t offset, uint64_t line) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(ErrorKind::kUsage, fmt::format("file_input: cannot open '{}': {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) == 0) ino_ = st.st_ino;
  if (offset > 0 && ::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0) {
    int err = errno;
    ::close(fd);
    throw Error(ErrorKind::kIo, fmt::format("{}: {}", path, std::strerror(err)));
  }
  if (mode_ == Mode::kFollow) WatchFile(path);
  reader_.Reset(fd, offset, mode_ == Mode::kFiles ? Where() : options_.path, mode_ == Mode::kFollow);
  offset_ = offset;
  line_ = line;
}

bool FileInputConnector::Rotated() {
  auto now = std::chrono::steady_clock::now();
  if (now - last_check_ < std::chrono::milliseconds(10)) return false;
  last_check_ = now;
  struct stat fst {};
  if (::fstat(reader_.fd(), &fst) != 0) return false;
  if (static_cast<uint64_t>(fst.st_size) < reader_.bytes_read())
    Fail(ErrorKind::kCorruption,
         "{}: the file was truncated to {} bytes after {} bytes had been read; a followed file may only grow "
         "(rotate it by renaming). `fld run --reset` starts over",
         options_.path, fst.st_size, reader_.bytes_read());
  struct stat pst {};
  if (::stat(options_.resolved_path.c_str(), &pst) != 0) return false;  // renamed; the new file is not there yet
  return pst.st_ino != fst.st_ino || pst.st_dev != fst.st_dev;
}

bool FileInputConnector::OpenNextFile() {
  if (queue_.empty()) {
    auto now = std::chrono::steady_clock::now();
    if (options_.follow && now - last_scan_ < std::chrono::milliseconds(20)) return false;
    last_scan_ = now;
    std::error_code ec;
    for (fs::directory_iterator it(folder_, ec), e; !ec && it != e; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name.empty() || name[0] == '.' || taken_.count(name)) continue;
      if (!pattern_.empty() && ::fnmatch(pattern_.c_str(), name.c_str(), FNM_PERIOD) != 0) continue;
      std::error_code ec2;
      if (!it->is_regular_file(ec2)) continue;
      queue_.push_back(std::move(name));
    }
    if (ec) Fail(ErrorKind::kIo, "file_input: cannot list the folder '{}': {}", folder_, ec.message());
    std::sort(queue_.begin(), queue_.end(), std::greater<>());
  }
  while (!queue_.empty()) {
    std::string name = std::move(queue_.back());
    queue_.pop_back();
    const std::string path = (fs::path(folder_) / name).string();
    if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) {
      spdlog::warn("{}: disappeared before it was read; not read", InFolder(name));
      continue;
    }
    current_ = std::move(name);
    OpenFile(path, 0, 0);
    return true;
  }
  return false;
}

void FileInputConnector::CheckTakenFiles(bool force) {
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_taken_check_ < std::chrono::seconds(1)) return;
  last_taken_check_ = now;
  for (const auto& [name, stamp] : taken_) {
    struct stat st {};
    if (::stat((fs::path(folder_) / name).c_str(), &st) != 0) continue;  // deleted after it was read: fine
    if (static_cast<uint64_t>(st.st_size) != stamp.size || MtimeNs(st) != stamp.mtime_ns)
      Fail(ErrorKind::kCorruption,
           "{}: the file changed after it was read (size {} -> {} bytes); a file in an input folder is read once "
           "and must not change afterwards (write it elsewhere, then rename it in). `fld run --reset` starts over",
           InFolder(name), stamp.size, st.st_size);
  }
}

std::string FileInputConnector::FindByInode(uint64_t ino) const {
  fs::path dir = fs::path(options_.resolved_path).parent_path();
  std::error_code ec;
  for (fs::directory_iterator it(dir.empty() ? "." : dir, ec), e; !ec && it != e; it.increment(ec)) {
    struct stat st {};
    if (::stat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == ino) return it->path().string();
  }
  return "";
}

bool FileInputConnector::ReadParallel(size_t max_records, Batch* batch) {
  constexpr size_t kSlice = 2048;  // records per slice: fixed, so batches do not depend on workers
  ThreadPool* pool = options_.pool;
  const bool csv = options_.format == Format::kCsv;
  if (pool == nullptr || pool->workers() < 2 || max_records < 2 * kSlice || rotating_ || replay_ino_ != 0 ||
      (mode_ == Mode::kFiles && current_.empty()))
    return false;
  // Collect: where each record lies in the file (its text stays in the reader's buffer, which
  // keeps everything since the mark) and the position after it, stopping at anything the serial
  // loop handles (waiting, an end, a record spanning lines).
  reader_.Mark();
  uint64_t committed = reader_.offset();  // what offset_ says, once lines before the first record are skipped
  std::vector<std::pair<uint64_t, uint32_t>>& spans = spans_;  // per record: (file offset, length)
  spans.clear();
  std::pair<uint64_t, uint64_t> after{0, 0};  // (offset, line) after the last record
  uint64_t line = line_;
  std::string_view text;
  while (spans.size() < max_records) {
    const uint64_t before = reader_.offset();
    if (reader_.NextLine(&text) != LineReader::Next::kLine) {
      reader_.RewindTo(before);
      break;
    }
    const uint64_t record_line = ++line;
    uint64_t start = before;
    if (record_line == 1 && text.starts_with("\xEF\xBB\xBF")) {
      text.remove_prefix(3);
      start += 3;
    }
    if ((csv && CsvInsideQuotes(text)) || text.size() > UINT32_MAX) {
      reader_.RewindTo(before);
      --line;
      break;
    }
    if ((csv && options_.headers && record_line == 1) || Blank(text)) {
      if (spans.empty()) {  // skipped lines before the first record count as read
        reader_.Mark();
        line_ = line;
        offset_ = committed = reader_.offset();
        continue;
      }
      after = {reader_.offset(), line};
      continue;
    }
    spans.emplace_back(start, static_cast<uint32_t>(text.size()));
    after = {reader_.offset(), line};
  }
  const std::string_view texts = reader_.SinceMark();
  const uint64_t origin = reader_.mark_offset();
  const size_t n = spans.size();
  if (n < 2 * kSlice) {
    reader_.RewindTo(committed);  // the serial loop takes these
    return false;
  }
  const size_t slices = (n + kSlice - 1) / kSlice;
  if (csv && csv_slice_parsers_.size() < slices) csv_slice_parsers_.resize(slices, {csv_});
  while (!csv && json_slice_parsers_.size() < slices)
    json_slice_parsers_.push_back({JsonParser(schema_, options_.update_format, options_.append_only)});
  std::vector<Batch> parts(slices);
  std::vector<uint8_t> bad(slices, 0);
  pool->ParallelFor(slices, [&](size_t sl) {
    BatchBuilder b(types_);
    FormatError error;
    for (size_t r = sl * kSlice; r < std::min(n, (sl + 1) * kSlice); ++r) {
      const std::string_view text = texts.substr(spans[r].first - origin, spans[r].second);
      if (!(csv ? csv_slice_parsers_[sl].parser.Parse(text, &b, &error)
                : json_slice_parsers_[sl].parser.Parse(text, &b, &error))) {
        bad[sl] = 1;
        return;
      }
    }
    parts[sl] = b.Finish();
  });
  if (std::find(bad.begin(), bad.end(), 1) != bad.end()) {
    reader_.RewindTo(committed);  // the serial loop parses them again and reports the bad one
    ++parallel_rejects_;
    return false;
  }
  offset_ = after.first;
  line_ = after.second;
  *batch = Concat(parts);
  if (!at_end_ && n == max_records && (mode_ == Mode::kFile || mode_ == Mode::kStdin) && reader_.AtEof())
    at_end_ = true;
  records_ += n;
  ++parallel_reads_;
  return true;
}

Batch FileInputConnector::Read(size_t max_records) {
  BatchBuilder out(types_);
  if (at_end_) return out.Finish();
  DrainNotifications();  // before reading: a write after this wakes the next wait
  // The parallel slices take the one-line records they can; the serial loop goes on from where
  // they stopped (a record spanning lines, the end of the file, a wait), so the batch is the one
  // the serial loop alone would read.
  Batch parallel;
  if ((mode_ != Mode::kFiles || !current_.empty()) && ReadParallel(max_records, &parallel) &&
      (parallel.size() == max_records || at_end_))
    return parallel;
  const size_t already = parallel.size();
  if (mode_ == Mode::kFiles) {
    CheckTakenFiles(false);
    if (current_.empty() && !OpenNextFile()) {
      at_end_ = !options_.follow;
      return out.Finish();
    }
  }
  const bool csv = options_.format == Format::kCsv;
  uint64_t line = line_;
  size_t n = already;
  FormatError error;
  std::string_view text;
  while (n < max_records) {
    reader_.Mark();
    const uint64_t line_before = line;
    LineReader::Next next = reader_.NextLine(&text);
    if (next == LineReader::Next::kWait) {
      if (mode_ == Mode::kFollow && !rotating_ && replay_ino_ != 0) {
        // Replaying: the step went on in the file it names (renamed since, maybe twice).
        if (replay_ino_ == ino_) break;
        rotating_ = true;
        reader_.StopWaiting();
        continue;
      }
      if (mode_ == Mode::kFollow && !rotating_ && Rotated()) {
        // The path names a new file: read the old one to its very end, then switch.
        rotating_ = true;
        reader_.StopWaiting();
        continue;
      }
      break;
    }
    if (next == LineReader::Next::kEnd) {
      if (mode_ == Mode::kFollow && rotating_) {
        rotating_ = false;
        std::string next = replay_ino_ != 0 ? FileWithInode(replay_ino_) : options_.resolved_path;
        if (next.empty())
          Fail(ErrorKind::kCorruption,
               "{}: the rotated file a journaled step read (inode {}) is gone; `fld run --reset` "
               "starts over",
               options_.path, replay_ino_);
        OpenFile(next, 0, 0);
        line = 0;
        continue;
      }
      if (mode_ == Mode::kFiles) {
        FinishFile();
        line = 0;
        if (OpenNextFile()) continue;
        at_end_ = !options_.follow;
        break;
      }
      at_end_ = true;
      break;
    }
    const uint64_t record_line = ++line;
    if (record_line == 1 && text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte order mark
    if (csv && CsvInsideQuotes(text)) {
      // A quoted field holds a line break: the record goes on.
      record_.assign(text);
      bool unfinished = false;
      while (CsvInsideQuotes(record_)) {
        LineReader::Next more = reader_.NextLine(&text);
        if (more == LineReader::Next::kWait) {
          unfinished = true;
          break;
        }
        if (more == LineReader::Next::kEnd) break;  // ends inside quotes: the parser says so
        ++line;
        record_.push_back('\n');
        record_.append(text);
      }
      if (unfinished) {
        reader_.Rewind();
        line = line_before;
        break;
      }
      text = record_;
    }
    if (!(csv && options_.headers && record_line == 1) && !Blank(text)) {
      bool ok = csv ? csv_.Parse(text, &out, &error) : json_.Parse(text, &out, &error);
      if (!ok) {
        // The batch ends before the bad record; the next Read stops at it.
        reader_.Rewind();
        if (n > 0) break;
        throw Error(ErrorKind::kRuntime,
                    fmt::format("{}:{}:{}: {}", Where(), record_line, error.column, error.message));
      }
      ++n;
    }
    offset_ = reader_.offset();
    line_ = line;
  }
  if (!at_end_ && n == max_records && (mode_ == Mode::kFile || mode_ == Mode::kStdin) && reader_.AtEof())
    at_end_ = true;
  records_ += n - already;
  if (already == 0) return out.Finish();
  Batch parts[2] = {std::move(parallel), out.Finish()};
  return Concat(parts);
}

void FileInputConnector::FinishFile() {
  struct stat st {};
  if (::fstat(reader_.fd(), &st) != 0) Fail(ErrorKind::kIo, "{}: {}", Where(), std::strerror(errno));
  taken_[current_] = FileStamp{static_cast<uint64_t>(st.st_size), MtimeNs(st)};
  reader_.Close();
  current_.clear();
  offset_ = line_ = 0;
}

std::string FileInputConnector::FileWithInode(uint64_t ino) const {
  struct stat st {};
  if (::stat(options_.resolved_path.c_str(), &st) == 0 && st.st_ino == ino) return options_.resolved_path;
  return FindByInode(ino);
}

void FileInputConnector::ReplayTarget(const Json& position) {
  replay_ino_ =
      mode_ == Mode::kFollow && position.is_object() && position.contains("ino") && position["ino"].is_number_unsigned()
          ? position["ino"].get<uint64_t>()
          : 0;
}

void FileInputConnector::ReplayedTo(const Json& position) {
  if (!position.is_object() || !reader_.unconsumed().empty()) return;
  if (mode_ == Mode::kFollow && position.contains("ino") && position["ino"] != ino_) {
    // The original run noticed the rotation right after these records: the old file must be at
    // its end (else the comparison reports the difference).
    reader_.StopWaiting();
    if (!reader_.AtEof()) return;
    std::string next = FileWithInode(position["ino"].get<uint64_t>());
    if (next.empty()) return;  // the comparison reports the difference
    rotating_ = false;
    OpenFile(next, 0, 0);
  } else if (mode_ == Mode::kFiles && position.contains("files") && position["files"] != taken_.size() &&
             !current_.empty() && reader_.AtEof()) {
    // The original run finished this file and looked for the next one.
    FinishFile();
    std::string next = position.value("file", "");
    if (next.empty()) return;
    queue_.erase(std::remove(queue_.begin(), queue_.end(), next), queue_.end());
    current_ = next;
    OpenFile((fs::path(folder_) / current_).string(), 0, 0);
  }
}

Json FileInputConnector::Position() const {
  Json p{{"offset", offset_}, {"line", line_}};
  if (mode_ == Mode::kFollow) p["ino"] = ino_;
  if (mode_ == Mode::kFiles) {
    p["file"] = current_;
    p["files"] = taken_.size();
  }
  return p;
}

Json FileInputConnector::CheckpointState() const {
  Json p = Position();
  if (mode_ == Mode::kStdin && !reader_.unconsumed().empty()) p["pending"] = Hex(reader_.unconsumed());
  if (mode_ == Mode::kFiles) {
    Json taken = Json::array();
    for (const auto& [name, stamp] : taken_) taken.push_back({name, stamp.size, stamp.mtime_ns});
    p["taken"] = std::move(taken);
  }
  return p;
}

void FileInputConnector::Seek(const Json& position) {
  auto bad = [&]() {
    throw Error(ErrorKind::kUsage,
                fmt::format("file_input({}): cannot seek to {}: expected {{\"offset\": N, \"line\": N}}", options_.path,
                            position.dump()));
  };
  auto get = [&](const char* key) -> uint64_t {
    if (!position.is_object() || !position.contains(key) || !position[key].is_number_integer() ||
        (!position[key].is_number_unsigned() && position[key].get<int64_t>() < 0))
      bad();
    return position[key].get<uint64_t>();
  };
  const uint64_t offset = get("offset"), line = get("line");
  at_end_ = false;
  rotating_ = false;
  switch (mode_) {
    case Mode::kStdin: {
      // A new stream continues the old one: the counters go on, and bytes read but not yet taken
      // as records (stored by a checkpoint) come first.
      reader_.Reset(0, offset, options_.path, false);
      if (position.contains("pending") && position["pending"].is_string())
        reader_.Preload(Unhex(position["pending"].get<std::string>()));
      offset_ = offset;
      line_ = line;
      return;
    }
    case Mode::kFile:
      OpenFile(options_.resolved_path, offset, line);
      return;
    case Mode::kFollow: {
      const uint64_t ino =
          position.contains("ino") && position["ino"].is_number_unsigned() ? position["ino"].get<uint64_t>() : 0;
      struct stat st {};
      const bool exists = ::stat(options_.resolved_path.c_str(), &st) == 0;
      if (ino == 0 || (exists && st.st_ino == ino)) {
        OpenFile(options_.resolved_path, offset, line);
        return;
      }
      // The path names another file than the one being read: it was rotated while the pipeline
      // was down. Finish the old file (found by its inode next to the path), then the new one.
      if (std::string old = FindByInode(ino); !old.empty()) {
        spdlog::info("{}: was rotated; reading the rest of {} first", options_.path, old);
        OpenFile(old, offset, line);
        return;
      }
      if (exists && static_cast<uint64_t>(st.st_size) >= offset) {
        // The storage or the file was copied (new inode numbers): same content, same place.
        OpenFile(options_.resolved_path, offset, line);
        return;
      }
      spdlog::warn(
          "{}: was replaced since it was last read (the file read up to byte {} is gone); reading the new "
          "file from its start",
          options_.path, offset);
      OpenFile(options_.resolved_path, 0, 0);
      return;
    }
    case Mode::kFiles: {
      if (position.contains("taken")) {
        taken_.clear();
        for (const auto& t : position["taken"]) {
          if (!t.is_array() || t.size() != 3 || !t[0].is_string()) bad();
          taken_[t[0].get<std::string>()] = FileStamp{t[1].get<uint64_t>(), t[2].get<int64_t>()};
        }
      }
      queue_.clear();
      reader_.Close();
      current_ = position.contains("file") && position["file"].is_string() ? position["file"].get<std::string>() : "";
      CheckTakenFiles(true);
      if (current_.empty()) {
        offset_ = line_ = 0;
        return;
      }
      const std::string path = (fs::path(folder_) / current_).string();
      if (::access(path.c_str(), F_OK) != 0)
        Fail(ErrorKind::kCorruption, "{}: was being read (up to byte {}) and is gone; `fld run --reset` starts over",
             Where(), offset);
      OpenFile(path, offset, line);
      return;
    }
  }
}

std::string FileInputConnector::Describe() const {
  return fmt::format("file_input({}, {}{})", options_.path, options_.format == Format::kCsv ? "csv" : "json",
                     options_.follow ? ", follow" : "");
}

std::unique_ptr<InputConnector> MakeFileInput(const Json& transport_config, const Json& format, const Schema& schema,
                                              const ConnectorContext& ctx, std::optional<size_t> max_batch_size) {
  const std::string prefix = Prefix(ctx.where, "file_input");
  auto fail = [&](const std::string& msg) { throw Error(ErrorKind::kUsage, prefix + msg); };
  FileInputConnector::Options o;
  o.append_only = ctx.append_only;
  if (!transport_config.is_object()) fail("the transport config must be an object with a 'path'");
  for (auto it = transport_config.begin(); it != transport_config.end(); ++it) {
    if (it.key() == "follow") {
      if (!it.value().is_boolean()) fail("'follow' must be true or false");
      o.follow = it.value().get<bool>();
    } else if (it.key() != "path") {
      fail(fmt::format("unknown key '{}' in the transport config (expected path, follow)", it.key()));
    }
  }
  if (!transport_config.contains("path") || !transport_config["path"].is_string() ||
      transport_config["path"].get<std::string>().empty())
    fail("the transport config needs a 'path' (a string; \"-\" for standard input)");
  o.path = transport_config["path"].get<std::string>();
  o.resolved_path = ResolvePath(ctx.base_dir, o.path);
  if (o.path == "-") o.path = "<stdin>";
  if (o.path == "<stdin>" && o.follow)
    fail("'follow' does not apply to standard input (it is always read as it arrives)");
  o.max_batch_size = max_batch_size.value_or(FileInputConnector::kDefaultMaxBatchSize);
  o.pool = ctx.pool;

  if (!format.is_object() || !format.contains("name") || !format["name"].is_string())
    fail("needs a 'format' with a 'name' (csv or json)");
  const std::string name = format["name"].get<std::string>();
  const Json config = format.contains("config") && !format["config"].is_null() ? format["config"] : Json::object();
  if (!config.is_object()) fail("the format config must be an object");
  if (name == "csv") {
    o.format = FileInputConnector::Format::kCsv;
    for (auto it = config.begin(); it != config.end(); ++it) {
      if (it.key() == "headers") {
        if (!it.value().is_boolean()) fail("csv 'headers' must be true or false");
        o.headers = it.value().get<bool>();
      } else if (it.key() == "delimiter") {
        if (!it.value().is_string() || it.value().get<std::string>().size() != 1 ||
            it.value().get<std::string>() == "\"" || it.value().get<std::string>() == "\n" ||
            it.value().get<std::string>() == "\r")
          fail("csv 'delimiter' must be one character (not a quote or line break)");
        o.csv.delimiter = it.value().get<std::string>()[0];
      } else {
        fail(fmt::format("unknown key '{}' in the csv format config (expected headers, delimiter)", it.key()));
      }
    }
  } else if (name == "json") {
    o.format = FileInputConnector::Format::kJson;
    for (auto it = config.begin(); it != config.end(); ++it) {
      if (it.key() == "update_format") {
        std::string u = it.value().is_string() ? it.value().get<std::string>() : "";
        if (u == "insert_delete")
          o.update_format = JsonUpdateFormat::kInsertDelete;
        else if (u == "raw")
          o.update_format = JsonUpdateFormat::kRaw;
        else
          fail(fmt::format("unsupported json update_format {} (expected insert_delete or raw)", it.value().dump()));
      } else if (it.key() == "array") {
        if (!it.value().is_boolean() || it.value().get<bool>())
          fail("json 'array' must be false: records are one JSON object per line");
      } else {
        fail(fmt::format("unknown key '{}' in the json format config (expected update_format, array)", it.key()));
      }
    }
  } else {
    fail(fmt::format("unknown format '{}' (expected csv or json)", name));
  }
  // `fld check`: a file or folder must be there; a glob's folder is checked by the constructor,
  // which opens no file for it. Nothing is opened or read.
  const bool glob = ctx.validate_only && o.resolved_path != "-" && ::access(o.resolved_path.c_str(), F_OK) != 0 &&
                    HasWildcard(fs::path(o.resolved_path).filename().string());
  if (ctx.validate_only && !glob) {
    if (o.resolved_path != "-" && ::access(o.resolved_path.c_str(), R_OK) != 0)
      fail(fmt::format("cannot open '{}': {}", o.resolved_path, std::strerror(errno)));
    return nullptr;
  }
  try {
    if (glob) {
      FileInputConnector checked(std::move(o), schema);  // checks the folder; opens no file
      return nullptr;
    }
    return std::make_unique<FileInputConnector>(std::move(o), schema);
  } catch (const Error& e) {
    throw Error(e.kind(), ctx.where.empty() ? e.what() : ctx.where + ": " + e.what());
  }
}

}  // namespace fld
