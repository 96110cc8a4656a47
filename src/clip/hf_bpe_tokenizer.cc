#include "clip/hf_bpe_tokenizer.h"

#include <algorithm>

#include <fmt/format.h>

#include "clip/text_clean.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;

// transformers' GemmaTokenizer(Fast) defaults.
constexpr const char* kGemmaPad = "<pad>";
constexpr const char* kGemmaEos = "<eos>";
constexpr const char* kGemmaBos = "<bos>";
constexpr bool kGemmaAddBos = true;
constexpr bool kGemmaAddEos = false;
// A vocabulary larger than this is refused (Gemma has 256000, XLM-V 901629 pieces).
constexpr int64_t kMaxVocab = int64_t{1} << 24;

// Code-point length of the UTF-8 sequence starting with byte `b` (1 for a stray continuation
// byte: the text is valid UTF-8 by the time it gets here).
size_t Utf8Length(unsigned char b) {
  if (b >= 0xF0) return 4;
  if (b >= 0xE0) return 3;
  if (b >= 0xC0) return 2;
  return 1;
}

std::string ReplaceAll(std::string_view text, const std::string& from, const std::string& to) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(text.substr(pos, hit - pos)).append(to);
    pos = hit + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

// A field that must be absent, null or equal to `allowed` (what this implementation does).
Status RequireField(const Json& obj, const std::string& key, const Json& allowed, const std::string& where) {
  if (!obj.contains(key) || obj[key].is_null() || obj[key] == allowed) return Status::Ok();
  return Status::Unsupported("unsupported " + key + " " + QuoteJson(obj[key]), where,
                             QuoteJson(allowed) + " or absent");
}

}  // namespace

Result<std::unique_ptr<HfBpeTokenizer>> HfBpeTokenizer::Load(const TokenizerConfig& config) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(config.model_file));
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<HfBpeTokenizer> t, Parse(text, config.model_file.string()));
  t->config_ = config;
  return t;
}

Result<std::unique_ptr<HfBpeTokenizer>> HfBpeTokenizer::Parse(std::string_view text, const std::string& source) {
  const std::string expected = "a Hugging Face tokenizer.json with a BPE model";
  Result<Json> parsed = ParseJson(text);
  if (!parsed.ok()) return Status::InvalidArgument(parsed.status().what(), source, expected);
  const Json& j = *parsed;
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object()) {
    return Status::InvalidArgument("no \"model\" object", source, expected);
  }
  const Json& m = j["model"];
  const std::string model_where = source + " model";
  if (StringMember(m, "type") != "BPE") {
    return Status::Unsupported("unsupported tokenizer model type " + QuoteJson(m.contains("type") ? m["type"] : Json()),
                               model_where,
                               "BPE (WordPiece, Unigram and WordLevel tokenizer.json files are not implemented)");
  }
  VISALIGN_RETURN_IF_ERROR(RequireField(m, "dropout", Json(), model_where));
  VISALIGN_RETURN_IF_ERROR(RequireField(m, "continuing_subword_prefix", Json(), model_where));
  VISALIGN_RETURN_IF_ERROR(RequireField(m, "end_of_word_suffix", Json(), model_where));
  if (!j.contains("pre_tokenizer") || !j["pre_tokenizer"].is_null()) {
    return Status::Unsupported(
        "unsupported pre_tokenizer " + QuoteJson(j.contains("pre_tokenizer") ? j["pre_tokenizer"] : Json()), source,
        "null (the whole text is one BPE word, as Gemma's tokenizer.json)");
  }
  auto t = std::unique_ptr<HfBpeTokenizer>(new HfBpeTokenizer());
  const auto flag = [&](const char* key, bool& out) -> Status {
    if (!m.contains(key) || m[key].is_null()) return Status::Ok();
    if (!m[key].is_boolean())
      return Status::InvalidArgument(std::string("field ") + key + " is " + QuoteJson(m[key]), model_where,
                                     "true or false");
    out = m[key].get<bool>();
    return Status::Ok();
  };
  VISALIGN_RETURN_IF_ERROR(flag("byte_fallback", t->byte_fallback_));
  VISALIGN_RETURN_IF_ERROR(flag("fuse_unk", t->fuse_unk_));
  VISALIGN_RETURN_IF_ERROR(flag("ignore_merges", t->ignore_merges_));

  // Vocabulary: {"piece": id} with ids 0..n-1, each once.
  if (!m.contains("vocab") || !m["vocab"].is_object() || m["vocab"].empty() ||
      static_cast<int64_t>(m["vocab"].size()) > kMaxVocab) {
    return Status::InvalidArgument("field \"vocab\" is not an object of 1 to 2^24 pieces", model_where, expected);
  }
  t->pieces_.resize(m["vocab"].size());
  t->vocab_.reserve(t->pieces_.size());
  std::vector<bool> seen(t->pieces_.size(), false);
  for (const auto& [piece, id] : m["vocab"].items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= static_cast<int64_t>(seen.size()) ||
        seen[static_cast<size_t>(id.get<int64_t>())]) {
      return Status::InvalidArgument("vocab piece " + QuoteText(piece) + " has id " + QuoteJson(id), model_where,
                                     "ids 0 to vocabulary size - 1, each once");
    }
    const auto k = static_cast<size_t>(id.get<int64_t>());
    seen[k] = true;
    t->pieces_[k] = piece;
    t->vocab_.emplace(piece, static_cast<int32_t>(k));
  }
  if (m.contains("unk_token") && m["unk_token"].is_string()) t->unk_id_ = t->TokenId(m["unk_token"].get<std::string>());
  for (int b = 0; b < 256; ++b) {
    const auto it = t->vocab_.find(fmt::format("<0x{:02X}>", b));
    t->byte_ids_[static_cast<size_t>(b)] = it == t->vocab_.end() ? -1 : it->second;
  }

  // Merges: "left right" strings (older files) or [left, right] pairs; both sides and their
  // concatenation must be pieces.
  if (!m.contains("merges") || !m["merges"].is_array()) {
    return Status::InvalidArgument("field \"merges\" is not an array", model_where, expected);
  }
  for (size_t r = 0; r < m["merges"].size(); ++r) {
    const Json& merge = m["merges"][r];
    std::string left, right;
    if (merge.is_string()) {
      const std::string s = merge.get<std::string>();
      const size_t space = s.find(' ');
      if (space != std::string::npos && s.find(' ', space + 1) == std::string::npos) {
        left = s.substr(0, space);
        right = s.substr(space + 1);
      }
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
      left = merge[0].get<std::string>();
      right = merge[1].get<std::string>();
    }
    const auto a = t->vocab_.find(left), b = t->vocab_.find(right), ab = t->vocab_.find(left + right);
    if (left.empty() || right.empty() || a == t->vocab_.end() || b == t->vocab_.end() || ab == t->vocab_.end()) {
      return Status::InvalidArgument(fmt::format("merge {} is ", r) + QuoteJson(merge), model_where,
                                     "two vocabulary pieces whose concatenation is a piece");
    }
    t->merges_.Add(a->second, b->second, ab->second);
  }

  // Normalizer: null, Replace(String), Prepend, or a Sequence of those.
  std::vector<const Json*> steps;
  const Json null_normalizer;
  const Json& normalizer = j.contains("normalizer") ? j["normalizer"] : null_normalizer;
  if (normalizer.is_object() && StringMember(normalizer, "type") == "Sequence" && normalizer.contains("normalizers") &&
      normalizer["normalizers"].is_array()) {
    for (const Json& n : normalizer["normalizers"]) steps.push_back(&n);
  } else if (!normalizer.is_null()) {
    steps.push_back(&normalizer);
  }
  for (const Json* n : steps) {
    const std::string type = StringMember(*n, "type");
    if (type == "Replace" && n->contains("pattern") && (*n)["pattern"].is_object() &&
        (*n)["pattern"].contains("String") && (*n)["pattern"]["String"].is_string() &&
        !(*n)["pattern"]["String"].get<std::string>().empty() && n->contains("content") &&
        (*n)["content"].is_string()) {
      t->normalizer_.push_back({(*n)["pattern"]["String"].get<std::string>(), (*n)["content"].get<std::string>()});
    } else if (type == "Prepend" && n->contains("prepend") && (*n)["prepend"].is_string()) {
      t->normalizer_.push_back({"", (*n)["prepend"].get<std::string>()});
    } else {
      return Status::Unsupported("unsupported normalizer " + QuoteJson(*n), source + " normalizer",
                                 "null, Replace of a string, Prepend, or a Sequence of them");
    }
  }

  // Added tokens: matched on the cleaned text before normalisation (normalized false), as is.
  if (j.contains("added_tokens") && !j["added_tokens"].is_null()) {
    if (!j["added_tokens"].is_array()) {
      return Status::InvalidArgument("field \"added_tokens\" is not an array", source, expected);
    }
    for (const Json& a : j["added_tokens"]) {
      const std::string where = source + " added_tokens";
      if (!a.is_object() || !a.contains("content") || !a["content"].is_string() ||
          a["content"].get<std::string>().empty() || !a.contains("id") || !a["id"].is_number_integer() ||
          a["id"].get<int64_t>() < 0 || a["id"].get<int64_t>() >= static_cast<int64_t>(t->pieces_.size())) {
        return Status::InvalidArgument("added token " + QuoteJson(a), where,
                                       "{\"id\": a vocabulary id, \"content\": text}");
      }
      for (const char* key : {"normalized", "lstrip", "rstrip", "single_word"}) {
        if (a.contains(key) && a[key] != false) {
          return Status::Unsupported(
              std::string("added token with ") + key + " " + QuoteJson(a[key]) + ": " + QuoteJson(a["content"]), where,
              std::string(key) + " false (as in Gemma's tokenizer)");
        }
      }
      const std::string content = a["content"].get<std::string>();
      const auto id = static_cast<int32_t>(a["id"].get<int64_t>());
      t->added_ids_[content] = id;
      t->added_[static_cast<unsigned char>(content[0])].push_back({content, id});
    }
    for (auto& bucket : t->added_) {
      std::stable_sort(bucket.begin(), bucket.end(),
                       [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
    }
  }
  return t;
}

std::optional<int32_t> HfBpeTokenizer::TokenId(const std::string& token) const {
  if (const auto it = added_ids_.find(token); it != added_ids_.end()) return it->second;
  if (const auto it = vocab_.find(token); it != vocab_.end()) return it->second;
  return std::nullopt;
}

const HfBpeTokenizer::AddedToken* HfBpeTokenizer::AddedTokenAt(std::string_view text, size_t pos) const {
  for (const AddedToken& a : added_[static_cast<unsigned char>(text[pos])]) {
    if (text.substr(pos, a.content.size()) == a.content) return &a;
  }
  return nullptr;
}

void HfBpeTokenizer::AppendWord(std::string word, std::vector<int32_t>& out) const {
  if (word.empty()) return;  // tokenizers normalises (Prepend included) non-empty sections only
  for (const Replacement& r : normalizer_) word = r.from.empty() ? r.to + word : ReplaceAll(word, r.from, r.to);
  if (ignore_merges_) {
    if (const auto it = vocab_.find(word); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  std::vector<int32_t> ids;
  bool last_unk = false;
  for (size_t pos = 0; pos < word.size();) {
    const size_t len = std::min(Utf8Length(static_cast<unsigned char>(word[pos])), word.size() - pos);
    const std::string_view ch(word.data() + pos, len);
    pos += len;
    if (const auto it = vocab_.find(std::string(ch)); it != vocab_.end()) {
      ids.push_back(it->second);
      last_unk = false;
      continue;
    }
    if (byte_fallback_ &&
        std::all_of(ch.begin(), ch.end(), [&](char b) { return byte_ids_[static_cast<unsigned char>(b)] >= 0; })) {
      for (char b : ch) ids.push_back(byte_ids_[static_cast<unsigned char>(b)]);
      last_unk = false;
      continue;
    }
    if (!unk_id_) continue;  // tokenizers fails here; a character without any id is dropped
    if (!(fuse_unk_ && last_unk)) ids.push_back(*unk_id_);
    last_unk = true;
  }
  merges_.Apply(ids);
  out.insert(out.end(), ids.begin(), ids.end());
}

std::vector<int32_t> HfBpeTokenizer::EncodeCleaned(std::string_view cleaned) const {
  std::vector<int32_t> ids;
  size_t section = 0;
  for (size_t pos = 0; pos < cleaned.size();) {
    const AddedToken* a = AddedTokenAt(cleaned, pos);
    if (a == nullptr) {
      ++pos;
      continue;
    }
    AppendWord(std::string(cleaned.substr(section, pos - section)), ids);
    ids.push_back(a->id);
    pos += a->content.size();
    section = pos;
  }
  AppendWord(std::string(cleaned.substr(section)), ids);
  return ids;
}

Result<std::vector<int32_t>> HfBpeTokenizer::Tokenize(std::string_view text, int context_length) const {
  const int specials = (config_.add_bos ? 1 : 0) + (config_.add_eos ? 1 : 0);
  if (context_length <= specials) {
    return Status::InvalidArgument("context length " + std::to_string(context_length), "Tokenize",
                                   fmt::format("more than the {} special tokens", specials));
  }
  VISALIGN_ASSIGN_OR_RETURN(std::u32string decoded, DecodeUtf8(text));
  const std::vector<int32_t> body = EncodeCleaned(EncodeUtf8(CleanFor(config_.cleaning, decoded)));
  std::vector<int32_t> ids;
  if (config_.add_bos) ids.push_back(config_.bos_id);
  ids.insert(ids.end(), body.begin(),
             body.begin() + std::min<ptrdiff_t>(static_cast<ptrdiff_t>(body.size()), context_length - specials));
  if (config_.add_eos) ids.push_back(config_.eos_id);
  return ids;
}

Status ResolveHfBpeTokenizer(const fs::path& dir, const Json& cfg, const std::string& cfg_source, ClipConfig& config) {
  const fs::path file = dir / "tokenizer.json";
  if (!fs::is_regular_file(file)) {
    return Status::NotFound("no tokenizer.json for the Gemma tokenizer", dir.string(),
                            "tokenizer.json beside " + cfg_source);
  }
  TokenizerConfig t;
  t.kind = TokenizerKind::kHfBpe;
  t.hf_name = config.tokenizer.hf_name;
  t.model_file = file;
  t.cleaning = config.tokenizer.cleaning;  // open_clip's tokenizer_kwargs clean
  const auto flag = [&](const char* key, bool fallback, bool& out) -> Status {
    out = fallback;
    if (!cfg.contains(key) || cfg[key].is_null()) return Status::Ok();
    if (!cfg[key].is_boolean()) {
      return Status::InvalidArgument(std::string("field ") + key + " is " + QuoteJson(cfg[key]), cfg_source,
                                     "true or false");
    }
    out = cfg[key].get<bool>();
    return Status::Ok();
  };
  VISALIGN_RETURN_IF_ERROR(flag("add_bos_token", kGemmaAddBos, t.add_bos));
  VISALIGN_RETURN_IF_ERROR(flag("add_eos_token", kGemmaAddEos, t.add_eos));
  VISALIGN_ASSIGN_OR_RETURN(std::string eos, SpecialTokenString(cfg, "eos_token", kGemmaEos, cfg_source));
  VISALIGN_ASSIGN_OR_RETURN(std::string bos, SpecialTokenString(cfg, "bos_token", kGemmaBos, cfg_source));
  VISALIGN_ASSIGN_OR_RETURN(std::string pad, SpecialTokenString(cfg, "pad_token", kGemmaPad, cfg_source));
  // transformers writes the added tokens into tokenizer_config.json ({"<id>": {"content": ...}}):
  // when they name all three, the 17 MB tokenizer.json is parsed only when the model loads.
  std::unordered_map<std::string, int32_t> listed;
  if (cfg.contains("added_tokens_decoder") && cfg["added_tokens_decoder"].is_object()) {
    for (const auto& [key, token] : cfg["added_tokens_decoder"].items()) {
      const Result<int64_t> id = ParseInt(key, cfg_source);
      if (id.ok() && *id >= 0 && *id < kMaxVocab && token.is_object())
        listed[StringMember(token, "content")] = static_cast<int32_t>(*id);
    }
  }
  std::unique_ptr<HfBpeTokenizer> tokenizer;
  if (!listed.count(eos) || !listed.count(bos) || !listed.count(pad)) {
    VISALIGN_ASSIGN_OR_RETURN(tokenizer, HfBpeTokenizer::Load(t));
  }
  const auto id_of = [&](const std::string& token) -> std::optional<int32_t> {
    if (tokenizer) return tokenizer->TokenId(token);
    return listed.at(token);
  };
  const std::optional<int32_t> eos_id = id_of(eos), bos_id = id_of(bos), pad_id = id_of(pad);
  if (!eos_id || !bos_id || !pad_id) {
    return Status::InvalidArgument("eos " + QuoteText(eos) + ", bos " + QuoteText(bos) + " or pad " + QuoteText(pad) +
                                       " is not a token of the tokenizer",
                                   file.string(), "the special tokens named by " + cfg_source);
  }
  t.eos_id = *eos_id;
  t.bos_id = *bos_id;
  config.tokenizer = t;
  config.text.pad_id = *pad_id;
  return Status::Ok();
}

}  // namespace visalign::clip
