// `hues run --words`: the clue words, a CSV column or one word per line.
#include <gtest/gtest.h>

#include "benchmarks/hues/test_support.h"
#include "visalign/benchmarks/hues/hues.h"

namespace visalign::hues {
namespace {

using testing::Scratch;

TEST(ReadWordList, DataIsTheClueWordsInEnglish) {
  const Vocabulary vocabulary = testing::TestVocabulary();
  auto words = ReadWordList("data", vocabulary);
  ASSERT_TRUE(words.ok()) << words.status().ToString();
  ASSERT_EQ(words->size(), vocabulary.words().size());
  EXPECT_EQ(words->front(), "SALMON");
}

TEST(ReadWordList, CsvPrefersWordEnThenWordAndSkipsEmptyCells) {
  const Vocabulary vocabulary = testing::TestVocabulary();
  Scratch dir;
  auto en = ReadWordList(dir.Write("a.csv", "word,word_en\nx,sky\ny,\nz,grass\n").string(), vocabulary);
  ASSERT_TRUE(en.ok()) << en.status().ToString();
  EXPECT_EQ(*en, (std::vector<std::string>{"sky", "grass"}));
  auto plain = ReadWordList(dir.Write("b.csv", "id,word\n1,sea\n").string(), vocabulary);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(*plain, (std::vector<std::string>{"sea"}));
  EXPECT_FALSE(ReadWordList(dir.Write("c.csv", "id,text\n1,sea\n").string(), vocabulary).ok());
}

TEST(ReadWordList, TextIsOneWordPerLineTrimmedAtTheEnd) {
  const Vocabulary vocabulary = testing::TestVocabulary();
  Scratch dir;
  auto words = ReadWordList(dir.Write("w.txt", "fire truck  \r\n\n  moss\nlast").string(), vocabulary);
  ASSERT_TRUE(words.ok()) << words.status().ToString();
  EXPECT_EQ(*words, (std::vector<std::string>{"fire truck", "  moss", "last"}));
}

TEST(ReadWordList, NoWordsIsAnErrorNamingTheFile) {
  const Vocabulary vocabulary = testing::TestVocabulary();
  Scratch dir;
  const std::string path = dir.Write("empty.txt", "\n \n").string();
  auto words = ReadWordList(path, vocabulary);
  ASSERT_FALSE(words.ok());
  EXPECT_NE(words.status().ToString().find("no words"), std::string::npos);
  EXPECT_NE(words.status().ToString().find(path), std::string::npos);
  EXPECT_FALSE(ReadWordList((dir.path() / "missing.txt").string(), vocabulary).ok());
}

}  // namespace
}  // namespace visalign::hues
