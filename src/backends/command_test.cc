// The command backend runs real programs (/bin/sh scripts) without a shell in between.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "backends/test_util.h"
#include "testing/dirs.h"
#include "visalign/backends/backends.h"
#include "visalign/core/io.h"

namespace visalign::backends {
namespace {
namespace fs = std::filesystem;
using testing::TinyPng;

const std::atomic<bool> kNoCancel{false};

TEST(SplitCommandTemplate, SplitsWordsLikeAShellWithoutExpanding) {
  struct Case {
    std::string in;
    std::vector<std::string> out;
  } cases[] = {
      {"python gen.py --prompt {prompt} --out {out}", {"python", "gen.py", "--prompt", "{prompt}", "--out", "{out}"}},
      {"  a   'b c'  \"d \\\"e\\\"\" f\\ g ", {"a", "b c", "d \"e\"", "f g"}},
      {"sh -c 'echo $HOME; ls' x", {"sh", "-c", "echo $HOME; ls", "x"}},
      {"--out=''{out}", {"--out={out}"}},
  };
  for (const Case& c : cases) EXPECT_EQ(SplitCommandTemplate(c.in).value(), c.out) << c.in;
  EXPECT_FALSE(SplitCommandTemplate("a 'b").ok());
  EXPECT_FALSE(SplitCommandTemplate("a \"b").ok());
  EXPECT_FALSE(SplitCommandTemplate("   ").ok());
}

class CommandTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(WriteFileAtomic(dir_ / "fixture.png", TinyPng()).ok()); }
  Result<std::unique_ptr<GenerationBackend>> Make(const std::string& script, Millis timeout = Millis(5000)) {
    // The script gets: $1 prompt, $2 out, $3 seed, $4 id, $5 k, $6 the fixture PNG, $7 the test dir,
    // $8 out_stem.
    CommandOptions o;
    o.command_template = "/bin/sh -c '" + script + "' sh {prompt} {out} {seed} {id} {k} " +
                         (dir_ / "fixture.png").string() + " " + dir_.string() + " {out_stem}";
    o.timeout = timeout;
    o.scratch_dir = dir_ / "scratch";
    return MakeCommandBackend(o);
  }
  visalign::testing::TempDir scratch_;
  const fs::path dir_ = scratch_.path();
};

TEST_F(CommandTest, PromptsWithQuotesSubshellsAndSemicolonsArriveVerbatim) {
  auto b = Make(R"(printf "%s|%s|%s|%s" "$1" "$3" "$4" "$5" > "$7/args.txt"; cp "$6" "$2")").value();
  const std::string prompt = R"(a "quoted" 'single' $(touch pwned) `id`; rm -rf / & echo {x})";
  auto r = b->Generate({"v1-t01-00001", prompt, 2, 1234}, kNoCancel);
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value->bytes, TinyPng());
  EXPECT_EQ(r.value->extension, "png");
  EXPECT_EQ(ReadFile(dir_ / "args.txt").value(), prompt + "|1234|v1-t01-00001|2");
  EXPECT_FALSE(fs::exists("pwned"));
  EXPECT_FALSE(fs::exists(dir_ / "pwned"));
  // The {out} file is removed after reading.
  EXPECT_TRUE(fs::is_empty(dir_ / "scratch"));
}

TEST_F(CommandTest, NonZeroExitIsARetryableFailureWithTheStderrTail) {
  auto b = Make(R"(echo "loading model" >&2; echo "CUDA out of memory" >&2; exit 3)").value();
  auto r = b->Generate({"a", "p", 0, {}}, kNoCancel);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.kind, ErrorKind::kCommand);
  EXPECT_TRUE(r.error.retryable());
  EXPECT_EQ(r.error.message, "command exited with status 3; stderr: loading model CUDA out of memory");
}

TEST_F(CommandTest, MissingOrInvalidOutputIsAFailure) {
  auto none = Make(R"(echo done)").value()->Generate({"a", "p", 0, {}}, kNoCancel);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error.message, "command exited 0 but wrote no image at {out} nor {out_stem}.jpg, .jpeg or .webp");
  auto junk = Make(R"(echo "not an image" > "$2")").value()->Generate({"a", "p", 0, {}}, kNoCancel);
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.error.message.find("wrote an invalid image"), std::string::npos) << junk.error.message;
  EXPECT_NE(junk.error.message.find("not a PNG, JPEG or WebP"), std::string::npos) << junk.error.message;
  auto two = Make(R"(cp "$6" "$8.png"; cp "$6" "$8.webp")").value()->Generate({"a", "p", 0, {}}, kNoCancel);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.error.message.find("wrote 2 images"), std::string::npos) << two.error.message;
  EXPECT_TRUE(fs::is_empty(dir_ / "scratch"));
}

TEST_F(CommandTest, OutEndsInPngAndOutStemLetsTheProgramPickTheExtension) {
  // Like PIL's img.save(out), which picks the format from the extension and refuses unknown ones.
  auto by_extension = Make(R"(case "$2" in
    *.png) cp "$6" "$2" ;;
    *) echo "ValueError: unknown file extension: ${{2##*.}}" >&2; exit 1 ;;
  esac)")
                          .value();
  auto r = by_extension->Generate({"a", "p", 0, {}}, kNoCancel);
  ASSERT_TRUE(r.ok()) << r.error.message;
  EXPECT_EQ(r.value->extension, "png");
  // {out_stem}.webp holding PNG bytes: found, and the format comes from the content.
  auto stem = Make(R"(cp "$6" "$8.webp")").value()->Generate({"a", "p", 0, {}}, kNoCancel);
  ASSERT_TRUE(stem.ok()) << stem.error.message;
  EXPECT_EQ(stem.value->bytes, TinyPng());
  EXPECT_EQ(stem.value->extension, "png");
  EXPECT_TRUE(fs::is_empty(dir_ / "scratch"));
}

TEST_F(CommandTest, TheSameFailureHasTheSameSignatureOnEveryItem) {
  // Progress output differs per item; the exit status and the last stderr line do not; the
  // scratch path is written as {out_stem}.
  auto b = Make(R"sh(echo "step 1/30 $4 $(date +%N)" >&2; echo "cannot open $2" >&2; exit 2)sh").value();
  auto x = b->Generate({"item-x", "p", 0, {}}, kNoCancel);
  auto y = b->Generate({"item-y", "q", 1, {}}, kNoCancel);
  ASSERT_FALSE(x.ok());
  ASSERT_FALSE(y.ok());
  EXPECT_NE(x.error.message, y.error.message);
  EXPECT_EQ(x.error.Signature(), "command exited with status 2; last stderr line: cannot open {out_stem}.png");
  EXPECT_EQ(x.error.Signature(), y.error.Signature());
  EXPECT_NE(x.error.message.find("stderr: step 1/30 item-x"), std::string::npos) << x.error.message;
}

TEST_F(CommandTest, TimeoutKillsTheWholeProcessGroup) {
  // The script starts a grandchild that would create a file after 1.5 s, then hangs.
  auto b = Make(R"((sleep 1.5; touch "$7/grandchild-survived") & sleep 30)", Millis(200)).value();
  auto t0 = std::chrono::steady_clock::now();
  auto r = b->Generate({"a", "p", 0, {}}, kNoCancel);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, Millis(1500));
  EXPECT_NE(r.error.message.find("timed out after 200 ms"), std::string::npos) << r.error.message;
  std::this_thread::sleep_for(Millis(1800));
  EXPECT_FALSE(fs::exists(dir_ / "grandchild-survived"));
}

TEST_F(CommandTest, CancellationStopsTheCommand) {
  auto b = Make(R"(sleep 30)").value();
  std::atomic<bool> cancel{false};
  std::thread t([&] {
    std::this_thread::sleep_for(Millis(100));
    cancel = true;
  });
  auto r = b->Generate({"a", "p", 0, {}}, cancel);
  t.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.kind, ErrorKind::kCancelled);
}

TEST_F(CommandTest, TemplatesAreCheckedUpFront) {
  CommandOptions o;
  o.scratch_dir = dir_;
  o.command_template = "gen --prompt {prompt}";
  EXPECT_NE(MakeCommandBackend(o).status().what().find("no {out}"), std::string::npos);
  o.command_template = "gen --prompt {prompt} --out {out_stem}";
  o.scratch_dir = dir_ / "made-on-first-use";
  EXPECT_TRUE(MakeCommandBackend(o).ok());
  EXPECT_FALSE(fs::exists(o.scratch_dir));  // making the backend writes nothing (generate --dry-run)
  o.scratch_dir = dir_;
  o.command_template = "gen --out {out} --steps {stepz}";
  EXPECT_NE(MakeCommandBackend(o).status().what().find("unknown placeholder"), std::string::npos);
  o.command_template = "gen --out {out} --json {{\"a\":1}}";
  EXPECT_TRUE(MakeCommandBackend(o).ok());
  o.command_template = "/nonexistent/gen --out {out}";
  auto b = MakeCommandBackend(o).value();
  auto r = b->Generate({"a", "p", 0, {}}, kNoCancel);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.kind, ErrorKind::kLocal);
  EXPECT_NE(r.error.message.find("cannot start"), std::string::npos) << r.error.message;
}

TEST_F(CommandTest, DirectoryBackendImportsByIdAndSample) {
  fs::create_directories(dir_ / "imgs");
  ASSERT_TRUE(WriteFileAtomic(dir_ / "imgs/v1-a.png", TinyPng(1, 2, 3)).ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ / "imgs/v1-a__1.png", TinyPng(4, 5, 6)).ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ / "imgs/v1-b.png", "garbage").ok());
  auto b = MakeDirectoryBackend(dir_ / "imgs").value();
  EXPECT_EQ(b->Generate({"v1-a", "p", 0, {}}, kNoCancel).value->bytes, TinyPng(1, 2, 3));
  EXPECT_EQ(b->Generate({"v1-a", "p", 1, {}}, kNoCancel).value->bytes, TinyPng(4, 5, 6));
  auto missing = b->Generate({"v1-a", "p", 2, {}}, kNoCancel);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error.message.find("v1-a__2.png"), std::string::npos) << missing.error.message;
  EXPECT_FALSE(missing.error.retryable());
  auto bad = b->Generate({"v1-b", "p", 0, {}}, kNoCancel);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error.message.find("v1-b.png"), std::string::npos) << bad.error.message;
  EXPECT_EQ(MakeDirectoryBackend(dir_ / "nope").status().code(), StatusCode::kNotFound);
}

// Cameras and Windows tools write .PNG and .JPG: the extension matches in any case, as `violin
// evaluate --images` matches it; of two files with one stem, png beats jpg.
TEST_F(CommandTest, DirectoryBackendMatchesExtensionsInAnyCaseAndRefusesAFolderWithoutImages) {
  fs::create_directories(dir_ / "imgs");
  ASSERT_TRUE(WriteFileAtomic(dir_ / "imgs/v1-a__0.PNG", TinyPng(1, 2, 3)).ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ / "imgs/v1-b.Png", TinyPng(4, 5, 6)).ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ / "imgs/v1-b.JPG", "not chosen").ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ / "imgs/notes.TXT", "ignored").ok());
  auto b = MakeDirectoryBackend(dir_ / "imgs").value();
  auto a = b->Generate({"v1-a", "p", 0, {}}, kNoCancel);
  ASSERT_TRUE(a.ok()) << a.error.message;
  EXPECT_EQ(a.value->bytes, TinyPng(1, 2, 3));
  auto both = b->Generate({"v1-b", "p", 0, {}}, kNoCancel);
  ASSERT_TRUE(both.ok()) << both.error.message;
  EXPECT_EQ(both.value->bytes, TinyPng(4, 5, 6));
  auto missing = b->Generate({"notes", "p", 0, {}}, kNoCancel);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error.message.find("in any case"), std::string::npos) << missing.error.message;
  fs::create_directories(dir_ / "empty");
  ASSERT_TRUE(WriteFileAtomic(dir_ / "empty/readme.md", "no images").ok());
  Status none = MakeDirectoryBackend(dir_ / "empty").status();
  EXPECT_EQ(none.code(), StatusCode::kNotFound);
  EXPECT_NE(none.what().find("no .png, .jpg, .jpeg or .webp file in"), std::string::npos) << none.ToString();
}

}  // namespace
}  // namespace visalign::backends
