// A shared library opened on first use (dlopen) instead of linked into the program.
// Linking libcurl or libpq maps and relocates their dozens of dependencies (TLS, Kerberos, LDAP,
// SASL, ...) on every start of visalign, including the commands that never use them; opening them
// when first needed keeps `visalign --version` at a few milliseconds (docs/performance.md
// "Start-up"). A library stays loaded for the life of the process.
#pragma once

#include <string>

#include "visalign/core/status.h"

namespace visalign {

class SharedLibrary {
 public:
  // dlopen()s `file` (e.g. "libpq.so.5"). Unavailable "cannot load FILE: <dlerror>" at `purpose`
  // (e.g. "PostgreSQL store"), expecting `package` (e.g. "the Debian package libpq5 (apt-get ...)").
  static Result<SharedLibrary> Open(std::string file, std::string purpose, std::string package);

  // Points `fn` at the symbol `name`, or remembers the first name that was missing.
  template <typename Fn>
  SharedLibrary& Resolve(const char* name, Fn*& fn) {
    fn = reinterpret_cast<Fn*>(Symbol(name));
    return *this;
  }
  // OK when every Resolve found its symbol; else Unavailable "FILE lacks NAME" at the purpose,
  // expecting `expected` (the versions that have every symbol).
  Status Complete(const std::string& expected) const;

 private:
  SharedLibrary(void* handle, std::string file, std::string purpose)
      : handle_(handle), file_(std::move(file)), purpose_(std::move(purpose)) {}
  void* Symbol(const char* name);

  void* handle_;
  std::string file_, purpose_, missing_;
};

}  // namespace visalign
