// The run store contract suite's fixture (tests only): every RunStore implementation runs the
// value-parameterised tests of store_test.cc by instantiating them with a StoreFactory, e.g.
//   INSTANTIATE_TEST_SUITE_P(Postgres, RunStoreContract, ::testing::Values(PostgresFactory()),
//                            StoreFactoryName);
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "testing/dirs.h"
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

class RunStoreContract : public ::testing::TestWithParam<StoreFactory> {
 public:
  static RunInfo Info(const std::string& name) {
    return {name, "violin", "abc123", nlohmann::json{{"backend", "openai"}, {"model", "m1"}}, ""};
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
