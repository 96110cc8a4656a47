// The run store flags every command that takes --store shares (cli.h: AddStoreOptions).
#include <filesystem>

#include "cli/cli.h"

namespace visalign::cli {

std::string StoreFlags::ForJson() const {
  const bool folder = location.find("://") == std::string::npos;
  return folder ? std::filesystem::absolute(location).string() : Display();
}

void AddStoreOptions(CLI::App* cmd, StoreFlags* flags, const std::string& what) {
  cmd->add_option("--store", flags->location,
                  what + ": a folder (embedded SQLite store + images) or postgres://user@host:port/database "
                         "(a PostgreSQL store shared by workers on many hosts; docs/scale.md)")
      ->capture_default_str();
  cmd->add_option("--store-password-env", flags->options.password_env,
                  "PostgreSQL store: environment variable holding the database password (default: PGPASSWORD or "
                  "~/.pgpass, as libpq reads them; never put the password in --store)");
  cmd->add_option("--image-root", flags->options.image_root,
                  "PostgreSQL store: the image folder every worker shares (a new store given one keeps images as "
                  "files there, one created without keeps them in the database and copies them here for scoring)");
}

Result<std::unique_ptr<store::RunStore>> OpenStore(const StoreFlags& flags) {
  return store::OpenStore(flags.location, flags.options);
}

}  // namespace visalign::cli
