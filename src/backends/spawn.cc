#include "backends/spawn.h"

#include <signal.h>

#include <initializer_list>

namespace visalign::backends {

void InitChildSpawnAttr(posix_spawnattr_t* attr) {
  posix_spawnattr_init(attr);
  posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(attr, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(attr, &none);
  sigemptyset(&defaults);
  for (const int sig : {SIGINT, SIGTERM, SIGPIPE}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(attr, &defaults);
}

}  // namespace visalign::backends
