// The time-zone reader (core/expr/tz.h): POSIX-TZ rules, TZif files built here byte by byte and
// the system's zone files. Expected offsets are the zones' published rules, checked against
// python3's zoneinfo (which reads the same files independently); CONVERT_TIMEZONE itself is
// compared with PostgreSQL and zoneinfo over many zones in tests/slt/regress/convert_timezone.test.
#include "core/expr/tz.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/types/types.h"

namespace fld {
namespace {

// Seconds since 1970-01-01 of a UTC (or local) date and time.
int64_t At(int64_t y, unsigned mo, unsigned d, int h, int mi, int s = 0) {
  return DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

void Put32(std::string* s, uint32_t v) {
  for (int i = 3; i >= 0; --i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void Put64(std::string* s, int64_t v) {
  Put32(s, static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32));
  Put32(s, static_cast<uint32_t>(v));
}

struct Type {
  int32_t utoff;
  bool dst;
};

// A TZif file: version '2' with both blocks (the 32-bit one empty but for one type), or version
// 1 with the 32-bit block only.
std::string Tzif(char version, const std::vector<int64_t>& times, const std::vector<uint8_t>& idx,
                 const std::vector<Type>& types, const std::string& footer) {
  auto header = [&](std::string* s, uint32_t timecnt, uint32_t typecnt, uint32_t charcnt) {
    s->append("TZif");
    s->push_back(version);
    s->append(15, '\0');
    for (uint32_t v : {0u, 0u, 0u, timecnt, typecnt, charcnt}) Put32(s, v);
  };
  auto block = [&](std::string* s, bool wide) {
    for (int64_t t : times) wide ? Put64(s, t) : Put32(s, static_cast<uint32_t>(t));
    for (uint8_t i : idx) s->push_back(static_cast<char>(i));
    for (const Type& t : types) {
      Put32(s, static_cast<uint32_t>(t.utoff));
      s->push_back(t.dst ? 1 : 0);
      s->push_back(0);
    }
    s->append("ZZZ", 4);  // one designation, NUL-terminated
  };
  std::string s;
  if (version == '\0') {
    header(&s, static_cast<uint32_t>(times.size()), static_cast<uint32_t>(types.size()), 4);
    block(&s, false);
    return s;
  }
  header(&s, 0, 1, 4);
  s.append(6, '\0');
  s.append("ZZZ", 4);
  header(&s, static_cast<uint32_t>(times.size()), static_cast<uint32_t>(types.size()), 4);
  block(&s, true);
  s += "\n" + footer + "\n";
  return s;
}

TEST_CASE("POSIX-TZ rules", "[tz]") {
  SECTION("northern hemisphere, transitions at 01:00 UTC") {
    auto r = PosixTzRule::Parse("CET-1CEST,M3.5.0,M10.5.0/3");
    REQUIRE(r);
    CHECK(r->std_offset == 3600);
    CHECK(r->dst_offset == 7200);
    CHECK(r->OffsetAt(At(2030, 3, 31, 0, 59, 59)) == 3600);
    CHECK(r->OffsetAt(At(2030, 3, 31, 1, 0, 0)) == 7200);
    CHECK(r->OffsetAt(At(2030, 10, 27, 0, 59, 59)) == 7200);
    CHECK(r->OffsetAt(At(2030, 10, 27, 1, 0, 0)) == 3600);
    CHECK(r->OffsetAt(At(2030, 1, 1, 0, 0)) == 3600);
    CHECK(r->OffsetAt(At(2030, 12, 31, 23, 0)) == 3600);
  }
  SECTION("southern hemisphere: daylight time across the new year") {
    auto r = PosixTzRule::Parse("AEST-10AEDT,M10.1.0,M4.1.0/3");
    REQUIRE(r);
    CHECK(r->OffsetAt(At(2031, 10, 4, 15, 59, 59)) == 36000);
    CHECK(r->OffsetAt(At(2031, 10, 4, 16, 0, 0)) == 39600);
    CHECK(r->OffsetAt(At(2031, 4, 5, 15, 59, 59)) == 39600);
    CHECK(r->OffsetAt(At(2031, 4, 5, 16, 0, 0)) == 36000);
    CHECK(r->OffsetAt(At(2031, 1, 1, 0, 0)) == 39600);
    CHECK(r->OffsetAt(At(2031, 12, 31, 23, 0)) == 39600);
    CHECK(r->OffsetAt(At(2031, 7, 1, 0, 0)) == 36000);
  }
  SECTION("quoted names, minutes, negative and past-24 transition times") {
    auto ist = PosixTzRule::Parse("<+0530>-5:30");
    REQUIRE(ist);
    CHECK(!ist->has_dst);
    CHECK(ist->OffsetAt(At(2050, 6, 1, 0, 0)) == 19800);
    auto nl = PosixTzRule::Parse("NST3:30NDT,M3.2.0,M11.1.0");
    REQUIRE(nl);
    CHECK(nl->std_offset == -12600);
    CHECK(nl->OffsetAt(At(2040, 7, 1, 0, 0)) == -9000);
    // Nuuk: -02, daylight time from the last Sunday of March at -1:00 local.
    auto nuuk = PosixTzRule::Parse("<-02>2<-01>,M3.5.0/-1,M10.5.0/0");
    REQUIRE(nuuk);
    CHECK(nuuk->OffsetAt(At(2030, 3, 31, 0, 59, 59)) == -7200);  // 2030-03-30 23:00 -02 is 01:00 UTC
    CHECK(nuuk->OffsetAt(At(2030, 3, 31, 1, 0, 0)) == -3600);
    // Israel: the Friday before the last Sunday of March at 02:00, written Thursday 26:00.
    auto il = PosixTzRule::Parse("IST-2IDT,M3.4.4/26,M10.5.0");
    REQUIRE(il);
    CHECK(il->OffsetAt(At(2030, 3, 28, 23, 59, 59)) == 7200);
    CHECK(il->OffsetAt(At(2030, 3, 29, 0, 0, 0)) == 10800);
  }
  SECTION("Julian days, the default rules, daylight time all year") {
    auto j = PosixTzRule::Parse("AAA0BBB,J60/0,J300/0");  // March 1 .. October 27 (J never counts Feb 29)
    REQUIRE(j);
    CHECK(j->OffsetAt(At(2024, 2, 29, 23, 59, 59)) == 0);
    CHECK(j->OffsetAt(At(2024, 3, 1, 0, 0, 0)) == 3600);
    auto z = PosixTzRule::Parse("AAA0BBB,59/0,299/0");  // zero-based: day 59 is Feb 29 in a leap year
    REQUIRE(z);
    CHECK(z->OffsetAt(At(2024, 2, 28, 23, 59, 59)) == 0);
    CHECK(z->OffsetAt(At(2024, 2, 29, 0, 0, 0)) == 3600);
    auto us = PosixTzRule::Parse("EST5EDT");  // no dates: the US rules
    REQUIRE(us);
    CHECK(us->OffsetAt(At(2030, 3, 10, 6, 59, 59)) == -18000);
    CHECK(us->OffsetAt(At(2030, 3, 10, 7, 0, 0)) == -14400);
    auto always = PosixTzRule::Parse("EST5EDT,0/0,J365/25");
    REQUIRE(always);
    for (int m = 1; m <= 12; ++m) CHECK(always->OffsetAt(At(2040, m, 15, 12, 0)) == -14400);
    CHECK(always->OffsetAt(At(2041, 1, 1, 4, 30)) == -14400);
  }
  SECTION("malformed strings") {
    for (const char* bad :
         {"", "C", "CET", "CET-", "CET-1CEST,M3.5.0", "CET-1CEST,M13.1.0,M10.5.0", "CET-1CEST,M3.6.0,M10.5.0",
          "CET-1CEST,J0,J10", "<+03", "CET-25", "CET-1CEST,M3.5.0,M10.5.0/168"})
      CHECK(!PosixTzRule::Parse(bad));
  }
}

TEST_CASE("TZif files built byte by byte", "[tz]") {
  // Standard +1, daylight +2 from 2000-03-26 01:00 UTC to 2000-10-29 01:00 UTC, then the footer.
  const std::vector<int64_t> times{At(1900, 1, 1, 0, 0), At(2000, 3, 26, 1, 0), At(2000, 10, 29, 1, 0)};
  const std::vector<uint8_t> idx{1, 2, 1};
  const std::vector<Type> types{{561, false}, {3600, false}, {7200, true}};
  auto z = TimeZone::FromTzif(Tzif('2', times, idx, types, "CET-1CEST,M3.5.0,M10.5.0/3"));
  REQUIRE(z);
  CHECK(z->OffsetAt(At(1899, 12, 31, 23, 59, 59)) == 561);  // type 0 before the first transition
  CHECK(z->OffsetAt(At(1900, 1, 1, 0, 0)) == 3600);
  CHECK(z->OffsetAt(At(2000, 3, 26, 0, 59, 59)) == 3600);
  CHECK(z->OffsetAt(At(2000, 3, 26, 1, 0)) == 7200);
  CHECK(z->OffsetAt(At(2000, 10, 29, 1, 0)) == 3600);
  CHECK(z->OffsetAt(At(2050, 7, 1, 0, 0)) == 7200);  // the footer
  CHECK(z->OffsetAt(At(2050, 12, 1, 0, 0)) == 3600);
  // Local 2000-03-26 02:30 is skipped, 2000-10-29 02:30 happens twice, 12:00 once.
  CHECK(z->FromLocal(At(2000, 3, 26, 2, 30)).empty());
  CHECK(z->FromLocal(At(2000, 10, 29, 2, 30)) ==
        std::vector<int64_t>{At(2000, 10, 29, 0, 30), At(2000, 10, 29, 1, 30)});
  CHECK(z->FromLocal(At(2000, 10, 29, 12, 0)) == std::vector<int64_t>{At(2000, 10, 29, 11, 0)});
  CHECK(z->FromLocal(At(2050, 3, 27, 2, 30)).empty());  // from the footer
  CHECK(z->FromLocal(At(2050, 10, 30, 2, 30)).size() == 2);
  // Version 1: 32-bit transitions, no footer (the last type stays).
  const std::vector<int64_t> times32{At(1950, 1, 1, 0, 0), times[1], times[2]};  // within 32 bits
  auto v1 = TimeZone::FromTzif(Tzif('\0', times32, idx, types, ""));
  REQUIRE(v1);
  CHECK(v1->OffsetAt(At(2000, 6, 1, 0, 0)) == 7200);
  CHECK(v1->OffsetAt(At(2050, 7, 1, 0, 0)) == 3600);
  // Not TZif, cut short, transitions out of order, a type index out of range.
  CHECK(!TimeZone::FromTzif("hello"));
  const std::string good = Tzif('2', times, idx, types, "CET-1CEST,M3.5.0,M10.5.0/3");
  CHECK(!TimeZone::FromTzif(good.substr(0, good.size() - 40)));
  CHECK(!TimeZone::FromTzif(Tzif('2', {times[1], times[0]}, {1, 2}, types, "")));
  CHECK(!TimeZone::FromTzif(Tzif('2', times, {1, 7, 1}, types, "")));
  CHECK(!TimeZone::FromTzif(Tzif('2', times, idx, types, "CET-1CEST,M3.5.0")));
}

TEST_CASE("fixed offsets as Feldera writes them", "[tz]") {
  CHECK(ParseFixedOffset("+09") == 9 * 3600);
  CHECK(ParseFixedOffset("-05") == -5 * 3600);
  CHECK(ParseFixedOffset("+09:30") == 9 * 3600 + 1800);
  CHECK(ParseFixedOffset("-02:45") == -(2 * 3600 + 45 * 60));
  CHECK(ParseFixedOffset("-01:02:03") == -3723);
  CHECK(ParseFixedOffset("+23:59:59") == 86399);
  CHECK(ParseFixedOffset("-00:00") == 0);
  for (const char* bad : {"09", "09:00", "+9", "+0900", "+09:", "+:", "+09:0", "+09:00:0", "++09:00", "+24", "+23:60",
                          "+10:00:60", "-25:00", ""})
    CHECK(!ParseFixedOffset(bad));
}

TEST_CASE("the system's zone files and TZDIR", "[tz]") {
  const TimeZone* paris = FindTimeZone("Europe/Paris");
  REQUIRE(paris);
  CHECK(paris == FindTimeZone("Europe/Paris"));         // cached
  CHECK(paris->OffsetAt(At(1900, 1, 1, 0, 0)) == 561);  // Paris mean time (zoneinfo says so too)
  CHECK(paris->OffsetAt(At(2030, 3, 31, 1, 0)) == 7200);
  const TimeZone* sydney = FindTimeZone("Australia/Sydney");
  REQUIRE(sydney);
  CHECK(sydney->OffsetAt(At(2031, 4, 5, 15, 59, 59)) == 39600);
  CHECK(sydney->OffsetAt(At(2031, 4, 5, 16, 0, 0)) == 36000);
  CHECK(FindTimeZone("UTC"));
  CHECK(FindTimeZone("+05:30"));
  CHECK(FindTimeZone("+05:30")->OffsetAt(0) == 19800);
  for (const char* bad : {"Europe/Nowhere", "europe/paris", "../zoneinfo/UTC", "/usr/share/zoneinfo/UTC",
                          "Europe//Paris", "posix/Europe/Paris", "right/UTC", "zone.tab", "Europe", "", "UTC+5"})
    CHECK(!FindTimeZone(bad));

  // TZDIR: a folder of our own with one zone.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("fld_tz_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "Test");
  {
    std::ofstream f(dir / "Test" / "Plus3", std::ios::binary);
    f << Tzif('2', {}, {}, {{10800, false}}, "<+03>-3");
  }
  const char* old = std::getenv("TZDIR");
  const std::string saved = old ? old : "";
  setenv("TZDIR", dir.c_str(), 1);
  const TimeZone* plus3 = FindTimeZone("Test/Plus3");
  if (old)
    setenv("TZDIR", saved.c_str(), 1);
  else
    unsetenv("TZDIR");
  std::filesystem::remove_all(dir);
  REQUIRE(plus3);
  CHECK(plus3->OffsetAt(At(2020, 1, 1, 0, 0)) == 10800);
}

TEST_CASE("ConvertTimeZone", "[tz]") {
  const TimeZone* ny = FindTimeZone("America/New_York");
  const TimeZone* la = FindTimeZone("America/Los_Angeles");
  REQUIRE(ny);
  REQUIRE(la);
  constexpr int64_t kUs = kMicrosPerSecond;
  // Feldera's documented example.
  CHECK(ConvertTimeZone(*ny, *la, At(2008, 3, 5, 12, 25, 29) * kUs) == At(2008, 3, 5, 9, 25, 29) * kUs);
  CHECK(ConvertTimeZone(*ny, *la, At(2008, 3, 5, 12, 25, 29) * kUs + 123456) ==
        At(2008, 3, 5, 9, 25, 29) * kUs + 123456);
  // Skipped (2024-03-10 02:30) and repeated (2024-11-03 01:30) New York times: no answer.
  CHECK(!ConvertTimeZone(*ny, *la, At(2024, 3, 10, 2, 30) * kUs));
  CHECK(!ConvertTimeZone(*ny, *la, At(2024, 11, 3, 1, 30) * kUs));
  CHECK(ConvertTimeZone(*ny, *la, At(2024, 11, 3, 2, 0) * kUs) == At(2024, 11, 3, 0, 0) * kUs);  // LA still on PDT
  // Fixed offsets; times before 1970 (negative).
  CHECK(ConvertTimeZone(*FindTimeZone("-05:00"), *FindTimeZone("-08:00"), At(1950, 1, 1, 1, 0) * kUs + 5) ==
        At(1949, 12, 31, 22, 0) * kUs + 5);
}

}  // namespace
}  // namespace fld
