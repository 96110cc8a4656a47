#include "visalign/server/humans_export.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "visalign/core/io.h"
#include "visalign/server/study.h"

namespace visalign::server {
namespace {

constexpr char kHeader[] =
    "userId,timestamp,clueCategory,clueId,word,coordinate,language,gender,ageRange,colorblind,word_en";

std::string LanguageName(const std::string& code) {
  for (const Language& l : SupportedLanguages())
    if (l.code == code) return l.name;
  return code;
}

}  // namespace

std::string PublishedCategory(const std::string& category, const std::string& language) {
  // As the published answers spell them (data/hues/human_responses.csv).
  static const std::map<std::string, std::pair<std::string, std::string>> kLabels = {
      {"Animal", {"ANIMAL", "ANIMAL"}},
      {"Environment", {"ENTORNO", "ENVIRONMENT"}},
      {"Food", {"COMESTIBLE", "FOOD"}},
      {"Mineral", {"PIEDRA", "STONE"}},
      {"Plant", {"PLANTA", "PLANT"}},
      {"Pop Culture", {"POP", "POP"}},
      {"Subjective", {"SUBJETIVO", "SUBJETIVE"}}};
  auto it = kLabels.find(category);
  if (it != kLabels.end()) return language == "es" ? it->second.first : it->second.second;
  std::string upper = category;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  return upper;
}

std::string ExportedColorblind(const store::Participant& p) {
  const bool flagged = p.screen_score && *p.screen_score < kScreenPassScore;
  return p.colorblind == "yes" || flagged ? "YES" : "no";
}

Result<HumansExport> ExportHumans(store::StudyStore& study, const hues::Vocabulary& vocabulary,
                                  const HumansExportOptions& options) {
  HumansExport out;
  out.csv = std::string(kHeader) + "\n";
  if (options.merge_shipped) {
    const std::filesystem::path& shipped_csv = options.shipped_csv;
    VISALIGN_ASSIGN_OR_RETURN(std::string shipped, ReadFile(shipped_csv));
    shipped.erase(std::remove(shipped.begin(), shipped.end(), '\r'), shipped.end());
    const size_t eol = shipped.find('\n');
    if (shipped.substr(0, eol) != kHeader)
      return Status::InvalidArgument("other columns", "shipped answers " + shipped_csv.string(), kHeader);
    if (eol != std::string::npos) {
      std::string rows = shipped.substr(eol + 1);
      if (!rows.empty() && rows.back() != '\n') rows += '\n';
      out.shipped = static_cast<size_t>(std::count(rows.begin(), rows.end(), '\n'));
      out.csv += rows;
    }
  }
  VISALIGN_ASSIGN_OR_RETURN(std::vector<store::Participant> participants, study.Participants());
  std::map<int64_t, const store::Participant*> by_id;
  for (const store::Participant& p : participants) by_id[p.id] = &p;
  VISALIGN_ASSIGN_OR_RETURN(std::vector<store::HuesAnswerRow> answers, study.Answers());
  std::set<int64_t> failed_attention, low_plate_score, answered, excluded, excluded_attention, excluded_plates;
  if (options.exclude_failed_attention) {
    VISALIGN_ASSIGN_OR_RETURN(std::vector<store::StudyRecord> checks, study.Records(kAttentionCheckRecord));
    for (const store::StudyRecord& check : checks)
      if (auto passed = check.payload.find("passed"); passed != check.payload.end() && *passed == false)
        failed_attention.insert(check.participant);
  }
  if (options.min_plate_score)
    for (const store::Participant& p : participants)
      if (!p.screen_score || *p.screen_score < *options.min_plate_score) low_plate_score.insert(p.id);
  for (const store::HuesAnswerRow& a : answers) {
    const bool failed = failed_attention.count(a.participant) > 0, low = low_plate_score.count(a.participant) > 0;
    if (failed) excluded_attention.insert(a.participant);
    if (low) excluded_plates.insert(a.participant);
    if (failed || low) {
      excluded.insert(a.participant);
      continue;
    }
    const store::Participant& p = *by_id.at(a.participant);
    const auto word = vocabulary.IndexOfClue(a.clue_id);
    const std::string word_en = word ? vocabulary.words()[static_cast<size_t>(*word)].en : "";
    for (const std::string& f : {p.user_id, a.timestamp, a.category, std::to_string(a.clue_id), a.word, a.coordinate,
                                 LanguageName(p.language), p.gender, p.age_range, ExportedColorblind(p)})
      out.csv += CsvField(f) + ",";
    out.csv += CsvField(word_en) + "\n";
    ++out.answers;
    answered.insert(a.participant);
  }
  out.participants = answered.size();
  out.excluded_participants = excluded.size();
  out.excluded_failed_attention = excluded_attention.size();
  out.excluded_plate_score = excluded_plates.size();
  return out;
}

}  // namespace visalign::server
