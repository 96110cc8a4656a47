// CoCa's contrastive image embedding (OpenCLIP `attentional_pool: true`, the original OpenCLIP CoCa
// layout): after the ViT blocks, AttentionalPooler's learned queries attend over ln_k(every token, the
// class token included) with attn_pooler_heads heads, then ln_post and proj on query 0. Each query
// attends independently, so only query 0 is computed (all of them when tracing, as the fixture's
// debug file holds them). The captioning decoder (text_decoder.*) is not loaded. Internal to the clip
// module.
#pragma once

#include "clip/towers.h"
#include "clip/weight_loader.h"

namespace visalign::clip {

// visual.attn_pool.{query, ln_q, ln_k, attn.q_proj_weight, k_proj_weight, v_proj_weight, in_proj_bias,
// out_proj}: query a view, k and v stacked into one [2E, width] operand (a copy), biases views.
Status LoadAttentionalPooler(WeightLoader& l, const ClipConfig& config, AttentionalPoolerWeights& a);

// x[batch * seq, width] after the last block. Returns the pooled, ln_post-normed rows
// [batch x embed_dim] (query 0), before proj; traces visual.attn_pool_out / visual.ln_post_out.
std::vector<float> AttentionalPool(const ClipConfig& config, const ClipWeights& w, const float* x, int batch, int seq,
                                   const ForwardOptions& o);

}  // namespace visalign::clip
