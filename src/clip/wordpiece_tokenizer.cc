#include "clip/wordpiece_tokenizer.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "clip/text_clean.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxWordChars = 100;  // HF WordPiece max_input_chars_per_word
constexpr std::u32string_view kContinuation = U"##";
constexpr size_t kMaxVocab = size_t{1} << 24;
constexpr const char* kVocabFile = "vocab.txt";

int Category(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }

// Rust's char::is_whitespace (Unicode White_Space), as HF's BertNormalizer and BertPreTokenizer use it.
bool IsWhitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// Category C (Cc, Cf, Cs, Co, Cn), except the three whitespace controls.
bool IsControl(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  const int cat = Category(c);
  return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF || cat == UTF8PROC_CATEGORY_CS ||
         cat == UTF8PROC_CATEGORY_CO || cat == UTF8PROC_CATEGORY_CN;
}

bool IsPunctuation(char32_t c) {
  if ((c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E)) {
    return true;
  }
  const int cat = Category(c);
  return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

// The CJK Unified Ideographs blocks BERT pads with spaces.
bool IsCjkIdeograph(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Canonical decomposition (NFD) of valid code points.
std::u32string Nfd(std::u32string_view text) {
  const std::string utf8 = EncodeUtf8(text);
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()), static_cast<utf8proc_ssize_t>(utf8.size()),
                   &out, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE));
  if (n < 0) return std::u32string(text);  // only for invalid input, which DecodeUtf8 excluded
  Result<std::u32string> decoded =
      DecodeUtf8(std::string_view(reinterpret_cast<const char*>(out), static_cast<size_t>(n)));
  std::free(out);
  return decoded.ok() ? std::move(decoded).value() : std::u32string(text);
}

Result<bool> Flag(const Json& cfg, const char* key, bool fallback, const std::string& where) {
  if (!cfg.contains(key) || cfg[key].is_null()) return fallback;
  if (!cfg[key].is_boolean()) {
    return Status::InvalidArgument(std::string("field ") + key + " is " + QuoteJson(cfg[key]), where, "true or false");
  }
  return cfg[key].get<bool>();
}

}  // namespace

Result<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::Load(const TokenizerConfig& config) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(config.model_file));
  return Parse(text, config, config.model_file.string());
}

Result<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::Parse(std::string_view vocab_text,
                                                                      const TokenizerConfig& config,
                                                                      const std::string& source) {
  std::unique_ptr<WordPieceTokenizer> t(new WordPieceTokenizer());
  t->config_ = config;
  size_t pos = 0;
  while (pos < vocab_text.size()) {
    size_t end = vocab_text.find('\n', pos);
    if (end == std::string_view::npos) end = vocab_text.size();
    const std::string_view line = vocab_text.substr(pos, end - pos);
    Result<std::u32string> piece = DecodeUtf8(line);
    if (!piece.ok()) {
      return Status::InvalidArgument(fmt::format("line {}: {}", t->pieces_.size() + 1, piece.status().what()), source,
                                     "a UTF-8 WordPiece vocabulary, one piece per line");
    }
    if (t->pieces_.size() >= kMaxVocab) {
      return Status::InvalidArgument("more than 2^24 pieces", source, "a WordPiece vocabulary of at most 2^24 lines");
    }
    t->longest_piece_ = std::max(t->longest_piece_, piece->size());
    t->vocab_[std::string(line)] = static_cast<int32_t>(t->pieces_.size());
    t->pieces_.emplace_back(line);
    pos = end + 1;
  }
  if (t->pieces_.empty()) return Status::InvalidArgument("empty vocabulary", source, "a WordPiece vocabulary");
  for (const int32_t id : {config.bos_id, config.eos_id, config.unk_id}) {
    if (id < 0 || static_cast<size_t>(id) >= t->pieces_.size()) {
      return Status::InvalidArgument(fmt::format("special token id {} outside the vocabulary", id), source,
                                     fmt::format("ids below {}", t->pieces_.size()));
    }
  }
  return t;
}

std::optional<int32_t> WordPieceTokenizer::TokenId(const std::string& piece) const {
  const auto it = vocab_.find(piece);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

std::u32string WordPieceTokenizer::Normalize(std::u32string_view cleaned) const {
  std::u32string out;
  out.reserve(cleaned.size());
  for (char32_t c : cleaned) {
    if (c == 0 || c == 0xFFFD || IsControl(c)) continue;
    if (IsWhitespace(c)) {
      out.push_back(U' ');
    } else if (config_.split_cjk && IsCjkIdeograph(c)) {
      out += {U' ', c, U' '};
    } else {
      out.push_back(c);
    }
  }
  if (config_.strip_accents) {
    std::u32string kept;
    for (char32_t c : Nfd(out)) {
      if (Category(c) != UTF8PROC_CATEGORY_MN) kept.push_back(c);
    }
    out = std::move(kept);
  }
  if (config_.lowercase) {
    std::u32string lower;
    lower.reserve(out.size());
    // Character by character (Rust's char::to_lowercase): no final-sigma context, but the full
    // mappings (U+0130 -> "i\u0307").
    for (char32_t c : out) lower += PythonLower(std::u32string_view(&c, 1));
    out = std::move(lower);
  }
  return out;
}

std::vector<std::u32string> WordPieceTokenizer::PreTokenize(std::u32string_view normalized) const {
  std::vector<std::u32string> words;
  std::u32string word;
  for (char32_t c : normalized) {
    if (IsWhitespace(c) || IsPunctuation(c)) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
      if (!IsWhitespace(c)) words.emplace_back(1, c);
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

void WordPieceTokenizer::AppendWord(std::u32string_view word, std::vector<int32_t>& out) const {
  if (word.size() > kMaxWordChars) {
    out.push_back(config_.unk_id);
    return;
  }
  const size_t first = out.size();
  std::u32string candidate;
  size_t start = 0;
  while (start < word.size()) {
    const size_t prefix = start > 0 ? kContinuation.size() : 0;
    size_t end = std::min(word.size(), start + (longest_piece_ > prefix ? longest_piece_ - prefix : 0));
    std::optional<int32_t> id;
    for (; end > start; --end) {
      candidate.assign(start > 0 ? kContinuation : std::u32string_view());
      candidate.append(word.substr(start, end - start));
      id = TokenId(EncodeUtf8(candidate));
      if (id) break;
    }
    if (!id) {  // the word cannot be covered: one [UNK] for all of it
      out.resize(first);
      out.push_back(config_.unk_id);
      return;
    }
    out.push_back(*id);
    start = end;
  }
}

std::vector<int32_t> WordPieceTokenizer::EncodeCleaned(std::u32string_view cleaned) const {
  std::vector<int32_t> ids;
  for (const std::u32string& word : PreTokenize(Normalize(cleaned))) AppendWord(word, ids);
  return ids;
}

Result<std::vector<int32_t>> WordPieceTokenizer::Tokenize(std::string_view text, int context_length) const {
  if (context_length < 2) {
    return Status::InvalidArgument("context length " + std::to_string(context_length), "Tokenize",
                                   "at least 2 ([CLS] and [SEP])");
  }
  VISALIGN_ASSIGN_OR_RETURN(std::u32string decoded, DecodeUtf8(text));
  const std::vector<int32_t> body = EncodeCleaned(CleanFor(config_.cleaning, decoded));
  std::vector<int32_t> ids = {config_.bos_id};
  ids.insert(ids.end(), body.begin(),
             body.begin() + std::min<ptrdiff_t>(static_cast<ptrdiff_t>(body.size()), context_length - 2));
  if (config_.add_eos) ids.push_back(config_.eos_id);
  return ids;
}

Status ResolveWordPieceTokenizer(const fs::path& dir, const Json& cfg, const std::string& cfg_source,
                                 ClipConfig& config) {
  TokenizerConfig t;
  t.kind = TokenizerKind::kWordPiece;
  t.hf_name = config.tokenizer.hf_name;
  t.cleaning = config.tokenizer.cleaning;
  t.add_eos = config.tokenizer.add_eos;
  t.model_file = dir / kVocabFile;
  t.bos_id = t.eos_id = t.unk_id = 0;  // set from the vocabulary below
  if (!fs::is_regular_file(t.model_file)) {
    return Status::NotFound("no vocab.txt for the BERT WordPiece tokenizer", dir.string(),
                            "vocab.txt beside " + cfg_source);
  }
  VISALIGN_ASSIGN_OR_RETURN(t.lowercase, Flag(cfg, "do_lower_case", true, cfg_source));
  VISALIGN_ASSIGN_OR_RETURN(t.strip_accents, Flag(cfg, "strip_accents", t.lowercase, cfg_source));
  VISALIGN_ASSIGN_OR_RETURN(t.split_cjk, Flag(cfg, "tokenize_chinese_chars", true, cfg_source));
  VISALIGN_ASSIGN_OR_RETURN(std::string cls, SpecialTokenString(cfg, "cls_token", "[CLS]", cfg_source));
  VISALIGN_ASSIGN_OR_RETURN(std::string sep, SpecialTokenString(cfg, "sep_token", "[SEP]", cfg_source));
  VISALIGN_ASSIGN_OR_RETURN(std::string unk, SpecialTokenString(cfg, "unk_token", "[UNK]", cfg_source));
  VISALIGN_ASSIGN_OR_RETURN(std::string pad, SpecialTokenString(cfg, "pad_token", "[PAD]", cfg_source));
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<WordPieceTokenizer> tokenizer, WordPieceTokenizer::Load(t));
  const std::optional<int32_t> cls_id = tokenizer->TokenId(cls), sep_id = tokenizer->TokenId(sep),
                               unk_id = tokenizer->TokenId(unk), pad_id = tokenizer->TokenId(pad);
  if (!cls_id || !sep_id || !unk_id || !pad_id) {
    return Status::InvalidArgument("cls " + QuoteText(cls) + ", sep " + QuoteText(sep) + ", unk " + QuoteText(unk) +
                                       " or pad " + QuoteText(pad) + " is not in the vocabulary",
                                   t.model_file.string(), "the special tokens named by " + cfg_source);
  }
  t.bos_id = *cls_id;
  t.eos_id = *sep_id;
  t.unk_id = *unk_id;
  config.tokenizer = t;
  config.text.pad_id = *pad_id;
  return Status::Ok();
}

}  // namespace visalign::clip
