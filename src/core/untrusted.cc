#include "visalign/core/untrusted.h"

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace visalign {
namespace {

using nlohmann::json;

// Length of the valid UTF-8 character starting at s[i] that is safe to print (not a C1 control,
// U+0080..U+009F), or 0 when s[i] must be escaped.
size_t PrintableUtf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto continuation = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF && continuation(1)) return c == 0xC2 && b(1) < 0xA0 ? 0 : 2;
  if (c >= 0xE0 && c <= 0xEF && continuation(1) && continuation(2)) {
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4 && continuation(1) && continuation(2) && continuation(3)) {
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

// Appends s to out with control bytes escaped, stopping before `limit` input bytes; returns the
// number of input bytes consumed (s.size() when all of it fitted).
size_t AppendEscaped(std::string_view s, size_t limit, bool escape_quotes, std::string& out) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = 1;
    if (c >= 0x80) len = PrintableUtf8Length(s, i);
    if (i + std::max<size_t>(len, 1) > limit) break;
    if (c >= 0x20 && c < 0x7F) {
      if (escape_quotes && (c == '"' || c == '\\')) out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (len > 1) {
      out.append(s.substr(i, len));
    } else {
      out += fmt::format("\\x{:02X}", c);
      len = 1;
    }
    i += std::max<size_t>(len, 1);
  }
  return i;
}

std::string CutMarker(size_t total) { return fmt::format("... ({} bytes)", total); }

// Depth-limited DOM building: nlohmann's own DOM parser, refusing to open a container beyond
// max_depth (returning false from a SAX event stops the parser at once).
class DepthLimitedSax {
 public:
  DepthLimitedSax(json& root, int max_depth) : dom_(root, /*allow_exceptions=*/false), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return dom_.number_float(v, s); }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool key(json::string_t& v) { return dom_.key(v); }
  bool start_object(std::size_t n) { return Open() && dom_.start_object(n); }
  bool start_array(std::size_t n) { return Open() && dom_.start_array(n); }
  bool end_object() { --depth_; return dom_.end_object(); }
  bool end_array() { --depth_; return dom_.end_array(); }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) {
    error_position_ = position;
    return dom_.parse_error(position, token, e);
  }

  bool too_deep() const { return too_deep_; }
  size_t error_position() const { return error_position_; }

 private:
  bool Open() {
    if (++depth_ > max_depth_) too_deep_ = true;
    return !too_deep_;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
  size_t error_position_ = 0;
};

// One open container while QuoteJson walks a value.
struct Frame {
  const json* value;
  json::const_iterator next;
  bool first = true;
};

std::string ScalarJson(const json& v, size_t limit) {
  if (!v.is_string()) return v.dump();
  const std::string& s = v.get_ref<const std::string&>();
  // Only the quoted part can be shown: dump a prefix (replace keeps a cut UTF-8 character harmless).
  return json(s.substr(0, limit + 1)).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

Result<json> ParseJson(std::string_view text, int max_depth) {
  json root;
  DepthLimitedSax sax(root, max_depth);
  const bool ok = json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json, /*strict=*/true);
  if (sax.too_deep()) {
    return Status::Corrupt(fmt::format("JSON nested deeper than {} levels", max_depth), "",
                           fmt::format("a JSON document nested at most {} levels deep", max_depth));
  }
  if (!ok) {
    return Status::Corrupt(fmt::format("invalid JSON (syntax error at byte {})", sax.error_position()), "",
                           "a valid JSON document");
  }
  return root;
}

std::string StringMember(const json& obj, const std::string& key, const std::string& fallback) {
  if (!obj.is_object()) return fallback;
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::string EscapeControlBytes(std::string_view text, size_t limit) {
  std::string out;
  out.reserve(std::min(text.size(), limit) + 16);
  if (AppendEscaped(text, limit, /*escape_quotes=*/false, out) < text.size()) out += CutMarker(text.size());
  return out;
}

std::string QuoteText(std::string_view bytes, size_t limit) {
  std::string out = "\"";
  const bool cut = AppendEscaped(bytes, limit, /*escape_quotes=*/true, out) < bytes.size();
  out += '"';
  if (cut) out += CutMarker(bytes.size());
  return out;
}

std::string QuoteJson(const json& value, size_t limit) {
  std::string text;
  std::vector<Frame> stack;
  const auto emit = [&](const json& v) {
    if (v.is_object() || v.is_array()) {
      text += v.is_object() ? '{' : '[';
      stack.push_back({&v, v.cbegin()});
    } else {
      text += ScalarJson(v, limit);
    }
  };
  emit(value);
  while (!stack.empty() && text.size() <= limit) {
    Frame& f = stack.back();
    if (f.next == f.value->cend()) {
      text += f.value->is_object() ? '}' : ']';
      stack.pop_back();
      continue;
    }
    if (!f.first) text += ',';
    f.first = false;
    const json::const_iterator it = f.next++;
    if (f.value->is_object()) text += ScalarJson(json(it.key()), limit) + ':';
    emit(*it);  // may push, invalidating f
  }
  std::string out;
  const bool cut = AppendEscaped(text, limit, /*escape_quotes=*/false, out) < text.size() || !stack.empty();
  if (cut) out += "...";
  return out;
}

}  // namespace visalign
