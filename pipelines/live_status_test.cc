#include "pipelines/live_status.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "core/common/temp_dir.h"

namespace fld {

TEST_CASE("a new live status writer keeps the previous run's figures until its first update", "[live_status]") {
  TempDir dir;
  CHECK_FALSE(ReadLiveStatus(dir.path()).has_value());  // no file
  int64_t first_started = 0;
  {
    LiveStatusWriter first(dir.path());
    CHECK_FALSE(ReadLiveStatus(dir.path()).has_value());  // created, nothing published yet
    first.Update([&](LiveStatus& ls) {
      ls.step = 42;
      ls.total_processed_records = 1000;
      ls.checkpoints = 3;
      ls.updated_unix_ms = ls.started_unix_ms + 5000;
      ls.num_connectors = 1;
      ls.connectors[0].records = 1000;
      ls.samples[0] = 7;
    });
    auto a = ReadLiveStatus(dir.path());
    REQUIRE(a.has_value());
    CHECK(a->pid == ::getpid());
    CHECK(a->started_unix_ms > 0);
    first_started = a->started_unix_ms;
  }
  const LiveStatus before = *ReadLiveStatus(dir.path());

  // A second process starts and is refused before it publishes: nothing changes.
  {
    LiveStatusWriter refused(dir.path());
    auto b = ReadLiveStatus(dir.path());
    REQUIRE(b.has_value());
    CHECK(b->step == 42);
    CHECK(b->total_processed_records == 1000);
    CHECK(b->checkpoints == 3);
    CHECK(b->started_unix_ms == first_started);
    CHECK(b->updated_unix_ms == first_started + 5000);
    CHECK(std::memcmp(&*b, &before, sizeof(LiveStatus)) == 0);
  }

  // A third one publishes: its own start, zero counters but what it sets, never a negative uptime.
  LiveStatusWriter third(dir.path());
  third.Update([](LiveStatus& ls) { ls.step = 1; });
  auto c = ReadLiveStatus(dir.path());
  REQUIRE(c.has_value());
  CHECK(c->step == 1);
  CHECK(c->total_processed_records == 0);
  CHECK(c->checkpoints == 0);
  CHECK(c->num_connectors == 0);
  CHECK(c->connectors[0].records == 0);
  CHECK(c->samples[0] == 0);
  CHECK(c->started_unix_ms >= first_started);
  CHECK(c->updated_unix_ms >= c->started_unix_ms);
  CHECK(c->seq > before.seq);
  CHECK(c->seq % 2 == 0);
  // Later updates keep what earlier ones set.
  third.Update([](LiveStatus& ls) { ls.checkpoints = 1; });
  c = ReadLiveStatus(dir.path());
  REQUIRE(c.has_value());
  CHECK(c->step == 1);
  CHECK(c->checkpoints == 1);
}

TEST_CASE("a writer that died mid-update leaves no readable status until the next one publishes", "[live_status]") {
  TempDir dir;
  {
    LiveStatusWriter w(dir.path());
    w.Update([](LiveStatus& ls) { ls.step = 9; });
  }
  // Make the sequence counter odd, as a process killed inside Update leaves it.
  const std::string path = dir.path() + "/status";
  int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  uint64_t seq = 0;
  REQUIRE(::pread(fd, &seq, sizeof seq, offsetof(LiveStatus, seq)) == sizeof seq);
  seq += 1;
  REQUIRE(::pwrite(fd, &seq, sizeof seq, offsetof(LiveStatus, seq)) == sizeof seq);
  ::close(fd);
  CHECK_FALSE(ReadLiveStatus(dir.path()).has_value());

  LiveStatusWriter next(dir.path());
  next.Update([](LiveStatus& ls) { ls.step = 2; });
  auto s = ReadLiveStatus(dir.path());
  REQUIRE(s.has_value());
  CHECK(s->step == 2);
  CHECK(s->pid == ::getpid());
}

}  // namespace fld
