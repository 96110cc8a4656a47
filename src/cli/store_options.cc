// The run store flags every command that takes --store shares (cli.h: AddStoreOptions).
#include <filesystem>

#include "cli/cli.h"

namespace visalign::cli {

std::string StoreFlags::ForJson() const {
  const bool folder = location.find("://") == std::string::npos;
  return folder ? std::filesystem::absolute(location).string() : Display();
}

void AddStoreOptions(CLI::App* cmd, StoreFlags* flags, const std::string& what, StoreUse use) {
  cmd->add_option("--store", flags->location,
                  what + (use == StoreUse::kRuns
                              ? ": a folder (embedded SQLite store + images) or postgres://user@host:port/database "
                                "(a PostgreSQL store shared by workers on many hosts; docs/scale.md)"
                              : ": a folder (its study.db) or postgres://user@host:port/database (the study's tables "
                                "in that database; docs/serve.md)"))
      ->capture_default_str();
  cmd->add_option("--store-password-env", flags->options.password_env,
                  "PostgreSQL store: environment variable holding the database password (default: PGPASSWORD or "
                  "~/.pgpass, as libpq reads them; never put the password in --store)");
  if (use == StoreUse::kStudy) return;
  cmd->add_option("--image-root", flags->options.image_root,
                  "PostgreSQL store: the image folder every worker shares (a new store given one keeps images as "
                  "files there, one created without keeps them in the database and copies them here for scoring)");
}

Result<std::unique_ptr<store::RunStore>> OpenStore(const StoreFlags& flags) {
  return store::OpenStore(flags.location, flags.options);
}

Result<std::unique_ptr<store::StudyStore>> OpenExistingStudyStore(const StoreFlags& flags,
                                                                  const std::string& expected) {
  VISALIGN_ASSIGN_OR_RETURN(bool exists, store::StudyStore::Exists(flags.location, flags.options));
  if (!exists) return Status::NotFound("no study store in " + flags.Display(), "store location", expected);
  return store::StudyStore::Open(flags.location, flags.options);
}

}  // namespace visalign::cli
