// The ACVA rating page (docs/serve.md "ACVA rating"): raters see the images of the --acva-run runs one
// at a time, fewest ratings first, with the concept's rubric on the judge's scale; the admin export is
// the ratings.csv `visalign acva agreement --human` reads.
#include <algorithm>
#include <memory>
#include <mutex>

#include "server/routes.h"
#include "server/submission_id.h"
#include "visalign/benchmarks/acva/rating.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"
#include "visalign/server/tool_exports.h"

namespace visalign::server {
namespace {

using backends::HttpServer;
using backends::HttpServerRequest;
using backends::HttpServerResponse;

// The concept set the runs were generated from (the shipped starter set) and one lock: the run
// store is read and a rating checked-and-stored under it, so a rater cannot rate an image twice by
// racing two submissions.
struct RatingData {
  acva::ConceptSet set;
  std::mutex mu;
};

Status Load(RatingData& data) {
  VISALIGN_ASSIGN_OR_RETURN(auto concepts, acva::StarterConceptsFile());
  VISALIGN_ASSIGN_OR_RETURN(auto pairs, acva::StarterPairsFile());
  VISALIGN_ASSIGN_OR_RETURN(data.set, acva::LoadConceptSet(concepts, pairs));
  return Status::Ok();
}

Result<acva::Language> LanguageOf(const std::string& text) {
  if (text.empty()) return acva::Language::kEn;
  if (std::optional<acva::Language> l = acva::LanguageFromName(text)) return *l;
  return Status::InvalidArgument("language " + QuoteText(text), "language", "zh or en");
}

// Every rating of the rated runs, by anyone.
Result<std::vector<acva::HumanRating>> AllRatings(App& app) {
  std::vector<acva::HumanRating> all;
  for (const std::string& run : app.options().acva_runs) {
    VISALIGN_ASSIGN_OR_RETURN(std::vector<acva::HumanRating> ratings, AcvaRatings(app.study_store(), run));
    all.insert(all.end(), ratings.begin(), ratings.end());
  }
  return all;
}

const acva::JudgedImage* FindImage(const std::vector<acva::JudgedImage>& images, const std::string& id) {
  auto it = std::find_if(images.begin(), images.end(), [&](const acva::JudgedImage& i) { return i.ImageId() == id; });
  return it == images.end() ? nullptr : &*it;
}

std::string ImageContentType(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".jpg" || ext == ".jpeg" ? "image/jpeg" : ext == ".webp" ? "image/webp" : "image/png";
}

}  // namespace

Status AddAcvaRatingRoutes(App& app, HttpServer& server) {
  auto data = std::make_shared<RatingData>();
  VISALIGN_RETURN_IF_ERROR(Load(*data));
  // Every --acva-run must be an ACVA run of the store, of the concept set's concepts.
  VISALIGN_RETURN_IF_ERROR(acva::RunImages(app.run_store(), data->set, app.options().acva_runs).status());
  app.AddPage(server, "/rate", "rate", "Rate images");
  // The done images of the rated runs, or the Status to answer with.
  const auto images = [&app, data]() -> Result<std::vector<acva::JudgedImage>> {
    return acva::RunImages(app.run_store(), data->set, app.options().acva_runs);
  };

  // ?language=en|zh: the participant's next image (fewest ratings first) with its rating form, or
  // {"done": true} when they have rated every image.
  server.Route("GET", "/api/acva/next", [&app, data, images](const HttpServerRequest& req, HttpServerResponse& res) {
    Result<store::Participant> who = app.RequireSession(req);
    if (!who.ok()) return App::Fail(res, 401, who.status());
    Result<acva::Language> language = LanguageOf(req.Query("language"));
    if (!language.ok()) return App::Fail(res, 400, language.status().WithContext("query"));
    std::lock_guard lock(data->mu);
    Result<std::vector<acva::JudgedImage>> all = images();
    if (!all.ok()) return App::Fail(res, 503, all.status());
    Result<std::vector<acva::HumanRating>> ratings = AllRatings(app);
    if (!ratings.ok()) return App::Fail(res, ratings.status());
    std::vector<std::string> ids;
    for (const acva::JudgedImage& i : *all) ids.push_back(i.ImageId());
    const size_t mine =
        std::count_if(ratings->begin(), ratings->end(), [&](const auto& r) { return r.rater == who->user_id; });
    const Json progress = {{"rated", mine}, {"images", ids.size()}};
    const std::optional<size_t> next = acva::NextImageToRate(ids, *ratings, who->user_id);
    if (!next) return res.SetJson(200, {{"done", true}, {"progress", progress}});
    const acva::JudgedImage& image = (*all)[*next];
    const acva::Concept& cpt = data->set.concepts[*data->set.IndexOf(image.concept_id)];
    res.SetJson(200, {{"done", false},
                      {"progress", progress},
                      {"form", acva::RatingFormJson(cpt, image, *language)},
                      {"image_url", "/api/acva/image?id=" + ids[*next]}});
  });

  // ?id=<run>/<concept>/<k>: the image file of a rated run.
  server.Route("GET", "/api/acva/image", [&app, data, images](const HttpServerRequest& req, HttpServerResponse& res) {
    Result<store::Participant> who = app.RequireSession(req);
    if (!who.ok()) return App::Fail(res, 401, who.status());
    std::lock_guard lock(data->mu);
    Result<std::vector<acva::JudgedImage>> all = images();
    if (!all.ok()) return App::Fail(res, 503, all.status());
    const acva::JudgedImage* image = FindImage(*all, req.Query("id"));
    if (!image)
      return App::Fail(res, 404,
                       Status::NotFound("no image " + QuoteText(req.Query("id")), "query id",
                                        "an image of the rated runs (<run>/<concept>/<k>)"));
    Result<std::string> bytes = ReadFile(image->path);
    if (!bytes.ok()) return App::Fail(res, bytes.status());
    res.Set(200, std::move(*bytes), ImageContentType(image->path));
  });

  // {"client_id", "image", "language", "answers": {"<question id>": rating}}: every rubric question on
  // the judge's scale; one rating per (image, rater); a replayed client id stores nothing (409).
  server.Route("POST", "/api/acva/rating", [&app, data, images](const HttpServerRequest& req, HttpServerResponse& res) {
    Result<store::Participant> who = app.RequireSession(req);
    if (!who.ok()) return App::Fail(res, 401, who.status());
    Result<Json> body = App::JsonBody(req);
    if (!body.ok()) return App::Fail(res, 400, body.status());
    Result<std::string> client_id = SubmissionId(*body);
    if (!client_id.ok()) return App::Fail(res, 400, client_id.status());
    Result<acva::Language> language = LanguageOf(StringMember(*body, "language"));
    if (!language.ok()) return App::Fail(res, 400, language.status().WithContext("request body field"));
    std::lock_guard lock(data->mu);
    Result<std::vector<acva::JudgedImage>> all = images();
    if (!all.ok()) return App::Fail(res, 503, all.status());
    const std::string id = StringMember(*body, "image");
    const acva::JudgedImage* image = FindImage(*all, id);
    if (!image)
      return App::Fail(res, 404,
                       Status::NotFound("no image " + QuoteText(id), "request body field image",
                                        "an image of the rated runs (<run>/<concept>/<k>)"));
    const acva::Concept& cpt = data->set.concepts[*data->set.IndexOf(image->concept_id)];
    const Json answers = body->contains("answers") ? (*body)["answers"] : Json();
    Result<double> score = acva::RatingScore(cpt, answers, "request body field answers");
    if (!score.ok()) return App::Fail(res, 400, score.status());
    Result<std::vector<acva::HumanRating>> ratings = AcvaRatings(app.study_store(), image->model);
    if (!ratings.ok()) return App::Fail(res, ratings.status());
    if (std::any_of(ratings->begin(), ratings->end(),
                    [&](const auto& r) { return r.image == id && r.rater == who->user_id; }))
      return App::Fail(res, 409,
                       Status::InvalidArgument("image " + QuoteText(id) + " already rated by you",
                                               "request body field image", "the image GET /api/acva/next gives"));
    const Json payload = {{"image", id},
                          {"run", image->model},
                          {"language", acva::LanguageName(*language)},
                          {"answers", answers},
                          {"score", *score}};
    Result<store::Insert> stored = app.study_store().AddRecord(kAcvaRatingRecord, who->id, *client_id, payload);
    if (!stored.ok()) return App::Fail(res, stored.status());
    if (*stored == store::Insert::kDuplicate)
      return App::Fail(res, 409,
                       Status::InvalidArgument("submission " + QuoteText(*client_id) + " already stored",
                                               "request body field client_id", "a new client id per rating"));
    res.SetJson(200, {{"stored", true}, {"score", *score}});
  });

  // ?run=R: the ratings of run R as ratings.csv (image,rater,score) for `acva agreement --human`.
  server.Route("GET", "/api/admin/acva/ratings.csv", [&app](const HttpServerRequest& req, HttpServerResponse& res) {
    if (Status admin = app.RequireAdmin(req); !admin.ok()) return App::Fail(res, 403, admin);
    const std::string run = req.Query("run");
    const auto& runs = app.options().acva_runs;
    if (std::find(runs.begin(), runs.end(), run) == runs.end())
      return App::Fail(
          res, 404,
          Status::NotFound("run " + QuoteText(run) + " is not rated here", "query run", "one of the --acva-run runs"));
    Result<std::vector<acva::HumanRating>> ratings = AcvaRatings(app.study_store(), run);
    if (!ratings.ok()) return App::Fail(res, ratings.status());
    res.Set(200, acva::HumanRatingsCsv(*ratings), "text/csv; charset=utf-8");
  });
  return Status::Ok();
}

}  // namespace visalign::server
