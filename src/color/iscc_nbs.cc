// ISCC-NBS color names: loading and validating data/color/iscc_nbs_*.csv, name lookup and
// nearest-centroid search.
#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "visalign/color.h"
#include "visalign/core/io.h"

namespace visalign::color {
namespace {

constexpr size_t kCentroidCount = 267;
constexpr size_t kLevel1Count = 13;
constexpr size_t kLevel2Count = 29;
constexpr char kCentroidsFile[] = "iscc_nbs_centroids.csv";
constexpr char kLevelsFile[] = "iscc_nbs_levels.csv";

// Lower case, runs of whitespace collapsed to one space, trimmed.
std::string NormaliseName(std::string_view text) {
  std::string out;
  bool pending_space = false;
  for (char ch : text) {
    if (std::isspace(static_cast<unsigned char>(ch))) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return out;
}

Result<int> IntField(const CsvTable& t, size_t row, size_t col, std::string_view column, int lo, int hi) {
  const std::string where = t.Where(row) + " column " + std::string(column);
  VISALIGN_ASSIGN_OR_RETURN(int64_t v, ParseInt(t.rows[row][col], where));
  if (v < lo || v > hi)
    return Status::Corrupt("value " + std::to_string(v) + " out of range", where,
                           "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int>(v);
}

// Reads R, G, B columns and checks them against the `hex` column.
Result<Srgb8> RgbFields(const CsvTable& t, size_t row) {
  int channel[3];
  const char* names[3] = {"R", "G", "B"};
  for (int i = 0; i < 3; ++i) {
    VISALIGN_ASSIGN_OR_RETURN(size_t col, t.Column(names[i]));
    VISALIGN_ASSIGN_OR_RETURN(channel[i], IntField(t, row, col, names[i], 0, 255));
  }
  const Srgb8 rgb{uint8_t(channel[0]), uint8_t(channel[1]), uint8_t(channel[2])};
  VISALIGN_ASSIGN_OR_RETURN(size_t hex_col, t.Column("hex"));
  std::string hex = t.rows[row][hex_col];
  std::transform(hex.begin(), hex.end(), hex.begin(), [](unsigned char c) { return std::toupper(c); });
  if (hex != ToHex(rgb))
    return Status::Corrupt("hex \"" + t.rows[row][hex_col] + "\" disagrees with R, G, B", t.Where(row) + " column hex",
                           ToHex(rgb) + " (the R, G, B columns)");
  return rgb;
}

Result<std::vector<IsccCentroid>> LoadCentroids(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(CsvTable t, ReadCsv(path));
  VISALIGN_ASSIGN_OR_RETURN(size_t id_col, t.Column("id"));
  VISALIGN_ASSIGN_OR_RETURN(size_t name_col, t.Column("name"));
  VISALIGN_ASSIGN_OR_RETURN(size_t level2_col, t.Column("level2"));
  VISALIGN_ASSIGN_OR_RETURN(size_t level1_col, t.Column("level1"));
  if (t.rows.size() != kCentroidCount)
    return Status::Corrupt(std::to_string(t.rows.size()) + " centroids", path.string(),
                           std::to_string(kCentroidCount) + " ISCC-NBS centroids (ids 1-267)");
  std::vector<IsccCentroid> out;
  std::set<std::string> names;
  for (size_t row = 0; row < t.rows.size(); ++row) {
    IsccCentroid c;
    VISALIGN_ASSIGN_OR_RETURN(c.id, IntField(t, row, id_col, "id", 1, int(kCentroidCount)));
    if (c.id != int(row) + 1)
      return Status::Corrupt("id " + std::to_string(c.id) + " out of order", t.Where(row) + " column id",
                             "ids 1-267 in increasing order (expected " + std::to_string(row + 1) + ")");
    c.name = NormaliseName(t.rows[row][name_col]);
    c.level2 = NormaliseName(t.rows[row][level2_col]);
    c.level1 = NormaliseName(t.rows[row][level1_col]);
    if (c.name.empty() || c.level2.empty() || c.level1.empty())
      return Status::Corrupt("empty name", t.Where(row), "non-empty name, level2 and level1");
    if (!names.insert(c.name).second)
      return Status::Corrupt("duplicate name \"" + c.name + "\"", t.Where(row) + " column name",
                             "unique level-3 names");
    VISALIGN_ASSIGN_OR_RETURN(c.rgb, RgbFields(t, row));
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::vector<int>> MemberIds(const CsvTable& t, size_t row, size_t col) {
  std::istringstream in(t.rows[row][col]);
  std::vector<int> ids;
  std::string token;
  const std::string where = t.Where(row) + " column member_ids";
  while (in >> token) {
    VISALIGN_ASSIGN_OR_RETURN(int64_t id, ParseInt(token, where));
    if (id < 1 || id > int64_t(kCentroidCount))
      return Status::Corrupt("member id " + token + " does not exist", where, "level-3 ids 1-267");
    ids.push_back(int(id));
  }
  return ids;
}

// Checks that `cat` lists exactly the centroids whose level-`cat.level` name is `cat.name`.
Status CheckMembers(const IsccCategory& cat, const std::vector<IsccCentroid>& centroids, const std::string& where) {
  std::vector<int> expected;
  for (const IsccCentroid& c : centroids)
    if ((cat.level == 1 ? c.level1 : c.level2) == cat.name) expected.push_back(c.id);
  std::vector<int> got = cat.member_ids;
  std::sort(got.begin(), got.end());
  if (got != expected || expected.empty())
    return Status::Corrupt(
        "members of level-" + std::to_string(cat.level) + " \"" + cat.name + "\" disagree with " + kCentroidsFile,
        where + " column member_ids",
        std::to_string(expected.size()) + " distinct ids whose level" + std::to_string(cat.level) + " is \"" +
            cat.name + "\"");
  if (std::find(got.begin(), got.end(), cat.rep_id) == got.end())
    return Status::Corrupt("representative " + std::to_string(cat.rep_id) + " is not a member",
                           where + " column rep_id", "one of the category's member ids");
  return Status::Ok();
}

Result<std::pair<std::vector<IsccCategory>, std::vector<IsccCategory>>> LoadLevels(
    const std::filesystem::path& path, const std::vector<IsccCentroid>& centroids) {
  VISALIGN_ASSIGN_OR_RETURN(CsvTable t, ReadCsv(path));
  VISALIGN_ASSIGN_OR_RETURN(size_t level_col, t.Column("level"));
  VISALIGN_ASSIGN_OR_RETURN(size_t index_col, t.Column("level_index"));
  VISALIGN_ASSIGN_OR_RETURN(size_t name_col, t.Column("name"));
  VISALIGN_ASSIGN_OR_RETURN(size_t parent_col, t.Column("parent_level1"));
  VISALIGN_ASSIGN_OR_RETURN(size_t count_col, t.Column("n_members"));
  VISALIGN_ASSIGN_OR_RETURN(size_t rep_col, t.Column("rep_id"));
  VISALIGN_ASSIGN_OR_RETURN(size_t members_col, t.Column("member_ids"));
  std::vector<IsccCategory> level1, level2;
  for (size_t row = 0; row < t.rows.size(); ++row) {
    IsccCategory cat;
    VISALIGN_ASSIGN_OR_RETURN(cat.level, IntField(t, row, level_col, "level", 1, 2));
    std::vector<IsccCategory>& dest = cat.level == 1 ? level1 : level2;
    VISALIGN_ASSIGN_OR_RETURN(cat.index, IntField(t, row, index_col, "level_index", 1, int(kLevel2Count)));
    if (cat.index != int(dest.size()) + 1)
      return Status::Corrupt(
          "level_index " + std::to_string(cat.index) + " out of order", t.Where(row) + " column level_index",
          "consecutive indices from 1 within each level (expected " + std::to_string(dest.size() + 1) + ")");
    cat.name = NormaliseName(t.rows[row][name_col]);
    cat.parent_level1 = NormaliseName(t.rows[row][parent_col]);
    VISALIGN_ASSIGN_OR_RETURN(cat.rgb, RgbFields(t, row));
    VISALIGN_ASSIGN_OR_RETURN(cat.rep_id, IntField(t, row, rep_col, "rep_id", 1, int(kCentroidCount)));
    if (centroids[cat.rep_id - 1].rgb != cat.rgb)
      return Status::Corrupt(
          "representative color " + ToHex(cat.rgb) + " differs from centroid " + std::to_string(cat.rep_id),
          t.Where(row), ToHex(centroids[cat.rep_id - 1].rgb) + ", the rep_id's centroid");
    VISALIGN_ASSIGN_OR_RETURN(cat.member_ids, MemberIds(t, row, members_col));
    VISALIGN_ASSIGN_OR_RETURN(int count, IntField(t, row, count_col, "n_members", 1, int(kCentroidCount)));
    if (count != int(cat.member_ids.size()))
      return Status::Corrupt(
          "n_members " + std::to_string(count) + " but " + std::to_string(cat.member_ids.size()) + " member ids",
          t.Where(row), "n_members equal to the number of member_ids");
    VISALIGN_RETURN_IF_ERROR(CheckMembers(cat, centroids, t.Where(row)));
    dest.push_back(std::move(cat));
  }
  if (level1.size() != kLevel1Count || level2.size() != kLevel2Count)
    return Status::Corrupt(
        std::to_string(level1.size()) + " level-1 and " + std::to_string(level2.size()) + " level-2 categories",
        path.string(), "13 level-1 and 29 level-2 categories");
  for (size_t i = 0; i < level2.size(); ++i) {
    const std::string& parent = level2[i].parent_level1;
    const bool known =
        std::any_of(level1.begin(), level1.end(), [&](const IsccCategory& c) { return c.name == parent; });
    if (!known)
      return Status::Corrupt("level-2 \"" + level2[i].name + "\" has unknown parent \"" + parent + "\"", path.string(),
                             "a parent_level1 naming one of the 13 level-1 categories");
  }
  return std::make_pair(std::move(level1), std::move(level2));
}

}  // namespace

Result<IsccNbs> IsccNbs::Load(const std::filesystem::path& dir) {
  IsccNbs table;
  VISALIGN_ASSIGN_OR_RETURN(table.centroids_, LoadCentroids(dir / kCentroidsFile));
  VISALIGN_ASSIGN_OR_RETURN(auto levels, LoadLevels(dir / kLevelsFile, table.centroids_));
  table.level1_ = std::move(levels.first);
  table.level2_ = std::move(levels.second);
  for (const IsccCentroid& c : table.centroids_) table.centroid_lab_.push_back(Srgb8ToLab(c.rgb));
  return table;
}

Result<const IsccNbs*> IsccNbs::Default() {
  static const Result<IsccNbs> table = []() -> Result<IsccNbs> {
    VISALIGN_ASSIGN_OR_RETURN(std::filesystem::path dir, DataFile("color"));
    return Load(dir);
  }();
  if (!table.ok()) return table.status();
  return &table.value();
}

const IsccCentroid* IsccNbs::CentroidById(int id) const {
  if (id < 1 || id > int(centroids_.size())) return nullptr;
  return &centroids_[id - 1];
}

IsccNbs::NameMatch IsccNbs::FindName(std::string_view name) const {
  const std::string key = NormaliseName(name);
  for (const IsccCentroid& c : centroids_)
    if (c.name == key) return {3, c.rgb, c.id, c.name};
  for (const std::vector<IsccCategory>* level : {&level2_, &level1_})
    for (const IsccCategory& cat : *level)
      if (cat.name == key) return {cat.level, cat.rgb, cat.rep_id, cat.name};
  return {};
}

const IsccCentroid& IsccNbs::Nearest(Lab lab) const {
  size_t best = 0;
  double best_d = DeltaE2000(lab, centroid_lab_[0]);
  for (size_t i = 1; i < centroids_.size(); ++i) {
    const double d = DeltaE2000(lab, centroid_lab_[i]);
    if (d < best_d) {
      best = i;
      best_d = d;
    }
  }
  return centroids_[best];
}

}  // namespace visalign::color
