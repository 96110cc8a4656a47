// ISCC-NBS table: loading and validation of data/color/, name lookup order, nearest centroid,
// and the thread-safe shipped default.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "testing/dirs.h"
#include "visalign/color.h"
#include "visalign/core/io.h"

namespace visalign::color {
namespace {

namespace fs = std::filesystem;

const fs::path kDataColor = visalign::testing::DataDir() / "color";

// IsccNbs::Default() locates data/ via $VISALIGN_DATA (ctest sets it; set it here too so the test
// program also works when run by hand).
const bool kDataEnvSet = setenv("VISALIGN_DATA", VISALIGN_TEST_DATA_DIR, /*overwrite=*/0) == 0;

// A scratch copy of data/color whose files a test may damage.
class DataCopy {
 public:
  DataCopy() {
    for (const char* f : {"iscc_nbs_centroids.csv", "iscc_nbs_levels.csv"}) fs::copy_file(kDataColor / f, dir_ / f);
  }
  const fs::path& dir() const { return scratch_.path(); }
  // Replaces the first occurrence of `from` in `file` by `to`.
  void Edit(const std::string& file, const std::string& from, const std::string& to) const {
    std::string text = *ReadFile(dir_ / file);
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    std::ofstream(dir_ / file, std::ios::binary) << text;
  }

 private:
  visalign::testing::TempDir scratch_;
  const fs::path dir_ = scratch_.path();
};

TEST(IsccNbs, LoadsTheShippedTable) {
  const Result<IsccNbs> t = IsccNbs::Load(kDataColor);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->centroids().size(), 267u);
  EXPECT_EQ(t->level1().size(), 13u);
  EXPECT_EQ(t->level2().size(), 29u);
  const IsccCentroid* first = t->CentroidById(1);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->name, "vivid pink");
  EXPECT_EQ(ToHex(first->rgb), "#FFB5BA");
  EXPECT_EQ(first->level2, "pink");
  EXPECT_EQ(first->level1, "pink");
  EXPECT_EQ(t->CentroidById(267)->name, "black");
  EXPECT_EQ(t->CentroidById(0), nullptr);
  EXPECT_EQ(t->CentroidById(268), nullptr);
  EXPECT_EQ(t->level1()[1].name, "red");
  EXPECT_EQ(t->level1()[1].rep_id, 11);  // vivid red
  EXPECT_EQ(t->level1()[1].member_ids.size(), 23u);
}

TEST(IsccNbs, FindNamePrefersLevel3ThenLevel2) {
  const IsccNbs t = *IsccNbs::Load(kDataColor);
  const IsccNbs::NameMatch strong_blue = t.FindName("Strong  Blue");
  EXPECT_EQ(strong_blue.level, 3);
  EXPECT_EQ(strong_blue.id, 178);
  EXPECT_EQ(ToHex(strong_blue.rgb), "#0067A5");
  const IsccNbs::NameMatch blue = t.FindName("blue");
  EXPECT_EQ(blue.level, 2);
  EXPECT_EQ(blue.id, 178);  // the representative of level-2 "blue"
  EXPECT_EQ(blue.name, "blue");
  EXPECT_EQ(t.FindName("olive green").level, 2);
  EXPECT_EQ(t.FindName("white").level, 3);  // #263 white
  EXPECT_EQ(t.FindName("no such name").level, 0);
}

TEST(IsccNbs, NearestFindsEachCentroidItself) {
  const IsccNbs t = *IsccNbs::Load(kDataColor);
  for (const IsccCentroid& c : t.centroids()) ASSERT_EQ(t.Nearest(Srgb8ToLab(c.rgb)).id, c.id) << c.name;
  EXPECT_EQ(t.Nearest(Srgb8ToLab({191, 1, 49})).id, 11);  // one step from #11 vivid red #BE0032
}

TEST(IsccNbs, RejectsDamagedData) {
  struct Damage {
    const char* file;
    const char* from;
    const char* to;
    const char* what_mentions;
  };
  const Damage cases[] = {
      {"iscc_nbs_centroids.csv", "267,black,#222222,34,34,34,black,black\n", "", "266 centroids"},
      {"iscc_nbs_centroids.csv", "2,strong pink", "3,strong pink", "out of order"},
      {"iscc_nbs_centroids.csv", "#FFB5BA,255,181,186", "#FFB5BA,255,181,187", "disagrees"},
      {"iscc_nbs_centroids.csv", "#FFB5BA,255,181,186", "#FFB5BA,255,181,300", "out of range"},
      {"iscc_nbs_levels.csv", "1 2 3 4 5 6 7 8 9 10 25", "1 2 3 4 5 6 7 8 9 999 25", "does not exist"},
      {"iscc_nbs_levels.csv", "2,1,pink,pink,10,", "2,1,pink,pink,11,", "n_members"},
      {"iscc_nbs_levels.csv", "2,1,pink,pink,10,#E4717A,228,113,122,max_chroma,3,",
       "2,1,pink,pink,10,#FFB5BA,255,181,186,max_chroma,3,", "representative"},
  };
  for (const Damage& d : cases) {
    DataCopy copy;
    copy.Edit(d.file, d.from, d.to);
    const Result<IsccNbs> t = IsccNbs::Load(copy.dir());
    ASSERT_FALSE(t.ok()) << d.from;
    EXPECT_NE(t.status().ToString().find(d.what_mentions), std::string::npos) << t.status().ToString();
    EXPECT_NE(t.status().where().find(d.file), std::string::npos) << t.status().ToString();
  }
}

TEST(IsccNbs, MissingDirectoryIsAnError) {
  const Result<IsccNbs> t = IsccNbs::Load("/nonexistent/visalign/color");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().ToString().find("iscc_nbs_centroids.csv"), std::string::npos) << t.status().ToString();
}

TEST(IsccNbs, DefaultLoadsOnceAcrossThreads) {
  ASSERT_TRUE(kDataEnvSet);
  std::vector<const IsccNbs*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&seen, i] {
      const Result<const IsccNbs*> t = IsccNbs::Default();
      seen[i] = t.ok() ? *t : nullptr;
    });
  for (std::thread& th : threads) th.join();
  ASSERT_NE(seen[0], nullptr);
  for (const IsccNbs* p : seen) EXPECT_EQ(p, seen[0]);
  EXPECT_EQ(seen[0]->centroids().size(), 267u);
}

}  // namespace
}  // namespace visalign::color
