#include "pipelines/live_status.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <new>
#include <thread>

namespace fld {

namespace {
std::string StatusPath(const std::string& dir) { return dir + "/status"; }
}  // namespace

LiveStatusWriter::LiveStatusWriter(const std::string& storage_dir) {
  const std::string path = StatusPath(storage_dir);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return;  // status is best effort: a pipeline never fails because of it
  if (::ftruncate(fd_, sizeof(LiveStatus)) != 0) return;
  void* p = ::mmap(nullptr, sizeof(LiveStatus), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) return;
  s_ = new (p) LiveStatus();
  s_->pid = ::getpid();
  s_->started_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
}

LiveStatusWriter::~LiveStatusWriter() {
  if (s_) ::munmap(s_, sizeof(LiveStatus));
  if (fd_ >= 0) ::close(fd_);
}

std::optional<LiveStatus> ReadLiveStatus(const std::string& storage_dir) {
  int fd = ::open(StatusPath(storage_dir).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < sizeof(LiveStatus)) {
    ::close(fd);
    return std::nullopt;
  }
  void* p = ::mmap(nullptr, sizeof(LiveStatus), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return std::nullopt;
  auto* s = static_cast<LiveStatus*>(p);
  std::atomic_ref<uint64_t> seq(s->seq);
  std::optional<LiveStatus> out;
  for (int attempt = 0; attempt < 1000 && !out; ++attempt) {
    uint64_t a = seq.load(std::memory_order_acquire);
    if (a & 1) {
      std::this_thread::yield();
      continue;
    }
    LiveStatus copy;
    std::memcpy(static_cast<void*>(&copy), static_cast<const void*>(s), sizeof(LiveStatus));
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq.load(std::memory_order_acquire) == a && copy.magic == LiveStatus::kMagic) out = copy;
  }
  ::munmap(p, sizeof(LiveStatus));
  return out;
}

uint64_t CurrentRssBytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace fld
