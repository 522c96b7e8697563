#include "common/text.h"

#include <charconv>
#include <initializer_list>
#include <utility>

namespace ebprof {
namespace {

// N and its unit, one of `units` (a letter each, with its factor).
std::optional<uint64_t> parse_quantity(std::string_view text,
                                       std::initializer_list<std::pair<char, uint64_t>> units) {
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || n == 0 || end + 1 != text.data() + text.size())
    return std::nullopt;
  for (const auto& [unit, factor] : units)
    if (*end == unit)
      return n <= UINT64_MAX / factor ? std::optional<uint64_t>(n * factor) : std::nullopt;
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> parse_duration_ns(std::string_view text) {
  constexpr uint64_t kSecond = 1'000'000'000;
  return parse_quantity(
      text, {{'s', kSecond}, {'m', 60 * kSecond}, {'h', 3600 * kSecond}, {'d', 86400 * kSecond}});
}

std::optional<uint64_t> parse_size(std::string_view text) {
  return parse_quantity(
      text,
      {{'B', 1}, {'K', uint64_t{1} << 10}, {'M', uint64_t{1} << 20}, {'G', uint64_t{1} << 30}});
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    // RFC 3629: no overlong forms (C0, C1, E0 80-9F, F0 80-8F), no
    // surrogates (ED A0-BF), nothing past U+10FFFF (F4 90-, F5-FF).
    const size_t n = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k)
      ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
    if (ok && n > 2) {
      const auto second = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xe0 && second < 0xa0) && !(c == 0xed && second > 0x9f) &&
           !(c == 0xf0 && second < 0x90) && !(c == 0xf4 && second > 0x8f);
    }
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : valid_utf8(s)) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\')
      (out += '\\') += ch;
    // < > & too: the JSON sits inside an HTML <script> element.
    else if (c < 0x20 || c == '<' || c == '>' || c == '&')
      out += string_printf("\\u%04x", c);
    else
      out += ch;
  }
  return out + '"';
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char ch : valid_utf8(s)) {
    switch (ch) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // XML 1.0 has no place for control characters, escaped or not.
        out += static_cast<unsigned char>(ch) < 0x20 ? '?' : ch;
    }
  }
  return out;
}

}  // namespace ebprof
