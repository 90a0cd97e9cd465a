#include "pipelines/live_status.h"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/interprocess/file_mapping.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <thread>

namespace fld {

namespace {
std::string StatusPath(const std::string& dir) {
  return dir + "/status";
}
}  // namespace

LiveStatusWriter::LiveStatusWriter(const std::string& storage_dir) {
  // Status is best effort: a pipeline never fails because of it.
  try {
    const std::string path = StatusPath(storage_dir);
    {
      std::filebuf fb;  // create (or keep) the file and give it its size
      fb.open(path, std::ios::in | std::ios::out | std::ios::app | std::ios::binary);
    }
    if (::truncate(path.c_str(), sizeof(LiveStatus)) != 0) return;
    mapping_ = std::make_unique<bip::file_mapping>(path.c_str(), bip::read_write);
    region_ = std::make_unique<bip::mapped_region>(*mapping_, bip::read_write, 0, sizeof(LiveStatus));
    s_ = static_cast<LiveStatus*>(region_->get_address());
    started_unix_ms_ =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
  } catch (const bip::interprocess_exception&) {
    s_ = nullptr;
  }
}

LiveStatusWriter::~LiveStatusWriter() = default;

void LiveStatusWriter::Claim() {
  LiveStatus fresh;
  fresh.pid = ::getpid();
  fresh.started_unix_ms = started_unix_ms_;
  fresh.updated_unix_ms = started_unix_ms_;
  // Everything but seq, which readers load concurrently (Update holds it odd meanwhile).
  static_assert(offsetof(LiveStatus, seq) == sizeof(uint64_t) && offsetof(LiveStatus, pid) == 2 * sizeof(uint64_t));
  auto* dst = reinterpret_cast<char*>(s_);
  const auto* src = reinterpret_cast<const char*>(&fresh);
  std::memcpy(dst, src, offsetof(LiveStatus, seq));
  std::memcpy(dst + offsetof(LiveStatus, pid), src + offsetof(LiveStatus, pid),
              sizeof(LiveStatus) - offsetof(LiveStatus, pid));
  claimed_ = true;
}

std::optional<LiveStatus> ReadLiveStatus(const std::string& storage_dir) {
  const std::string path = StatusPath(storage_dir);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || static_cast<size_t>(st.st_size) < sizeof(LiveStatus)) return std::nullopt;
  try {
    bip::file_mapping mapping(path.c_str(), bip::read_only);
    bip::mapped_region region(mapping, bip::read_only, 0, sizeof(LiveStatus));
    auto* s = static_cast<LiveStatus*>(region.get_address());
    std::atomic_ref<uint64_t> seq(s->seq);
    for (int attempt = 0; attempt < 1000; ++attempt) {
      uint64_t a = seq.load(std::memory_order_acquire);
      if (a & 1) {
        std::this_thread::yield();
        continue;
      }
      LiveStatus copy;
      std::memcpy(static_cast<void*>(&copy), static_cast<const void*>(s), sizeof(LiveStatus));
      std::atomic_thread_fence(std::memory_order_acquire);
      if (seq.load(std::memory_order_acquire) == a && copy.magic == LiveStatus::kMagic) return copy;
    }
  } catch (const bip::interprocess_exception&) {
  }
  return std::nullopt;
}

uint64_t CurrentRssBytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace fld
