#include "clip/towers.h"

#include <algorithm>
#include <string>

#include "clip/coca.h"
#include "clip/convnext.h"
#include "clip/fastvit.h"
#include "clip/kernels.h"
#include "clip/mobileclip_vit.h"
#include "clip/resnet.h"
#include "clip/rope.h"
#include "clip/vitamin.h"

namespace visalign::clip {

void Linear(const LinearWeights& lin, int rows, int in, int out, const float* x, float beta, float* y) {
  if (lin.bf16x3) {
    GemmBf16x3(rows, out, in, x, lin.weight_bf16.data(), lin.layout, beta, y);
  } else if (!lin.weight_bf16.empty()) {
    GemmBf16(rows, out, in, x, lin.weight_bf16.data(), lin.layout, beta, y);
  } else {
    Gemm(rows, out, in, x, in, lin.weight.data, lin.layout, beta, y, out);
  }
}

namespace {

constexpr float kGeGluNormEps = 1e-6f;  // timm GeGluMlp's own LayerNorm

// How one tower's blocks attend: causal text towers, EVA02 / PE-Core's RoPE on the tokens after the
// first `seq - rope->tokens` (the class token), CoCa's text key mask ([batch * seq], Attention()).
struct BlockRun {
  bool causal = false;
  const RopeTable* rope = nullptr;
  const uint8_t* key_valid = nullptr;
};

// The residual blocks of one tower on x[batch * seq, width], in place: pre-norm x + attn(ln1(x)),
// x + mlp(ln2(x)), or with tw.post_norm (EVA02-E) x + ln1(attn(x)), x + ln2(mlp(x)).
void RunBlocks(const TowerConfig& cfg, Activation act, const TowerWeights& tw, float* x, int batch, int seq,
               const BlockRun& run, const ForwardOptions& o, const std::string& prefix) {
  const int rows = batch * seq;
  const int w = cfg.width;
  const int mlp = cfg.mlp_width;
  std::vector<float> h(static_cast<size_t>(rows) * w);
  std::vector<float> qkv(static_cast<size_t>(rows) * 3 * w);
  std::vector<float> attn(static_cast<size_t>(rows) * w);
  std::vector<float> hidden(static_cast<size_t>(rows) * mlp);
  std::vector<float> gate;  // SwiGLU only
  // Adds a branch's output (in `branch`, bias not yet added) to the residual stream; post-norm
  // blocks normalise it first.
  const auto add_branch = [&](float* branch, const LinearWeights& lin, const Tensor& gain, const Tensor& bias) {
    AddBias(branch, rows, w, lin.bias.data);
    LayerNorm(branch, branch, rows, w, gain.data, bias.data, cfg.layer_norm_eps);
    AddRows(x, branch, rows, w);
  };
  for (size_t i = 0; i < tw.blocks.size(); ++i) {
    const BlockWeights& b = tw.blocks[i];
    const float* attn_in = x;
    if (!tw.post_norm) {
      LayerNorm(x, h.data(), rows, w, b.ln1_gain.data, b.ln1_bias.data, cfg.layer_norm_eps);
      attn_in = h.data();
    }
    Linear(b.qkv, rows, w, 3 * w, attn_in, 0.0f, qkv.data());
    AddBias(qkv.data(), rows, 3 * w, b.qkv.bias.data);
    if (run.rope != nullptr) ApplyRope(*run.rope, qkv.data(), batch, seq, seq - run.rope->tokens, w, cfg.heads);
    Attention(qkv.data(), attn.data(), batch, seq, w, cfg.heads, run.causal, run.key_valid);
    if (b.attn_norm_gain.data != nullptr) {
      LayerNorm(attn.data(), attn.data(), rows, w, b.attn_norm_gain.data, b.attn_norm_bias.data, cfg.layer_norm_eps);
    }
    if (tw.post_norm) {
      Linear(b.out_proj, rows, w, w, attn.data(), 0.0f, h.data());
      add_branch(h.data(), b.out_proj, b.ln1_gain, b.ln1_bias);
    } else {
      Linear(b.out_proj, rows, w, w, attn.data(), 1.0f, x);  // residual: x += attn · Woᵀ
      AddBias(x, rows, w, b.out_proj.bias.data);
    }
    const float* mlp_in = x;
    if (!tw.post_norm) {
      LayerNorm(x, h.data(), rows, w, b.ln2_gain.data, b.ln2_bias.data, cfg.layer_norm_eps);
      mlp_in = h.data();
    }
    if (b.mlp == MlpKind::kGeGlu) {  // GeGluMlp's own LayerNorm first (ViTamin)
      LayerNorm(mlp_in, h.data(), rows, w, b.mlp_in_norm_gain.data, b.mlp_in_norm_bias.data, kGeGluNormEps);
      mlp_in = h.data();
    }
    Linear(b.fc, rows, w, mlp, mlp_in, 0.0f, hidden.data());
    const float* mlp_out = hidden.data();
    if (b.mlp == MlpKind::kPlain) {
      AddBiasActivate(hidden.data(), rows, mlp, b.fc.bias.data, act);
    } else {  // gated: act(gate) * value
      gate.resize(hidden.size());
      Linear(b.fc_gate, rows, w, mlp, mlp_in, 0.0f, gate.data());
      if (b.mlp == MlpKind::kSwiGlu) {
        AddBiasSwiGlu(gate.data(), hidden.data(), rows, mlp, b.fc_gate.bias.data, b.fc.bias.data);
        LayerNorm(gate.data(), hidden.data(), rows, mlp, b.mlp_norm_gain.data, b.mlp_norm_bias.data,
                  cfg.layer_norm_eps);
      } else {
        AddBiasGeGlu(gate.data(), hidden.data(), rows, mlp, b.fc_gate.bias.data, b.fc.bias.data);
        mlp_out = gate.data();
      }
    }
    if (tw.post_norm) {
      Linear(b.proj, rows, mlp, w, mlp_out, 0.0f, h.data());
      add_branch(h.data(), b.proj, b.ln2_gain, b.ln2_bias);
    } else {
      Linear(b.proj, rows, mlp, w, mlp_out, 1.0f, x);  // residual
      AddBias(x, rows, w, b.proj.bias.data);
    }
    Trace(o, prefix + "block" + std::to_string(i) + "_out", x, static_cast<size_t>(rows) * w);
  }
}

// Final LayerNorm (`ln_name`) on all rows, pooling of one row per item (row pool_index[n], or with
// Pooling::kAverage the mean of the rows from `average_from` on: the patch tokens), projection to the
// embedding; with final_ln_after_pool the LayerNorm runs on the pooled rows instead.
Matrix PoolAndProject(const TowerConfig& cfg, int embed_dim, const TowerWeights& tw, float* x, int batch, int seq,
                      const std::vector<int>& pool_index, const ForwardOptions& o, const std::string& prefix,
                      const std::string& ln_name, int average_from = 1) {
  const int w = cfg.width;
  if (!cfg.final_ln_after_pool) {
    LayerNorm(x, x, batch * seq, w, tw.ln_final_gain.data, tw.ln_final_bias.data, cfg.layer_norm_eps);
    Trace(o, prefix + ln_name + "_out", x, static_cast<size_t>(batch) * seq * w);
  }
  std::vector<float> pooled(static_cast<size_t>(batch) * w);
  for (int n = 0; n < batch; ++n) {
    float* dst = pooled.data() + static_cast<size_t>(n) * w;
    if (cfg.pooling == Pooling::kAverage) {
      std::vector<double> sum(static_cast<size_t>(w), 0.0);
      for (int r = average_from; r < seq; ++r) {
        const float* src = x + (static_cast<size_t>(n) * seq + r) * w;
        for (int c = 0; c < w; ++c) sum[c] += src[c];
      }
      for (int c = 0; c < w; ++c) dst[c] = static_cast<float>(sum[c] / (seq - average_from));
    } else {
      const float* src = x + (static_cast<size_t>(n) * seq + pool_index[n]) * w;
      std::copy(src, src + w, dst);
    }
  }
  if (cfg.final_ln_after_pool) {
    Trace(o, prefix + "pooled_before_" + ln_name, pooled.data(), pooled.size());
    LayerNorm(pooled.data(), pooled.data(), batch, w, tw.ln_final_gain.data, tw.ln_final_bias.data, cfg.layer_norm_eps);
    Trace(o, prefix + ln_name + "_out", pooled.data(), pooled.size());
  }
  Trace(o, prefix + "pooled_before_proj", pooled.data(), pooled.size());
  Matrix out(batch, embed_dim);
  if (tw.projection.weight.data == nullptr && tw.projection.weight_bf16.empty()) {  // no projection: width == embed_dim
    out.data = std::move(pooled);
    return out;
  }
  Linear(tw.projection, batch, w, embed_dim, pooled.data(), 0.0f, out.data.data());
  if (tw.projection.bias.data != nullptr) AddBias(out.data.data(), batch, embed_dim, tw.projection.bias.data);
  return out;
}

// timm AttentionPoolLatent on x[batch * seq, width] (already normed): the latent's query attends
// over each item's tokens, then proj, then y + MLP(LayerNorm(y)). Returns [batch x width].
Matrix AttentionPool(const VisionConfig& v, Activation act, const AttentionPoolWeights& a, const float* x, int batch,
                     int seq, const ForwardOptions& o, const std::string& prefix) {
  const int w = v.width;
  const int rows = batch * seq;
  const int heads = v.pool_heads > 0 ? v.pool_heads : v.heads;
  const int mlp_width = v.pool_mlp_width > 0 ? v.pool_mlp_width : v.mlp_width;
  std::vector<float> q(static_cast<size_t>(w));
  Linear(a.q, 1, w, w, a.latent.data, 0.0f, q.data());
  AddBias(q.data(), 1, w, a.q.bias.data);
  std::vector<float> kv(static_cast<size_t>(rows) * 2 * w);
  Linear(a.kv, rows, w, 2 * w, x, 0.0f, kv.data());
  AddBias(kv.data(), rows, 2 * w, a.kv.bias.data);
  std::vector<float> attended(static_cast<size_t>(batch) * w);
  CrossAttention(q.data(), /*q_item_stride=*/0, kv.data(), attended.data(), batch, /*q_seq=*/1, seq, w, heads);
  Matrix y(batch, w);
  Linear(a.proj, batch, w, w, attended.data(), 0.0f, y.data.data());
  AddBias(y.data.data(), batch, w, a.proj.bias.data);
  Trace(o, prefix + "attn_pool.proj_out", y.data.data(), y.data.size());
  std::vector<float> h(static_cast<size_t>(batch) * w);
  LayerNorm(y.data.data(), h.data(), batch, w, a.norm_gain.data, a.norm_bias.data, v.layer_norm_eps);
  std::vector<float> hidden(static_cast<size_t>(batch) * mlp_width);
  Linear(a.fc, batch, w, mlp_width, h.data(), 0.0f, hidden.data());
  AddBiasActivate(hidden.data(), batch, mlp_width, a.fc.bias.data, act);
  Linear(a.fc_proj, batch, mlp_width, w, hidden.data(), 1.0f, y.data.data());  // residual
  AddBias(y.data.data(), batch, w, a.fc_proj.bias.data);
  Trace(o, prefix + "attn_pool_out", y.data.data(), y.data.size());
  return y;
}

// The patch embedding conv1 (stride = kernel = patch_size) as im2col + GEMM: [images · grid², width].
std::vector<float> EmbedPatches(const VisionConfig& v, const ClipWeights& w, const Matrix& pixels) {
  const int n = pixels.rows;
  const int s = v.image_size;
  const int p = v.patch_size;
  const int g = v.grid();
  const int patches = g * g;
  const int width = v.width;
  const int patch_values = 3 * p * p;
  // im2col: one row per patch, values in conv1's (channel, y, x) order.
  std::vector<float> cols(static_cast<size_t>(n) * patches * patch_values);
  for (int i = 0; i < n; ++i) {
    const float* img = pixels.row(i);
    for (int gy = 0; gy < g; ++gy) {
      for (int gx = 0; gx < g; ++gx) {
        float* dst = cols.data() + (static_cast<size_t>(i) * patches + gy * g + gx) * patch_values;
        for (int c = 0; c < 3; ++c) {
          for (int ky = 0; ky < p; ++ky) {
            const float* src = img + (static_cast<size_t>(c) * s + gy * p + ky) * s + gx * p;
            std::copy(src, src + p, dst + (c * p + ky) * p);
          }
        }
      }
    }
  }
  std::vector<float> embedded(static_cast<size_t>(n) * patches * width);
  Gemm(n * patches, width, patch_values, cols.data(), patch_values, w.patch_embedding.data, BLayout::kNK, 0.0f,
       embedded.data(), width);
  if (w.patch_bias.data != nullptr) AddBias(embedded.data(), n * patches, width, w.patch_bias.data);
  return embedded;
}

}  // namespace

Matrix EncodeVision(const ClipConfig& config, const ClipWeights& w, const Matrix& pixels, const ForwardOptions& o) {
  if (config.vision.tower == VisionTower::kModifiedResNet) return EncodeResNet(config, *w.resnet, pixels, o);
  if (config.vision.tower == VisionTower::kConvNext) return EncodeConvNext(config, *w.convnext, pixels, o);
  if (config.vision.tower == VisionTower::kFastVit) return EncodeFastVit(config, *w.fastvit, pixels, o);
  const VisionConfig& v = config.vision;
  // timm trunks (visual.trunk.* names); those with a class token end in norm + token + trunk head.
  const bool timm_head = v.eva.enabled || v.mci_conv_stem;
  const bool timm = v.pooling == Pooling::kAttentionPool || timm_head || v.vitamin.enabled;
  const std::string prefix = timm ? "visual.trunk." : "visual.";
  const int n = pixels.rows;
  const int g = v.grid();
  const int patches = g * g;
  const int first_patch = v.class_token ? 1 : 0;
  const int seq = patches + first_patch;
  const int width = v.width;

  std::vector<float> embedded;
  if (v.vitamin.enabled) {
    embedded = EncodeVitaminStem(v, *w.vitamin_stem, pixels, o);  // the conv stem's map is the token sequence
  } else if (w.mci_stem != nullptr) {
    embedded = RunMciConvStem(v, *w.mci_stem, pixels, o);  // MobileCLIP-B's ConvStem traces its own output
  } else {
    embedded = EmbedPatches(v, w, pixels);
  }
  if (timm) {  // timm flattens to [n, tokens, width]
    if (w.mci_stem == nullptr) Trace(o, prefix + "patch_embed_out", embedded.data(), embedded.size());
  } else if (o.trace != nullptr) {
    // conv1 output as torch lays it out: [n, width, g, g].
    std::vector<float> chw(embedded.size());
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < patches; ++k) {
        for (int c = 0; c < width; ++c) {
          chw[(static_cast<size_t>(i) * width + c) * patches + k] =
              embedded[(static_cast<size_t>(i) * patches + k) * width + c];
        }
      }
      Trace(o, "visual.conv1_out", chw.data(), chw.size());
    }
  }

  std::vector<float> x(static_cast<size_t>(n) * seq * width);
  const float* pos = w.vision.positional.data;
  // timm's no_embed_class (MobileCLIP-B): positions for the patch tokens only, the class token has none.
  const int first_position = v.mci_conv_stem ? 0 : first_patch;
  for (int i = 0; i < n; ++i) {
    float* xi = x.data() + static_cast<size_t>(i) * seq * width;
    if (v.class_token) {
      for (int c = 0; c < width; ++c) xi[c] = w.class_embedding.data[c] + (first_position > 0 ? pos[c] : 0.0f);
    }
    for (int k = 0; k < patches; ++k) {
      const float* e = embedded.data() + (static_cast<size_t>(i) * patches + k) * width;
      float* row = xi + static_cast<size_t>(k + first_patch) * width;
      if (pos == nullptr) {  // ViTamin pos_embed 'none'
        std::copy(e, e + width, row);
        continue;
      }
      const float* pk = pos + static_cast<size_t>(k + first_position) * width;
      for (int c = 0; c < width; ++c) row[c] = e[c] + pk[c];
    }
  }
  if (timm) Trace(o, prefix + "tokens_with_pos", x.data(), x.size());
  if (v.ln_pre) {
    LayerNorm(x.data(), x.data(), n * seq, width, w.ln_pre_gain.data, w.ln_pre_bias.data, v.layer_norm_eps);
  }
  if (!timm) Trace(o, prefix + "ln_pre_out", x.data(), x.size());
  if (v.eva.enabled) Trace(o, prefix + "norm_pre_out", x.data(), x.size());  // identity without norm_pre (EVA)
  // OpenCLIP's timm towers use exact GELU whatever its config's quick_gelu says; transformers'
  // SiglipVisionTransformer its hidden_act (blocks and pooling head alike).
  const Activation act = v.activation                                           ? *v.activation
                         : timm && config.layout == CheckpointLayout::kOpenClip ? Activation::kGelu
                                                                                : config.activation;
  BlockRun run;
  run.rope = v.eva.rope ? &w.rope : nullptr;
  RunBlocks(v, act, w.vision, x.data(), n, seq, run, o, prefix);
  const std::vector<int> class_token(static_cast<size_t>(n), 0);
  if (v.eva.enabled && v.pooling == Pooling::kAttentionPool) {  // PE-Core: norm, MAP head, trunk.head
    LayerNorm(x.data(), x.data(), n * seq, width, w.vision.ln_final_gain.data, w.vision.ln_final_bias.data,
              v.layer_norm_eps);
    Trace(o, prefix + "norm_out", x.data(), x.size());
    Matrix pooled = AttentionPool(v, act, w.attention_pool, x.data(), n, seq, o, prefix);
    Trace(o, "visual.pooled_before_proj", pooled.data.data(), pooled.data.size());
    Matrix out(n, config.embed_dim);
    Linear(w.vision.projection, n, width, config.embed_dim, pooled.data.data(), 0.0f, out.data.data());
    AddBias(out.data.data(), n, config.embed_dim, w.vision.projection.bias.data);
    Trace(o, "visual.projected", out.data.data(), out.data.size());
    return out;
  }
  if (timm_head) {  // norm on every token, the class token, trunk.head
    Matrix out =
        PoolAndProject(v, config.embed_dim, w.vision, x.data(), n, seq, class_token, o, "visual.", "trunk.norm");
    Trace(o, "visual.projected", out.data.data(), out.data.size());
    return out;
  }
  if (v.vitamin.enabled) {  // mean over all tokens, fc_norm (timm's visual.trunk_out), visual.head.proj
    const TraceFn trunk_out = [&o](const std::string& name, const float* data, size_t size) {
      Trace(o, name, data, size);
      if (name == "visual.trunk.fc_norm_out") Trace(o, "visual.trunk_out", data, size);
    };
    ForwardOptions pool_options = o;
    if (o.trace != nullptr) pool_options.trace = &trunk_out;
    return PoolAndProject(v, config.embed_dim, w.vision, x.data(), n, seq, {}, pool_options, prefix, "fc_norm",
                          /*average_from=*/0);
  }
  if (v.attentional_pool) {  // CoCa: attentional pooler, ln_post, query 0, proj
    std::vector<float> pooled = AttentionalPool(config, w, x.data(), n, seq, o);
    Trace(o, "visual.pooled_before_proj", pooled.data(), pooled.size());
    Matrix out(n, config.embed_dim);
    Linear(w.vision.projection, n, config.embed_dim, config.embed_dim, pooled.data(), 0.0f, out.data.data());
    Trace(o, "visual.projected", out.data.data(), out.data.size());
    return out;
  }
  if (timm) {
    LayerNorm(x.data(), x.data(), n * seq, width, w.vision.ln_final_gain.data, w.vision.ln_final_bias.data,
              v.layer_norm_eps);
    Trace(o, prefix + "norm_out", x.data(), x.size());
    return AttentionPool(v, act, w.attention_pool, x.data(), n, seq, o, prefix);
  }
  return PoolAndProject(v, config.embed_dim, w.vision, x.data(), n, seq, class_token, o, prefix, "ln_post",
                        first_patch);
}

int PooledPosition(const TextConfig& t, const std::vector<int32_t>& ids) {
  switch (t.pooling) {
    case Pooling::kArgmax:
      return static_cast<int>(std::max_element(ids.begin(), ids.end()) - ids.begin());
    case Pooling::kEos: {
      const auto eos = std::find(ids.begin(), ids.end(), t.eos_id);
      return eos == ids.end() ? 0 : static_cast<int>(eos - ids.begin());
    }
    default:
      return t.context_length - 1;
  }
}

namespace {

// CoCa's token rows: the ids up to and including the first pad after the last non-pad id (the
// legacy key mask lets the cls see that one; ids after it are masked keys), at most context_length.
int CocaTokenRows(const TextConfig& t, const std::vector<int32_t>& ids) {
  int last = 0;
  for (int p = 0; p < t.context_length; ++p) {
    if (ids[p] != t.pad_id) last = p;
  }
  return std::min(t.context_length, last + 2);
}

// CoCa (embed_cls): `rows` token rows (+ positions), the cls embedding appended at row `rows` with
// position context_length, causal attention with the legacy key mask (TextConfig::embed_cls), the cls
// row pooled and normalised after pooling. Rows are trimmed to the batch's longest CocaTokenRows unless
// tracing every position: the cls attends to no key beyond them, and token rows never see the cls.
Matrix EncodeCocaText(const ClipConfig& config, const ClipWeights& w, const std::vector<std::vector<int32_t>>& ids,
                      const ForwardOptions& o) {
  const TextConfig& t = config.text;
  const int n = static_cast<int>(ids.size());
  const int width = t.width;
  int rows = t.context_length;
  if (o.trim_text_to_eot) {
    rows = 1;
    for (const auto& row : ids) rows = std::max(rows, CocaTokenRows(t, row));
  }
  const int seq = rows + 1;
  std::vector<float> x(static_cast<size_t>(n) * seq * width);
  std::vector<uint8_t> key_valid(static_cast<size_t>(n) * seq);
  for (int i = 0; i < n; ++i) {
    for (int p = 0; p < seq; ++p) {
      const bool cls = p == rows;
      const float* tok = cls ? w.text_cls.data : w.token_embedding.data + static_cast<size_t>(ids[i][p]) * width;
      const float* pos = w.text.positional.data + static_cast<size_t>(cls ? t.context_length : p) * width;
      float* row = x.data() + (static_cast<size_t>(i) * seq + p) * width;
      for (int c = 0; c < width; ++c) row[c] = tok[c] + pos[c];
      // OpenCLIP's legacy CoCa mask: [True] + (ids != pad), the cls key at position context_length.
      const int key = cls ? t.context_length : p;
      key_valid[static_cast<size_t>(i) * seq + p] = key == 0 || ids[i][key - 1] != t.pad_id;
    }
  }
  Trace(o, "text.embeds_out", x.data(), x.size());
  BlockRun run;
  run.causal = true;
  run.key_valid = key_valid.data();
  RunBlocks(t, t.activation.value_or(config.activation), w.text, x.data(), n, seq, run, o, "text.");
  return PoolAndProject(t, config.embed_dim, w.text, x.data(), n, seq, std::vector<int>(static_cast<size_t>(n), rows),
                        o, "text.", "ln_final");
}

}  // namespace

int TextPositions(const TextConfig& t, const std::vector<int32_t>& ids) {
  if (t.embed_cls) return CocaTokenRows(t, ids) + 1;
  if (t.causal && t.pooling != Pooling::kLast) return PooledPosition(t, ids) + 1;
  return t.context_length;
}

Matrix EncodeText(const ClipConfig& config, const ClipWeights& w, const std::vector<std::vector<int32_t>>& ids,
                  const ForwardOptions& o) {
  const TextConfig& t = config.text;
  if (t.embed_cls) return EncodeCocaText(config, w, ids, o);
  const int n = static_cast<int>(ids.size());
  const int width = t.width;
  std::vector<int> pool_index(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) pool_index[i] = PooledPosition(t, ids[i]);
  const bool trim = o.trim_text_to_eot && t.causal;
  const int seq = trim ? *std::max_element(pool_index.begin(), pool_index.end()) + 1 : t.context_length;

  std::vector<float> x(static_cast<size_t>(n) * seq * width);
  for (int i = 0; i < n; ++i) {
    for (int p = 0; p < seq; ++p) {
      const float* tok = w.token_embedding.data + static_cast<size_t>(ids[i][p]) * width;
      const float* pos = w.text.positional.data + static_cast<size_t>(p) * width;
      float* row = x.data() + (static_cast<size_t>(i) * seq + p) * width;
      for (int c = 0; c < width; ++c) row[c] = tok[c] + pos[c];
    }
  }
  Trace(o, "text.embeds_out", x.data(), x.size());
  BlockRun run;
  run.causal = t.causal;
  RunBlocks(t, t.activation.value_or(config.activation), w.text, x.data(), n, seq, run, o, "text.");
  return PoolAndProject(t, config.embed_dim, w.text, x.data(), n, seq, pool_index, o, "text.", "ln_final");
}

}  // namespace visalign::clip
