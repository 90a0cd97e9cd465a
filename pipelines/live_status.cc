#include "pipelines/live_status.h"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/interprocess/file_mapping.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <chrono>
#include <cstring>
#include <fstream>
#include <new>
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
    s_ = new (region_->get_address()) LiveStatus();
    s_->pid = ::getpid();
    s_->started_unix_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
  } catch (const bip::interprocess_exception&) {
    s_ = nullptr;
  }
}

LiveStatusWriter::~LiveStatusWriter() = default;

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
