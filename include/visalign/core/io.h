// File and text helpers shared by every module: whole-file reads, atomic writes, CSV tables,
// and locating visalign's shipped data folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/core/status.h"

namespace visalign {

Result<std::string> ReadFile(const std::filesystem::path& path);
// The same into a caller's buffer, whose storage is reused: readers of many large files (image
// evaluation) keep one buffer instead of allocating and clearing one per file.
Status ReadFileInto(const std::filesystem::path& path, std::string& contents);

// Writes `contents` to a temporary file beside `path`, fsyncs it, then renames it over `path`,
// so readers see either the old file or the complete new one, never a partial write.
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view contents);

// Creates `dir` (and parents) if needed; an error names the directory.
Status EnsureDirectory(const std::filesystem::path& dir);

// A parsed CSV file: header names and rows of string fields. RFC 4180 quoting, LF or CRLF
// line endings, an optional UTF-8 BOM. Every row must have as many fields as the header.
struct CsvTable {
  std::string source;  // file name used in error messages
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> line_numbers;  // 1-based line of each row in the source (header is line 1)

  // Index of a column, or NotFound naming the file and the columns it has.
  Result<size_t> Column(std::string_view name) const;
  // "file:line" for row i, for error messages.
  std::string Where(size_t row) const;
};

Result<CsvTable> ParseCsv(std::string_view text, std::string source);
Result<CsvTable> ReadCsv(const std::filesystem::path& path);

// The lines of a text (LF or CRLF endings; the CR is dropped; a last line without a newline
// counts, a trailing newline adds no empty line). Line i is line number i + 1 in messages.
std::vector<std::string_view> SplitLines(std::string_view text);

// One field for CSV output: as it is, or quoted (RFC 4180, quotes doubled) when it contains a
// comma, a quote or a line break, so that ParseCsv reads it back unchanged.
std::string CsvField(std::string_view text);

// Strict numeric parsing of a whole field (no trailing garbage, no empty string).
Result<double> ParseDouble(std::string_view text, const std::string& where);
Result<int64_t> ParseInt(std::string_view text, const std::string& where);

// The folder of shipped reference data. Looked up in this order:
//   1. $VISALIGN_DATA, if set (must exist);
//   2. <dir of the executable>/../data and /../../data (build/visalign, build/bench/* in a checkout);
//   3. <dir of the executable>/../share/visalign/data (an install prefix);
//   4. the install prefix configured at build time.
Result<std::filesystem::path> DataDir();
// DataDir() / relative, or NotFound naming the path and how to point visalign at its data.
Result<std::filesystem::path> DataFile(const std::filesystem::path& relative);

// Lower-case hex SHA-256 of a byte string (streaming variant for files).
std::string Sha256Hex(std::string_view bytes);
Result<std::string> Sha256File(const std::filesystem::path& path);

}  // namespace visalign
