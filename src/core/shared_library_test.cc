#include "visalign/core/shared_library.h"

#include <gtest/gtest.h>

namespace visalign {
namespace {

TEST(SharedLibrary, ResolvesSymbolsOfALibraryOpenedAtRunTime) {
  auto libc = SharedLibrary::Open("libc.so.6", "test", "libc6");
  ASSERT_TRUE(libc.ok()) << libc.status().ToString();
  size_t (*strlen_fn)(const char*) = nullptr;
  libc->Resolve("strlen", strlen_fn);
  ASSERT_TRUE(libc->Complete("glibc").ok());
  EXPECT_EQ(strlen_fn("visalign"), 8u);
}

TEST(SharedLibrary, AMissingLibraryNamesItsFileThePurposeAndThePackage) {
  auto missing =
      SharedLibrary::Open("libvisalign-absent.so.9", "PostgreSQL store", "libabsent9 (apt-get install -y x)");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable);
  const std::string line = missing.status().ToString();
  EXPECT_EQ(line.rfind("cannot load libvisalign-absent.so.9: ", 0), 0u) << line;
  EXPECT_NE(line.find("(PostgreSQL store): the Debian package libabsent9 (apt-get install -y x)"), std::string::npos)
      << line;
}

TEST(SharedLibrary, AMissingSymbolIsNamedAndTheFirstOneWins) {
  auto libc = SharedLibrary::Open("libc.so.6", "HTTP transport", "libc6");
  ASSERT_TRUE(libc.ok());
  void (*absent)() = nullptr;
  void (*also_absent)() = nullptr;
  size_t (*strlen_fn)(const char*) = nullptr;
  libc->Resolve("visalign_no_such_symbol", absent).Resolve("strlen", strlen_fn).Resolve("another_absent", also_absent);
  EXPECT_EQ(absent, nullptr);
  EXPECT_NE(strlen_fn, nullptr);
  Status st = libc->Complete("glibc 2.36");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.ToString(), "libc.so.6 lacks visalign_no_such_symbol (HTTP transport): glibc 2.36");
}

}  // namespace
}  // namespace visalign
