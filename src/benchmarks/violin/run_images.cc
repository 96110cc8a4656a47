// A generation run's images for `violin evaluate` (see run_images.h).
#include "visalign/benchmarks/violin/run_images.h"

#include "visalign/core/benchmarks.h"

namespace visalign::violin {

Result<ModelImages> CollectRunImages(store::RunStore& store, const std::string& run, const std::string& manifest_sha256,
                                     const std::string& store_name, const std::filesystem::path& store_path) {
  VISALIGN_ASSIGN_OR_RETURN(std::optional<store::RunInfo> info, store.FindRun(run));
  if (!info)
    return Status::NotFound("no run named \"" + run + "\"", store_name,
                            "a run created by `visalign generate --run " + run + "`");
  if (info->benchmark != benchmarks::kViolin)
    return Status::InvalidArgument("run \"" + run + "\" was made for the " + info->benchmark + " benchmark, not VIOLIN",
                                   store_name,
                                   info->benchmark == benchmarks::kAcva ? "`visalign acva analyze --run " + run +
                                                                              "` for it, or a run of `visalign "
                                                                              "violin generate`"
                                                                        : "a run of `visalign violin generate`");
  if (info->dataset_fingerprint != manifest_sha256)
    return Status::InvalidArgument(
        "run \"" + run + "\" was generated from another dataset version", store_name,
        "the dataset folder the run was generated from (manifest SHA-256 " + info->dataset_fingerprint + ")");
  VISALIGN_ASSIGN_OR_RETURN(std::vector<store::DoneImage> done, store.DoneImages(run));
  ModelImages images;
  images.model = run;
  images.origin = {"run", store_path.lexically_normal(), run, info->identity};
  for (store::DoneImage& d : done) images.sources.push_back({d.item_id, d.k, std::move(d.image_path)});
  return images;
}

}  // namespace visalign::violin
