// The result explorer (docs/serve.md "Explorer"): per word, the human heat map, mean and ellipse in
// CIE xy for a chosen subset of the players, and a chosen evaluated model's top-5.
#include <memory>

#include "server/routes.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/untrusted.h"

namespace visalign::server {
namespace {

using backends::HttpServer;
using backends::HttpServerRequest;
using backends::HttpServerResponse;

constexpr char kEllipseThreshold[] = "chi2:0.95";

// Loaded once at start-up: the shipped human answers with the colour-blind players kept (and
// marked), the benchmark's words, and the models of every --results folder.
struct ExplorerData {
  hues::Vocabulary vocabulary;
  hues::HumanData humans;
  hues::Threshold threshold;
  std::vector<hues::ModelPredictions> models;
};

Status Load(const App& app, ExplorerData& data) {
  VISALIGN_ASSIGN_OR_RETURN(data.vocabulary, hues::Vocabulary::Default());
  hues::HumanLoadOptions keep;
  keep.include_colorblind = true;
  VISALIGN_ASSIGN_OR_RETURN(data.humans, hues::DefaultHumans(data.vocabulary, keep));
  VISALIGN_ASSIGN_OR_RETURN(data.threshold, hues::ParseThreshold(kEllipseThreshold));
  for (const std::filesystem::path& dir : app.options().results) {
    VISALIGN_ASSIGN_OR_RETURN(std::vector<hues::ModelPredictions> models,
                              hues::LoadEvaluatedModels(dir, data.vocabulary, app.board()));
    for (hues::ModelPredictions& m : models) {
      for (const hues::ModelPredictions& seen : data.models)
        if (seen.name == m.name)
          return Status::InvalidArgument("model " + QuoteText(m.name) + " evaluated in two folders",
                                         "results folder " + dir.string(), "each model in one --results folder");
      data.models.push_back(std::move(m));
    }
  }
  return Status::Ok();
}

const hues::ModelPredictions* FindModel(const ExplorerData& data, const std::string& name) {
  for (const hues::ModelPredictions& m : data.models)
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace

Status AddExplorerRoutes(App& app, HttpServer& server) {
  auto data = std::make_shared<ExplorerData>();
  VISALIGN_RETURN_IF_ERROR(Load(app, *data));
  app.AddPage(server, "/explorer", "explorer", "Result explorer");

  // The words, the evaluated models, the filter choices and every cell's CIE xy (board order).
  server.Route("GET", "/api/explorer", [&app, data](const HttpServerRequest&, HttpServerResponse& res) {
    Json words = Json::array(), models = Json::array(), xy = Json::array();
    for (const hues::Cell& c : app.board().cells()) xy.push_back({c.xy[0], c.xy[1]});
    for (const hues::Word& w : data->vocabulary.words()) words.push_back({{"word", w.en}, {"category", w.category}});
    for (const hues::ModelPredictions& m : data->models) models.push_back(m.name);
    res.SetJson(200, {{"words", words},
                      {"models", models},
                      {"filters", hues::HumanFilterChoicesJson(data->humans)},
                      {"threshold", {{"spec", data->threshold.spec}, {"d2", data->threshold.d2}}},
                      {"chromaticity", hues::ChromaticityName(app.board().chromaticity())},
                      {"xy", xy}});
  });

  // ?word=W[&colorblind=exclude|include|only][&gender=G][&age=A][&language=L][&model=M]
  server.Route("GET", "/api/explorer/word", [&app, data](const HttpServerRequest& req, HttpServerResponse& res) {
    const std::optional<int> word = data->vocabulary.IndexOfName(req.Query("word"));
    if (!word)
      return App::Fail(res, 404,
                       Status::NotFound("unknown word " + QuoteText(req.Query("word")), "query word",
                                        "a clue word of data/hues/words.csv"));
    Result<hues::HumanFilter> filter = hues::ParseHumanFilter(req.Query("colorblind"), req.Query("gender"),
                                                              req.Query("age"), req.Query("language"), data->humans);
    if (!filter.ok()) return App::Fail(res, 400, filter.status());
    Json model = nullptr;
    if (const std::string name = req.Query("model"); !name.empty()) {
      const hues::ModelPredictions* m = FindModel(*data, name);
      if (!m)
        return App::Fail(
            res, 404,
            Status::NotFound("unknown model " + QuoteText(name), "query model", "a model of the --results folders"));
      model = hues::ModelTopJson(*m, *word, data->vocabulary);
    }
    const hues::WordView view = hues::ViewWord(data->humans, app.board(), *word, *filter, data->threshold.d2);
    res.SetJson(200, {{"view", hues::WordViewJson(view, data->vocabulary)}, {"model", model}});
  });
  return Status::Ok();
}

}  // namespace visalign::server
