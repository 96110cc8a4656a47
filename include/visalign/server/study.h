// A study's settings for `visalign serve --study FILE` (JSON, or TOML by the .toml extension): which
// languages are offered, how many words each participant answers, each page's consent text, the completion
// code(s) and redirect, whether the colour-vision screen is shown, the attention-check item and the
// request limits. Every field is optional; a missing one keeps the default below. Unknown fields
// are an error (a misspelt setting must not silently fall back to a default).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::server {

// The languages the game can be played in: the code the study file and the page use, the name the
// published answer files use, and the word list column. Adding one is a row here, a column in
// words.csv and its strings in web/serve/game.js.
struct Language {
  std::string code;  // "es"
  std::string name;  // "spanish"
};
const std::vector<Language>& SupportedLanguages();

// The instructed attention-check item: "select cell <cell>" at `position` (0-based) among the items.
struct AttentionCheck {
  bool enabled = true;
  std::string cell = "H15";
  int position = 7;  // clamped to the number of words
};

struct RateLimit {
  double per_second = 0;  // sustained requests per second; 0: no limit
  double burst = 0;       // requests allowed at once
};

struct StudyConfig {
  std::vector<std::string> languages = {"es", "en"};
  int words_per_participant = 15;
  // Each page asks for consent to its own task: the game (`consent_text`, the one field older study
  // files have, so it keeps meaning the game's), the regionalization tool and the ACVA rating page.
  std::string consent_text =
      "You are invited to take part in a study on how people link words and colours. You will see a board "
      "of 480 colours and a word, and pick the colour that fits the word best. It takes about 5 minutes. "
      "We record your answers, the age band, gender and colour vision you report, and technical details of "
      "your screen and browser; no name, e-mail or IP address is stored. Taking part is voluntary and you may "
      "stop at any time.";
  std::string regions_consent_text =
      "You are invited to take part in a study on how people divide colours into categories. You will see a "
      "board of 480 colours and paint each colour with one of 8 colour names (brown, red, orange, yellow, "
      "green, blue, purple, pink). It takes about 10 to 15 minutes. We record your painting and when you "
      "saved it; no name, e-mail or IP address is stored. Taking part is voluntary and you may stop at any time.";
  std::string rate_consent_text =
      "You are invited to take part in a study on how well images made by AI image generators show abstract "
      "concepts. You will see one image at a time with a few questions about it, and answer each on a scale "
      "from 0 (clearly not) to 1 (clearly yes); some images may be unexpected or odd. You rate as many images "
      "as you like. We record your ratings and the language of the questions; no name, e-mail or IP address "
      "is stored. Taking part is voluntary and you may stop at any time.";
  std::vector<std::string> completion_codes;  // one is given to each participant, in turn; none: no code
  std::string completion_url;                 // where a finished participant is sent; "{code}" is replaced by the code
  bool cvd_screen = true;
  AttentionCheck attention_check;
  RateLimit per_ip{50, 100};
  RateLimit per_session{10, 30};
  size_t max_body_bytes = 16 * 1024;

  // What the page needs to know (no completion codes: those are given only at the end).
  Json PublicJson() const;
};

// Reads a study file: InvalidArgument at "study file <path>[ field <name>]" for a wrong type, an
// unknown field, an unsupported language, words per participant outside 1..1000, a bad cell, a
// completion URL that is not http(s), or limits below 0.
Result<StudyConfig> LoadStudyConfig(const std::filesystem::path& path);
// The same from a parsed document (`where` names it).
Result<StudyConfig> StudyConfigFromJson(const Json& doc, const std::string& where);

}  // namespace visalign::server
