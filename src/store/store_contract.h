// The run store contract suite's fixture (tests only): every RunStore implementation runs the
// value-parameterised tests of store_test.cc by instantiating them with a StoreFactory, e.g.
//   INSTANTIATE_TEST_SUITE_P(Postgres, RunStoreContract, ::testing::Values(PostgresFactory()),
//                            StoreFactoryName);
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>

#include "testing/dirs.h"
#include "testing/postgres_server.h"
#include "visalign/store.h"

namespace visalign::store {

struct StoreFactory {
  std::string name;  // names the instantiation: [A-Za-z0-9_]
  // A new connection to the one store of a test; `scratch` is the test's own empty temp folder. A
  // second call opens a second connection to the same store.
  std::function<Result<std::unique_ptr<RunStore>>(const std::filesystem::path& scratch)> open;
};

inline void PrintTo(const StoreFactory& factory, std::ostream* os) { *os << factory.name; }
inline std::string StoreFactoryName(const ::testing::TestParamInfo<StoreFactory>& info) { return info.param.name; }

// The embedded store in <scratch>/store, opened as users open it.
inline StoreFactory SqliteStoreFactory() {
  return {"sqlite", [](const std::filesystem::path& scratch) { return OpenStore(scratch / "store"); }};
}

// A PostgreSQL store in a database of its own per test, on the test program's server
// (testing::PostgresServer), keeping its images as files under <scratch>/images-shared or in the
// database (copied into <scratch>/image-cache for scoring).
inline StoreFactory PostgresStoreFactory(bool images_in_database) {
  return {images_in_database ? "postgres_images_in_database" : "postgres_image_files",
          [images_in_database](const std::filesystem::path& scratch) -> Result<std::unique_ptr<RunStore>> {
            static std::map<std::filesystem::path, std::string> database_of_test;
            auto& url = database_of_test[scratch];
            if (url.empty()) {
              VISALIGN_ASSIGN_OR_RETURN(visalign::testing::PostgresServer * server,
                                        visalign::testing::PostgresServer::Shared());
              VISALIGN_ASSIGN_OR_RETURN(url, server->CreateDatabase());
            }
            StoreOptions options;
            options.image_root = scratch / (images_in_database ? "image-cache" : "images-shared");
            options.images_in_database = images_in_database;
            return OpenStore(url, options);
          }};
}

class RunStoreContract : public ::testing::TestWithParam<StoreFactory> {
 public:
  static RunInfo Info(const std::string& name) {
    return {name, "violin", "abc123", Json{{"backend", "openai"}, {"model", "m1"}}, ""};
  }

 protected:
  std::unique_ptr<RunStore> Open() {
    auto s = GetParam().open(scratch_.path());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  visalign::testing::TempDir scratch_;
};

}  // namespace visalign::store
