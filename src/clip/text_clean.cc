#include "clip/text_clean.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace visalign::clip {
namespace {

#include "clip/html_entities.inc"

constexpr char32_t kReplacementChar = 0xFFFD;
constexpr char32_t kMaxCodePoint = 0x10FFFF;
constexpr int kMaxFixPasses = 16;  // ftfy repeats its fixes until nothing changes; bound the loop

// Windows-1252 bytes 0x80..0x9F; "sloppy" like ftfy: undefined bytes map to the same C1 code point.
constexpr char32_t kCp1252High[32] = {0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
                                      0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
                                      0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                                      0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

std::u32string Normalize(std::u32string_view text, bool compatibility) {
  const std::string utf8 = EncodeUtf8(text);
  utf8proc_uint8_t* out = nullptr;
  int options = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
  if (compatibility) options |= UTF8PROC_COMPAT;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()), static_cast<utf8proc_ssize_t>(utf8.size()),
                   &out, static_cast<utf8proc_option_t>(options));
  if (n < 0) return std::u32string(text);  // only on invalid input, which DecodeUtf8 already excluded
  Result<std::u32string> decoded =
      DecodeUtf8(std::string_view(reinterpret_cast<const char*>(out), static_cast<size_t>(n)));
  std::free(out);
  return decoded.ok() ? std::move(decoded).value() : std::u32string(text);
}

std::u32string NfkcChar(char32_t c) { return Normalize(std::u32string(1, c), /*compatibility=*/true); }

bool IsAsciiAlnum(char32_t c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char32_t c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char32_t c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// The HTML5 value of an entity name ("amp;" or legacy "amp"), or nullptr.
const char* LookupEntity(std::u32string_view name) {
  std::string key;
  for (char32_t c : name) {
    if (c > 0x7F) return nullptr;  // all entity names are ASCII
    key.push_back(static_cast<char>(c));
  }
  const auto* begin = std::begin(kNamedEntities);
  const auto* end = std::end(kNamedEntities);
  const auto* it = std::lower_bound(
      begin, end, key, [](const NamedEntity& e, const std::string& k) { return std::strcmp(e.name, k.c_str()) < 0; });
  if (it != end && key == it->name) return it->value;
  return nullptr;
}

std::u32string FromUtf8Literal(const char* s) {
  Result<std::u32string> r = DecodeUtf8(s);
  return r.ok() ? std::move(r).value() : std::u32string();
}

// Python html._replace_charref for a numeric reference with the given value.
std::u32string NumericCharRef(uint64_t num) {
  for (const auto& fix : kInvalidCharRefs) {
    if (fix.code == num) return FromUtf8Literal(fix.value);
  }
  if ((num >= 0xD800 && num <= 0xDFFF) || num > kMaxCodePoint) return std::u32string(1, kReplacementChar);
  for (uint32_t bad : kInvalidCodepoints) {
    if (bad == num) return {};
  }
  return std::u32string(1, static_cast<char32_t>(num));
}

bool EndsNamedRef(char32_t c) {
  return c == '\t' || c == '\n' || c == '\f' || c == ' ' || c == '<' || c == '&' || c == '#' || c == ';';
}

// Matches Python's charref pattern at text[i] == '&'. Returns the replacement and sets `consumed`
// (0 when the pattern does not match).
std::u32string ReplaceCharRef(std::u32string_view text, size_t i, size_t* consumed) {
  *consumed = 0;
  size_t j = i + 1;
  if (j < text.size() && text[j] == '#') {
    const bool hex = j + 1 < text.size() && (text[j + 1] == 'x' || text[j + 1] == 'X');
    size_t k = j + 1;
    if (hex && k + 1 < text.size() && IsHexDigit(text[k + 1])) {
      ++k;
    } else if (!(k < text.size() && IsDigit(text[k]))) {
      return {};
    }
    const int base = hex ? 16 : 10;
    uint64_t num = 0;
    const size_t digits_begin = k;
    while (k < text.size() && (hex ? IsHexDigit(text[k]) : IsDigit(text[k]))) {
      const char32_t c = text[k];
      const uint64_t d = IsDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
      num = std::min<uint64_t>(num * base + d, static_cast<uint64_t>(kMaxCodePoint) + 1);  // saturate
      ++k;
    }
    if (k == digits_begin) return {};
    if (k < text.size() && text[k] == ';') ++k;
    *consumed = k - i;
    return NumericCharRef(num);
  }
  constexpr size_t kMaxNameLength = 32;
  size_t k = j;
  while (k < text.size() && k - j < kMaxNameLength && !EndsNamedRef(text[k])) ++k;
  if (k == j) return {};
  if (k < text.size() && text[k] == ';') ++k;
  *consumed = k - i;
  const std::u32string_view s = text.substr(j, k - j);
  if (const char* v = LookupEntity(s)) return FromUtf8Literal(v);
  for (size_t len = s.size() - 1; len >= 2; --len) {
    if (const char* v = LookupEntity(s.substr(0, len))) return FromUtf8Literal(v) + std::u32string(s.substr(len));
  }
  return U"&" + std::u32string(s);
}

// ftfy.fixes.unescape_html: `&#?[0-9A-Za-z]{1,24};?` replaced only when it is a ';'-terminated
// HTML5 entity, its all-uppercase form, or a numeric reference.
std::u32string FtfyUnescape(std::u32string_view text) {
  constexpr size_t kMaxName = 24;
  std::u32string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '&') {
      out.push_back(text[i++]);
      continue;
    }
    size_t k = i + 1;
    const bool numeric = k < text.size() && text[k] == '#';
    if (numeric) ++k;
    const size_t name_begin = k;
    while (k < text.size() && k - name_begin < kMaxName && IsAsciiAlnum(text[k])) ++k;
    if (k == name_begin) {
      out.push_back(text[i++]);
      continue;
    }
    if (k < text.size() && text[k] == ';') ++k;
    const std::u32string match(text.substr(i, k - i));
    const std::u32string name = match.substr(1);
    std::u32string replacement = match;
    if (!name.empty() && name.back() == ';' && !numeric) {
      if (const char* v = LookupEntity(name)) {
        replacement = FromUtf8Literal(v);
      } else {
        std::u32string lower = name;
        for (char32_t& c : lower) c = (c >= 'A' && c <= 'Z') ? c + 32 : c;
        std::u32string upper = lower;
        for (char32_t& c : upper) c = (c >= 'a' && c <= 'z') ? c - 32 : c;
        const char* lower_value = LookupEntity(lower);
        if (lower_value != nullptr && upper == name && HtmlUnescape(match) == match) {
          replacement = FromUtf8Literal(lower_value);
          for (char32_t& c : replacement) c = static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c)));
        }
      }
    } else if (numeric) {
      const std::u32string unescaped = HtmlUnescape(match);
      if (unescaped.find(U';') == std::u32string::npos) replacement = unescaped;
    }
    out += replacement;
    i = k;
  }
  return out;
}

// Maps a code point to its byte in `cp1252` (sloppy) or latin-1; false when not representable.
bool EncodeSingleByte(char32_t c, bool cp1252, uint8_t* byte) {
  if (c < 0x80 || (c >= 0xA0 && c <= 0xFF) || (!cp1252 && c <= 0xFF)) {
    *byte = static_cast<uint8_t>(c);
    return true;
  }
  if (!cp1252) return false;
  for (int k = 0; k < 32; ++k) {
    if (kCp1252High[k] == c) {
      *byte = static_cast<uint8_t>(0x80 + k);
      return true;
    }
  }
  return false;
}

// ftfy's main mojibake repair, simplified: text that is entirely representable in latin-1 or
// (sloppy) windows-1252 and whose bytes form valid UTF-8 was UTF-8 decoded with the wrong codec.
std::u32string FixEncoding(std::u32string_view text) {
  if (std::all_of(text.begin(), text.end(), [](char32_t c) { return c < 0x80; })) return std::u32string(text);
  for (bool cp1252 : {false, true}) {
    std::string bytes;
    bool representable = true;
    for (char32_t c : text) {
      uint8_t b = 0;
      if (!EncodeSingleByte(c, cp1252, &b)) {
        representable = false;
        break;
      }
      bytes.push_back(static_cast<char>(b));
    }
    if (!representable) continue;
    Result<std::u32string> decoded = DecodeUtf8(bytes);
    if (decoded.ok()) return std::move(decoded).value();
  }
  return std::u32string(text);
}

std::u32string FixC1Controls(std::u32string_view text) {
  std::u32string out(text);
  for (char32_t& c : out) {
    if (c >= 0x80 && c <= 0x9F) c = kCp1252High[c - 0x80];
  }
  return out;
}

std::u32string FixLatinLigatures(std::u32string_view text) {
  static const std::u32string kLigatures =
      U"\u0132\u0133\u0149\u01C4\u01C5\u01C6\u01C7\u01C8\u01C9\u01CA\u01CB\u01CC"
      U"\u01F1\u01F2\u01F3\uFB00\uFB01\uFB02\uFB03\uFB04\uFB05\uFB06";
  std::u32string out;
  for (char32_t c : text) {
    if (kLigatures.find(c) != std::u32string::npos) {
      out += NfkcChar(c);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::u32string FixCharacterWidth(std::u32string_view text) {
  constexpr char32_t kIdeographicSpace = 0x3000;
  constexpr char32_t kWidthFirst = 0xFF01;
  constexpr char32_t kWidthLast = 0xFFEF;
  std::u32string out;
  for (char32_t c : text) {
    if (c == kIdeographicSpace) {
      out.push_back(' ');
    } else if (c >= kWidthFirst && c <= kWidthLast) {
      out += NfkcChar(c);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::u32string UncurlQuotes(std::u32string_view text) {
  std::u32string out(text);
  for (char32_t& c : out) {
    if (c == 0x02BC || (c >= 0x2018 && c <= 0x201B)) c = '\'';
    if (c >= 0x201C && c <= 0x201F) c = '"';
  }
  return out;
}

std::u32string FixLineBreaks(std::u32string_view text) {
  std::u32string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;  // \r\n -> \n
    out.push_back((c == '\r' || c == 0x2028 || c == 0x2029 || c == 0x85) ? U'\n' : c);
  }
  return out;
}

// ANSI terminal escapes: ESC [ (digits or ;)* letter.
std::u32string RemoveTerminalEscapes(std::u32string_view text) {
  std::u32string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == 0x1B && i + 1 < text.size() && text[i + 1] == '[') {
      size_t k = i + 2;
      while (k < text.size() && (IsDigit(text[k]) || text[k] == ';')) ++k;
      if (k < text.size() && ((text[k] >= 'a' && text[k] <= 'z') || (text[k] >= 'A' && text[k] <= 'Z'))) {
        i = k + 1;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

bool IsFtfyControlChar(char32_t c) {
  return c <= 0x08 || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F || (c >= 0x206A && c <= 0x206F) ||
         c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFC);
}

std::u32string RemoveControlChars(std::u32string_view text) {
  std::u32string out;
  for (char32_t c : text) {
    if (!IsFtfyControlChar(c)) out.push_back(c);
  }
  return out;
}

std::u32string FixSegment(std::u32string text, bool unescape_html) {
  if (text.find(U'<') != std::u32string::npos) unescape_html = false;
  for (int pass = 0; pass < kMaxFixPasses; ++pass) {
    const std::u32string before = text;
    if (unescape_html) text = FtfyUnescape(text);
    text = FixEncoding(text);
    text = FixC1Controls(text);
    text = FixLatinLigatures(text);
    text = FixCharacterWidth(text);
    text = UncurlQuotes(text);
    text = FixLineBreaks(text);
    text = RemoveTerminalEscapes(text);
    text = RemoveControlChars(text);
    text = Normalize(text, /*compatibility=*/false);
    if (text == before) break;
  }
  return text;
}

int Category(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }

bool IsCased(char32_t c) {
  const int cat = Category(c);
  const auto cp = static_cast<utf8proc_int32_t>(c);
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT ||
         utf8proc_tolower(cp) != cp || utf8proc_toupper(cp) != cp;
}

bool IsCaseIgnorable(char32_t c) {
  const int cat = Category(c);
  if (cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_ME || cat == UTF8PROC_CATEGORY_CF ||
      cat == UTF8PROC_CATEGORY_LM || cat == UTF8PROC_CATEGORY_SK) {
    return true;
  }
  // Word_Break MidLetter / MidNumLet / Single_Quote.
  static const std::u32string kMid =
      U"'.:\u00B7\u0387\u05F4\u2018\u2019\u2024\u2027\uFE13\uFE52\uFE55\uFF07\uFF0E\uFF1A";
  return kMid.find(c) != std::u32string::npos;
}

// Python's Final_Sigma condition for U+03A3 at position i.
bool IsFinalSigma(std::u32string_view text, size_t i) {
  size_t j = i;
  while (j > 0 && IsCaseIgnorable(text[j - 1])) --j;
  if (j == 0 || !IsCased(text[j - 1])) return false;
  size_t k = i + 1;
  while (k < text.size() && IsCaseIgnorable(text[k])) ++k;
  return k == text.size() || !IsCased(text[k]);
}

}  // namespace

Result<std::u32string> DecodeUtf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + i),
                                                static_cast<utf8proc_ssize_t>(text.size() - i), &cp);
    if (n <= 0) {
      return Status::InvalidArgument("invalid UTF-8 at byte " + std::to_string(i), "text", "UTF-8 encoded text");
    }
    out.push_back(static_cast<char32_t>(cp));
    i += static_cast<size_t>(n);
  }
  return out;
}

std::string EncodeUtf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  utf8proc_uint8_t buf[4];
  for (char32_t c : text) {
    const utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
  }
  return out;
}

std::u32string HtmlUnescape(std::u32string_view text) {
  if (text.find(U'&') == std::u32string_view::npos) return std::u32string(text);
  std::u32string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '&') {
      size_t consumed = 0;
      std::u32string replacement = ReplaceCharRef(text, i, &consumed);
      if (consumed > 0) {
        out += replacement;
        i += consumed;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

std::u32string FixText(std::u32string_view text) {
  // ftfy.fix_text works line by line; once a segment contains '<', HTML unescaping stays off.
  std::u32string out;
  bool unescape_html = true;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(U'\n', pos);
    end = end == std::u32string_view::npos ? text.size() : end + 1;
    std::u32string segment(text.substr(pos, end - pos));
    if (segment.find(U'<') != std::u32string::npos) unescape_html = false;
    out += FixSegment(std::move(segment), unescape_html);
    pos = end;
  }
  return out;
}

bool IsPythonSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::u32string CollapseWhitespace(std::u32string_view text) {
  std::u32string out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsPythonSpace(text[i])) ++i;
    if (i == text.size()) break;
    if (!out.empty()) out.push_back(' ');
    while (i < text.size() && !IsPythonSpace(text[i])) out.push_back(text[i++]);
  }
  return out;
}

std::u32string PythonLower(std::u32string_view text) {
  constexpr char32_t kCapitalIWithDot = 0x0130;
  constexpr char32_t kCombiningDotAbove = 0x0307;
  constexpr char32_t kCapitalSigma = 0x03A3;
  constexpr char32_t kFinalSigma = 0x03C2;
  constexpr char32_t kSmallSigma = 0x03C3;
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    if (c == kCapitalIWithDot) {
      out.push_back('i');
      out.push_back(kCombiningDotAbove);
    } else if (c == kCapitalSigma) {
      out.push_back(IsFinalSigma(text, i) ? kFinalSigma : kSmallSigma);
    } else {
      out.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
    }
  }
  return out;
}

std::u32string WhitespaceCleanText(std::u32string_view text) {
  return CollapseWhitespace(HtmlUnescape(HtmlUnescape(FixText(text))));
}

std::u32string CleanText(std::u32string_view text) { return PythonLower(WhitespaceCleanText(text)); }

namespace {
// string.punctuation is exactly the printable ASCII that is neither alphanumeric nor space.
bool IsAsciiPunctuation(char32_t c) { return c >= 0x21 && c <= 0x7e && !IsAsciiAlnum(c); }
}  // namespace

std::u32string CanonicalizeText(std::u32string_view text) {
  const std::u32string unescaped = HtmlUnescape(HtmlUnescape(FixText(text)));
  std::u32string kept;
  kept.reserve(unescaped.size());
  for (char32_t c : unescaped) {
    if (c == U'_') {
      kept.push_back(U' ');
    } else if (!IsAsciiPunctuation(c)) {
      kept.push_back(c);
    }
  }
  return CollapseWhitespace(PythonLower(kept));
}

std::u32string SiglipHfCanonicalizeText(std::u32string_view text) {
  std::u32string kept;
  for (char32_t c : PythonLower(text)) {
    if (!IsAsciiPunctuation(c)) kept.push_back(c);
  }
  return CollapseWhitespace(kept);
}

std::u32string CleanFor(TextCleaning cleaning, std::u32string_view text) {
  switch (cleaning) {
    case TextCleaning::kOpenClipCanonicalize:
      return CanonicalizeText(text);
    case TextCleaning::kHfSiglip:
      return SiglipHfCanonicalizeText(text);
    case TextCleaning::kOpenClipWhitespace:
      return WhitespaceCleanText(text);
  }
  return std::u32string(text);
}

}  // namespace visalign::clip
