#include "wal/spill.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "core/common/byte_order.h"
#include "core/common/error.h"
#include "core/common/serialize.h"

namespace fld {

// A run's file: records of (varint length, encoding, 8-byte weight), nothing else; its row and
// byte counts stay in memory and the reader checks that the file holds exactly them.

namespace {

constexpr size_t kBuffer = size_t{1} << 20;

class File {
 public:
  File(const std::string& path, int flags) : path_(path) {
    fd_ = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd_ < 0) Fail(ErrorKind::kIo, "{}: cannot open a spill file: {}", path, std::strerror(errno));
  }
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  void WriteAll(const char* p, size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) Fail(ErrorKind::kIo, "{}: cannot write a spill file: {}", path_, std::strerror(errno));
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  // Reads up to n bytes; 0 at the end of the file.
  size_t Read(char* p, size_t n) {
    for (;;) {
      const ssize_t r = ::read(fd_, p, n);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) Fail(ErrorKind::kIo, "{}: cannot read a spill file: {}", path_, std::strerror(errno));
      return static_cast<size_t>(r);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// Reads a run's records in order through a buffer.
class RunReader {
 public:
  RunReader(const std::string& path, uint64_t rows, uint64_t bytes)
      : file_(path, O_RDONLY), path_(path), rows_(rows), bytes_(bytes) {}
  bool Next(std::string* enc, int64_t* weight) {
    if (taken_ == rows_) {
      if (read_ != bytes_ || Fill(1)) Short();
      return false;
    }
    Fill(10);  // a varint is at most 10 bytes (the file may end sooner: checked below)
    const char* p = buf_.data() + pos_;
    uint64_t len = 0;
    if (!GetVarintChecked(&p, buf_.data() + buf_.size(), &len)) Short();
    pos_ = static_cast<size_t>(p - buf_.data());
    if (len > bytes_ || !Fill(len + 8)) Short();
    enc->append(buf_, pos_, len);
    std::memcpy(weight, buf_.data() + pos_ + len, 8);
    pos_ += len + 8;
    ++taken_;
    return true;
  }

 private:
  // Makes at least n unread bytes available, or as many as the file has left; false when that
  // is none.
  bool Fill(uint64_t n) {
    if (buf_.size() - pos_ >= n) return true;
    buf_.erase(0, pos_);
    pos_ = 0;
    while (buf_.size() < n) {
      const size_t have = buf_.size();
      buf_.resize(have + std::max<size_t>(kBuffer, n - have));
      const size_t got = file_.Read(buf_.data() + have, buf_.size() - have);
      buf_.resize(have + got);
      read_ += got;
      if (got == 0) break;
    }
    return buf_.size() >= n;
  }
  [[noreturn]] void Short() {
    Fail(ErrorKind::kIo, "{}: a spill file does not hold the {} rows in {} bytes written to it (it was changed)", path_,
         rows_, bytes_);
  }
  File file_;
  std::string path_;
  uint64_t rows_, bytes_;
  uint64_t taken_ = 0, read_ = 0;
  std::string buf_;
  size_t pos_ = 0;
};

}  // namespace

RowPull ConsolidatedPull(std::span<const Batch> parts, const ConsolidatedRows& rows) {
  return [parts, &rows, k = size_t{0}](std::string* enc, int64_t* weight) mutable {
    const size_t n = rows.rows.size();
    if (k == n) return false;
    // The rows are in encoding order, scattered over the parts: fetch some ahead.
    constexpr size_t kAhead = 12;
    if (k + kAhead < n) PrefetchRow(parts[rows.rows[k + kAhead].part], rows.rows[k + kAhead].row);
    EncodeRow(enc, parts[rows.rows[k].part], rows.rows[k].row);
    *weight = rows.weights[k];
    ++k;
    return true;
  };
}

RowPull MergeSorted(std::vector<RowPull> sources) {
  if (sources.empty()) return [](std::string*, int64_t*) { return false; };
  if (sources.size() == 1) return std::move(sources[0]);
  // A tree of losers: each inner node holds the source that lost the match there, node 0 the
  // overall winner. When the winner moves on, only the matches on its path are replayed: one
  // comparison per level, where a heap's sift-down makes two.
  struct State {
    std::vector<RowPull> src;
    std::vector<std::string> cur;  // each source's next row
    std::vector<uint64_t> hi, lo;  // its BytePrefix (first 16 bytes as two numbers)
    std::vector<int64_t> w;
    std::vector<char> done;      // the source has no next row (it loses every match)
    std::vector<uint32_t> tree;  // sources: [0] the winner, [1, k) the losers; leaves at k + i
    std::string key;

    // Most rows differ in their first 16 bytes: integer comparisons, not a memcmp call.
    bool Less(uint32_t a, uint32_t b) const {
      if (done[a] || done[b]) return !done[a];
      if (hi[a] != hi[b]) return hi[a] < hi[b];
      if (lo[a] != lo[b]) return lo[a] < lo[b];
      return cur[a] < cur[b];
    }
    void Pull(uint32_t i) {
      cur[i].clear();
      done[i] = !src[i](&cur[i], &w[i]);
      if (!done[i]) BytePrefix(cur[i], &hi[i], &lo[i]);
    }
    void Build() {
      const size_t k = src.size();
      std::vector<uint32_t> winner(2 * k);
      for (size_t i = 0; i < k; ++i) winner[k + i] = static_cast<uint32_t>(i);
      tree.assign(k, 0);
      for (size_t n = k - 1; n >= 1; --n) {
        const uint32_t a = winner[2 * n], b = winner[2 * n + 1];
        const bool b_wins = Less(b, a);
        winner[n] = b_wins ? b : a;
        tree[n] = b_wins ? a : b;
      }
      tree[0] = winner[1];
    }
    // The winner moved on: its matches up to the root are played again.
    void AdvanceWinner() {
      uint32_t s = tree[0];
      Pull(s);
      for (size_t n = (src.size() + s) / 2; n >= 1; n /= 2)
        if (Less(tree[n], s)) std::swap(tree[n], s);
      tree[0] = s;
    }
  };
  auto s = std::make_shared<State>();
  const size_t k = sources.size();
  s->src = std::move(sources);
  s->cur.resize(k);
  s->hi.resize(k);
  s->lo.resize(k);
  s->w.resize(k);
  s->done.resize(k);
  for (uint32_t i = 0; i < k; ++i) s->Pull(i);
  s->Build();
  return [s](std::string* enc, int64_t* weight) {
    while (!s->done[s->tree[0]]) {
      // The smallest row, taken (not copied) from its source, which then moves on; every other
      // source whose next row is the same adds its weight and moves on too.
      uint32_t t = s->tree[0];
      const uint64_t hi = s->hi[t], lo = s->lo[t];
      s->key.swap(s->cur[t]);
      int64_t sum = s->w[t];
      s->AdvanceWinner();
      for (t = s->tree[0]; !s->done[t] && s->hi[t] == hi && s->lo[t] == lo && s->cur[t] == s->key; t = s->tree[0]) {
        sum += s->w[t];
        s->AdvanceWinner();
      }
      if (sum != 0) {
        if (enc->empty())
          enc->swap(s->key);
        else
          enc->append(s->key);
        *weight = sum;
        return true;
      }
    }
    return false;
  };
}

namespace {

// PullAhead's blocks, filled by its thread and emptied by the caller.
struct AheadBlock {
  std::string bytes;          // the rows' encodings, one after another
  std::vector<uint32_t> end;  // where each ends in bytes
  std::vector<int64_t> weight;
  size_t next = 0;  // the next row the caller takes
  void Clear() {
    bytes.clear();
    end.clear();
    weight.clear();
    next = 0;
  }
};

class Ahead {
 public:
  explicit Ahead(RowPull source) : source_(std::move(source)) {
    thread_ = std::thread([this] { Produce(); });
  }
  ~Ahead() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Ahead(const Ahead&) = delete;
  Ahead& operator=(const Ahead&) = delete;

  bool Next(std::string* enc, int64_t* weight) {
    while (!cur_ || cur_->next == cur_->end.size()) {
      std::unique_lock<std::mutex> l(mu_);
      if (cur_) free_.push_back(std::move(cur_));
      cv_.notify_all();
      cv_.wait(l, [&] { return !full_.empty() || done_; });
      if (full_.empty()) {
        if (error_) std::rethrow_exception(error_);
        return false;
      }
      cur_ = std::move(full_.front());
      full_.pop_front();
    }
    AheadBlock& b = *cur_;
    const size_t begin = b.next == 0 ? 0 : b.end[b.next - 1];
    enc->append(b.bytes, begin, b.end[b.next] - begin);
    *weight = b.weight[b.next];
    ++b.next;
    return true;
  }

 private:
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  static constexpr size_t kBlocks = 4;

  void Produce() {
    std::string enc;
    int64_t w = 0;
    bool more = true;
    std::exception_ptr error;
    while (more) {
      std::unique_ptr<AheadBlock> b;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return stop_ || full_.size() + (cur_ ? 1 : 0) < kBlocks; });
        if (stop_) return;
        if (!free_.empty()) {
          b = std::move(free_.back());
          free_.pop_back();
        }
      }
      if (!b) b = std::make_unique<AheadBlock>();
      b->Clear();
      try {
        while (b->bytes.size() < kBlockBytes) {
          enc.clear();
          if (!(more = source_(&enc, &w))) break;
          b->bytes += enc;
          b->end.push_back(static_cast<uint32_t>(b->bytes.size()));
          b->weight.push_back(w);
        }
      } catch (...) {  // the rows before it are delivered first
        error = std::current_exception();
        more = false;
      }
      std::lock_guard<std::mutex> l(mu_);
      if (!b->end.empty()) full_.push_back(std::move(b));
      cv_.notify_all();
    }
    std::lock_guard<std::mutex> l(mu_);
    error_ = error;
    done_ = true;
    cv_.notify_all();
  }

  RowPull source_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<AheadBlock>> full_;
  std::vector<std::unique_ptr<AheadBlock>> free_;
  std::unique_ptr<AheadBlock> cur_;  // the block the caller reads (its thread only)
  bool stop_ = false, done_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace

RowPull PullAhead(RowPull source) {
  auto a = std::make_shared<Ahead>(std::move(source));
  return [a](std::string* enc, int64_t* weight) { return a->Next(enc, weight); };
}

std::unique_ptr<SpilledRun> SpilledRun::Write(const std::string& path, const RowPull& rows) {
  std::unique_ptr<SpilledRun> run(new SpilledRun);
  File f(path, O_WRONLY | O_CREAT | O_TRUNC);
  run->path_ = path;  // from here on the destructor deletes the file, also when writing fails
  std::string buf, enc;
  int64_t w;
  for (;;) {
    enc.clear();
    const bool more = rows(&enc, &w);
    if (more) {
      char len[10];
      buf.append(len, PutVarint(len, enc.size()));
      buf += enc;
      buf.append(reinterpret_cast<const char*>(&w), 8);
      ++run->rows_;
    }
    if (buf.size() >= kBuffer || (!more && !buf.empty())) {
      f.WriteAll(buf.data(), buf.size());
      run->bytes_ += buf.size();
      buf.clear();
    }
    if (!more) break;
  }
  return run;
}

SpilledRun::~SpilledRun() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

RowPull SpilledRun::Read() const {
  auto reader = std::make_shared<RunReader>(path_, rows_, bytes_);
  return [reader](std::string* enc, int64_t* weight) { return reader->Next(enc, weight); };
}

}  // namespace fld
