// The answers a `visalign serve` study collected, in the published Hues and Cues answer format
// (userId,timestamp,clueCategory,clueId,word,coordinate,language,gender,ageRange,colorblind,word_en),
// so `hues humans --humans FILE` and `hues evaluate --humans FILE` read it unchanged; optionally
// after the shipped answers (data/hues/human_responses.csv), as one data set, and without the
// participants who failed the attention check or scored below a plate score.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "visalign/benchmarks/hues/words.h"
#include "visalign/core/status.h"
#include "visalign/store/study_store.h"

namespace visalign::server {

// The published clueCategory of a words.csv category in `language` ("es" Food -> COMESTIBLE,
// "en" Food -> FOOD); the category upper-cased when the table has no entry.
std::string PublishedCategory(const std::string& category, const std::string& language);

// The study store's records of attention-check items: payload {"expected", "coordinate",
// "passed", "client_id"}, one per participant given the check.
inline constexpr char kAttentionCheckRecord[] = "attention_check";

// The colour-vision screen flags a participant who read fewer than half of its confusion plates
// (a plate score below this; the score is the share read, 0 to 1).
inline constexpr double kScreenPassScore = 0.5;

// The export's colorblind column: "YES" for a self-reported colour-vision deficiency or a screen
// score below kScreenPassScore (a participant who read no plate is not exported as "no"), else "no".
// Unscreened participants keep their self-report.
std::string ExportedColorblind(const store::Participant& p);

struct HumansExportOptions {
  bool merge_shipped = false;             // the rows of shipped_csv first
  std::filesystem::path shipped_csv;      // the published file: its header must be the same columns
  bool exclude_failed_attention = false;  // no rows of participants who failed the attention check
  // No rows of participants whose plate score is below this, or who have none (not screened).
  std::optional<double> min_plate_score;
};

struct HumansExport {
  std::string csv;     // LF line ends, a header and one row per answer
  size_t answers = 0;  // rows from the study store
  size_t shipped = 0;  // rows from the shipped file (with merge_shipped)
  size_t participants = 0;
  size_t excluded_participants = 0;      // who answered and was left out, for either reason below
  size_t excluded_failed_attention = 0;  // with exclude_failed_attention: who failed it and answered
  size_t excluded_plate_score = 0;       // with min_plate_score: who scored less (or has no score) and answered
};

// Every stored answer in the order accepted; attention-check items are not answers and are not
// exported.
Result<HumansExport> ExportHumans(store::StudyStore& study, const hues::Vocabulary& vocabulary,
                                  const HumansExportOptions& options = {});

}  // namespace visalign::server
