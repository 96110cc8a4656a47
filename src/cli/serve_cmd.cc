// `visalign serve`: the study web app (docs/serve.md), `visalign hues export-humans`, which writes
// what a study collected in the published answer format, and `visalign hues export-participants`.
#include <cstdio>
#include <memory>

#include "cli/cli.h"
#include "visalign/backends/runner.h"
#include "visalign/core/format.h"
#include "visalign/core/io.h"
#include "visalign/server/app.h"
#include "visalign/server/humans_export.h"
#include "visalign/server/participants_export.h"

namespace visalign::cli {
namespace {

void AddServe(Cli& cli) {
  CLI::App* s = cli.app().add_subcommand(
      "serve", "Serve a self-hosted study: the Hues and Cues game, its data API and the study tools");
  auto o = std::make_shared<server::ServeOptions>();
  auto port_file = std::make_shared<std::string>();
  auto words = std::make_shared<std::string>();
  auto study = std::make_shared<std::string>();
  auto results = std::make_shared<std::vector<std::string>>();
  auto store = std::make_shared<StoreFlags>();
  store->location = o->store;
  AddStoreOptions(s, store.get(),
                  "Where the study's data go (<folder>/study.db, or the study's tables of the database) and the "
                  "--acva-run runs are");
  s->add_option("--host", o->host, "Address to listen on")->capture_default_str();
  s->add_option("--port", o->port, "Port (0 = any free port; see --port-file)")->capture_default_str();
  s->add_option("--port-file", *port_file, "Write the port number to this file once listening");
  s->add_option("--words", *words, "Word list CSV (word_en,word_es,category,clue_id); default: the shipped words");
  s->add_option("--study", *study,
                "Study settings, JSON or TOML (.toml): languages, words per participant, consent, completion code...");
  s->add_option("--admin-token-env", o->admin_token_env,
                "Environment variable holding the admin token (export, reset, live counts); unset: no admin");
  s->add_option("--results", *results, "A hues evaluate results folder for the explorer; repeatable");
  s->add_option("--acva-run", o->acva_runs, "An ACVA run of the store whose images are rated; repeatable");
  s->footer(
      "Pages: / (the game). API: GET /api/board, GET /api/study, POST /api/session {\"consent\": true,\n"
      "\"params\": {PROLIFIC_PID, STUDY_ID, SESSION_ID}} (sets the visalign_session cookie), POST /api/profile,\n"
      "GET/POST /api/screen, GET /api/next, POST /api/answer, POST /api/events; admin (Authorization: Bearer\n"
      "<token>): GET /api/admin/counts, GET /api/admin/export, POST /api/admin/reset. Nothing is fetched at run\n"
      "time; every reply carries a Content-Security-Policy. The data go to <store>/study.db (SQLite) for a folder,\n"
      "or to the study's tables in the database for postgres://user@host:port/database (PostgreSQL; the password from\n"
      "--store-password-env, PGPASSWORD or ~/.pgpass). The global --threads sets the HTTP worker threads (default "
      "256,\n"
      "one per open connection). Stops on Ctrl-C / SIGTERM.\n"
      "docs/serve.md has the study file's fields, the API and the data format.\n"
      "Example:\n"
      "  export STUDY_ADMIN_TOKEN=$(head -c 24 /dev/urandom | base64)\n"
      "  visalign serve --store study-store --study study.json --port 8080 --admin-token-env STUDY_ADMIN_TOKEN\n"
      "  visalign hues export-humans --store study-store --out answers.csv\n"
      "  visalign hues humans --humans answers.csv\n"
      "With PostgreSQL (one database for the runs and the study):\n"
      "  export STUDY_DB_PASSWORD=...\n"
      "  visalign serve --store postgres://study@db.example:5432/visalign --store-password-env STUDY_DB_PASSWORD \\\n"
      "      --study study.json --port 8080 --admin-token-env STUDY_ADMIN_TOKEN\n"
      "  visalign hues export-humans --store postgres://study@db.example:5432/visalign --store-password-env \\\n"
      "      STUDY_DB_PASSWORD --out answers.csv");
  cli.Bind(s, [&cli, o, store, port_file, words, study, results]() -> Status {
    server::ServeOptions options = *o;
    options.store = store->location;
    options.store_options = store->options;
    options.port_file = *port_file;
    options.words = *words;
    options.study = *study;
    options.threads = cli.global().threads;
    for (const std::string& r : *results) options.results.emplace_back(r);
    backends::InterruptHandler interrupt;
    VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<server::App> app, server::App::Create(options));
    VISALIGN_RETURN_IF_ERROR(app->Start());
    if (cli.global().json)
      PrintJson({{"url", app->url()}, {"port", app->port()}, {"store", store->Display()}});
    else
      std::printf("visalign serve: the study is on %s/ (store %s)\n", app->url().c_str(), store->Display().c_str());
    std::fflush(stdout);
    app->ServeUntil(interrupt.stop());
    std::fprintf(stderr, "visalign serve stopped\n");
    return Status::Ok();
  });
}

void AddExportHumans(Cli& cli) {
  CLI::App* g = cli.Group("hues", "Hues and Cues: CLIP color alignment vs human players");
  CLI::App* e = g->add_subcommand("export-humans", "Write a visalign serve study's answers as a published-format CSV");
  auto store = std::make_shared<StoreFlags>();
  store->location = "visalign-store";
  auto out = std::make_shared<std::string>();
  auto words = std::make_shared<std::string>();
  auto merge = std::make_shared<bool>(false);
  auto exclude = std::make_shared<bool>(false);
  auto min_plate_score = std::make_shared<double>(-1);
  AddStoreOptions(e, store.get(), "Store the study was served from", StoreUse::kStudy);
  e->add_option("--out", *out, "Output CSV file")->required();
  e->add_option("--words", *words, "Word list CSV the study used; default: the shipped words");
  e->add_flag("--merge-shipped", *merge,
              "Write the shipped answers (data/hues/human_responses.csv) first, as one data set");
  e->add_flag("--exclude-failed-attention", *exclude,
              "Leave out every answer of the participants who failed the attention check (answered another cell)");
  e->add_option("--min-plate-score", *min_plate_score,
                "Leave out every answer of the participants whose colour-vision plate score (share of the 4 confusion "
                "plates read, 0-1) is below F, and of those not screened")
      ->type_name("F")
      ->check(CLI::Range(0.0, 1.0));
  e->footer(
      "Columns: userId,timestamp,clueCategory,clueId,word,coordinate,language,gender,ageRange,colorblind,word_en,\n"
      "one row per answer in the order the server accepted them (attention checks are not answers; with\n"
      "--exclude-failed-attention none of a participant who failed theirs; with --min-plate-score F none of a\n"
      "participant who scored below F on the colour-vision plates or was not screened).\n"
      "colorblind is YES for a self-reported colour-vision deficiency or a plate score below 0.5 (fewer than 2 of\n"
      "the 4 confusion plates read), else no; `hues humans` leaves the YES players out by default.\n"
      "`hues humans --humans FILE` and `hues evaluate --humans FILE` read it unchanged.\n"
      "Example:\n"
      "  visalign hues export-humans --store study-store --out answers.csv\n"
      "  visalign hues export-humans --store study-store --merge-shipped --out all_answers.csv\n"
      "  visalign hues export-humans --store study-store --exclude-failed-attention --out attentive.csv\n"
      "  visalign hues export-humans --store study-store --min-plate-score 0.75 --out screened.csv\n"
      "  visalign hues evaluate --humans all_answers.csv --predictions preds/ --out eval");
  cli.Bind(e, [&cli, store, out, words, merge, exclude, min_plate_score]() -> Status {
    VISALIGN_ASSIGN_OR_RETURN(auto study, OpenExistingStudyStore(*store, "the --store a visalign serve study used"));
    Result<hues::Vocabulary> vocabulary = words->empty() ? hues::Vocabulary::Default() : hues::Vocabulary::Load(*words);
    if (!vocabulary.ok()) return vocabulary.status().WithContext("word list");
    VISALIGN_ASSIGN_OR_RETURN(std::filesystem::path data, DataFile("hues/human_responses.csv"));
    server::HumansExportOptions options{*merge, data, *exclude};
    if (*min_plate_score >= 0) options.min_plate_score = *min_plate_score;
    VISALIGN_ASSIGN_OR_RETURN(server::HumansExport exported, server::ExportHumans(*study, *vocabulary, options));
    VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(*out, exported.csv));
    if (cli.global().json) {
      PrintJson({{"out", *out},
                 {"answers", exported.answers},
                 {"participants", exported.participants},
                 {"shipped", exported.shipped},
                 {"excluded_participants", exported.excluded_participants},
                 {"excluded_failed_attention", exported.excluded_failed_attention},
                 {"excluded_plate_score", exported.excluded_plate_score}});
      return Status::Ok();
    }
    std::string notes;
    if (*merge) notes += " after " + std::to_string(exported.shipped) + " shipped answers";
    if (*exclude)
      notes += " (left out: " + std::to_string(exported.excluded_failed_attention) + " who failed the attention check)";
    if (options.min_plate_score)
      notes += " (left out: " + std::to_string(exported.excluded_plate_score) + " with a plate score below " +
               FormatNumber(*options.min_plate_score) + " or none)";
    std::printf("wrote %zu answers of %zu participants%s to %s\n", exported.answers, exported.participants,
                notes.c_str(), out->c_str());
    return Status::Ok();
  });
}

void AddExportParticipants(Cli& cli) {
  CLI::App* g = cli.Group("hues", "Hues and Cues: CLIP color alignment vs human players");
  CLI::App* e =
      g->add_subcommand("export-participants",
                        "Write who took part in a visalign serve study: ids, profile, screen, attention, metadata");
  auto store = std::make_shared<StoreFlags>();
  store->location = "visalign-store";
  auto out = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("csv");
  AddStoreOptions(e, store.get(), "Store the study was served from", StoreUse::kStudy);
  e->add_option("--out", *out, "Output file; - for stdout")->required();
  e->add_option("--format", *format, "csv (fixed columns) or json (everything as stored)")
      ->check(CLI::IsMember({"csv", "json"}))
      ->capture_default_str();
  e->footer(
      "One row per participant, in the order they consented. CSV columns: userId,consented_at,completed_at,language,\n"
      "gender,ageRange,colorblind_reported,plate_score,plate_control,colorblind,attention_check (passed, failed or\n"
      "none),attention_expected,attention_answer,items,answers,events, the platform ids PROLIFIC_PID,STUDY_ID,\n"
      "SESSION_ID,workerId,assignmentId,hitId, and the session metadata user_agent,viewport,screen,\n"
      "device_pixel_ratio,color_gamut,dynamic_range,browser_language. colorblind is what export-humans writes.\n"
      "JSON: {\"participants\": [...]} with the URL parameters, metadata and plate answers as stored (docs/serve.md).\n"
      "Example:\n"
      "  visalign hues export-participants --store study-store --out participants.csv\n"
      "  visalign hues export-participants --store study-store --format json --out participants.json");
  cli.Bind(e, [&cli, store, out, format]() -> Status {
    VISALIGN_ASSIGN_OR_RETURN(auto study, OpenExistingStudyStore(*store, "the --store a visalign serve study used"));
    VISALIGN_ASSIGN_OR_RETURN(std::vector<server::ParticipantRow> rows, server::ExportParticipants(*study));
    const std::string text =
        *format == "json" ? server::ParticipantsJson(rows).dump(2) + "\n" : server::ParticipantsCsv(rows);
    if (*out == "-") {
      std::fwrite(text.data(), 1, text.size(), stdout);
      return Status::Ok();
    }
    VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(*out, text));
    if (cli.global().json)
      PrintJson({{"out", *out}, {"participants", rows.size()}, {"format", *format}});
    else
      std::printf("wrote %zu participants to %s\n", rows.size(), out->c_str());
    return Status::Ok();
  });
}

const CommandGroup kServe(90, {"serve", "hues"}, [](Cli& cli) {
  AddServe(cli);
  AddExportHumans(cli);
  AddExportParticipants(cli);
});

}  // namespace
}  // namespace visalign::cli
