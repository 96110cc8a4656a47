#include "clip/tokenizer.h"

#include <utf8proc.h>
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>

#include "clip/text_clean.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip {
namespace {

constexpr int kByteSymbols = 256;
// open_clip: merges = lines[1 : 49152 - 256 - 2 + 1].
constexpr int kMergeCount = 49152 - 256 - 2;
constexpr int kExpectedVocab = 2 * kByteSymbols + kMergeCount + 2;
constexpr std::u32string_view kStartText = U"<start_of_text>";
constexpr std::u32string_view kEndText = U"<end_of_text>";
constexpr std::string_view kWordEnd = "</w>";

// GPT-2's bytes_to_unicode order: printable bytes keep their code point, the rest map to 256 + n.
std::vector<std::pair<uint8_t, char32_t>> ByteSymbols() {
  std::vector<std::pair<uint8_t, char32_t>> out;
  std::vector<bool> printable(kByteSymbols, false);
  for (int b = '!'; b <= '~'; ++b) printable[b] = true;
  for (int b = 0xA1; b <= 0xAC; ++b) printable[b] = true;
  for (int b = 0xAE; b <= 0xFF; ++b) printable[b] = true;
  for (int b = 0; b < kByteSymbols; ++b) {
    if (printable[b]) out.emplace_back(static_cast<uint8_t>(b), static_cast<char32_t>(b));
  }
  int n = 0;
  for (int b = 0; b < kByteSymbols; ++b) {
    if (!printable[b]) out.emplace_back(static_cast<uint8_t>(b), static_cast<char32_t>(kByteSymbols + n++));
  }
  return out;
}

Result<std::string> ReadGzip(const std::filesystem::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return Status::NotFound("cannot open vocabulary", path.string(), "the gzipped CLIP BPE vocabulary");
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  const bool failed = n < 0;
  gzclose(f);
  if (failed) return Status::Corrupt("cannot decompress vocabulary", path.string(), "a valid .gz file");
  return out;
}

bool IsLetter(char32_t c) {
  const int cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT ||
         cat == UTF8PROC_CATEGORY_LM || cat == UTF8PROC_CATEGORY_LO;
}

bool IsNumber(char32_t c) {
  const int cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}

bool StartsWith(std::u32string_view text, size_t i, std::u32string_view prefix) {
  return text.substr(i, prefix.size()) == prefix;
}

}  // namespace

Result<BpeTokenizer> BpeTokenizer::Load(const std::filesystem::path& vocab_gz) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadGzip(vocab_gz));
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    lines.emplace_back(text.data() + pos, end - pos);
    pos = end + 1;
  }
  if (lines.size() < static_cast<size_t>(kMergeCount) + 1) {
    return Status::Corrupt("vocabulary has " + std::to_string(lines.size()) + " lines", vocab_gz.string(),
                           "at least " + std::to_string(kMergeCount + 1) + " lines of BPE merges");
  }
  BpeTokenizer t;
  const auto symbols = ByteSymbols();
  for (const auto& [byte, cp] : symbols) {
    t.byte_id_[byte] = static_cast<int32_t>(t.vocab_.size());
    t.vocab_.push_back(EncodeUtf8(std::u32string(1, cp)));
  }
  for (int i = 0; i < kByteSymbols; ++i) t.vocab_.push_back(t.vocab_[static_cast<size_t>(i)] + std::string(kWordEnd));
  std::vector<std::pair<std::string, std::string>> merges;
  for (int r = 0; r < kMergeCount; ++r) {
    const std::string_view line = lines[static_cast<size_t>(r) + 1];
    const size_t space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos) {
      return Status::Corrupt("malformed merge " + QuoteText(line), vocab_gz.string() + ":" + std::to_string(r + 2),
                             "two symbols separated by one space");
    }
    merges.emplace_back(std::string(line.substr(0, space)), std::string(line.substr(space + 1)));
    t.vocab_.push_back(merges.back().first + merges.back().second);
  }
  t.vocab_.emplace_back(EncodeUtf8(kStartText));
  t.vocab_.emplace_back(EncodeUtf8(kEndText));
  if (t.vocab_.size() != static_cast<size_t>(kExpectedVocab)) {
    return Status::Internal("CLIP vocabulary size " + std::to_string(t.vocab_.size()));
  }
  for (size_t id = 0; id < t.vocab_.size(); ++id) t.encoder_[t.vocab_[id]] = static_cast<int32_t>(id);
  // Symbols are identified by their string (as in the Python implementation), i.e. by the
  // encoder's id for that string.
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto a = t.encoder_.find(merges[r].first);
    const auto b = t.encoder_.find(merges[r].second);
    if (a == t.encoder_.end() || b == t.encoder_.end()) {
      return Status::Corrupt("merge of unknown symbols at rank " + std::to_string(r), vocab_gz.string(),
                             "merges built from earlier symbols");
    }
    t.merges_.Add(a->second, b->second, t.encoder_.at(merges[r].first + merges[r].second));
  }
  return t;
}

Result<const BpeTokenizer*> BpeTokenizer::Default() {
  static std::once_flag once;
  static std::unique_ptr<BpeTokenizer> tokenizer;
  static Status status;
  std::call_once(once, [] {
    Result<std::filesystem::path> path = DataFile("clip/bpe_simple_vocab_16e6.txt.gz");
    if (!path.ok()) {
      status = path.status();
      return;
    }
    Result<BpeTokenizer> t = Load(*path);
    if (!t.ok()) {
      status = t.status();
      return;
    }
    tokenizer = std::make_unique<BpeTokenizer>(std::move(t).value());
  });
  if (!status.ok()) return status;
  return tokenizer.get();
}

std::vector<std::u32string> BpeTokenizer::PreTokenize(std::u32string_view text) {
  static const std::u32string_view kContractions[] = {U"'s", U"'t", U"'re", U"'ve", U"'m", U"'ll", U"'d"};
  std::vector<std::u32string> pieces;
  size_t i = 0;
  while (i < text.size()) {
    const char32_t c = text[i];
    size_t len = 0;
    if (StartsWith(text, i, kStartText)) {
      len = kStartText.size();
    } else if (StartsWith(text, i, kEndText)) {
      len = kEndText.size();
    } else if (c == '\'' && std::any_of(std::begin(kContractions), std::end(kContractions), [&](std::u32string_view k) {
                 if (StartsWith(text, i, k)) {
                   len = k.size();
                   return true;
                 }
                 return false;
               })) {
    } else if (IsLetter(c)) {
      while (i + len < text.size() && IsLetter(text[i + len])) ++len;
    } else if (IsNumber(c)) {
      len = 1;
    } else if (!IsPythonSpace(c)) {
      while (i + len < text.size() && !IsPythonSpace(text[i + len]) && !IsLetter(text[i + len]) &&
             !IsNumber(text[i + len])) {
        ++len;
      }
    }
    if (len == 0) {
      ++i;  // whitespace separates pieces
      continue;
    }
    pieces.emplace_back(text.substr(i, len));
    i += len;
  }
  return pieces;
}

void BpeTokenizer::AppendBpe(std::u32string_view piece, std::vector<int32_t>* out) const {
  if (piece == kStartText) {
    out->push_back(kStartOfText);
    return;
  }
  if (piece == kEndText) {
    out->push_back(kEndOfText);
    return;
  }
  const std::string bytes = EncodeUtf8(piece);
  std::vector<int32_t> ids(bytes.size());
  for (size_t k = 0; k < bytes.size(); ++k) ids[k] = byte_id_[static_cast<unsigned char>(bytes[k])];
  ids.back() += kByteSymbols;  // the "</w>" variant of the last symbol
  merges_.Apply(ids);
  out->insert(out->end(), ids.begin(), ids.end());
}

std::vector<int32_t> BpeTokenizer::EncodeCleaned(std::u32string_view cleaned) const {
  std::vector<int32_t> ids;
  for (const std::u32string& piece : PreTokenize(cleaned)) AppendBpe(piece, &ids);
  return ids;
}

Result<std::vector<int32_t>> BpeTokenizer::Tokenize(std::string_view text, int context_length) const {
  if (context_length < 2) {
    return Status::InvalidArgument("context length " + std::to_string(context_length), "Tokenize", "at least 2");
  }
  VISALIGN_ASSIGN_OR_RETURN(std::u32string decoded, DecodeUtf8(text));
  std::vector<int32_t> ids = {kStartOfText};
  const std::vector<int32_t> body = EncodeCleaned(CleanText(decoded));
  ids.insert(ids.end(), body.begin(), body.end());
  ids.push_back(kEndOfText);
  if (ids.size() > static_cast<size_t>(context_length)) {
    ids.resize(static_cast<size_t>(context_length));
    ids.back() = kEndOfText;
  }
  return ids;
}

Result<std::vector<int32_t>> Tokenize(std::string_view text, int context_length) {
  VISALIGN_ASSIGN_OR_RETURN(const BpeTokenizer* tokenizer, BpeTokenizer::Default());
  return tokenizer->Tokenize(text, context_length);
}

}  // namespace visalign::clip
