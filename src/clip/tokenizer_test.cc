#include "clip/tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <sstream>

#include "clip/fixture_testing.h"
#include "clip/text_clean.h"
#include "visalign/clip.h"

namespace visalign::clip {
namespace {

using ::testing::ElementsAre;

class TokenizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0); }
};

std::string Utf8(const std::u32string& s) { return EncodeUtf8(s); }

std::string Clean(const std::string& text) { return Utf8(CleanText(DecodeUtf8(text).value())); }

// Every case of the fixture: cleaned text, BPE pieces and final ids exactly as open_clip's
// SimpleTokenizer (ftfy 6.3.1, regex, Python 3.11) produced them.
TEST_F(TokenizerTest, MatchesOpenClipOnAllFixtureCases) {
  const Json cases = testing::ReadFixtureJson("tokenizer_cases.json")["cases"];
  ASSERT_EQ(cases.size(), 36u);
  Result<const BpeTokenizer*> tokenizer = BpeTokenizer::Default();
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  for (const auto& c : cases) {
    const std::string text = c["text"];
    SCOPED_TRACE(c["name"].get<std::string>());
    EXPECT_EQ(Clean(text), c["cleaned"].get<std::string>());
    const std::vector<int32_t> encoded = (*tokenizer)->EncodeCleaned(CleanText(DecodeUtf8(text).value()));
    EXPECT_EQ(encoded, c["encode_ids"].get<std::vector<int32_t>>());
    std::vector<std::string> pieces;
    for (int32_t id : encoded) pieces.push_back((*tokenizer)->Token(id));
    EXPECT_EQ(pieces, c["bpe_tokens"].get<std::vector<std::string>>());
    Result<std::vector<int32_t>> ids = Tokenize(text);
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(*ids, c["ids"].get<std::vector<int32_t>>());
  }
}

TEST_F(TokenizerTest, WrapsInStartAndEndOfText) {
  EXPECT_THAT(Tokenize("").value(), ElementsAre(kStartOfText, kEndOfText));
}

TEST_F(TokenizerTest, TruncatesToContextLengthKeepingEotLast) {
  const std::vector<int32_t> ids = Tokenize("a b c d e f", /*context_length=*/4).value();
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(ids.front(), kStartOfText);
  EXPECT_EQ(ids.back(), kEndOfText);
}

TEST_F(TokenizerTest, RejectsInvalidUtf8) {
  const Result<std::vector<int32_t>> ids = Tokenize("caf\xC3");
  ASSERT_FALSE(ids.ok());
  EXPECT_THAT(ids.status().what(), ::testing::HasSubstr("invalid UTF-8 at byte 3"));
}

// CLIP's bpe() exactly as open_clip's SimpleTokenizer writes it (strings, one round per merge
// rank), read from the shipped merges file: the reference the fast BPE must equal on any word.
class ReferenceBpe {
 public:
  ReferenceBpe() {
    const std::filesystem::path gz =
        std::filesystem::path(VISALIGN_TEST_DATA_DIR) / "clip/bpe_simple_vocab_16e6.txt.gz";
    gzFile f = gzopen(gz.c_str(), "rb");
    std::string text;
    char buf[1 << 16];
    for (int n; f != nullptr && (n = gzread(f, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    if (f != nullptr) gzclose(f);
    std::istringstream lines(text);
    std::string line;
    std::getline(lines, line);  // header
    constexpr int kMerges = 49152 - 256 - 2;
    for (int rank = 0; rank < kMerges && std::getline(lines, line); ++rank) {
      const size_t space = line.find(' ');
      pairs_.emplace_back(line.substr(0, space), line.substr(space + 1));
      ranks_[pairs_.back()] = rank;
    }
    // bytes_to_unicode(): printable bytes keep their code point, the others map to 256 + n.
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      byte_symbol_[b] = EncodeUtf8(std::u32string(1, static_cast<char32_t>(printable ? b : 256 + n++)));
    }
  }

  std::vector<std::string> Bpe(std::string_view token_bytes) const {
    std::vector<std::string> word;
    for (unsigned char b : token_bytes) word.push_back(byte_symbol_[b]);
    word.back() += "</w>";
    while (word.size() > 1) {
      int best = std::numeric_limits<int>::max();
      for (size_t i = 0; i + 1 < word.size(); ++i) {
        const auto it = ranks_.find({word[i], word[i + 1]});
        if (it != ranks_.end()) best = std::min(best, it->second);
      }
      if (best == std::numeric_limits<int>::max()) break;
      const auto& [first, second] = pairs_[static_cast<size_t>(best)];
      std::vector<std::string> merged;
      for (size_t i = 0; i < word.size(); ++i) {
        if (word[i] == first && i + 1 < word.size() && word[i + 1] == second) {
          merged.push_back(first + second);
          ++i;
        } else {
          merged.push_back(word[i]);
        }
      }
      word = std::move(merged);
    }
    return word;
  }

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;  // by rank
  std::map<std::pair<std::string, std::string>, int> ranks_;
  std::string byte_symbol_[256];
};

// The tokenizer merges with a heap in O(n log n) where CLIP rescans the word once per round (a
// 120,000-letter word took 6.8 s); both must give the same pieces on long, repetitive and
// non-ASCII words.
TEST_F(TokenizerTest, LongWordsGiveTheReferencePieces) {
  const BpeTokenizer* tokenizer = BpeTokenizer::Default().value();
  const ReferenceBpe reference;
  std::mt19937 rng(21);
  const std::vector<std::u32string> alphabets = {U"ab", U"abcde", U"abcdefghijklmnopqrstuvwxyz", U"éàüßжщ象"};
  std::vector<std::u32string> words = {U"a", U"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", U"abababababababababab",
                                       U"antidisestablishmentarianism", U"supercalifragilisticexpialidocious"};
  for (const std::u32string& alphabet : alphabets)
    for (size_t length : {size_t{7}, size_t{60}, size_t{300}, size_t{800}}) {
      std::u32string w;
      for (size_t i = 0; i < length; ++i) w += alphabet[rng() % alphabet.size()];
      words.push_back(w);
    }
  for (const std::u32string& w : words) {
    SCOPED_TRACE(EncodeUtf8(w).substr(0, 40));
    std::vector<std::string> pieces;
    for (int32_t id : tokenizer->EncodeCleaned(w)) pieces.push_back(tokenizer->Token(id));
    EXPECT_EQ(pieces, reference.Bpe(EncodeUtf8(w)));
  }
  // The fuzzer's word: tokenized whole, losing nothing (pieces join back to the word).
  const std::u32string huge(120000, U'q');
  std::string joined;
  for (int32_t id : tokenizer->EncodeCleaned(huge)) joined += tokenizer->Token(id);
  EXPECT_EQ(joined, std::string(120000, 'q') + "</w>");
}

TEST(TextCleanTest, HtmlUnescapeFollowsPythonHtml5Rules) {
  auto unescape = [](const std::string& s) { return Utf8(HtmlUnescape(DecodeUtf8(s).value())); };
  EXPECT_EQ(unescape("fish &amp; chips"), "fish & chips");
  EXPECT_EQ(unescape("&ampxyz"), "&xyz");         // legacy entity without ';', longest prefix
  EXPECT_EQ(unescape("&notit;"), "\u00ACit;");    // longest prefix "not"
  EXPECT_EQ(unescape("&#65;&#x42;&#67"), "ABC");  // numeric, ';' optional
  EXPECT_EQ(unescape("&#128;"), "\u20AC");        // HTML5 remaps 0x80 to the euro sign
  EXPECT_EQ(unescape("&#0;"), "\uFFFD");
  EXPECT_EQ(unescape("&#xD800;"), "\uFFFD");        // surrogate
  EXPECT_EQ(unescape("&#99999999999;"), "\uFFFD");  // beyond U+10FFFF
  EXPECT_EQ(unescape("&bogus; & &#;"), "&bogus; & &#;");
  EXPECT_EQ(unescape("&hellip;&NewLine;"), "\u2026\n");
}

TEST(TextCleanTest, FtfyFixes) {
  auto fix = [](const std::string& s) { return Utf8(FixText(DecodeUtf8(s).value())); };
  EXPECT_EQ(fix("\u201Cq\u201D \u2018a\u2019"), "\"q\" 'a'");
  EXPECT_EQ(fix("\uFB01ne \uFB02ow"), "fine flow");
  EXPECT_EQ(fix("\uFF21\uFF11\u3000x"), "A1 x");
  EXPECT_EQ(fix("caf\u00C3\u00A9"), "caf\u00E9");                      // UTF-8 read as latin-1
  EXPECT_EQ(fix("\u00E2\u20AC\u0153hi\u00E2\u20AC\u009D"), "\"hi\"");  // cp1252 mojibake of curly quotes
  EXPECT_EQ(fix("caf\u00E9"), "caf\u00E9");                            // legitimate latin-1 text stays
  EXPECT_EQ(fix("e\u0301"), "\u00E9");                                 // NFC
  EXPECT_EQ(fix("a\x1b[31mred\x1b[0m\x01"), "ared");                   // terminal escapes, control chars
  EXPECT_EQ(fix("&EACUTE; &amp;amp;"), "\u00C9 &");    // ftfy unescapes (repeatedly) when there is no '<'
  EXPECT_EQ(fix("<b>&amp;</b>"), "<b>&amp;</b>");      // ... skipped when '<' is present
  EXPECT_EQ(fix("x\u00B2 \u00BD"), "x\u00B2 \u00BD");  // no general NFKC
}

TEST(TextCleanTest, PythonLowerHandlesSpecialCasing) {
  auto lower = [](const std::string& s) { return Utf8(PythonLower(DecodeUtf8(s).value())); };
  EXPECT_EQ(lower("\u0130"), "i\u0307");
  EXPECT_EQ(lower("\u039F\u0394\u039F\u03A3"), "\u03BF\u03B4\u03BF\u03C2");  // final sigma
  EXPECT_EQ(lower("\u03A3\u039F"), "\u03C3\u03BF");                          // not final
  EXPECT_EQ(lower("\u039F\u03A3 \u03A3"), "\u03BF\u03C2 \u03C3");            // lone sigma: not final
}

TEST(TextCleanTest, CollapseWhitespaceUsesPythonIsspace) {
  auto collapse = [](const std::string& s) { return Utf8(CollapseWhitespace(DecodeUtf8(s).value())); };
  EXPECT_EQ(collapse(" \t a\u00A0\u3000b\x1c c \u200B "), "a b c \u200B");
}

TEST(TextCleanTest, PreTokenizeFollowsClipPattern) {
  auto pieces = [](const std::string& s) {
    std::vector<std::string> out;
    for (const auto& p : BpeTokenizer::PreTokenize(DecodeUtf8(s).value())) out.push_back(Utf8(p));
    return out;
  };
  EXPECT_THAT(pieces("don't 123 ab!!<end_of_text>x"),
              ElementsAre("don", "'t", "1", "2", "3", "ab", "!!<", "end", "_", "of", "_", "text", ">", "x"));
  EXPECT_THAT(pieces("a<end_of_text>b's"), ElementsAre("a", "<end_of_text>", "b", "'s"));
}

}  // namespace
}  // namespace visalign::clip
