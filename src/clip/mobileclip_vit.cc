#include "clip/mobileclip_vit.h"

#include <string>
#include <utility>

#include "clip/reparam.h"

namespace visalign::clip {
namespace {

constexpr int kStemChannels = 192;  // 768 / 4, fixed by vit_base_mci_224
constexpr int kKernels[] = {4, 2, 2};

}  // namespace

Result<MciConvStemWeights> LoadMciConvStem(WeightLoader& l, const VisionConfig& v) {
  const std::string p = "visual.trunk.patch_embed.backbone.";
  MciConvStemWeights w;
  const int in[] = {3, kStemChannels, kStemChannels};
  const int out[] = {kStemChannels, kStemChannels, v.width};
  for (int i = 0; i < 2; ++i) {
    const std::string name = p + std::to_string(i);
    VISALIGN_ASSIGN_OR_RETURN(w.convs[i], LoadConvBatchNorm(l, name + ".conv", name + ".bn", out[i], in[i], kKernels[i],
                                                            kKernels[i], /*pad=*/0));
  }
  VISALIGN_ASSIGN_OR_RETURN(Tensor weight, l.Get(p + "2.conv.weight", {out[2], in[2], kKernels[2], kKernels[2]}));
  VISALIGN_ASSIGN_OR_RETURN(Tensor bias, l.Get(p + "2.conv.bias", {out[2]}));
  w.convs[2] = MakeConv(weight.data, bias.data, out[2], in[2], kKernels[2], kKernels[2], /*pad=*/0);
  return w;
}

std::vector<float> RunMciConvStem(const VisionConfig& v, const MciConvStemWeights& w, const Matrix& pixels,
                                  const ForwardOptions& o) {
  FeatureMap x = FeatureMapFromChw(pixels, v.image_size);
  for (int i = 0; i < 3; ++i) {
    x = Conv2d(w.convs[i], x, ConvActivation::kNone);
    if (i < 2) GeluInPlace(x);
    TraceMap(o, "visual.trunk.patch_embed.backbone." + std::to_string(i) + "_out", x);
  }
  return std::move(x.data);  // NHWC: one row of `width` per patch token, row-major over the grid
}

}  // namespace visalign::clip
