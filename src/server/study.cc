#include "visalign/server/study.h"

#include <toml++/toml.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "visalign/benchmarks/hues/board.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::server {
namespace {

constexpr int kMaxWordsPerParticipant = 1000;

// Reads the fields of one JSON object, refusing unknown ones.
class Fields {
 public:
  Fields(const Json& obj, std::string where) : obj_(obj), where_(std::move(where)) {}
  Status Check(const std::set<std::string>& known) const {
    if (!obj_.is_object()) return Status::InvalidArgument("not an object", where_, "a JSON object of settings");
    for (const auto& [name, value] : obj_.items())
      if (!known.count(name))
        return Status::InvalidArgument("unknown field " + QuoteText(name), where_, "one of " + Join(known));
    return Status::Ok();
  }
  Status Get(const char* name, std::string& out) const { return Read(name, out, &Json::is_string, "a string"); }
  Status Get(const char* name, bool& out) const { return Read(name, out, &Json::is_boolean, "true or false"); }
  Status Get(const char* name, int& out) const { return Read(name, out, &Json::is_number_integer, "an integer"); }
  Status Get(const char* name, double& out) const { return Read(name, out, &Json::is_number, "a number"); }
  Status Get(const char* name, std::vector<std::string>& out) const {
    auto it = obj_.find(name);
    if (it == obj_.end()) return Status::Ok();
    if (!it->is_array() || !std::all_of(it->begin(), it->end(), [](const auto& v) { return v.is_string(); }))
      return Status::InvalidArgument("not a list of strings", Where(name), "[\"...\", ...]");
    out = it->template get<std::vector<std::string>>();
    return Status::Ok();
  }
  const Json* Object(const char* name) const {
    auto it = obj_.find(name);
    return it == obj_.end() ? nullptr : &*it;
  }
  std::string Where(const std::string& name) const { return where_ + " field " + name; }

 private:
  template <typename T>
  Status Read(const char* name, T& out, bool (Json::*is)() const noexcept, const char* expected) const {
    auto it = obj_.find(name);
    if (it == obj_.end()) return Status::Ok();
    if (!((*it).*is)()) return Status::InvalidArgument("wrong type " + QuoteJson(*it), Where(name), expected);
    out = it->template get<T>();
    return Status::Ok();
  }
  static std::string Join(const std::set<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  }
  const Json& obj_;
  std::string where_;
};

Status ReadLimit(const Fields& top, const char* name, RateLimit& limit) {
  const Json* obj = top.Object(name);
  if (!obj) return Status::Ok();
  Fields f(*obj, top.Where(name));
  VISALIGN_RETURN_IF_ERROR(f.Check({"per_second", "burst"}));
  VISALIGN_RETURN_IF_ERROR(f.Get("per_second", limit.per_second));
  VISALIGN_RETURN_IF_ERROR(f.Get("burst", limit.burst));
  if (limit.per_second < 0 || limit.burst < 0)
    return Status::InvalidArgument("a negative limit", top.Where(name), "per_second and burst >= 0 (0: no limit)");
  return Status::Ok();
}

}  // namespace

const std::vector<Language>& SupportedLanguages() {
  static const std::vector<Language> kLanguages = {{"es", "spanish"}, {"en", "english"}};
  return kLanguages;
}

Json StudyConfig::PublicJson() const {
  return {{"languages", languages},
          {"words_per_participant", words_per_participant},
          {"consent_text", consent_text},
          {"regions_consent_text", regions_consent_text},
          {"rate_consent_text", rate_consent_text},
          {"cvd_screen", cvd_screen},
          {"attention_check", attention_check.enabled}};
}

Result<StudyConfig> StudyConfigFromJson(const Json& doc, const std::string& where) {
  StudyConfig c;
  Fields f(doc, where);
  VISALIGN_RETURN_IF_ERROR(
      f.Check({"languages", "words_per_participant", "consent_text", "regions_consent_text", "rate_consent_text",
               "completion_codes", "completion_url", "cvd_screen", "attention_check", "rate_limit_per_ip",
               "rate_limit_per_session", "max_body_bytes"}));
  VISALIGN_RETURN_IF_ERROR(f.Get("languages", c.languages));
  VISALIGN_RETURN_IF_ERROR(f.Get("words_per_participant", c.words_per_participant));
  for (auto [name, text] :
       {std::pair{"consent_text", &c.consent_text}, std::pair{"regions_consent_text", &c.regions_consent_text},
        std::pair{"rate_consent_text", &c.rate_consent_text}}) {
    VISALIGN_RETURN_IF_ERROR(f.Get(name, *text));
    if (text->find_first_not_of(" \t\r\n") == std::string::npos)
      return Status::InvalidArgument("an empty consent text", f.Where(name), "the text participants agree to");
  }
  VISALIGN_RETURN_IF_ERROR(f.Get("completion_codes", c.completion_codes));
  VISALIGN_RETURN_IF_ERROR(f.Get("completion_url", c.completion_url));
  VISALIGN_RETURN_IF_ERROR(f.Get("cvd_screen", c.cvd_screen));
  int max_body = static_cast<int>(c.max_body_bytes);
  VISALIGN_RETURN_IF_ERROR(f.Get("max_body_bytes", max_body));
  if (max_body < 1024 || max_body > (1 << 24))
    return Status::InvalidArgument("max_body_bytes " + std::to_string(max_body), f.Where("max_body_bytes"),
                                   "1024 to 16777216");
  c.max_body_bytes = static_cast<size_t>(max_body);
  if (c.languages.empty())
    return Status::InvalidArgument("no language", f.Where("languages"), "at least one of es, en");
  for (const std::string& code : c.languages) {
    const auto& all = SupportedLanguages();
    if (std::none_of(all.begin(), all.end(), [&](const Language& l) { return l.code == code; }))
      return Status::InvalidArgument("unsupported language " + QuoteText(code), f.Where("languages"), "es or en");
  }
  if (c.words_per_participant < 1 || c.words_per_participant > kMaxWordsPerParticipant)
    return Status::InvalidArgument("words per participant " + std::to_string(c.words_per_participant),
                                   f.Where("words_per_participant"), "1 to 1000");
  if (!c.completion_url.empty() && c.completion_url.rfind("https://", 0) != 0 &&
      c.completion_url.rfind("http://", 0) != 0)
    return Status::InvalidArgument("completion URL " + QuoteText(c.completion_url), f.Where("completion_url"),
                                   "an http:// or https:// URL, \"{code}\" standing for the completion code");
  if (const Json* check = f.Object("attention_check")) {
    Fields a(*check, f.Where("attention_check"));
    VISALIGN_RETURN_IF_ERROR(a.Check({"enabled", "cell", "position"}));
    VISALIGN_RETURN_IF_ERROR(a.Get("enabled", c.attention_check.enabled));
    VISALIGN_RETURN_IF_ERROR(a.Get("cell", c.attention_check.cell));
    VISALIGN_RETURN_IF_ERROR(a.Get("position", c.attention_check.position));
    auto cell = hues::ParseCell(c.attention_check.cell);
    if (!cell.ok())
      return Status::InvalidArgument("cell " + QuoteText(c.attention_check.cell), a.Where("cell"), "A1..P30");
    c.attention_check.cell = hues::CellName(*cell);
    if (c.attention_check.position < 0)
      return Status::InvalidArgument("a negative position", a.Where("position"), "0 or more (0: the first item)");
  }
  VISALIGN_RETURN_IF_ERROR(ReadLimit(f, "rate_limit_per_ip", c.per_ip));
  VISALIGN_RETURN_IF_ERROR(ReadLimit(f, "rate_limit_per_session", c.per_session));
  return c;
}

// A TOML document as JSON text (toml++'s own JSON writer), so both formats are read by one reader.
Result<std::string> TomlAsJson(const std::string& text, const std::string& where) {
  try {
    const toml::table table = toml::parse(text);
    std::ostringstream json;
    json << toml::json_formatter{table};
    return json.str();
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument("invalid TOML (" + EscapeControlBytes(e.description(), kQuoteLimit) + ")",
                                   where + ":" + std::to_string(e.source().begin.line),
                                   "a TOML table of study settings");
  }
}

Result<StudyConfig> LoadStudyConfig(const std::filesystem::path& path) {
  const std::string where = "study file " + path.string();
  auto text = ReadFile(path);
  if (!text.ok()) return Status(text.status().code(), text.status().what(), where, "a readable JSON or TOML file");
  if (path.extension() == ".toml") {
    VISALIGN_ASSIGN_OR_RETURN(*text, TomlAsJson(*text, where));
  }
  auto doc = ParseJson(*text);
  if (!doc.ok())
    return Status::InvalidArgument(doc.status().what(), where, "a JSON object of study settings (docs/serve.md)");
  return StudyConfigFromJson(*doc, where);
}

}  // namespace visalign::server
