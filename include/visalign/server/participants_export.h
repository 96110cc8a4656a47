// Who took part in a `visalign serve` study, one row per participant, for what the answer export
// leaves out (`visalign hues export-participants`): the recruitment platform's ids (PROLIFIC_PID,
// STUDY_ID, SESSION_ID; MTurk's workerId, assignmentId, hitId), the self-reported profile, the
// colour-vision screen (plate score, control plate) and the colour-vision verdict export-humans
// writes, the attention check's result, progress (items, answers, completion) and the browser's
// session metadata. CSV (a fixed set of columns, docs/serve.md) or JSON (everything as stored).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/store/study_store.h"

namespace visalign::server {

struct ParticipantRow {
  store::Participant participant;
  std::string colorblind;                // "YES" or "no": ExportedColorblind, as export-humans writes it
  std::optional<bool> attention_passed;  // none: not given one (checks off, or not reached yet)
  std::string attention_expected, attention_answer;
  size_t items = 0;    // items assigned (words and the attention check)
  size_t answers = 0;  // Hues answers stored
  size_t events = 0;   // page events (tab blur/focus, visibility)
};

// Every participant in the order they consented.
Result<std::vector<ParticipantRow>> ExportParticipants(store::StudyStore& study);

// The CSV: LF line ends, the header ParticipantsCsvHeader() and one row per participant.
std::string ParticipantsCsv(const std::vector<ParticipantRow>& rows);
const std::vector<std::string>& ParticipantsCsvHeader();
// The JSON: {"participants": [{"user_id", ..., "url_params": {...}, "metadata": {...}, "screen": {...}}]}.
Json ParticipantsJson(const std::vector<ParticipantRow>& rows);

}  // namespace visalign::server
