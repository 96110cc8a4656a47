// How the command and worker backends start a child (internal to the backends module): in its own
// process group (so a timeout or the end kills everything it started), with no signal blocked and
// SIGINT, SIGTERM and SIGPIPE at their defaults whatever visalign does with them.
#pragma once

#include <spawn.h>

namespace visalign::backends {

// Initialises `attr` (the caller destroys it) as above.
void InitChildSpawnAttr(posix_spawnattr_t* attr);

}  // namespace visalign::backends
