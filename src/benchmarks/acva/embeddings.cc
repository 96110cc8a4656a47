// CLIP embeddings of images and metaphor descriptions, cached in the run store per model fingerprint.
#include <algorithm>
#include <cstring>
#include <map>

#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/core/base64.h"
#include "visalign/core/io.h"
#include "visalign/imaging/image.h"

namespace visalign::acva {
namespace {

constexpr const char* kCacheNamespace = "acva.clip";

std::string Serialize(const float* row, int cols) {
  return EncodeBase64(std::string_view(reinterpret_cast<const char*>(row), sizeof(float) * cols));
}

std::optional<Embedding> Deserialize(const std::string& text, int cols) {
  auto bytes = DecodeBase64(text);
  if (!bytes || bytes->size() != sizeof(float) * static_cast<size_t>(cols)) return std::nullopt;
  Embedding e(static_cast<size_t>(cols));
  std::memcpy(e.data(), bytes->data(), bytes->size());
  return e;
}

// Looks up every distinct key; encodes the missing ones in one batch with `encode`, caches them.
template <typename Encode>
Result<std::map<std::string, Embedding>> Embed(store::RunStore& store, const std::string& prefix, int dim,
                                               const std::vector<std::string>& keys, size_t& encoded, size_t& cached,
                                               Encode encode) {
  std::map<std::string, Embedding> out;
  std::vector<std::string> missing;
  for (const std::string& k : keys) {
    if (out.count(k) || std::find(missing.begin(), missing.end(), k) != missing.end()) continue;
    VISALIGN_ASSIGN_OR_RETURN(auto hit, store.CacheGet(kCacheNamespace, prefix + k));
    std::optional<Embedding> e;
    if (hit) e = Deserialize(*hit, dim);
    if (e) {
      out[k] = std::move(*e);
      ++cached;
    } else {
      missing.push_back(k);
    }
  }
  if (missing.empty()) return out;
  VISALIGN_ASSIGN_OR_RETURN(clip::Matrix m, encode(missing));
  for (size_t i = 0; i < missing.size(); ++i) {
    const float* row = m.row(static_cast<int>(i));
    VISALIGN_RETURN_IF_ERROR(store.CachePut(kCacheNamespace, prefix + missing[i], Serialize(row, m.cols)));
    out[missing[i]] = Embedding(row, row + m.cols);
    ++encoded;
  }
  return out;
}

}  // namespace

Result<EmbeddingStats> AttachEmbeddings(store::RunStore& store, const clip::ClipModel& model,
                                        std::vector<JudgedImage>& images) {
  VISALIGN_ASSIGN_OR_RETURN(std::string fingerprint, model.Fingerprint());
  EmbeddingStats stats;
  const int dim = model.embed_dim();
  std::vector<std::string> shas, texts;
  std::map<std::string, std::string> path_of;
  for (const JudgedImage& im : images) {
    shas.push_back(im.sha256);
    path_of[im.sha256] = im.path;
    if (im.metaphor) texts.push_back(*im.metaphor);
  }
  VISALIGN_ASSIGN_OR_RETURN(auto image_vectors,
                            Embed(store, fingerprint + "|image|", dim, shas, stats.images_encoded, stats.images_cached,
                                  [&](const std::vector<std::string>& missing) -> Result<clip::Matrix> {
                                    std::vector<imaging::Image> decoded;
                                    for (const std::string& sha : missing) {
                                      VISALIGN_ASSIGN_OR_RETURN(imaging::Image img, imaging::ReadImage(path_of[sha]));
                                      decoded.push_back(std::move(img));
                                    }
                                    return model.EncodeImages(decoded);
                                  }));
  // Texts are keyed by their SHA-256 (descriptions may be long).
  std::vector<std::string> text_keys;
  std::map<std::string, std::string> text_of;
  for (const std::string& t : texts) {
    text_keys.push_back(Sha256Hex(t));
    text_of[text_keys.back()] = t;
  }
  VISALIGN_ASSIGN_OR_RETURN(auto text_vectors, Embed(store, fingerprint + "|text|", dim, text_keys, stats.texts_encoded,
                                                     stats.texts_cached, [&](const std::vector<std::string>& missing) {
                                                       std::vector<std::string> batch;
                                                       for (const std::string& k : missing) batch.push_back(text_of[k]);
                                                       return model.EncodeTexts(batch);
                                                     }));
  for (JudgedImage& im : images) {
    im.image_embedding = image_vectors.at(im.sha256);
    if (im.metaphor) im.metaphor_embedding = text_vectors.at(Sha256Hex(*im.metaphor));
  }
  return stats;
}

}  // namespace visalign::acva
