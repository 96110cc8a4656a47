// CLIP's text cleaning (open_clip SimpleTokenizer, clean='lower'), reimplemented over Unicode code
// points with utf8proc:
//   ftfy.fix_text -> html.unescape twice -> strip + collapse whitespace -> str.lower().
// FixText implements the ftfy 6.3 fixes that apply to text passed through fix_text's defaults
// (see docs/clip.md for exactly which, and how the mojibake repair is simplified).
#pragma once

#include <string>
#include <string_view>

#include "visalign/clip.h"
#include "visalign/core/status.h"

namespace visalign::clip {

// UTF-8 <-> code points. DecodeUtf8 fails on invalid UTF-8 (naming the byte offset).
Result<std::u32string> DecodeUtf8(std::string_view text);
std::string EncodeUtf8(std::u32string_view text);

// Python's html.unescape (HTML5 named references, numeric references with HTML5's remapping).
std::u32string HtmlUnescape(std::u32string_view text);
// The subset of ftfy.fix_text used by CLIP (see header comment).
std::u32string FixText(std::u32string_view text);
// Python's ' '.join(text.split()) (str.isspace whitespace).
std::u32string CollapseWhitespace(std::u32string_view text);
// Python's str.lower(): full Unicode lowercase incl. U+0130 -> "i\u0307" and final sigma.
std::u32string PythonLower(std::u32string_view text);

// open_clip's clean='whitespace' (its HFTokenizer's default: CLIPA, MetaCLIP 2): FixText,
// HtmlUnescape twice, CollapseWhitespace; no lowercasing.
std::u32string WhitespaceCleanText(std::u32string_view text);
// All of the above in CLIP's order: FixText, HtmlUnescape twice, CollapseWhitespace, PythonLower.
std::u32string CleanText(std::u32string_view text);

// open_clip's clean='canonicalize' (SigLIP): basic_clean (FixText, HtmlUnescape twice, strip), then
// big_vision's canonicalize_text: '_' -> ' ', delete ASCII punctuation (Python string.punctuation),
// PythonLower, CollapseWhitespace.
std::u32string CanonicalizeText(std::u32string_view text);

// transformers' SiglipTokenizer (do_lower_case): PythonLower, then its canonicalize_text: delete
// ASCII punctuation ('_' included), re.sub(r"\s+", " ") and strip (= CollapseWhitespace). No ftfy,
// no HTML unescaping, unlike CanonicalizeText.
std::u32string SiglipHfCanonicalizeText(std::u32string_view text);

// The cleaning a TokenizerConfig names (CanonicalizeText, SiglipHfCanonicalizeText or WhitespaceCleanText).
std::u32string CleanFor(TextCleaning cleaning, std::u32string_view text);

// Python str.isspace() for one code point.
bool IsPythonSpace(char32_t c);

}  // namespace visalign::clip
