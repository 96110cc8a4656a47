#include "visalign/backends/embeddings.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "visalign/core/base64.h"
#include "visalign/core/json.h"
#include "visalign/core/untrusted.h"

namespace visalign::backends {
namespace {

constexpr std::string_view kEmbeddingsPath = "embeddings";

// The rows of one answer, or a description of how it breaks the contract.
std::optional<std::string> ParseAnswer(const Json& answer, size_t expected, std::vector<std::vector<float>>& rows) {
  if (!answer.contains("data") || !answer["data"].is_array()) return "no \"data\" array";
  const Json& data = answer["data"];
  if (data.size() != expected) return fmt::format("{} embeddings for {} inputs", data.size(), expected);
  rows.assign(expected, {});
  for (const Json& d : data) {
    if (!d.is_object() || !d.contains("index") || !d["index"].is_number_unsigned() ||
        d["index"].get<size_t>() >= expected)
      return "an entry without a valid \"index\": " + QuoteJson(d);
    std::vector<float>& row = rows[d["index"].get<size_t>()];
    if (!row.empty()) return fmt::format("index {} twice", d["index"].get<size_t>());
    if (!d.contains("embedding") || !d["embedding"].is_array() || d["embedding"].empty())
      return fmt::format("entry {} without an \"embedding\" array of numbers (base64 encoding is not read)",
                         d["index"].get<size_t>());
    for (const Json& v : d["embedding"]) {
      if (!v.is_number()) return fmt::format("a non-number in embedding {}", d["index"].get<size_t>());
      // A double beyond float's range would become infinite and every similarity NaN.
      const double value = v.get<double>();
      if (std::fabs(value) > std::numeric_limits<float>::max()) {
        return fmt::format("{} in embedding {}, beyond a 32-bit float", QuoteJson(v), d["index"].get<size_t>());
      }
      row.push_back(static_cast<float>(value));
    }
  }
  return std::nullopt;
}

}  // namespace

std::string PngDataUrl(std::string_view png) { return "data:image/png;base64," + EncodeBase64(png); }

Result<std::vector<std::vector<float>>> FetchEmbeddings(const EmbeddingsOptions& options,
                                                        std::shared_ptr<HttpTransport> transport,
                                                        const std::vector<std::string>& inputs,
                                                        const std::atomic<bool>& stop) {
  if (options.batch < 1) {
    return Status::InvalidArgument(fmt::format("batch {}", options.batch), "EmbeddingsOptions", "at least 1");
  }
  const OpenAiClient client(options.endpoint, std::move(transport));
  const std::string url = client.Url(kEmbeddingsPath);
  std::vector<std::vector<float>> out;
  out.reserve(inputs.size());
  for (size_t begin = 0; begin < inputs.size(); begin += static_cast<size_t>(options.batch)) {
    const size_t end = std::min(inputs.size(), begin + static_cast<size_t>(options.batch));
    Json body = {{"input", Json(std::vector<std::string>(inputs.begin() + static_cast<ptrdiff_t>(begin),
                                                         inputs.begin() + static_cast<ptrdiff_t>(end)))},
                 {"encoding_format", "float"}};
    if (!options.model.empty()) body["model"] = options.model;
    std::vector<std::vector<float>> rows;
    std::optional<std::string> broken;
    const std::optional<AttemptError> failed = RunWithRetries(
        options.retry, nullptr, stop,
        [&]() -> std::optional<AttemptError> {
          Attempt<Json> answer = client.PostJson(kEmbeddingsPath, body, &stop);
          if (!answer.ok()) return answer.error;
          broken = ParseAnswer(*answer.value, end - begin, rows);
          return std::nullopt;
        },
        [](const AttemptError&, bool) {});
    if (failed) {
      if (failed->kind == ErrorKind::kCancelled) return Status::Interrupted("embedding requests interrupted");
      return Status::Unavailable(failed->message, url, "an OpenAI-compatible /v1/embeddings endpoint");
    }
    const std::string where = fmt::format("{} (inputs {}..{})", url, begin + 1, end);
    if (broken) return Status::Corrupt("embeddings answer with " + *broken, where, "data[k] = {index, embedding}");
    for (std::vector<float>& row : rows) {
      if (!out.empty() && row.size() != out.front().size()) {
        return Status::Corrupt(fmt::format("embedding of {} values after ones of {}", row.size(), out.front().size()),
                               where, "embeddings of one length");
      }
      out.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace visalign::backends
