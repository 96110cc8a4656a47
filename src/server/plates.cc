#include "server/plates.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

namespace visalign::server {
namespace {

constexpr int kDotAttempts = 6000;
constexpr size_t kMaxDots = 420;
constexpr double kMinRadius = 0.018, kMaxRadius = 0.048;
constexpr double kSegmentHalfWidth = 0.11;

// Seven segments a..g of each digit (a top, b upper right, c lower right, d bottom, e lower left,
// f upper left, g middle).
constexpr std::array<const char*, 10> kSegments = {"abcdef", "bc",     "abged", "abgcd",   "fgbc",
                                                   "afgcd",  "afgedc", "abc",   "abcdefg", "abcdfg"};

double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

double SegmentDistance(double px, double py, double ax, double ay, double bx, double by) {
  const double dx = bx - ax, dy = by - ay;
  const double t = std::clamp(((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy), 0.0, 1.0);
  return std::hypot(px - ax - t * dx, py - ay - t * dy);
}

// Whether (x, y) lies on the digit's strokes (digit box: x in [-0.32, 0.32], y in [-0.5, 0.5]).
bool OnDigit(int digit, double x, double y) {
  constexpr double l = -0.32, r = 0.32, t = -0.5, m = 0.0, b = 0.5;
  for (const char* s = kSegments[static_cast<size_t>(digit)]; *s; ++s) {
    double d = 1;
    switch (*s) {
      case 'a':
        d = SegmentDistance(x, y, l, t, r, t);
        break;
      case 'b':
        d = SegmentDistance(x, y, r, t, r, m);
        break;
      case 'c':
        d = SegmentDistance(x, y, r, m, r, b);
        break;
      case 'd':
        d = SegmentDistance(x, y, l, b, r, b);
        break;
      case 'e':
        d = SegmentDistance(x, y, l, m, l, b);
        break;
      case 'f':
        d = SegmentDistance(x, y, l, t, l, m);
        break;
      case 'g':
        d = SegmentDistance(x, y, l, m, r, m);
        break;
    }
    if (d < kSegmentHalfWidth) return true;
  }
  return false;
}

using Palette = std::array<std::array<int, 3>, 3>;
// Red-orange figures on olive-green grounds of similar lightness (a red-green confusion pair), and
// the control: a dark grey figure on a pale ground.
constexpr Palette kConfusionFigure = {{{208, 112, 82}, {196, 124, 74}, {220, 132, 96}}};
constexpr Palette kConfusionGround = {{{146, 156, 86}, {158, 150, 92}, {136, 150, 96}}};
constexpr Palette kControlFigure = {{{70, 70, 80}, {60, 64, 72}, {84, 80, 86}}};
constexpr Palette kControlGround = {{{222, 214, 196}, {230, 222, 204}, {214, 210, 200}}};

Plate Draw(int digit, bool control, std::mt19937_64& rng) {
  Plate plate;
  plate.digit = digit;
  plate.control = control;
  for (int attempt = 0; attempt < kDotAttempts && plate.dots.size() < kMaxDots; ++attempt) {
    const double r = kMinRadius + (kMaxRadius - kMinRadius) * Uniform(rng);
    const double x = (2 * Uniform(rng) - 1) * (1 - r), y = (2 * Uniform(rng) - 1) * (1 - r);
    if (std::hypot(x, y) > 1 - r) continue;
    const bool overlaps = std::any_of(plate.dots.begin(), plate.dots.end(), [&](const PlateDot& d) {
      return std::hypot(d.x - x, d.y - y) < d.r + r + 0.006;
    });
    if (overlaps) continue;
    const bool figure = OnDigit(digit, x, y);
    const Palette& palette =
        figure ? (control ? kControlFigure : kConfusionFigure) : (control ? kControlGround : kConfusionGround);
    const auto& base = palette[static_cast<size_t>(rng() % palette.size())];
    const double lightness = 0.82 + 0.36 * Uniform(rng);  // the same jitter for figure and ground
    PlateDot dot;
    dot.x = static_cast<float>(x), dot.y = static_cast<float>(y), dot.r = static_cast<float>(r);
    for (int c = 0; c < 3; ++c)
      dot.rgb[c] = static_cast<uint8_t>(std::clamp(base[static_cast<size_t>(c)] * lightness, 0.0, 255.0));
    plate.dots.push_back(dot);
  }
  return plate;
}

}  // namespace

std::vector<Plate> ScreeningPlates(uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 1);
  std::vector<Plate> plates;
  plates.push_back(Draw(static_cast<int>(rng() % 10), true, rng));
  for (int i = 0; i < kConfusionPlates; ++i) plates.push_back(Draw(static_cast<int>(rng() % 10), false, rng));
  return plates;
}

Json PlatesJson(const std::vector<Plate>& plates) {
  Json out = {{"plates", Json::array()}, {"choices", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, "none"}}};
  for (const Plate& p : plates) {
    Json dots = Json::array();
    for (const PlateDot& d : p.dots)
      dots.push_back({std::round(d.x * 1000) / 1000, std::round(d.y * 1000) / 1000, std::round(d.r * 1000) / 1000,
                      d.rgb[0], d.rgb[1], d.rgb[2]});
    out["plates"].push_back({{"dots", std::move(dots)}});
  }
  return out;
}

Result<ScreenScore> ScoreScreen(const std::vector<Plate>& plates, const Json& body) {
  auto answers = body.find("answers");
  const auto bad = [&] {
    return Status::InvalidArgument("not " + std::to_string(plates.size()) + " answers", "request body field answers",
                                   "a list with one digit 0-9 or null (no digit seen) per plate");
  };
  if (answers == body.end() || !answers->is_array() || answers->size() != plates.size()) return bad();
  ScreenScore s;
  s.answers = {{"answers", *answers}, {"correct", Json::array()}};
  int right = 0;
  for (size_t i = 0; i < plates.size(); ++i) {
    const Json& a = (*answers)[i];
    if (!a.is_null() && !(a.is_number_unsigned() && a.get<uint64_t>() <= 9)) return bad();
    const bool correct = !a.is_null() && a.get<int>() == plates[i].digit;
    s.answers["correct"].push_back(correct);
    if (plates[i].control)
      s.answers["control_correct"] = correct;
    else
      right += correct;
  }
  s.score = static_cast<double>(right) / kConfusionPlates;
  return s;
}

}  // namespace visalign::server
