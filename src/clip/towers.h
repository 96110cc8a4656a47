// CLIP weights (mapped from a safetensors file in either checkpoint layout) and the forward passes
// of both towers, following open_clip's conventions (pre-LN residual blocks, fused qkv, exact or
// quick GELU, class-token / argmax-eot pooling, projections), plus SigLIP's timm ViT (no class
// token, MAP attention-pool head) and its bidirectional, last-position-pooled text tower on the
// same blocks. Internal to the clip module.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "clip/gemm.h"
#include "clip/rope.h"
#include "clip/safetensors.h"
#include "visalign/clip.h"

namespace visalign::clip {

// A float tensor: either a view into the memory-mapped file (F32) or an owned converted copy.
struct Tensor {
  const float* data = nullptr;
  std::vector<float> owned;
  std::vector<int64_t> shape;
};

// A linear layer. With Precision::kBf16 the weight lives in weight_bf16 (same layout), with kBf16x3
// weight_bf16 holds ToBf16x3Weights' split operand and bf16x3 is set; either way weight.data is null
// (the f32 values are released after conversion).
struct LinearWeights {
  Tensor weight;  // [out, in] (kNK) or [in, out] (kKN)
  Tensor bias;    // [out] or empty
  BLayout layout = BLayout::kNK;
  std::vector<Bf16> weight_bf16;
  bool bf16x3 = false;
};

// y[rows, out] = x[rows, in] · W (+ beta · y), beta 0 or 1, in the layer's precision; the bias is
// added separately by the caller.
void Linear(const LinearWeights& lin, int rows, int in, int out, const float* x, float beta, float* y);

// The MLP of a residual block on its input h = ln_2(x):
//   kPlain:  proj(act(fc h))
//   kSwiGlu: proj(mlp_norm(silu(fc_gate h) ⊙ fc h))              (EVA02: fc1_g, fc1_x, mlp.norm, fc2)
//   kGeGlu:  proj(gelu(fc_gate h') ⊙ fc h'), h' = mlp_in_norm(h)  (ViTamin's GeGluMlp: norm, w0, w1, w2;
//            exact GELU, its own LayerNorm eps 1e-6 on the already normalised input)
enum class MlpKind { kPlain, kSwiGlu, kGeGlu };

struct BlockWeights {
  Tensor ln1_gain, ln1_bias, ln2_gain, ln2_bias;
  LinearWeights qkv, out_proj, fc, proj;
  // EVA02 only (empty otherwise): attn.norm over the heads before out_proj.
  Tensor attn_norm_gain, attn_norm_bias;
  MlpKind mlp = MlpKind::kPlain;
  LinearWeights fc_gate;                      // kSwiGlu, kGeGlu: the gate (fc is the value)
  Tensor mlp_norm_gain, mlp_norm_bias;        // kSwiGlu: over the hidden units before proj
  Tensor mlp_in_norm_gain, mlp_in_norm_bias;  // kGeGlu: over the MLP's input
};

struct TowerWeights {
  std::vector<BlockWeights> blocks;
  Tensor positional;                    // [tokens, width]; empty for ViTamin's pos_embed 'none'
  Tensor ln_final_gain, ln_final_bias;  // ln_post (vision) / ln_final (text)
  LinearWeights projection;             // width -> embed_dim (bias only for SigLIP's text tower)
  bool post_norm = false;               // EVA02-E: x + ln1(attn(x)), x + ln2(mlp(x)) instead of the pre-norm block
};

// timm AttentionPoolLatent (SigLIP's MAP head): one learned query over all tokens, then an MLP.
struct AttentionPoolWeights {
  Tensor latent;              // [width]
  LinearWeights q, kv, proj;  // kv: [2 * width, width], k rows first
  Tensor norm_gain, norm_bias;
  LinearWeights fc, fc_proj;  // the MLP (mlp.fc1, mlp.fc2)
};

// OpenCLIP's AttentionalPooler (CoCa): learned queries [queries, E] through ln_q and q, keys and values
// ln_k(tokens [_, width]) through k|v ([2E, width], stacked at load), nn.MultiheadAttention's out_proj.
struct AttentionalPoolerWeights {
  Tensor query;  // [queries, E]
  Tensor ln_q_gain, ln_q_bias, ln_k_gain, ln_k_bias;
  LinearWeights q, kv, out;
};

struct ResNetWeights;       // resnet.h
struct ConvNextWeights;     // convnext.h
struct VitaminStemWeights;  // vitamin.h
struct FastVitWeights;      // fastvit.h
struct MciConvStemWeights;  // mobileclip_vit.h

struct ClipWeights {
  SafetensorsFile file;
  // The vision tower: ViT (`vision` and the fields up to class_embedding), or one of these.
  std::shared_ptr<const ResNetWeights> resnet;
  std::shared_ptr<const ConvNextWeights> convnext;
  // ViTamin: the conv stem that replaces the patch embedding of the ViT below.
  std::shared_ptr<const VitaminStemWeights> vitamin_stem;
  std::shared_ptr<const FastVitWeights> fastvit;
  std::shared_ptr<const MciConvStemWeights> mci_stem;  // ViT with MobileCLIP's ConvStem (patch_embedding empty)
  TowerWeights vision;
  Tensor ln_pre_gain, ln_pre_bias;              // empty when the model has no ln_pre
  Tensor patch_embedding;                       // [width, 3 * patch * patch] (conv1 flattened c, y, x)
  Tensor patch_bias;                            // [width], empty for CLIP (conv1 has no bias)
  Tensor class_embedding;                       // [width], empty without a class token
  AttentionPoolWeights attention_pool;          // vision Pooling::kAttentionPool only
  AttentionalPoolerWeights attentional_pooler;  // VisionConfig::attentional_pool only (CoCa)
  TowerWeights text;
  Tensor token_embedding;  // [vocab, width]
  Tensor text_cls;         // [width], TextConfig::embed_cls only (CoCa's cls_emb)
  RopeTable rope;          // EVA02's vision tower only (tokens 0 otherwise)
  float logit_scale_log = 0.0f;
  float logit_bias = 0.0f;  // sigmoid models only
};

// Maps and validates all tensors of `config.weights_file` (names per layout, shapes against config).
// kBf16 / kBf16x3: the linear layers' weights are converted (in parallel on ThreadCount() threads) and
// their f32 pages released, so resident memory holds the converted copy only. Not kAuto.
Result<ClipWeights> LoadClipWeights(const ClipConfig& config, Precision precision = Precision::kFp32);

// Receives named intermediate activations (the names of the fixture's debug_activations file, e.g.
// "visual.block0_out" [rows x width]) when tracing.
using TraceFn = std::function<void(const std::string& name, const float* data, size_t size)>;

struct ForwardOptions {
  // Causal text towers: compute positions up to the last pooled (eot) position only. Causal
  // attention makes the pooled rows independent of later positions, so the result is the same;
  // off to trace all 77. (Bidirectional towers always run all positions.)
  bool trim_text_to_eot = true;
  const TraceFn* trace = nullptr;
};

// Passes an activation to options.trace when tracing.
inline void Trace(const ForwardOptions& o, const std::string& name, const float* data, size_t size) {
  if (o.trace != nullptr) (*o.trace)(name, data, size);
}

// pixels: rows = images, cols = 3 * S * S (CHW). Returns [images x embed_dim].
Matrix EncodeVision(const ClipConfig& config, const ClipWeights& w, const Matrix& pixels,
                    const ForwardOptions& options);
// The position a text tower pools for one row of ids (padded to context_length): the first highest id
// (kArgmax), the first eos_id (kEos; position 0 when there is none, as open_clip's
// (ids == eos).int().argmax() gives), or context_length - 1 (kLast).
int PooledPosition(const TextConfig& t, const std::vector<int32_t>& ids);
// The positions a text tower computes for one padded row of ids with ForwardOptions::trim_text_to_eot
// (what a length bucket pays for): up to the pooled position in a causal tower; CoCa's (embed_cls) the
// ids up to the first pad after the last non-pad id, plus the cls row (the pooled cls attends to no
// later key); context_length in a bidirectional or last-pooled tower (SigLIP).
int TextPositions(const TextConfig& t, const std::vector<int32_t>& ids);
// ids: each already padded/truncated to context_length. Returns [texts x embed_dim].
Matrix EncodeText(const ClipConfig& config, const ClipWeights& w, const std::vector<std::vector<int32_t>>& ids,
                  const ForwardOptions& options);

}  // namespace visalign::clip
