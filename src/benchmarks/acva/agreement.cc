// Agreement of automatic adequacy with human ratings (docs/acva.md, "Human validation").
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "visalign/benchmarks/acva/acva.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::acva {
namespace {

constexpr int kBins = 5;

}  // namespace

int ScoreBin(double score) { return std::clamp(static_cast<int>(std::floor(score * kBins)), 0, kBins - 1); }

Result<AgreementResult> HumanAgreement(const std::vector<Json>& items, const std::filesystem::path& ratings_csv) {
  VISALIGN_ASSIGN_OR_RETURN(CsvTable table, ReadCsv(ratings_csv));
  VISALIGN_ASSIGN_OR_RETURN(size_t image_col, table.Column("image"));
  VISALIGN_ASSIGN_OR_RETURN(size_t rater_col, table.Column("rater"));
  VISALIGN_ASSIGN_OR_RETURN(size_t score_col, table.Column("score"));

  // Items are found by image_id or by SHA-256; items without an adequacy (invalid judge answers)
  // are known but cannot be compared.
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < items.size(); ++i) {
    by_name[StringMember(items[i], "image_id")] = i;
    by_name[StringMember(items[i], "sha256")] = i;
  }
  AgreementResult result;
  std::map<size_t, std::vector<double>> human;  // item -> scores
  std::set<std::pair<std::string, std::string>> seen;
  std::set<std::string> unmatched;
  double exact = 0, within_one = 0;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    const std::string where = table.Where(r);
    VISALIGN_ASSIGN_OR_RETURN(double score, ParseDouble(row[score_col], where + " column score"));
    if (!(score >= 0 && score <= 1))
      return Status::InvalidArgument("score " + row[score_col], where + " column score",
                                     "a score in [0, 1] (map a 1-5 Likert rating s to (s - 1) / 4)");
    if (!seen.insert({row[image_col], row[rater_col]}).second)
      return Status::InvalidArgument(
          "second rating of image \"" + row[image_col] + "\" by rater \"" + row[rater_col] + "\"", where,
          "one rating per (image, rater)");
    auto it = by_name.find(row[image_col]);
    if (it == by_name.end() || row[image_col].empty()) {
      unmatched.insert(row[image_col]);
      continue;
    }
    const Json& adequacy = items[it->second]["adequacy"];
    if (!adequacy.is_number()) continue;
    const int auto_bin = ScoreBin(adequacy.get<double>()), human_bin = ScoreBin(score);
    exact += auto_bin == human_bin ? 1 : 0;
    within_one += std::abs(auto_bin - human_bin) <= 1 ? 1 : 0;
    human[it->second].push_back(score);
    ++result.n_ratings;
  }
  result.unmatched.assign(unmatched.begin(), unmatched.end());
  if (result.n_ratings == 0)
    return Status::InvalidArgument("no rating names a judged image", ratings_csv.string() + " column image",
                                   "image ids from items.jsonl (<model>/<concept>/<k>) or image SHA-256s");
  result.exact_agreement = exact / static_cast<double>(result.n_ratings);
  result.within_one_bin = within_one / static_cast<double>(result.n_ratings);
  std::vector<double> x, y;
  for (const auto& [item, scores] : human) {
    double sum = 0;
    for (double s : scores) sum += s;
    x.push_back(sum / static_cast<double>(scores.size()));
    y.push_back(items[item]["adequacy"].get<double>());
  }
  result.n_images = x.size();
  auto rho = stats::SpearmanCorrelation(x, y, "human vs automatic adequacy");
  if (rho.ok())
    result.spearman = *rho;
  else
    result.spearman_error = rho.status().what();
  return result;
}

Json AgreementJson(const AgreementResult& r) {
  Json j = {{"n_images", r.n_images},
            {"n_ratings", r.n_ratings},
            {"exact_agreement", r.exact_agreement},
            {"within_one_bin", r.within_one_bin},
            {"bins", kBins},
            {"unmatched", r.unmatched}};
  if (r.spearman_error.empty())
    j["spearman"] = {{"rho", r.spearman.rho}, {"p_value", r.spearman.p_value}, {"n", r.spearman.n}};
  else
    j["spearman"] = {{"rho", nullptr}, {"p_value", nullptr}, {"n", r.n_images}, {"error", r.spearman_error}};
  return j;
}

}  // namespace visalign::acva
