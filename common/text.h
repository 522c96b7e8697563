#pragma once

// Small text helpers: hex, printf into a string, UTC times, UTF-8, JSON, XML.

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace ebprof {

inline std::string hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

// "2026-11-30 04:20:28 UTC" for a CLOCK_REALTIME time in nanoseconds.
inline std::string utc_time(uint64_t realtime_ns) {
  time_t t = static_cast<time_t>(realtime_ns / 1'000'000'000);
  tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

// printf into a string, for short fixed-layout fields (names are streamed).
template <typename... Args>
std::string string_printf(const char* fmt, Args... args) {
  char buf[256];
  int n = std::snprintf(buf, sizeof buf, fmt, args...);
  if (n < static_cast<int>(sizeof buf))
    return buf;
  std::string out(n, '\0');
  std::snprintf(out.data(), n + 1, fmt, args...);
  return out;
}

// perf's quantities: a positive whole number and its unit, "60s", "5m",
// "1h", "1d" (nanoseconds) and "512B", "100K", "100M", "2G" (bytes);
// nullopt for anything else, an overflow included.
std::optional<uint64_t> parse_duration_ns(std::string_view text);
std::optional<uint64_t> parse_size(std::string_view text);

// "1 binary", "2 binaries": a count with its noun.
inline std::string count_of(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Raw bytes (a build-id) as lowercase hex; "-" when there are none.
inline std::string hex_bytes(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes)
    out += string_printf("%02x", c);
  return out.empty() ? "-" : out;
}

// proto3 strings, JSON and XML must be UTF-8, but comms and symbol names are
// whatever bytes a program chose: invalid sequences become '?'.
std::string valid_utf8(std::string_view s);

// `s` as a JSON string literal, quotes included, safe inside HTML.
std::string json_string(std::string_view s);

// `s` for XML text or an attribute value.
std::string xml_escape(std::string_view s);

}  // namespace ebprof
