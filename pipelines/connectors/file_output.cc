#include "pipelines/connectors/file_output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "pipelines/connectors/file_input.h"  // ResolvePath

namespace fld {

namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

// What `mkdir -p dir` would do: the deepest path at or above dir that exists, and the folders to
// create below it (outermost first). `problem` says why they cannot be created, when stat tells.
struct MissingFolders {
  std::string existing{"."};
  std::vector<std::string> missing;
  std::string problem;
};

MissingFolders FindMissingFolders(const std::string& dir) {
  MissingFolders m;
  fs::path p(dir);
  while (!p.empty()) {  // (an empty path is a relative path's base: the working folder)
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      m.existing = p.string();
      if (S_ISREG(st.st_mode))
        m.problem = fmt::format("'{}' is a file, not a folder", m.existing);
      else if (!S_ISDIR(st.st_mode))
        m.problem = fmt::format("'{}' is not a folder", m.existing);
      break;
    }
    if (errno != ENOENT && errno != ENOTDIR) {  // EACCES, ELOOP, ENAMETOOLONG ...
      m.existing = p.string();
      m.problem = fmt::format("'{}': {}", m.existing, std::strerror(errno));
      break;
    }
    m.missing.push_back(p.string());
    fs::path up = p.parent_path();
    if (up == p) break;
    p = up;
  }
  std::reverse(m.missing.begin(), m.missing.end());
  return m;
}

std::string FolderOf(const std::string& path) {
  std::string dir = fs::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// fsync of a folder: makes the names in it durable.
void SyncFolder(const std::string& dir, const std::string& display) {
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || ::fsync(dfd) != 0) {
    int err = errno;
    if (dfd >= 0) ::close(dfd);
    throw Error(ErrorKind::kIo, fmt::format("{}: cannot sync the folder '{}': {}", display, dir, std::strerror(err)));
  }
  ::close(dfd);
}

// mkdir -p of the file's folder; each folder created is made durable by an fsync of its parent.
void CreateFolderOf(const std::string& path, const std::string& display) {
  const std::string dir = FolderOf(path);
  MissingFolders m = FindMissingFolders(dir);
  if (!m.problem.empty())
    throw Error(ErrorKind::kIo, fmt::format("{}: cannot create the folder '{}': {}", display, dir, m.problem));
  for (const auto& f : m.missing) {
    if (::mkdir(f.c_str(), 0755) != 0 && errno != EEXIST)
      throw Error(ErrorKind::kIo,
                  fmt::format("{}: cannot create the folder '{}': {}", display, f, std::strerror(errno)));
    SyncFolder(FolderOf(f), display);
  }
}

// Why the output file could not be created or written, as far as stat and access tell; empty
// when it can (for `fld check`: nothing is created).
std::string OutputPathProblem(const std::string& path) {
  const std::string dir = FolderOf(path);
  MissingFolders m = FindMissingFolders(dir);
  if (!m.problem.empty()) return fmt::format("cannot create the folder '{}': {}", dir, m.problem);
  if (!m.missing.empty()) {
    if (::access(m.existing.c_str(), W_OK | X_OK) != 0)
      return fmt::format("cannot create the folder '{}' in '{}': {}", dir, m.existing, std::strerror(errno));
    return "";
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return fmt::format("'{}' is a folder, not a file", path);
    if (::access(path.c_str(), W_OK) != 0) return fmt::format("cannot write '{}': {}", path, std::strerror(errno));
    return "";
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return fmt::format("cannot create '{}' in the folder '{}': {}", path, dir, std::strerror(errno));
  return "";
}

}  // namespace

FileOutputConnector::FileOutputConnector(Options options, const Schema& schema)
    : options_(std::move(options)), schema_(schema), csv_(schema), json_(schema) {
  if (options_.resolved_path == "-") {
    fd_ = 1;
  } else {
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (options_.truncate ? O_TRUNC : 0);
    CreateFolderOf(options_.resolved_path, options_.path);
    const bool existed = ::access(options_.resolved_path.c_str(), F_OK) == 0;
    fd_ = ::open(options_.resolved_path.c_str(), flags, 0644);
    if (fd_ < 0) throw Error(ErrorKind::kIo, fmt::format("{}: {}", options_.path, std::strerror(errno)));
    if (!existed) {
      // A new file is durable only once its folder is: checkpoints record its length.
      try {
        SyncFolder(FolderOf(options_.resolved_path), options_.path);
      } catch (const Error&) {
        ::close(fd_);
        fd_ = -1;
        throw;
      }
    }
    off_t end = ::lseek(fd_, 0, SEEK_END);
    if (end < 0) {
      int err = errno;
      ::close(fd_);
      fd_ = -1;
      throw Error(ErrorKind::kIo, fmt::format("{}: {}", options_.path, std::strerror(err)));
    }
    written_ = static_cast<uint64_t>(end);
  }
  if (options_.headers && options_.format == Format::kCsv && written_ == 0) csv_.AppendHeader(&buffer_);
}

FileOutputConnector::~FileOutputConnector() {
  // Buffered output is dropped, not written: the controller releases output only once the steps
  // that produced it are durable, and a resume regenerates whatever was not released.
  if (fd_ > 2) ::close(fd_);
}

void FileOutputConnector::IoFailure(const char* what) {
  const int err = errno;
  failed_ = true;
  throw Error(ErrorKind::kIo, fmt::format("{}: {}{}", options_.path, what, std::strerror(err)));
}

void FileOutputConnector::CheckUsable() const {
  if (failed_) throw Error(ErrorKind::kIo, fmt::format("{}: unusable after an earlier I/O failure", options_.path));
}

void FileOutputConnector::Write(const Batch& delta, uint64_t step) {
  CheckUsable();
  auto format = [&](size_t begin, size_t end, std::string* out) {
    for (size_t r = begin; r < end; ++r) {
      if (options_.format == Format::kCsv)
        csv_.AppendRow(delta, r, out);
      else
        json_.AppendRow(delta, r, out);
    }
  };
  // Large batches: fixed slices formatted by the pool's workers, appended in slice order (the
  // text is the same whatever the number of workers).
  constexpr size_t kSlice = 2048;
  const size_t n = delta.size();
  ThreadPool* pool = options_.pool;
  if (pool == nullptr || pool->workers() < 2 || n < 2 * kSlice) {
    format(0, n, &buffer_);
  } else {
    // The slices' strings are kept from batch to batch: no regrowth, no fresh pages.
    std::vector<std::string>& parts = slices_;
    const size_t slices = (n + kSlice - 1) / kSlice;
    if (parts.size() < slices) parts.resize(slices);
    pool->ParallelFor(slices, [&](size_t i) {
      // Into a string of this thread's (its buffer moved out and back): the slices' strings lie
      // next to each other, and appending to them in place made the threads write one cache
      // line row after row.
      std::string text = std::move(parts[i]);
      text.clear();
      format(i * kSlice, std::min(n, (i + 1) * kSlice), &text);
      parts[i] = std::move(text);
    });
    size_t bytes = buffer_.size();
    for (size_t i = 0; i < slices; ++i) bytes += parts[i].size();
    buffer_.reserve(bytes);
    for (size_t i = 0; i < slices; ++i) buffer_ += parts[i];
    if (bytes > (size_t{64} << 20)) std::vector<std::string>().swap(slices_);  // a huge batch: give it back
  }
  records_ += n;
}

void FileOutputConnector::WriteOut() {
  size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t r = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int err = errno;
      buffer_.erase(0, done);  // Position() keeps counting only what is not in the file
      errno = err;
      IoFailure("");
    }
    done += static_cast<size_t>(r);
    written_ += static_cast<uint64_t>(r);
  }
  buffer_.clear();
}

void FileOutputConnector::Flush(bool durable) {
  CheckUsable();
  WriteOut();
  if (durable && fd_ > 2 && ::fsync(fd_) != 0) IoFailure("fsync: ");
}

void FileOutputConnector::TruncateTo(uint64_t position) {
  CheckUsable();
  WriteOut();
  if (fd_ <= 2) throw Error(ErrorKind::kUsage, fmt::format("{}: standard output cannot be truncated", options_.path));
  if (position > written_)
    throw Error(ErrorKind::kRuntime, fmt::format("{}: cannot truncate to byte {}: the file has only {} bytes",
                                                 options_.path, position, written_));
  if (::ftruncate(fd_, static_cast<off_t>(position)) != 0) IoFailure("ftruncate: ");
  if (::lseek(fd_, static_cast<off_t>(position), SEEK_SET) < 0) IoFailure("lseek: ");
  written_ = position;
}

std::string FileOutputConnector::Describe() const {
  return fmt::format("file_output({}, {})", options_.path, options_.format == Format::kCsv ? "csv" : "json");
}

std::unique_ptr<OutputConnector> MakeFileOutput(const Json& transport_config, const Json& format, const Schema& schema,
                                                const ConnectorContext& ctx, bool truncate) {
  const std::string prefix = ctx.where.empty() ? "file_output: " : ctx.where + ": file_output: ";
  auto fail = [&](const std::string& msg) { throw Error(ErrorKind::kUsage, prefix + msg); };
  FileOutputConnector::Options o;
  o.truncate = truncate;
  o.pool = ctx.pool;
  if (!transport_config.is_object()) fail("the transport config must be an object with a 'path'");
  for (auto it = transport_config.begin(); it != transport_config.end(); ++it)
    if (it.key() != "path") fail(fmt::format("unknown key '{}' in the transport config (expected path)", it.key()));
  if (!transport_config.contains("path") || !transport_config["path"].is_string() ||
      transport_config["path"].get<std::string>().empty())
    fail("the transport config needs a 'path' (a string; \"-\" for standard output)");
  o.path = transport_config["path"].get<std::string>();
  o.resolved_path = ResolvePath(ctx.base_dir, o.path);
  if (o.path == "-") o.path = "<stdout>";

  if (!format.is_object() || !format.contains("name") || !format["name"].is_string())
    fail("needs a 'format' with a 'name' (csv or json)");
  const std::string name = format["name"].get<std::string>();
  const Json config = format.contains("config") && !format["config"].is_null() ? format["config"] : Json::object();
  if (!config.is_object()) fail("the format config must be an object");
  if (name == "csv") {
    o.format = FileOutputConnector::Format::kCsv;
    for (auto it = config.begin(); it != config.end(); ++it) {
      if (it.key() == "headers") {
        if (!it.value().is_boolean()) fail("csv 'headers' must be true or false");
        o.headers = it.value().get<bool>();
      } else {
        fail(fmt::format("unknown key '{}' in the csv format config (expected headers)", it.key()));
      }
    }
  } else if (name == "json") {
    o.format = FileOutputConnector::Format::kJson;
    for (auto it = config.begin(); it != config.end(); ++it) {
      if (it.key() == "update_format") {
        if (!it.value().is_string() || it.value().get<std::string>() != "insert_delete")
          fail(fmt::format("unsupported json update_format {} for output (expected insert_delete)", it.value().dump()));
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
  if (ctx.validate_only) {  // `fld check`: create, truncate or open nothing
    if (o.resolved_path != "-")
      if (std::string why = OutputPathProblem(o.resolved_path); !why.empty()) fail(why);
    return nullptr;
  }
  try {
    return std::make_unique<FileOutputConnector>(std::move(o), schema);
  } catch (const Error& e) {
    throw Error(e.kind(), ctx.where.empty() ? e.what() : ctx.where + ": " + e.what());
  }
}

}  // namespace fld
