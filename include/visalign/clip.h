// Native CLIP inference (ViT, ModifiedResNet or timm ConvNeXt vision tower with the CLIP text
// transformer), numerically matching open_clip in fp32.
//
// A model directory holds a config (`open_clip_config.json` or `config.json`, OpenCLIP
// {model_cfg, preprocess_cfg} layout or Hugging Face transformers {vision_config, text_config})
// and weights (`open_clip_model.safetensors` or `model.safetensors`, F32/F16/BF16, converted to
// f32, or the linear layers to bf16 with Precision::kBf16). Supported: standard ViT CLIP, OpenCLIP's
// ModifiedResNet and timm ConvNeXt vision towers, and SigLIP (OpenCLIP `ViT-*-SigLIP*` exports and
// transformers `SiglipModel` folders: timm ViT with a MAP attention-pool head, bidirectional text tower
// pooled at the last position, sigmoid logits with a bias, the checkpoint's own SentencePiece
// tokenizer), SigLIP2 (tanh-GELU towers, the Gemma tokenizer from tokenizer.json), EVA-CLIP (timm
// EVA01 / EVA02 trunks: RoPE, sub-LN, SwiGLU), CLIPA (mean-pooled patches, BERT WordPiece) and
// MetaCLIP 2 (eos pooling, the XLM-R SentencePiece layout, or token ids where its tokenizer is absent),
// PE-Core (timm Eva trunk with 'xy' RoPE and a MAP head), CoCa (attentional pooler, appended cls token;
// contrastive embeddings only), EVA02-E (post-norm blocks), timm's CLIP-layout ViTs (MobileCLIP2-L-14) and
// ViTamin (timm's conv stem + MbConv stages before a GeGLU ViT). Anything else (MobileCLIP's FastViT,
// other timm trunks, ...) is refused with kUnsupported naming the feature. CLIP's BPE tokenizer uses the vocabulary
// shipped in data/clip/.
//
// All Encode* calls are batched (chunks of ClipLoadOptions::max_batch), use ThreadCount()
// threads, are safe to call concurrently on one model, and return UNNORMALISED embeddings
// (use NormalizeRows / CosineSimilarity). Row i of a result belongs to input i.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/imaging/image.h"

namespace visalign::clip {

inline constexpr int32_t kStartOfText = 49406;
inline constexpr int32_t kEndOfText = 49407;
inline constexpr int32_t kPadToken = 0;
inline constexpr int kDefaultContextLength = 77;

// A dense row-major float matrix: element (r, c) is data[r * cols + c].
struct Matrix {
  int rows = 0;
  int cols = 0;
  std::vector<float> data;

  Matrix() = default;
  Matrix(int r, int c) : rows(r), cols(c), data(static_cast<size_t>(r) * c, 0.0f) {}
  float* row(int r) { return data.data() + static_cast<size_t>(r) * cols; }
  const float* row(int r) const { return data.data() + static_cast<size_t>(r) * cols; }
  float at(int r, int c) const { return data[static_cast<size_t>(r) * cols + c]; }
};

// Scales each row to unit L2 norm: x / max(||x||, 1e-12) (as torch.nn.functional.normalize).
void NormalizeRows(Matrix& m);
// a (n x d) vs b (m x d) -> n x m cosine similarities (rows are normalised internally).
// Requires a.cols == b.cols.
Matrix CosineSimilarity(const Matrix& a, const Matrix& b);

// exact erf GELU / x * sigmoid(1.702 x) / 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (PyTorch's
// approximate='tanh', transformers' gelu_pytorch_tanh: HF SigLIP checkpoints).
enum class Activation { kGelu, kQuickGelu, kGeluTanh };
// vision 'tok' / text 'argmax' (first eot) / text 'last' (position context_length - 1, SigLIP) /
// vision 'map' (timm AttentionPoolLatent: one learned query attends over all tokens, then an MLP) /
// vision 'avg' (mean of the patch tokens, CLIPA) / text 'eos' (the first position holding
// TextConfig::eos_id, MetaCLIP 2).
enum class Pooling { kClassToken, kArgmax, kLast, kAttentionPool, kAverage, kEos };
enum class CheckpointLayout { kOpenClip, kHuggingFace };

struct TowerConfig {
  int width = 0;
  int layers = 0;
  int heads = 0;
  int mlp_width = 0;
  float layer_norm_eps = 1e-5f;
  Pooling pooling = Pooling::kClassToken;
  // OpenCLIP final_ln_after_pool: the final LayerNorm (ln_post / ln_final) on the pooled vector
  // instead of on every token before pooling (CLIPA's vision tower).
  bool final_ln_after_pool = false;
  // Set where the tower fixes its own activation (OpenCLIP text act_kwargs {approximate: tanh},
  // timm's gelu_tanh SigLIP ViTs); otherwise ClipConfig::activation applies (timm towers: exact GELU).
  std::optional<Activation> activation;
};

// The vision tower families run natively (docs/clip.md): OpenCLIP's VisionTransformer, its
// ModifiedResNet (OpenAI RN50/RN101/RN50x4/x16/x64), and behind OpenCLIP's TimmModel timm's ConvNeXt
// and FastViT MCi (MobileCLIP-S, MobileCLIP2-S).
enum class VisionTower { kViT, kModifiedResNet, kConvNext, kFastVit };
// "ViT", "ModifiedResNet", "ConvNeXt (timm)", "FastViT MCi (timm)".
std::string_view VisionTowerName(VisionTower tower);

// ModifiedResNet: a 3-conv stem (width/2, width/2, width channels), four stages of Bottlenecks
// (planes width·2^s, 4·planes out), AttentionPool2d with `heads` heads over the S/32 grid.
struct ResNetConfig {
  std::array<int, 4> layers{};  // Bottlenecks per stage
  int width = 0;                // stem width
  int heads = 0;                // attention-pool heads: width * 32 / head_width
  int feature_width() const { return width * 32; }
};

// timm ConvNeXt trunk (global average pool + LayerNorm head) and OpenCLIP's projection to embed_dim.
enum class ConvNextProjection { kLinear, kMlp };  // timm_proj "linear" / "mlp" (fc1 -> GELU -> fc2, hidden 2·embed)
struct ConvNextConfig {
  std::string timm_model_name;  // e.g. "convnext_base"
  std::array<int, 4> depths{};  // blocks per stage
  std::array<int, 4> dims{};    // channels per stage
  float norm_eps = 1e-6f;
  ConvNextProjection projection = ConvNextProjection::kLinear;
  bool projection_bias = false;  // timm_proj_bias (bias of the linear projection / the MLP's fc2)
};

// timm's FastViT MCi trunk (fastvit_mci0..4; MobileCLIP-S / MobileCLIP2-S): MobileOne stem (/4),
// stages of [downsample: 7×7 stride-2 grouped conv + SE? + GELU, 1×1 MobileOne] [RepCPE 7×7] and
// RepMixer or attention blocks with a 7×7 depthwise ConvMlp, final 3×3 grouped MobileOne conv with
// SE to `final_features` channels, global average pool, head.fc (with bias) as the projection.
// Re-parameterisable branches are folded at load (reparam.h).
struct FastVitStageConfig {
  int depth = 0;
  int dim = 0;
  double mlp_ratio = 3.0;
  bool attention = false;      // token mixer: attention (else RepMixer)
  bool pos_emb = false;        // RepConditionalPosEnc (7×7) before the blocks
  bool se_downsample = false;  // SE in the downsample's large-kernel conv
};
struct FastVitConfig {
  std::string timm_model_name;
  std::vector<FastVitStageConfig> stages;  // stage 0 has no downsample
  bool stem_scale_branch = true;           // the stem's MobileOne blocks have 1×1 conv_scale branches (mci3/4: no)
  bool attention_layer_norm = false;       // attention blocks' norm: LayerNorm2d eps 1e-5 (mci3/4), else BatchNorm
  int final_features = 0;                  // int(embed_dims[-1] · cls_ratio 2)
  static constexpr int kHeadDim = 32;
};

// timm's Eva trunk (EVA-CLIP: `eva_giant_patch14_*` EVA01, `eva02_*_clip_*` EVA02, EVA02-E's post-norm
// `eva02_enormous_*`; PE-Core's `vit_pe_core_*`) and timm's CLIP-style VisionTransformer
// (`vit_*_clip_*`: MobileCLIP2-L-14) on the ViT path: class token, absolute positions, final norm, the
// trunk's head as projection (with bias), pooled at the class token or by a MAP head.
enum class TimmQkv {
  kFusedQvBias,  // attn.qkv + q_bias / v_bias, no key bias (EVA01, EVA02-E)
  kSeparate,     // q_proj, k_proj (no bias), v_proj (EVA02)
  kFused,        // attn.qkv with a [3 width] bias (PE-Core's AttentionRope, timm's ViT)
};

struct EvaConfig {
  bool enabled = false;
  TimmQkv qkv = TimmQkv::kFusedQvBias;
  bool patch_bias = true;  // patch_embed.proj has a bias (not with timm's pre-norm: PE-Core, CLIP ViTs)
  // 2-d rotary embedding ('cat' layout, interleaved pairs) of the patch tokens' q and k (EVA02, PE-Core):
  // positions (index + rope_offset) / grid * rope_ref_grid; angles ordered row then column ('ij', EVA02)
  // or column then row ('xy', PE-Core).
  bool rope = false;
  int rope_ref_grid = 0;
  float rope_offset = 0.0f;
  bool rope_xy = false;
  bool sub_ln = false;     // scale_attn_inner: attn.norm over the heads before attn.proj
  bool swiglu = false;     // swiglu_mlp + scale_mlp: silu(fc1_g) * fc1_x, mlp.norm, fc2
  bool post_norm = false;  // use_post_norm (EVA02-E): x + norm1(attn(x)), then x + norm2(mlp(x))
};

// timm's ViTamin trunk (timm/models/vitamin.py `vitamin_*`, OpenCLIP ViTamin-*) on the ViT path: a conv
// stem (3×3 s2 conv, LayerNorm2d + GELU, 3×3 conv), two stages of MbConv-LN blocks (the first of each
// strided), a LayerNorm2d + 3×3 s2 conv to the ViT width, then the tokens (no class token) through
// blocks with GeGLU MLPs, mean over all tokens, fc_norm, OpenCLIP's linear head. Each stride-2 step
// maps n pixels to ⌊(n − 1)/2⌋ + 1 (zero padding 1), so the token grid is ⌈S/16⌉ for any image size S.
struct VitaminConfig {
  static constexpr int kDownsamplings = 4;  // stem, stage 0, stage 1, strided conv
  bool enabled = false;
  int stem_width = 0;
  std::array<int, 2> stage_widths{};  // MbConv stages (the strided conv maps stage 1 to VisionConfig::width)
  std::array<int, 2> stage_depths{};
  bool pos_embed = true;  // false: timm pos_embed 'none' (vitamin_xlarge_*: no positional embedding)
  int grid(int image_size) const {
    for (int i = 0; i < kDownsamplings; ++i) image_size = (image_size - 1) / 2 + 1;
    return image_size;
  }
};

struct VisionConfig : TowerConfig {
  VisionTower tower = VisionTower::kViT;
  int image_size = 0;
  int patch_size = 0;       // ViT only (TowerConfig's fields too)
  bool ln_pre = true;       // false for OpenCLIP no_ln_pre models and timm SigLIP
  bool class_token = true;  // false for timm SigLIP (the sequence is the patches only)
  // Projection width -> embed_dim after pooling; false for timm_proj "none" (embed_dim == width).
  bool projection = true;
  ResNetConfig resnet;      // kModifiedResNet only
  ConvNextConfig convnext;  // kConvNext only
  EvaConfig eva;            // kViT from a timm Eva / ViT trunk only
  VitaminConfig vitamin;    // kViT from a timm ViTamin trunk only (patch_size: its total stride 16)
  // Pooling::kAttentionPool (timm AttentionPoolLatent): its heads and MLP width, 0 = the blocks'
  // (PE-Core: attn_pool_num_heads 8 whatever the blocks have).
  int pool_heads = 0;
  int pool_mlp_width = 0;
  // OpenCLIP's attentional pooler (CoCa, `attentional_pool: true`): pool_queries learned queries of
  // width embed_dim attend (pool_heads heads) over ln_k(tokens), then ln_post and proj on query 0.
  bool attentional_pool = false;
  int pool_queries = 0;
  FastVitConfig fastvit;  // kFastVit only
  // kViT from timm's vit_base_mci_224 (MobileCLIP-B): the patch embedding is a 3-conv BatchNorm stem
  // (4×4/4, 2×2/2, 2×2/2; patch_size 16), the class token gets no position embedding
  // (no_embed_class), final norm, class-token pooling, the trunk's head (with bias) as projection.
  bool mci_conv_stem = false;
  int grid() const { return vitamin.enabled ? vitamin.grid(image_size) : image_size / patch_size; }
};

struct TextConfig : TowerConfig {
  int context_length = kDefaultContextLength;
  int vocab_size = 0;
  bool causal = true;            // false: every position attends to all (SigLIP no_causal_mask)
  bool projection_bias = false;  // SigLIP: text_projection is an nn.Linear with bias
  bool projection = true;        // false for proj_type "none" (ViT-SO400M-16-SigLIP-i18n-256): width == embed_dim
  int32_t pad_id = kPadToken;    // id that right-pads token rows to context_length
  int32_t eos_id = kEndOfText;   // Pooling::kEos: the id whose first position is pooled (text_cfg eos_id)
  // CoCa's embed_cls: a learned cls embedding appended after the context_length ids (position
  // context_length, pooled, LayerNorm after pooling), with OpenCLIP's legacy key mask: key k is visible
  // when k == 0 or ids[k - 1] != pad_id (the cls key is ids[context_length - 1] != pad_id), on top of the
  // causal mask.
  bool embed_cls = false;
};

// Which tokenizer turns a text into ids. kClipBpe: the bundled BPE vocabulary (clean 'lower').
// kSentencePiece: the checkpoint's own SentencePiece model (T5-style, as SigLIP ships it), cleaned
// with open_clip's 'canonicalize', ids = pieces[:context_length - 1] + [eos_id]. kHfBpe: a Hugging
// Face tokenizers BPE model from the checkpoint's tokenizer.json (SigLIP2's Gemma tokenizer: byte
// fallback, added tokens), cleaned with 'canonicalize', ids = [bos]? + body + [eos]? as its
// tokenizer_config.json's add_bos_token / add_eos_token say, the body truncated to fit. kWordPiece: a
// BERT WordPiece vocabulary (vocab.txt, CLIPA), [CLS] + pieces + [SEP] (the [SEP] dropped with
// open_clip's strip_sep_token).
enum class TokenizerKind { kClipBpe, kSentencePiece, kHfBpe, kWordPiece };
// Text cleaning before a Hugging Face tokenizer: open_clip's clean='canonicalize' (OpenCLIP SigLIP),
// transformers' SiglipTokenizer (HF SigLIP checkpoints: lowercase, punctuation removed, no ftfy), or
// open_clip's clean='whitespace' (HFTokenizer's default: CLIPA, MetaCLIP 2).
enum class TextCleaning { kOpenClipCanonicalize, kHfSiglip, kOpenClipWhitespace };
struct TokenizerConfig {
  TokenizerKind kind = TokenizerKind::kClipBpe;
  std::string hf_name;               // OpenCLIP text_cfg.hf_tokenizer_name ("" for CLIP's BPE / an HF checkpoint)
  std::filesystem::path model_file;  // kSentencePiece: spiece.model; kHfBpe: tokenizer.json; kWordPiece: vocab.txt
  int32_t eos_id = kEndOfText;       // kWordPiece: [SEP]
  bool add_eos =
      true;  // kHfBpe: add_eos_token; kWordPiece: false with strip_sep_token (the others always end with eos)
  bool add_bos = false;  // kHfBpe: add_bos_token (kWordPiece always starts with [CLS])
  int32_t bos_id = 0;    // kHfBpe with add_bos; kWordPiece: [CLS]
  int32_t unk_id = 0;    // kWordPiece: [UNK]; kSentencePiece with id_offset: <unk> (3)
  // kSentencePiece in the XLM-R layout (XLMRobertaTokenizer: MetaCLIP 2, NLLB's fairseq vocabularies):
  // <s> 0, <pad> 1, </s> 2, <unk> 3 fixed, every other piece its SentencePiece id + id_offset (fairseq's
  // offset 1), SentencePiece's own unk -> unk_id; ids = [bos] + pieces + [eos]. 0: T5's layout.
  int32_t id_offset = 0;
  // kWordPiece's BertNormalizer: lowercase (do_lower_case), strip accents (strip_accents, null =
  // lowercase), spaces around CJK ideographs (tokenize_chinese_chars).
  bool lowercase = true;
  bool strip_accents = true;
  bool split_cjk = true;
  TextCleaning cleaning = TextCleaning::kOpenClipCanonicalize;
  // Set when the text_cfg names a Hugging Face tokenizer of which the model folder holds no file
  // (MetaCLIP 2's facebook/xlm-v-base): the model loads, Tokenize / EncodeTexts fail with kNotFound
  // saying so, EncodeTokens (clip embed --token-ids) works.
  std::string missing;
};

// open_clip's eval transform: resize the shorter side (PIL 8-bit bicubic) to image_size,
// center crop, /255, (x - mean) / std per channel.
enum class ResizeMode { kShortest, kSquash };      // open_clip resize_mode 'shortest' / 'squash'
enum class Interpolation { kBicubic, kBilinear };  // PIL filters (antialiased when downscaling)
struct PreprocessConfig {
  int image_size = 0;
  ResizeMode resize_mode = ResizeMode::kShortest;
  Interpolation interpolation = Interpolation::kBicubic;
  std::array<float, 3> mean{};
  std::array<float, 3> std{};
};

struct ClipConfig {
  int embed_dim = 0;
  Activation activation = Activation::kGelu;
  VisionConfig vision;
  TextConfig text;
  PreprocessConfig preprocess;
  TokenizerConfig tokenizer;
  // SigLIP: logits = exp(logit_scale) * cos + logit_bias and probabilities are sigmoid(logits);
  // CLIP: no bias, softmax over the candidates.
  bool sigmoid_logits = false;
  bool custom_text = false;  // OpenCLIP CustomTextCLIP: text tower parameters under "text."
  CheckpointLayout layout = CheckpointLayout::kOpenClip;
  std::filesystem::path config_file;
  std::filesystem::path weights_file;
  // Set from the config's "visalign_random_model": {"arch", "seed"} (written by
  // WriteRandomClipModel): the weights are pseudo-random, so the model runs but its numbers mean nothing.
  bool random = false;
  uint64_t random_seed = 0;
  std::string random_arch;
};

// For a random model (config.random) the label every output that uses it carries:
// "RANDOM (visalign clip random-model, arch tiny, seed 0): its numbers mean nothing"; else "".
std::string RandomWeightsLabel(const ClipConfig& config);
// The "random_weights" field of every output that uses a CLIP model: {"arch", "seed", "label"} for a
// random model, else null.
Json RandomWeightsJson(const ClipConfig& config);

// Arithmetic of the towers' linear layers (qkv, attention output, MLP, projections; not the patch embedding).
// kFp32 (the default) matches open_clip. kBf16 converts those weights to bfloat16 once at load and
// runs their GEMMs through oneDNN's bf16 matmul (AVX512_BF16 or AMX; f32 accumulation and output);
// LayerNorm, attention scores/softmax, GELU and residual sums stay fp32. Embeddings then differ from
// fp32 by a cosine distance of up to ~1e-3 (docs/performance.md). kBf16x3 runs the same bf16 units on
// operands split into two bf16 terms (three products, one matmul over 3K; see clip/gemm.h): ~16
// significant bits instead of 8, for rankings decided by small similarity gaps (Hues and Cues top-5),
// at about three times kBf16's cost. kAuto: kBf16 where the CPU has AMX, else kFp32 (on AVX512_BF16
// without AMX bf16 GEMMs measure slower than fp32). Reduced-precision models have their own Fingerprint().
enum class Precision { kFp32, kBf16, kBf16x3, kAuto };
// "fp32" / "bf16" / "bf16x3" / "auto"; anything else is kInvalidArgument listing the names.
Result<Precision> ParsePrecision(std::string_view name);
std::string_view PrecisionName(Precision precision);
// OK when this CPU can run `precision` (kBf16 and kBf16x3 need AVX512_BF16 or AMX), else the kUnsupported error
// LoadClipModel would return, naming the CPU's instruction set.
Status CheckPrecisionSupported(Precision precision);

struct ClipLoadOptions {
  // Encode* split their input into chunks of at most this many items (bounds activation memory).
  int max_batch = 64;
  // kBf16 or kBf16x3 on a CPU without AVX512_BF16/AMX makes LoadClipModel fail with kUnsupported.
  Precision precision = Precision::kFp32;
  // Encode* calls of more than one chunk show the shared progress display ("clip images",
  // "clip texts"; visalign/core/progress.h).
  bool show_progress = false;
};

class ClipModel {
 public:
  ClipModel(ClipModel&&) noexcept;
  ClipModel& operator=(ClipModel&&) noexcept;
  ~ClipModel();

  const ClipConfig& config() const;
  int embed_dim() const { return config().embed_dim; }
  int image_size() const { return config().vision.image_size; }
  int context_length() const { return config().text.context_length; }
  // exp(logit_scale): logits = LogitScale() * cosine (+ LogitBias()).
  float LogitScale() const;
  // The stored logit_bias for sigmoid models (config().sigmoid_logits), else 0.
  float LogitBias() const;

  // The precision in use (never kAuto) and why, e.g. "auto: this CPU has AVX-512 with
  // BF16 (avx512_core_bf16)" or "requested (--precision fp32 is the default)".
  Precision precision() const;
  const std::string& precision_reason() const;

  // Hex SHA-256 identifying the weights, preprocessing and precision: sha256(sha256(weights file) +
  // canonical preprocessing config [+ "precision bf16"]); fp32 models keep the fingerprint they had
  // before precisions existed. Computed on first call (hashes the whole weights file), then cached.
  Result<std::string> Fingerprint() const;

  // Token ids for this model's context length with the model's tokenizer (config().tokenizer),
  // unpadded: CLIP BPE as Tokenize below; SentencePiece pieces[:context_length - 1] + [eos].
  Result<std::vector<int32_t>> Tokenize(std::string_view text) const;

  // Text embeddings [texts.size() x embed_dim]. Texts are encoded in length buckets (sorted by eot
  // position, so a batch computes only about as many positions as its texts have), rows in input order.
  Result<Matrix> EncodeTexts(const std::vector<std::string>& texts) const;
  // Same from token ids (each as Tokenize returns them, at most context_length ids; right-padded
  // with config().text.pad_id here).
  Result<Matrix> EncodeTokens(const std::vector<std::vector<int32_t>>& ids) const;
  // Image embeddings [images.size() x embed_dim], running the model's preprocessing.
  Result<Matrix> EncodeImages(const std::vector<imaging::Image>& images) const;
  // Image embeddings from already preprocessed input: pixels.rows images, each
  // pixels.cols == 3 * image_size * image_size floats in CHW order.
  Result<Matrix> EncodePixels(const Matrix& pixels) const;
  // EncodeImages(images) from PreprocessImages(images, config().preprocess) computed beforehand (e.g.
  // shared by models with the same preprocessing): the same chunks, so exactly the same result.
  Result<Matrix> EncodePreprocessedImages(const Matrix& pixels) const;

  struct Impl;

 private:
  explicit ClipModel(std::unique_ptr<Impl> impl);
  template <typename ChunkPixels>
  Result<Matrix> EncodeImageChunks(int count, ChunkPixels chunk_pixels) const;
  friend Result<ClipModel> LoadClipModel(const std::filesystem::path&, const ClipLoadOptions&);
  std::unique_ptr<Impl> impl_;
};

// Loads config and memory-maps weights, validating names, dtypes, shapes and offsets.
Result<ClipModel> LoadClipModel(const std::filesystem::path& dir, const ClipLoadOptions& options = {});

// The configuration LoadClipModel would use for `dir`, without opening the weights (cheap).
Result<ClipConfig> ReadClipModelConfig(const std::filesystem::path& dir);

// Whether an OpenCLIP model runs natively, decided by the parser LoadClipModel uses: `config_json` is
// an OpenCLIP model config (open_clip's model_configs/<name>.json, i.e. a bare model_cfg, or a whole
// open_clip_config.json). Returns the parsed config, or kUnsupported naming the first feature not
// implemented (kInvalidArgument for a malformed config); `source` names it in errors. The files a
// config refers to (a SentencePiece tokenizer's) are checked only when a model folder is loaded.
Result<ClipConfig> ParseOpenClipConfigJson(std::string_view config_json, const std::string& source);

// The canonical text of a preprocessing (size, resize mode, interpolation, mean, std): equal texts,
// equal pixels. Enters the model fingerprint; `hues run --models` shares board pixels by it.
std::string PreprocessFingerprintText(const PreprocessConfig& p);

// ---- Random-weight models (demos and tests without downloading weights) ----

// kTiny: the shape of the clip-tiny parity fixture (64 px images, patch 16, width 64, 2 layers and
// 4 heads per tower, embed 64; 3,425,857 parameters, 13.7 MB), fast enough to play the whole
// Hues and Cues board in about a second. kViTB32: OpenCLIP's ViT-B-32 (224 px, patch 32, widths
// 768 / 512, 12 layers, embed 512; 151,277,313 parameters, 605 MB), for realistic speed and memory.
// Both use the real tokenizer (vocabulary 49408, context 77) and exact GELU.
// kRN50: OpenCLIP's RN50 (ModifiedResNet, 224 px, layers 3-4-6-3, width 64; text as ViT-B-32,
// embed 1024). kConvNextBase: OpenCLIP's convnext_base (timm convnext_base trunk, 224 px, linear
// projection; embed 512). kViTaminS: OpenCLIP's ViTamin-S (timm vitamin_small_224, text width 384,
// embed 384). kMobileClip2S0: MobileCLIP2-S0's image tower (timm fastvit_mci0, 256 px, un-fused
// branches as the checkpoints store them) and kMobileClipB: MobileCLIP-B's (timm vit_base_mci_224,
// 224 px), each with ViT-B-32's text tower. The same shapes as the real checkpoints, for speed and memory.
enum class RandomClipArch { kTiny, kViTB32, kRN50, kConvNextBase, kViTaminS, kMobileClip2S0, kMobileClipB };
// "tiny" / "ViT-B-32" / "RN50" / "convnext_base" / "ViTamin-S" / "MobileCLIP2-S0" / "MobileCLIP-B";
// anything else is kInvalidArgument listing the names.
Result<RandomClipArch> ParseRandomClipArch(std::string_view name);
std::string_view RandomClipArchName(RandomClipArch arch);

struct RandomClipModelOptions {
  RandomClipArch arch = RandomClipArch::kTiny;
  uint64_t seed = 0;
  bool overwrite = false;  // write into a non-empty directory (replacing the two model files)
};

struct RandomClipModelFiles {
  std::filesystem::path config_file;   // dir / open_clip_config.json
  std::filesystem::path weights_file;  // dir / open_clip_model.safetensors
  int64_t parameters = 0;
};

// Writes an OpenCLIP-layout model directory (open_clip_config.json + open_clip_model.safetensors,
// F32, OpenCLIP parameter names) that LoadClipModel reads, with deterministic pseudo-random weights:
// for equal (arch, seed) the files are byte-identical on every machine and compiler (own PRNG,
// distributions defined in integers, values exactly representable floats). The initialisation
// follows OpenCLIP's scales (LayerNorm gains 1 ± N, small biases, as in the fixture) with uniform
// instead of normal draws. The config records "visalign_random_model", so the loaded model has
// config().random set. Creates `dir` (and parents) when missing.
// Errors: kInvalidArgument if `dir` is not a directory, or is non-empty and !overwrite;
// kIoError if it cannot be created or written.
Result<RandomClipModelFiles> WriteRandomClipModel(const std::filesystem::path& dir,
                                                  const RandomClipModelOptions& options);

// CLIP tokenization with the bundled vocabulary (OpenAI/open_clip SimpleTokenizer, clean='lower'):
// [sot] + BPE ids + [eot], unpadded; longer results are cut to context_length with eot last.
// Fails only on invalid UTF-8 or a missing/corrupt vocabulary file.
Result<std::vector<int32_t>> Tokenize(std::string_view text, int context_length = kDefaultContextLength);

// Token id rows from a JSON file (`clip embed --token-ids`): an array of rows, each an array of ids,
// or the parity fixtures' {"rows": [{"ids": [...]}, ...]}. A row is checked against a model only by
// ClipModel::EncodeTokens. kInvalidArgument naming the file and the row for anything else.
Result<std::vector<std::vector<int32_t>>> ReadTokenIdsFile(const std::filesystem::path& path);

// ---- Named embedding matrices in a safetensors file (`hues run --embeddings`) ----

// 2-d tensors by name plus the file's "__metadata__" strings.
struct MatrixFile {
  std::map<std::string, Matrix> matrices;
  std::map<std::string, std::string> metadata;
};
// Reads every tensor as a matrix (F32, F16, BF16 or F64 converted to f32; 2-d only). kCorrupt for a
// damaged file, kInvalidArgument for a tensor of another rank or dtype (naming it).
Result<MatrixFile> ReadMatrixFile(const std::filesystem::path& path);
// Writes the matrices as F32 tensors (atomically).
Status WriteMatrixFile(const std::filesystem::path& path, const MatrixFile& file);

// Preprocessing as the model runs it: one row of 3 * config.image_size^2 floats (CHW) per image.
Result<Matrix> PreprocessImages(const std::vector<imaging::Image>& images, const PreprocessConfig& config);

}  // namespace visalign::clip
