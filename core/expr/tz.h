// Time zones for CONVERT_TIMEZONE: IANA zones read from the system's compiled time-zone files
// (TZif, RFC 8536: the 64-bit transitions of version 2+ files, the 32-bit ones of version 1, and
// the POSIX-TZ footer string such as "CET-1CEST,M3.5.0,M10.5.0/3" for instants after the last
// transition), and fixed offsets written as Feldera writes them: +HH, +HH:MM or +HH:MM:SS (or -).
//
// Zone files are looked up under $TZDIR, else /usr/share/zoneinfo, by their exact
// (case-sensitive) IANA name ("Europe/Paris", "UTC", "US/Eastern"). A name that is not a TZif
// file there, or names a directory outside the IANA tree (posix/, right/), is no zone. Loaded
// zones (and unknown names) are cached for the life of the process.
//
// Instants and local times are seconds since 1970-01-01 00:00:00 (UTC, respectively on the
// local wall clock). Before the first transition of a file the zone's first time type applies
// (RFC 8536), usually its local mean time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fld {

// A POSIX-TZ rule: standard time, and optionally daylight time with the dates it starts and ends.
struct PosixTzRule {
  // A date in a year: Jn (day 1..365, February 29 never counted), n (day 0..365), or Mm.w.d
  // (day d, 0 = Sunday, of week w, 5 = the last, of month m); `time`: seconds after that day's
  // local midnight (may be negative or past 24 hours).
  struct Date {
    enum class Kind : uint8_t { kJulian1, kJulian0, kMonthWeekDay } kind = Kind::kMonthWeekDay;
    int day = 0, month = 0, week = 0;
    int32_t time = 7200;
  };
  int32_t std_offset = 0;  // seconds east of UTC (the POSIX string counts west)
  bool has_dst = false;
  int32_t dst_offset = 0;
  Date start, end;  // daylight time starts (in standard time) and ends (in daylight time)

  // Parses a POSIX-TZ string ("EST5EDT,M3.2.0,M11.1.0", "<+0330>-3:30", "CET-1CEST,M3.5.0,M10.5.0/3").
  static std::optional<PosixTzRule> Parse(std::string_view s);
  // The UTC offset in seconds at the instant t.
  int32_t OffsetAt(int64_t t) const;
};

class TimeZone {
 public:
  // A fixed offset (seconds east of UTC).
  static TimeZone Fixed(int32_t offset);
  // Reads the contents of a TZif file; nullopt when they are not one.
  static std::optional<TimeZone> FromTzif(std::string_view data);

  // The UTC offset in seconds at the instant t.
  int32_t OffsetAt(int64_t t) const;
  // The instants whose local time is `local`, earliest first: none (skipped by a forward
  // transition), one, or two (a backward transition repeats it).
  std::vector<int64_t> FromLocal(int64_t local) const;

 private:
  std::vector<int64_t> transitions_;   // instants, ascending
  std::vector<int32_t> offsets_;       // the offset from transitions_[i] on
  int32_t initial_ = 0;                // before the first transition (or always, when fixed)
  std::optional<PosixTzRule> footer_;  // after the last transition
};

// Feldera's fixed-offset syntax: [+-]HH[:MM[:SS]], hours 0..23, minutes and seconds 0..59.
std::optional<int32_t> ParseFixedOffset(std::string_view s);
// The zone named `name` (an IANA name, else a fixed offset), or null when there is none. The
// result lives as long as the process.
const TimeZone* FindTimeZone(std::string_view name);
// CONVERT_TIMEZONE(from, to, ts) on TIMESTAMP microseconds: ts read as local time in `from`
// then written as local time in `to`; nullopt when ts is no local time of `from` or is one twice
// (skipped or repeated by a transition), as Feldera does.
std::optional<int64_t> ConvertTimeZone(const TimeZone& from, const TimeZone& to, int64_t ts_micros);

}  // namespace fld
