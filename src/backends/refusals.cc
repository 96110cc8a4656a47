#include "visalign/backends/refusals.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace visalign::backends {

RefusalRate RefusalRateOf(const std::string& run, const store::RunCounts& counts) {
  const size_t finished = counts.done + counts.refused;
  return {run, counts.refused, finished, stats::WilsonInterval(counts.refused, finished)};
}

Json RefusalJson(const RefusalRate& r) {
  const bool known = r.finished > 0;
  return {{"run", r.run},
          {"refused", r.refused},
          {"finished", r.finished},
          {"rate", known ? Json(r.rate.rate) : Json(nullptr)},
          {"ci95", known ? Json::array({r.rate.lo, r.rate.hi}) : Json(nullptr)}};
}

std::string RefusalText(const std::vector<RefusalRate>& rates) {
  if (std::none_of(rates.begin(), rates.end(), [](const RefusalRate& r) { return r.refused > 0; })) return "";
  std::string out = "refusals (content filters; refused of finished rows, Wilson 95 %):\n";
  for (const RefusalRate& r : rates)
    out += r.finished == 0 ? fmt::format("  {}: no finished row\n", r.run)
                           : fmt::format("  {}: {} of {} ({:.1f} %, {:.1f}-{:.1f} %)\n", r.run, r.refused, r.finished,
                                         100 * r.rate.rate, 100 * r.rate.lo, 100 * r.rate.hi);
  return out;
}

}  // namespace visalign::backends
