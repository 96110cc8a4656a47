// The sandbox tests/examples_test.cc and tests/help_examples_test.cc run examples in: the base
// sandbox's set-up (kSetup: what the examples name, made real by documented commands), the rewrites
// of what only exists elsewhere (kSubstitutions: remote services, fixed ports, placeholders, to local
// imitations: never any traffic beyond 127.0.0.1), the imitations started per group (kImitations),
// and how one command runs in a group's sandbox (Sandbox, Provide, RunCommand). How to add an example
// or a substitution: docs/cli.md, "Examples are tested".
#pragma once

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "examples_support.h"
#include "testing/cli_runner.h"
#include "testing/postgres_server.h"

namespace visalign::testing::examples {

// Shell lines run in order in the base sandbox (which every group of examples gets a copy of what it
// names from), each with the names of the examples it makes real. They go through kSubstitutions and
// get the imitations they name, as examples do; most are documented commands.
inline const char* const kSetup[] = {
    // data/hues/peer-sample, HC_old.csv ...; a copy, since `hues macro-map --out data/hues/...` writes.
    "cp -r \"$VISALIGN_SOURCE_DATA\" data",
    // violin-demo: the dataset nearly every VIOLIN example names (482 items).
    "visalign violin dataset --out violin-demo --scale 0.01",
    // clip-random: the random-weights CLIP several examples name (those that make it themselves do).
    "visalign clip random-model --out clip-random",
    // Native model folders named by examples: the tiny upstream-made fixtures.
    "mkdir -p models path/to && ln -s \"$VISALIGN_SHARED/fixtures/clip-tiny\" models/ViT-B-32"
    " && ln -s \"$VISALIGN_SHARED/fixtures/clip-tiny\" models/clip-vit-b-32"
    " && ln -s \"$VISALIGN_SHARED/fixtures/siglip-tiny\" models/ViT-B-16-SigLIP"
    " && ln -s \"$VISALIGN_SHARED/fixtures/clip-tiny\" path/to/open_clip_model_dir",
    // Single images scored/embedded by examples: ground-truth images of the dataset.
    "set -- violin-demo/images/*.png && for f in a b c image gen; do cp \"$1\" $f.png; done",
    // images.jsonl of `violin score --batch`.
    "echo '{\"image\": \"a.png\", \"target\": \"#D9B451\"}' > images.jsonl",
    // Folders of generated images (<id>.png): path/to/images (evaluate --images), ./my-images (directory backend).
    "mkdir -p path/to/images my-images && cp violin-demo/images/*.png path/to/images/ && cp violin-demo/images/*.png "
    "my-images/",
    // `python gen.py --prompt {prompt} --out {out} --seed {seed}` and `python flux.py ... --out-stem
    // {out_stem}` of the command backend: the user's generators; the `python` first on PATH is a
    // stand-in answering with a dataset image (as <stem>.png for --out-stem).
    "touch gen.py flux.py && mkdir -p bin && printf '#!/bin/sh\\n"
    "while [ $# -gt 0 ]; do case \"$1\" in --out) cp \"$VISALIGN_BASE/a.png\" \"$2\"; exit;; "
    "--out-stem) cp \"$VISALIGN_BASE/a.png\" \"$2.png\"; exit;; esac; shift; done\\nexit 1\\n' > bin/python && chmod "
    "+x bin/python",
    // EVA02-B-16.safetensors (hues run --embeddings) and run.jsonl (hues nonsense --predictions):
    // saved by a native run of the random CLIP with the nonsense words.
    "visalign hues run --clip-model clip-random --nonsense --save-embeddings EVA02-B-16.safetensors --out setup-runs"
    " && cp setup-runs/*/predictions.jsonl run.jsonl",
    // runs/ (hues evaluate/nonsense --predictions runs/): `hues run --help`'s first example.
    "visalign hues run --clip-model models/ViT-B-32 --nonsense --out runs/",
    // zoo.csv (--catalog): `hues models --help`'s export of the catalog.
    "visalign hues models --format csv > zoo.csv",
    // preds/: hues predictions folders (README/serve.md `hues evaluate --predictions preds/`).
    "cp -r data/hues/peer-sample preds",
    // study.json of `serve --study` (docs/serve.md writes one with a heredoc the harness does not run).
    "echo '{\"languages\": [\"en\"], \"words_per_participant\": 5}' > study.json",
    // ./visalign-store, the default run store: README's runs gpt-image (against the imitation of the
    // OpenAI API) and sdxl (the command backend), an imported folder as old-attempt (`store rm`) ...
    "visalign violin generate --dataset violin-demo --run gpt-image --backend openai --endpoint https://api.openai.com"
    " --model gpt-image-1 --api-key-env OPENAI_API_KEY --param quality=low --concurrency 8 --rate 2",
    "visalign violin generate --dataset violin-demo --run sdxl --backend command"
    " --cmd 'python gen.py --prompt {prompt} --out {out} --seed {seed}' --samples 3",
    "visalign violin generate --dataset violin-demo --run old-attempt --backend directory --path ./my-images",
    // ... README's ACVA run my-model (and acva-results/), `acva run --help`'s runs a and b, judged
    // also by the judge model `acva judge --help` and `acva analyze --help` name ...
    "visalign acva run --run my-model --endpoint URL --model NAME --judge-endpoint URL --judge-model VLM"
    " --clip-model DIR --out acva-results",
    "visalign acva run --run a --model varied --run b --model mono --endpoint http://127.0.0.1:$ACVA_REFERENCE_PORT "
    "--seed 0"
    " --param 'seed={seed}' --judge-endpoint http://127.0.0.1:$ACVA_REFERENCE_PORT --judge-model ref-judge"
    " --clip-model clip-random --out .setup-ab",
    "visalign acva judge --run a --run b --run my-model --judge-endpoint http://127.0.0.1:8000 --judge-model "
    "qwen2.5-vl",
    // ... and a study in it: `serve` with the ACVA run, played over its HTTP API (PlayStudy: answers,
    // a regions painting, ratings of my-model), for export-regions / export-ratings.
    "visalign serve --store ./visalign-store --study study.json --acva-run my-model --port 8080 --admin-token-env "
    "STUDY_ADMIN_TOKEN",
    // study-store: README's study, played the same way (export-humans, export-participants ...).
    "visalign serve --store study-store --study study.json --port 8080 --admin-token-env STUDY_ADMIN_TOKEN",
    // ratings.csv (acva agreement --human): README's export of those ratings.
    "visalign acva export-ratings --store ./visalign-store --run my-model --out ratings.csv",
    // Results folders `visalign report` examples name: violin-eval, hues-eval, nonsense (README's and
    // the help's commands).
    "visalign violin evaluate --dataset violin-demo --store ./visalign-store --run gpt-image --out violin-eval",
    "visalign hues evaluate --predictions data/hues/peer-sample --out hues-eval",
    "visalign hues nonsense --predictions run.jsonl --out nonsense",
};

// Rewrites applied to every example (and its block's exports) before it runs, in order.
struct Substitution {
  const char* pattern;  // ECMAScript regex
  const char* replacement;
};
inline const Substitution kSubstitutions[] = {
    // The full 48,320-image dataset takes minutes: the same command at 1 %.
    {R"(violin dataset --out (violin|violin-full) --threads 2)", "violin dataset --out $1 --threads 2 --scale 0.01"},
    // Rate limits for paid APIs: the local imitations need none (482 requests at 2/s take 4 min).
    {R"(--rate [0-9.]+\b)", "--rate 500"},
    // An embedding server (a user's own, on 8080): this test's (EmbeddingServer below).
    {R"(--embeddings-endpoint http://127\.0\.0\.1:8080\b)", "--embeddings-endpoint $$EMBEDDINGS_ENDPOINT"},
    // A VLM judge server (vLLM's port 8000): the ACVA reference server (started per group), which
    // judges with any model name.
    {R"(--judge-endpoint http://127\.0\.0\.1:8000\b)", "--judge-endpoint http://127.0.0.1:$$ACVA_REFERENCE_PORT"},
    // Fixed ports (8000, 8080, 8090, 8091) may be taken on the machine: fresh free ports per group.
    {R"((127\.0\.0\.1|localhost):(8000|8080|8090|8091)\b)", "127.0.0.1:$$PORT_$2"},
    {R"(--port (8000|8080|8090|8091)\b)", "--port $$PORT_$1"},
    {R"(^(visalign serve (?!.*--port ).*)$)", "$1 --port $$PORT_8080"},  // serve's default port
    // The OpenAI image API: the VIOLIN reference server in its strict gpt-image-1 mode (started per group).
    {R"(https://api\.openai\.com)", "http://127.0.0.1:$$VIOLIN_REFERENCE_PORT"},
    // The providers' public APIs (no --endpoint given): the reference server imitating that API,
    // checking the key (a dummy in GEMINI_API_KEY, BFL_API_KEY, DASHSCOPE_API_KEY).
    {R"(--backend gemini\b(?!.*--endpoint))", "--backend gemini --endpoint http://127.0.0.1:$$GEMINI_REFERENCE_PORT"},
    {R"(--backend bfl\b(?!.*--endpoint))", "--backend bfl --endpoint http://127.0.0.1:$$BFL_REFERENCE_PORT"},
    {R"(--backend dashscope\b(?!.*--endpoint))",
     "--backend dashscope --endpoint http://127.0.0.1:$$DASHSCOPE_REFERENCE_PORT"},
    // Their examples ask for 1024x1024 and 1328x1328 images, ~0.2 s each for the imitation to draw and
    // encode on a CI core: 48 items of violin-demo (every request kind and the store are exercised), not 482.
    {R"(^(visalign violin generate .*--endpoint http://127\.0\.0\.1:\$(BFL|DASHSCOPE)_REFERENCE_PORT.*)$)",
     "$1 --limit 48"},
    // Polling the providers' asynchronous jobs: every second (their default) and jobs pending 300-500 ms
    // (the docs' servers, to show polling) make 482 items take minutes; the imitations finish jobs at
    // once, and are polled as fast.
    {R"(--job-ms [0-9]+\b)", "--job-ms 20"},
    {R"(^(visalign violin generate .*--backend (bfl|dashscope)\b(?!.*--poll-interval).*)$)",
     "$1 --poll-interval 0.05 --max-poll-interval 0.2"},
    // An ACVA image gateway and judge: the ACVA reference server (started per group), which serves
    // the models varied, mono and mixed and judges with any model name.
    {R"((acva (generate|run) .*)--endpoint (https://gateway|URL) --model (gpt-image-1|NAME))",
     "$1--endpoint http://127.0.0.1:$$ACVA_REFERENCE_PORT --model varied"},
    {R"(--judge-endpoint URL)", "--judge-endpoint http://127.0.0.1:$$ACVA_REFERENCE_PORT"},
    {R"(--judge-model VLM)", "--judge-model ref-judge"},
    // Placeholders for a model folder.
    {R"(--clip-model DIR)", "--clip-model clip-random"},
    // A PostgreSQL server elsewhere: this test's own, a fresh database per database named (its password
    // in PGPASSWORD).
    {R"(postgres://\w+@db\.example(:\d+)?/(\w+))", "$$TEST_POSTGRES_URL_$2"},
    {R"(\b(STUDY_DB_PASSWORD|PGPASSWORD)=\.\.\.)", "$1=$$PGPASSWORD"},
    // A folder every worker machine mounts: one in the sandbox.
    {R"(--image-root /shared/[\w-]+)", "--image-root shared-images"},
    // --host 0.0.0.0 would listen beyond loopback.
    {R"(--host 0\.0\.0\.0)", "--host 127.0.0.1"},
    // Replicate, fal and a local A1111 / ComfyUI (docs/backends.md "More backends"): the reference
    // server's imitation of each (started per group), a few items, quick polls.
    {R"(--backend (replicate|fal|a1111|comfyui)\b(?!.*--endpoint))",
     "--backend $1 --endpoint http://127.0.0.1:$$PROVIDER_$1_PORT --limit 4 --poll-interval 0.05"},
    // Shipped files named by examples, from the source tree.
    {R"((^|[ '])scripts/(workflows|workers)/)", "$1$$VISALIGN_SOURCE_DATA/../scripts/$2/"},
    {R"('python3 \$VISALIGN_SOURCE_DATA/)", "'python3 '\"$$VISALIGN_SOURCE_DATA\"'/"},
    {R"(--backend worker\b)", "--backend worker --limit 4"},
    // Seedream (BytePlus ModelArk) and GLM-Image (Zhipu): their imitations, a few items.
    {R"(https://ark\.ap-southeast\.bytepluses\.com)", "http://127.0.0.1:$$SEEDREAM_PORT"},
    {R"(https://open\.bigmodel\.cn)", "http://127.0.0.1:$$GLM_IMAGE_PORT"},
    {R"(--model (seedream-4-5-251128|glm-image)\b)", "--model $1 --limit 4"},
};

// The local imitations of remote services, started for a group whose commands name `variable`
// (after kSubstitutions), which then holds the port.
struct ImitationServer {
  const char* variable;
  const char* command;
};
inline const ImitationServer kImitations[] = {
    {"VIOLIN_REFERENCE_PORT",
     "visalign violin reference-server --dataset \"$VISALIGN_BASE/violin-demo\" --api gpt-image-1"},
    {"GEMINI_REFERENCE_PORT",
     "visalign violin reference-server --dataset \"$VISALIGN_BASE/violin-demo\" --api gemini --api-key-env "
     "GEMINI_API_KEY"},
    {"BFL_REFERENCE_PORT",
     "visalign violin reference-server --dataset \"$VISALIGN_BASE/violin-demo\" --api bfl --api-key-env BFL_API_KEY"},
    {"DASHSCOPE_REFERENCE_PORT",
     "visalign violin reference-server --dataset \"$VISALIGN_BASE/violin-demo\" --api dashscope --api-key-env "
     "DASHSCOPE_API_KEY"},
    {"ACVA_REFERENCE_PORT", "visalign acva reference-server"},
    {"PROVIDER_replicate_PORT",
     "visalign violin reference-server --dataset \"$VISALIGN_BASE/violin-demo\" --api replicate --job-ms 20"},
    {"PROVIDER_fal_PORT",
     "visalign violin reference-server --dataset \"$VISALIGN_BASE/violin-demo\" --api fal --job-ms 20"},
    {"PROVIDER_a1111_PORT", "visalign violin reference-server --dataset \"$VISALIGN_BASE/violin-demo\" --api a1111"},
    {"PROVIDER_comfyui_PORT",
     "visalign violin reference-server --dataset \"$VISALIGN_BASE/violin-demo\" --api comfyui --job-ms 20"},
    {"SEEDREAM_PORT", "visalign violin reference-server --dataset \"$VISALIGN_BASE/violin-demo\" --api seedream"},
    {"GLM_IMAGE_PORT", "visalign violin reference-server --dataset \"$VISALIGN_BASE/violin-demo\" --api glm-image"},
};

// Commands that serve until stopped: started in the background, checked to come up, and stopped
// at the end of their group (lines ending in '&') or at once (the others); a `serve` is played by
// participants (PlayStudy) before it is stopped, as a study would be.
inline const std::regex kServer(R"(^visalign (serve|\S+ reference-server)\b)");
inline const std::regex kServe(R"(^visalign serve\b)");

inline std::string Substitute(std::string s) {
  for (const Substitution& sub : kSubstitutions) s = std::regex_replace(s, std::regex(sub.pattern), sub.replacement);
  return s;
}

// One group's sandbox, environment and background servers.
class Sandbox {
 public:
  Sandbox(const fs::path& dir, std::map<std::string, std::string> env) : dir_(dir), env_(std::move(env)) {
    for (const char* p : {"8000", "8080", "8090", "8091"}) env_[std::string("PORT_") + p] = std::to_string(FreePort());
    env_["VISALIGN_CACHE"] =
        (dir_ / ".hub-cache").string();  // its own: `--offline` examples use what the group fetched
  }
  ~Sandbox() {
    for (const auto& [pid, log] : background_) StopGroup(pid);
  }
  RunResult Run(const std::string& script, int timeout_s = 600) {
    return RunProgram({"bash", "-c",
                       "cd '" + dir_.string() + "' && timeout " + std::to_string(timeout_s) + " bash -c '" +
                           Quote(script) + "' < /dev/null"},
                      env_);
  }
  // Starts `command` (after the shell lines `prefix`, e.g. its block's exports) in its own process
  // group; "" when it came up (its port file written, its port open, or still running after 2 s),
  // else why not. *port_out: its port, when known.
  std::string Start(const std::string& prefix, const std::string& command, int* pid_out, int* port_out = nullptr) {
    std::string n = std::to_string(background_.size());
    fs::path log = dir_ / (".background-" + n + ".log"), pid_file = dir_ / (".background-" + n + ".pid");
    // The inner shell is the new session's leader and writes its pid, then becomes the command.
    RunProgram({"bash", "-c",
                "cd '" + dir_.string() + "' && setsid bash -c 'echo $$ > " + pid_file.string() + "; " + Quote(prefix) +
                    " exec " + Quote(command) + "' > '" + log.string() + "' 2>&1 < /dev/null &"},
               env_);
    for (int i = 0; i < 100 && !(fs::exists(pid_file) && fs::file_size(pid_file) > 0); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    int pid = std::atoi(ReadText(pid_file).c_str());
    if (pid <= 0) return "could not start";
    background_.push_back({pid, log});
    *pid_out = pid;
    std::smatch m;
    std::string port_file = std::regex_search(command, m, std::regex(R"(--port-file (\S+))")) ? m[1].str() : "";
    int port = 0;
    if (std::regex_search(command, m, std::regex(R"(--port \$PORT_(\d+))")))
      port = std::atoi(env_["PORT_" + m[1].str()].c_str());
    for (int i = 0; i < 200; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (kill(pid, 0) != 0) return "exited: " + ReadText(log);
      const bool up = !port_file.empty() ? fs::exists(dir_ / port_file) && fs::file_size(dir_ / port_file) > 0
                      : port             ? PortOpen(port)
                                         : i >= 20;
      if (!up) continue;
      if (!port_file.empty()) port = std::atoi(ReadText(dir_ / port_file).c_str());
      if (port_out) *port_out = port;
      return ErrorLine(ReadText(log));
    }
    return "did not come up in 20 s: " + ReadText(log);
  }
  void StopGroup(int pid) {
    kill(-pid, SIGTERM);
    for (int i = 0; i < 50 && kill(-pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(-pid, SIGKILL);
  }
  void SetEnv(const std::string& k, const std::string& v) { env_[k] = v; }

 private:
  static std::string Quote(const std::string& s) { return std::regex_replace(s, std::regex("'"), "'\\''"); }
  fs::path dir_;
  std::map<std::string, std::string> env_;
  std::vector<std::pair<int, fs::path>> background_;
};

// Gives `box` what `text` (commands after kSubstitutions) needs: a fresh PostgreSQL database and the
// imitation servers it names. "" or why not.
inline std::string Provide(Sandbox& box, const std::string& text, std::set<std::string>& started) {
  static std::mutex postgres_mutex;
  const std::regex database(R"(\$(TEST_POSTGRES_URL_\w+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), database); it != std::sregex_iterator(); ++it) {
    const std::string variable = (*it)[1].str();
    if (started.count(variable)) continue;
    std::lock_guard<std::mutex> lock(postgres_mutex);
    Result<PostgresServer*> pg = PostgresServer::Shared();
    if (!pg.ok()) return pg.status().ToString();
    Result<std::string> db = (*pg)->CreateDatabase();
    if (!db.ok()) return db.status().ToString();
    box.SetEnv(variable, *db);
    box.SetEnv("PGPASSWORD", (*pg)->password());
    started.insert(variable);
  }
  for (const ImitationServer& s : kImitations) {
    if (text.find(std::string("$") + s.variable) == std::string::npos || started.count(s.variable)) continue;
    int pid = 0, port = 0;
    std::string why = box.Start("", s.command + std::string(" --port 0 --port-file .") + s.variable, &pid, &port);
    if (!why.empty()) return std::string(s.command) + ": " + why;
    box.SetEnv(s.variable, std::to_string(port));
    started.insert(s.variable);
  }
  return "";
}

// Runs one command of the sandbox as an example runs: a server in the background (and a `serve`
// played), anything else to its end. "" or why it failed.
inline std::string RunCommand(Sandbox& box, const std::string& prefix, std::string command) {
  if (!std::regex_search(command, kServer)) {
    RunResult r = box.Run(prefix + command);
    std::string err = ErrorLine(r.out + "\n" + r.err);
    if (r.exit_code != 0)
      return "exit " + std::to_string(r.exit_code) + ": " + (err.empty() ? r.err.substr(0, 300) : err);
    if (!err.empty()) return "exit 0 but: " + err;
    return "";
  }
  const bool keep = command.back() == '&';
  if (keep) command.pop_back();
  int pid = 0, port = 0;
  std::string why = box.Start(prefix, command, &pid, &port);
  if (why.empty() && std::regex_search(command, kServe)) {
    why = port ? PlayStudy("http://127.0.0.1:" + std::to_string(port), command.find("--acva-run") != std::string::npos)
               : "serve without a known port";
  }
  if (!keep) box.StopGroup(pid);
  return why;
}

}  // namespace visalign::testing::examples
