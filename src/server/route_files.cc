// The route files of `visalign serve` (routes.h, RouteFiles): one row per feature.
#include "server/routes.h"

namespace visalign::server {
namespace {

constexpr RouteFile kRouteFiles[] = {
    {"core", AddCoreRoutes},
    {"game", AddGameRoutes},
    {"regions", AddRegionRoutes},
    {"explorer", AddExplorerRoutes},
    {"acva-rating", AddAcvaRatingRoutes},
};

}  // namespace

std::span<const RouteFile> RouteFiles() { return kRouteFiles; }

}  // namespace visalign::server
