#include "common/text.h"

namespace ebprof {

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
