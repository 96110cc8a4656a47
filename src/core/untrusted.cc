#include "visalign/core/untrusted.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "visalign/core/io.h"

namespace visalign {
namespace {

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

// Depth-limited DOM building in linear time. nlohmann's DOM builder inserts each key of an ordered
// object with a linear search for a duplicate, so an object of n keys costs O(n^2) (3.5 s for a
// 50 000-word vocabulary); this builder keeps a hash index of the open object's keys instead and
// appends to the object's vector. A repeated key keeps its first position and takes the last value,
// as nlohmann's builder does. Returning false from a SAX event stops the parser at once.
class LinearDomSax {
 public:
  LinearDomSax(Json& root, int max_depth) : root_(root), max_depth_(max_depth) {}

  bool null() { return Put(nullptr); }
  bool boolean(bool v) { return Put(v); }
  bool number_integer(Json::number_integer_t v) { return Put(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return Put(v); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return Put(v); }
  bool string(Json::string_t& v) { return Put(std::move(v)); }
  bool binary(Json::binary_t& v) { return Put(Json::binary(std::move(v))); }
  bool key(Json::string_t& v) {
    key_ = std::move(v);
    return true;
  }
  bool start_object(std::size_t) { return Open(Json::object()); }
  bool start_array(std::size_t) { return Open(Json::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    error_position_ = position;
    return false;
  }

  bool too_deep() const { return too_deep_; }
  size_t error_position() const { return error_position_; }

 private:
  struct OpenContainer {
    Json* value;
    std::unordered_map<std::string, size_t> index;  // an object's keys -> position
  };

  // Places v in the open container (or as the root); returns where it now is.
  Json* Place(Json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    OpenContainer& top = stack_.back();
    if (top.value->is_array()) {
      top.value->get_ref<Json::array_t&>().push_back(std::move(v));
      return &top.value->get_ref<Json::array_t&>().back();
    }
    Json::object_t& object = top.value->get_ref<Json::object_t&>();
    const auto [at, inserted] = top.index.try_emplace(key_, object.size());
    if (!inserted) {
      const auto existing = object.begin() + static_cast<std::ptrdiff_t>(at->second);
      existing->second = std::move(v);
      return &existing->second;
    }
    object.Json::object_t::Container::emplace_back(std::move(key_), std::move(v));
    return &object.back().second;
  }
  bool Put(Json&& v) {
    Place(std::move(v));
    return true;
  }
  bool Open(Json&& container) {
    if (static_cast<int>(stack_.size()) >= max_depth_) {
      too_deep_ = true;
      return false;
    }
    Json* placed = Place(std::move(container));
    stack_.push_back({placed, {}});
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  Json& root_;
  int max_depth_;
  std::vector<OpenContainer> stack_;
  std::string key_;
  bool too_deep_ = false;
  size_t error_position_ = 0;
};

// One open container while QuoteJson walks a value.
struct Frame {
  const Json* value;
  Json::const_iterator next;
  bool first = true;
};

std::string ScalarJson(const Json& v, size_t limit) {
  if (!v.is_string()) return v.dump();
  const std::string& s = v.get_ref<const std::string&>();
  // Only the quoted part can be shown: dump a prefix (replace keeps a cut UTF-8 character harmless).
  return Json(s.substr(0, limit + 1)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

Result<Json> ParseJson(std::string_view text, int max_depth) {
  Json root;
  LinearDomSax sax(root, max_depth);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &sax, Json::input_format_t::json, /*strict=*/true);
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

Result<Json> ReadJsonFile(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  Result<Json> j = ParseJson(text);
  if (!j.ok()) return Status::Corrupt(j.status().what(), path.string(), j.status().expected());
  return j;
}

std::string StringMember(const Json& obj, const std::string& key, const std::string& fallback) {
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

std::string QuoteJson(const Json& value, size_t limit) {
  std::string text;
  std::vector<Frame> stack;
  const auto emit = [&](const Json& v) {
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
    const Json::const_iterator it = f.next++;
    if (f.value->is_object()) text += ScalarJson(Json(it.key()), limit) + ':';
    emit(*it);  // may push, invalidating f
  }
  std::string out;
  const bool cut = AppendEscaped(text, limit, /*escape_quotes=*/false, out) < text.size() || !stack.empty();
  if (cut) out += "...";
  return out;
}

}  // namespace visalign
