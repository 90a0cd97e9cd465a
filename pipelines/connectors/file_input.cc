#include "pipelines/connectors/file_input.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/common/error.h"

namespace fld {

namespace {

using Json = nlohmann::json;

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
  if (fd_ > 0) ::close(fd_);
}

void LineReader::Reset(int fd, uint64_t offset, std::string display_path) {
  if (fd_ > 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
  path_ = std::move(display_path);
  if (buf_.size() < kInitialBuffer) buf_.resize(kInitialBuffer);
  mark_ = pos_ = end_ = 0;
  base_ = offset;
  eof_ = false;
}

bool LineReader::Fill() {
  if (eof_) return false;
  if (mark_ > 0) {
    // Drop what precedes the mark; nothing can rewind there any more.
    std::memmove(buf_.data(), buf_.data() + mark_, end_ - mark_);
    base_ += mark_;
    pos_ -= mark_;
    end_ -= mark_;
    mark_ = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
  for (;;) {
    ssize_t r = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw Error(ErrorKind::kIo, fmt::format("{}: {}", path_, std::strerror(errno)));
    if (r == 0) {
      eof_ = true;
      return false;
    }
    end_ += static_cast<size_t>(r);
    return true;
  }
}

bool LineReader::NextLine(std::string_view* line) {
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
      return true;
    }
    scanned = end_ - pos_;
    if (!Fill()) {
      if (pos_ == end_) return false;
      size_t len = end_ - pos_;
      if (buf_[end_ - 1] == '\r') --len;
      *line = std::string_view(buf_.data() + pos_, len);
      pos_ = end_;
      return true;
    }
  }
}

bool LineReader::AtEof() {
  if (pos_ < end_) return false;
  if (eof_) return true;
  return !Fill() && pos_ >= end_;
}

// ---- FileInputConnector ----

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
      json_(schema, options_.update_format) {
  if (options_.max_batch_size == 0) options_.max_batch_size = 1;
  int fd = 0;
  if (!IsStdin()) {
    fd = ::open(options_.resolved_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      throw Error(ErrorKind::kUsage,
                  fmt::format("file_input: cannot open '{}': {}", options_.resolved_path, std::strerror(errno)));
    }
  }
  reader_.Reset(fd, 0, options_.path);
}

Batch FileInputConnector::Read(size_t max_records) {
  BatchBuilder out(types_);
  if (at_end_) return out.Finish();
  const bool csv = options_.format == Format::kCsv;
  reader_.Mark();
  uint64_t line = line_;
  size_t n = 0;
  FormatError error;
  std::string_view text;
  while (n < max_records) {
    if (!reader_.NextLine(&text)) break;
    const uint64_t record_line = ++line;
    if (record_line == 1 && text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte order mark
    if (csv && CsvInsideQuotes(text)) {
      // A quoted field holds a line break: the record goes on.
      record_.assign(text);
      while (CsvInsideQuotes(record_) && reader_.NextLine(&text)) {
        ++line;
        record_.push_back('\n');
        record_.append(text);
      }
      text = record_;
    }
    if (csv && options_.headers && record_line == 1) continue;
    if (Blank(text)) continue;
    bool ok = csv ? csv_.Parse(text, &out, &error) : json_.Parse(text, &out, &error);
    if (!ok) {
      reader_.Rewind();
      throw Error(ErrorKind::kRuntime,
                  fmt::format("{}:{}:{}: {}", options_.path, record_line, error.column, error.message));
    }
    ++n;
  }
  offset_ = reader_.offset();
  line_ = line;
  records_ += n;
  at_end_ = reader_.AtEof();
  return out.Finish();
}

Json FileInputConnector::Position() const {
  return Json{{"offset", offset_}, {"line", line_}};
}

void FileInputConnector::Seek(const Json& position) {
  auto get = [&](const char* key) -> uint64_t {
    if (!position.is_object() || !position.contains(key) || !position[key].is_number_integer() ||
        (!position[key].is_number_unsigned() && position[key].get<int64_t>() < 0)) {
      throw Error(ErrorKind::kUsage,
                  fmt::format("file_input({}): cannot seek to {}: expected {{\"offset\": N, \"line\": N}}",
                              options_.path, position.dump()));
    }
    return position[key].get<uint64_t>();
  };
  const uint64_t offset = get("offset"), line = get("line");
  if (IsStdin()) {
    if (offset == offset_ && line == line_) return;
    throw Error(ErrorKind::kUsage,
                fmt::format("file_input: standard input cannot seek to offset {} (it is at {})", offset, offset_));
  }
  if (::lseek(reader_.fd(), static_cast<off_t>(offset), SEEK_SET) < 0)
    throw Error(ErrorKind::kIo, fmt::format("{}: {}", options_.path, std::strerror(errno)));
  reader_.Reset(reader_.fd(), offset, options_.path);
  offset_ = offset;
  line_ = line;
  at_end_ = false;
}

std::string FileInputConnector::Describe() const {
  return fmt::format("file_input({}, {})", options_.path, options_.format == Format::kCsv ? "csv" : "json");
}

std::unique_ptr<InputConnector> MakeFileInput(const Json& transport_config, const Json& format, const Schema& schema,
                                              const ConnectorContext& ctx, std::optional<size_t> max_batch_size) {
  const std::string prefix = Prefix(ctx.where, "file_input");
  auto fail = [&](const std::string& msg) { throw Error(ErrorKind::kUsage, prefix + msg); };
  FileInputConnector::Options o;
  if (!transport_config.is_object()) fail("the transport config must be an object with a 'path'");
  for (auto it = transport_config.begin(); it != transport_config.end(); ++it)
    if (it.key() != "path") fail(fmt::format("unknown key '{}' in the transport config (expected path)", it.key()));
  if (!transport_config.contains("path") || !transport_config["path"].is_string() ||
      transport_config["path"].get<std::string>().empty())
    fail("the transport config needs a 'path' (a string; \"-\" for standard input)");
  o.path = transport_config["path"].get<std::string>();
  o.resolved_path = ResolvePath(ctx.base_dir, o.path);
  if (o.path == "-") o.path = "<stdin>";
  o.max_batch_size = max_batch_size.value_or(FileInputConnector::kDefaultMaxBatchSize);

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
  try {
    return std::make_unique<FileInputConnector>(std::move(o), schema);
  } catch (const Error& e) {
    throw Error(e.kind(), ctx.where.empty() ? e.what() : ctx.where + ": " + e.what());
  }
}

}  // namespace fld
