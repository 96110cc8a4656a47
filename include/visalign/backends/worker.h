// The worker backend: open-weights models on the user's own machine, loaded once. `--cmd` is
// started once per worker (argv template split as the command backend splits it; no shell), in
// its own process group, with VISALIGN_WORKER_INDEX=i (and CUDA_VISIBLE_DEVICES from --gpus), and
// speaks JSON Lines (docs/backends.md, "Worker protocol"):
//   worker -> {"ready": true, "model": ..., ...}          once loaded (within startup_timeout)
//   visalign -> {"id", "prompt", "seed", "width", "height", "out", "params"}   one per image
//   worker -> {"id", "ok": true}                            after writing the image to `out`
//          or {"id", "ok": false, "error", "retryable": bool[, "refused": true]}
// Workers start on the first image they are given (so --dry-run starts nothing). A worker that
// dies or times out is restarted for its next image and the image fails retryably (the runner asks
// again), up to max_restarts restarts in all; then, and for a worker that cannot start, every image
// fails at once with the reason and the end of its log (stderr goes to <scratch>/worker-<i>.log).
// A stdout line that is not the protocol fails the image (not retried), quoting the line, and the
// worker is restarted (its stream can no longer be trusted). Ending: stdin closed, then SIGTERM
// after stop_grace, SIGKILL after as long again.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "visalign/backends/backends.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::backends {

struct WorkerOptions {
  std::string
      command_template;  // e.g. "python3 scripts/workers/diffusers_worker.py --model black-forest-labs/FLUX.1-dev"
  int workers = 1;
  std::vector<std::string> gpus;  // worker i gets CUDA_VISIBLE_DEVICES=gpus[i % gpus.size()]; empty: unset
  std::string size;               // "WxH": each request's width and height (null without one)
  Json params = Json::object();   // sent as each request's "params"
  Millis startup_timeout{900'000};
  Millis request_timeout{600'000};  // per image
  Millis stop_grace{10'000};
  int max_restarts = 3;
  std::filesystem::path scratch_dir;  // {out} files and the workers' logs
  size_t log_tail_bytes = 1500;
};

// Checks the options (the program must exist: a path to an executable or a name on PATH);
// InvalidArgument naming --cmd, --workers, --gpus or --size otherwise. Starts nothing.
Result<std::unique_ptr<GenerationBackend>> MakeWorkerBackend(WorkerOptions options);

// The request line for `request`: {"id", "prompt", "seed", "width", "height", "out", "params"}
// (seed, width and height null when unset). Also what --dry-run prints.
Json WorkerRequestLine(const WorkerOptions& options, const GenerationRequest& request, const std::string& id,
                       const std::string& out);

// "0,1,3" -> {"0", "1", "3"}; InvalidArgument at --gpus for an empty entry or a character outside
// [A-Za-z0-9-] (ids or UUIDs as CUDA_VISIBLE_DEVICES takes them).
Result<std::vector<std::string>> ParseGpuList(const std::string& text);

}  // namespace visalign::backends
