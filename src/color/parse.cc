// Color notation parsing: #RRGGBB, #RGB, rgb(), hsl(), lab() and ISCC-NBS names.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "visalign/color.h"

namespace visalign::color {
namespace {

constexpr char kAcceptedForms[] =
    "#RRGGBB, #RGB, rgb(r, g, b) with integers 0-255, hsl(h, s%, l%) with s and l in 0-100%, "
    "lab(L, a, b) with L in 0-100, or an ISCC-NBS name such as \"vivid pink\" (see `visalign color names`)";
constexpr double kMaxPercent = 100.0;
constexpr double kMaxLabL = 100.0;
constexpr int kMaxByte = 255;

Status Invalid(std::string_view text, const std::string& expected) {
  return Status::InvalidArgument("invalid color \"" + std::string(text) + "\"", "", expected);
}

std::string_view Trim(std::string_view s) {
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// A CSS <number>: [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?, finite.
std::optional<double> ParseNumber(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const size_t mantissa_start = i;
  size_t n = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    n += digits();
  }
  if (n == 0) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  double v = 0;
  // from_chars rejects a leading '+', so parse from the mantissa and apply the sign here.
  auto [end, ec] = std::from_chars(s.data() + mantissa_start, s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return s.front() == '-' ? -v : v;
}

// Strips a unit suffix (e.g. "%", "deg"); returns nullopt if `s` does not end with it.
std::optional<std::string_view> StripSuffix(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size() || s.substr(s.size() - suffix.size()) != suffix) return std::nullopt;
  return s.substr(0, s.size() - suffix.size());
}

ParsedColor FromExact(Notation notation, Rgb rgb) {
  ParsedColor out;
  out.notation = notation;
  out.rgb = rgb;
  out.rgb8 = ToSrgb8(rgb);
  out.in_gamut = InGamut(rgb);
  out.lab = SrgbToLab(rgb);
  return out;
}

Result<ParsedColor> ParseHex(std::string_view original, std::string_view digits) {
  const std::string expected = "#RRGGBB or #RGB with hexadecimal digits 0-9, A-F";
  if (digits.size() != 3 && digits.size() != 6) return Invalid(original, expected);
  int v[6];
  for (size_t i = 0; i < digits.size(); ++i)
    if ((v[i] = HexDigit(digits[i])) < 0) return Invalid(original, expected);
  Srgb8 c;
  if (digits.size() == 3) {
    constexpr int kRepeat = 17;  // #RGB = #RRGGBB: 0xF -> 0xFF
    c = {uint8_t(v[0] * kRepeat), uint8_t(v[1] * kRepeat), uint8_t(v[2] * kRepeat)};
  } else {
    c = {uint8_t(v[0] * 16 + v[1]), uint8_t(v[2] * 16 + v[3]), uint8_t(v[4] * 16 + v[5])};
  }
  return FromExact(Notation::kHex, FromSrgb8(c));
}

// Splits "a, b, c" (comma syntax) or "a b c" (CSS Color 4 space syntax) into exactly three
// non-empty trimmed components.
std::optional<std::array<std::string_view, 3>> SplitArgs(std::string_view args) {
  std::vector<std::string_view> parts;
  if (args.find(',') != std::string_view::npos) {
    size_t start = 0;
    for (size_t comma; (comma = args.find(',', start)) != std::string_view::npos; start = comma + 1)
      parts.push_back(Trim(args.substr(start, comma - start)));
    parts.push_back(Trim(args.substr(start)));
  } else {
    constexpr char kSpaces[] = " \t\n\r\f\v";
    for (size_t start = args.find_first_not_of(kSpaces); start != std::string_view::npos;) {
      const size_t end = args.find_first_of(kSpaces, start);
      parts.push_back(args.substr(start, end - start));
      start = args.find_first_not_of(kSpaces, end);
    }
  }
  if (parts.size() != 3 || std::any_of(parts.begin(), parts.end(), [](std::string_view p) { return p.empty(); }))
    return std::nullopt;
  return std::array<std::string_view, 3>{parts[0], parts[1], parts[2]};
}

Result<ParsedColor> ParseRgbArgs(std::string_view original, const std::array<std::string_view, 3>& args) {
  const char* channel[3] = {"r", "g", "b"};
  Srgb8 c;
  uint8_t* dest[3] = {&c.r, &c.g, &c.b};
  for (int i = 0; i < 3; ++i) {
    int v = -1;
    auto [end, ec] = std::from_chars(args[i].data(), args[i].data() + args[i].size(), v);
    if (ec != std::errc() || end != args[i].data() + args[i].size() || v < 0 || v > kMaxByte)
      return Invalid(original,
                     "rgb(r, g, b) with integers 0-255; got " + std::string(channel[i]) + " = " + std::string(args[i]));
    *dest[i] = uint8_t(v);
  }
  return FromExact(Notation::kRgb, FromSrgb8(c));
}

Result<ParsedColor> ParseHslArgs(std::string_view original, const std::array<std::string_view, 3>& args) {
  const std::string form = "hsl(h, s%, l%) with h in degrees and s, l in 0-100%";
  std::optional<std::string_view> h_text = StripSuffix(args[0], "deg");
  std::optional<double> h = ParseNumber(Trim(h_text.value_or(args[0])));
  if (!h) return Invalid(original, form + "; got h = " + std::string(args[0]));
  double percent[2];
  const char* names[2] = {"s", "l"};
  for (int i = 0; i < 2; ++i) {
    std::optional<std::string_view> number = StripSuffix(args[i + 1], "%");
    std::optional<double> v = number ? ParseNumber(Trim(*number)) : std::nullopt;
    if (!v || *v < 0 || *v > kMaxPercent)
      return Invalid(original, form + "; got " + names[i] + " = " + std::string(args[i + 1]));
    percent[i] = *v;
  }
  return FromExact(Notation::kHsl, HslToRgb({*h, percent[0] / kMaxPercent, percent[1] / kMaxPercent}));
}

Result<ParsedColor> ParseLabArgs(std::string_view original, const std::array<std::string_view, 3>& args) {
  const std::string form =
      fmt::format("lab(L, a, b) with real numbers, L in 0-100 (or 0-100%), a and b in -{0:g}..{0:g}", kMaxLabAb);
  std::optional<std::string_view> l_text = StripSuffix(args[0], "%");
  std::optional<double> lightness = ParseNumber(Trim(l_text.value_or(args[0])));
  if (!lightness || *lightness < 0 || *lightness > kMaxLabL)
    return Invalid(original, form + "; got L = " + std::string(args[0]));
  auto opponent = [&](int i) -> std::optional<double> {
    std::optional<double> v = ParseNumber(args[i]);
    if (v && std::fabs(*v) > kMaxLabAb) return std::nullopt;
    return v;
  };
  std::optional<double> a = opponent(1);
  if (!a) return Invalid(original, form + "; got a = " + std::string(args[1]));
  std::optional<double> b = opponent(2);
  if (!b) return Invalid(original, form + "; got b = " + std::string(args[2]));
  const Lab lab{*lightness, *a, *b};
  ParsedColor out = FromExact(Notation::kLab, LabToSrgb(lab));
  out.lab = lab;
  return out;
}

// Parses every notation except names; nullopt when `text` is not hex or functional notation.
std::optional<Result<ParsedColor>> ParseNotation(std::string_view original) {
  const std::string text = Lower(Trim(original));
  if (text.empty()) return Result<ParsedColor>(Invalid(original, kAcceptedForms));
  if (text.front() == '#') return ParseHex(original, std::string_view(text).substr(1));
  const size_t open = text.find('(');
  if (open == std::string::npos) return std::nullopt;
  const std::string_view function = Trim(std::string_view(text).substr(0, open));
  using ArgParser = Result<ParsedColor> (*)(std::string_view, const std::array<std::string_view, 3>&);
  ArgParser parser = nullptr;
  std::string form;
  if (function == "rgb") {
    parser = ParseRgbArgs;
    form = "rgb(r, g, b) with integers 0-255";
  } else if (function == "hsl") {
    parser = ParseHslArgs;
    form = "hsl(h, s%, l%) with s and l in 0-100%";
  } else if (function == "lab") {
    parser = ParseLabArgs;
    form = "lab(L, a, b) with L in 0-100";
  } else {
    return Result<ParsedColor>(Invalid(original, kAcceptedForms));
  }
  if (text.back() != ')') return Result<ParsedColor>(Invalid(original, form + " (missing closing parenthesis)"));
  const std::string_view inner = std::string_view(text).substr(open + 1, text.size() - open - 2);
  std::optional<std::array<std::string_view, 3>> args = SplitArgs(inner);
  if (!args) return Result<ParsedColor>(Invalid(original, form + ", exactly three components"));
  return parser(original, *args);
}

Result<ParsedColor> ParseName(std::string_view original, const IsccNbs& names) {
  const IsccNbs::NameMatch match = names.FindName(original);
  if (match.level == 0) return Invalid(original, kAcceptedForms);
  ParsedColor out = FromExact(Notation::kName, FromSrgb8(match.rgb));
  out.name = match.name;
  out.iscc_level = match.level;
  return out;
}

// Splits "a,b,c" at commas outside parentheses.
std::vector<std::string_view> SplitColorList(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')') --depth;
    if (text[i] == ',' && depth == 0) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(text.substr(start));
  return parts;
}

}  // namespace

std::string_view NotationName(Notation n) {
  switch (n) {
    case Notation::kHex:
      return "hex";
    case Notation::kRgb:
      return "rgb";
    case Notation::kHsl:
      return "hsl";
    case Notation::kLab:
      return "lab";
    case Notation::kName:
      return "name";
  }
  return "unknown";
}

Result<ParsedColor> ParseColor(std::string_view text, const IsccNbs& names) {
  if (std::optional<Result<ParsedColor>> parsed = ParseNotation(text)) return std::move(*parsed);
  return ParseName(text, names);
}

Result<ParsedColor> ParseColor(std::string_view text) {
  if (std::optional<Result<ParsedColor>> parsed = ParseNotation(text)) return std::move(*parsed);
  VISALIGN_ASSIGN_OR_RETURN(const IsccNbs* names, IsccNbs::Default());
  return ParseName(text, *names);
}

Result<std::vector<Srgb8>> ParseColorList(std::string_view text) {
  std::vector<Srgb8> colors;
  for (std::string_view part : SplitColorList(text)) {
    VISALIGN_ASSIGN_OR_RETURN(ParsedColor parsed, ParseColor(part));
    colors.push_back(parsed.rgb8);
  }
  return colors;
}

}  // namespace visalign::color
