#include "clip/coca.h"

#include <algorithm>

#include "clip/kernels.h"

namespace visalign::clip {

Status LoadAttentionalPooler(WeightLoader& l, const ClipConfig& config, AttentionalPoolerWeights& a) {
  const VisionConfig& v = config.vision;
  const int64_t e = config.embed_dim;
  const int64_t width = v.width;
  const std::string p = "visual.attn_pool.";
  VISALIGN_ASSIGN_OR_RETURN(a.query, l.Get(p + "query", {v.pool_queries, e}));
  VISALIGN_RETURN_IF_ERROR(l.Norm(p + "ln_q", e, a.ln_q_gain, a.ln_q_bias));
  VISALIGN_RETURN_IF_ERROR(l.Norm(p + "ln_k", width, a.ln_k_gain, a.ln_k_bias));
  VISALIGN_ASSIGN_OR_RETURN(a.q.weight, l.Get(p + "attn.q_proj_weight", {e, e}));
  VISALIGN_ASSIGN_OR_RETURN(a.q.bias, l.Rows(p + "attn.in_proj_bias", {3 * e}, 0, e));
  VISALIGN_ASSIGN_OR_RETURN(a.kv.weight, l.Stack({p + "attn.k_proj_weight", p + "attn.v_proj_weight"}, {e, width}));
  VISALIGN_ASSIGN_OR_RETURN(a.kv.bias, l.Rows(p + "attn.in_proj_bias", {3 * e}, e, 2 * e));
  a.q.layout = a.kv.layout = BLayout::kNK;
  VISALIGN_ASSIGN_OR_RETURN(a.out, l.Linear(p + "attn.out_proj", e, e));
  return Status::Ok();
}

std::vector<float> AttentionalPool(const ClipConfig& config, const ClipWeights& w, const float* x, int batch, int seq,
                                   const ForwardOptions& o) {
  const VisionConfig& v = config.vision;
  const AttentionalPoolerWeights& a = w.attentional_pooler;
  const int e = config.embed_dim;
  const int width = v.width;
  const int rows = batch * seq;
  const int queries = o.trace != nullptr ? v.pool_queries : 1;
  // q = ln_q(query) Wqᵀ + bq, shared by every item.
  std::vector<float> q(static_cast<size_t>(queries) * e);
  LayerNorm(a.query.data, q.data(), queries, e, a.ln_q_gain.data, a.ln_q_bias.data, v.layer_norm_eps);
  std::vector<float> projected(q.size());
  Linear(a.q, queries, e, e, q.data(), 0.0f, projected.data());
  AddBias(projected.data(), queries, e, a.q.bias.data);
  // k | v = ln_k(x) [Wk; Wv]ᵀ + [bk; bv].
  std::vector<float> keys(static_cast<size_t>(rows) * width);
  LayerNorm(x, keys.data(), rows, width, a.ln_k_gain.data, a.ln_k_bias.data, v.layer_norm_eps);
  std::vector<float> kv(static_cast<size_t>(rows) * 2 * e);
  Linear(a.kv, rows, width, 2 * e, keys.data(), 0.0f, kv.data());
  AddBias(kv.data(), rows, 2 * e, a.kv.bias.data);
  std::vector<float> attended(static_cast<size_t>(batch) * queries * e);
  CrossAttention(projected.data(), /*q_item_stride=*/0, kv.data(), attended.data(), batch, queries, seq, e,
                 v.pool_heads);
  std::vector<float> out(attended.size());
  Linear(a.out, batch * queries, e, e, attended.data(), 0.0f, out.data());
  AddBias(out.data(), batch * queries, e, a.out.bias.data);
  Trace(o, "visual.attn_pool_out", out.data(), out.size());
  LayerNorm(out.data(), out.data(), batch * queries, e, w.vision.ln_final_gain.data, w.vision.ln_final_bias.data,
            v.layer_norm_eps);
  Trace(o, "visual.ln_post_out", out.data(), out.size());
  std::vector<float> pooled(static_cast<size_t>(batch) * e);
  for (int n = 0; n < batch; ++n) {
    const float* first = out.data() + static_cast<size_t>(n) * queries * e;
    std::copy(first, first + e, pooled.data() + static_cast<size_t>(n) * e);
  }
  return pooled;
}

}  // namespace visalign::clip
