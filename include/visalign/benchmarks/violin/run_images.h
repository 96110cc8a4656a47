// The images of a VIOLIN generation run in a run store, as a model `violin evaluate` scores
// (beside image folders, CollectImageDirectory): only a run made for VIOLIN from the same
// dataset version is accepted, so a run's images are never scored against another manifest.
#pragma once

#include <filesystem>
#include <string>

#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/core/status.h"
#include "visalign/store.h"

namespace visalign::violin {

// Run `run`'s done images (model = the run's name; origin: kind "run", `store_path` lexically
// normalised, the run and its identity). Errors at `store_name` (e.g. "store ./visalign-store"):
// NotFound for a run the store lacks; InvalidArgument for a run of another benchmark (naming it)
// or one whose dataset fingerprint is not `manifest_sha256` (naming the run's); the store's errors.
Result<ModelImages> CollectRunImages(store::RunStore& store, const std::string& run, const std::string& manifest_sha256,
                                     const std::string& store_name, const std::filesystem::path& store_path);

}  // namespace visalign::violin
