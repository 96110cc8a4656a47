// The optional colour-vision screen of the game: procedurally generated pseudo-isochromatic plates
// (Ishihara-style dot fields). Each plate hides a digit drawn in seven-segment form: its dots take
// colours from a "figure" palette and the rest from a "background" palette of similar lightness
// that a protan or deutan observer confuses with it; the lightness of both varies at random, so the
// digit cannot be read from brightness. One control plate uses a figure anyone can see (a dark
// figure on a light ground); a wrong answer there marks the screen unreliable. The server draws and
// scores the plates (the page only paints dots), and the score is stored apart from the
// participant's self-report. A screen, not a diagnosis (docs/serve.md).
#pragma once

#include <cstdint>
#include <vector>

#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::server {

struct PlateDot {
  float x = 0, y = 0, r = 0;  // in the unit disc
  uint8_t rgb[3] = {0, 0, 0};
};

struct Plate {
  int digit = 0;         // 0..9
  bool control = false;  // readable with any colour vision
  std::vector<PlateDot> dots;
};

// The same `seed` gives the same plates (each participant's seed is their id, so scoring needs no
// state): one control plate first, then kConfusionPlates confusion plates.
inline constexpr int kConfusionPlates = 4;
std::vector<Plate> ScreeningPlates(uint64_t seed);

// What the page gets: {"plates": [{"dots": [[x, y, r, R, G, B], ...]}], "choices": [0..9, "none"]}
// (no digits).
Json PlatesJson(const std::vector<Plate>& plates);

struct ScreenScore {
  double score = 0;  // share of the confusion plates read correctly
  Json answers;      // {"answers": [...], "control_correct": bool, "correct": [bool, ...]}
};
// Scores {"answers": [digit or null (can't see one), one per plate]}; InvalidArgument at "request
// body field answers" for anything else.
Result<ScreenScore> ScoreScreen(const std::vector<Plate>& plates, const Json& body);

}  // namespace visalign::server
