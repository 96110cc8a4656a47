#include "visalign/core/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace visalign {
namespace {
std::atomic<bool> g_enabled{true};
constexpr auto kTtyRedraw = std::chrono::milliseconds(100);
constexpr auto kPlainInterval = std::chrono::seconds(5);

constexpr double kMegabyte = 1e6;

std::string FormatDuration(double seconds) {
  if (seconds < 0 || seconds > 1e7) return "--:--";
  auto s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{:02}:{:02}", s / 60, s % 60);
}
}  // namespace

void Progress::SetGloballyEnabled(bool enabled) { g_enabled = enabled; }

Progress::Progress(std::string label, uint64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled && g_enabled.load()),
      tty_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  // On a terminal the label shows at once, so a stage whose first step is slow is not silence.
  if (enabled_ && tty_) MaybeDraw(true);
}

Progress::~Progress() { Finish(); }

void Progress::Add(uint64_t done, uint64_t failed) {
  done_ += done;
  failed_ += failed;
  if (enabled_) MaybeDraw(false);
}

void Progress::SetNote(std::string note) {
  std::lock_guard<std::mutex> lock(mu_);
  note_ = std::move(note);
}

std::string Progress::Count(uint64_t n) const {
  return unit_ == ProgressUnit::kBytes ? fmt::format("{:.1f} MB", static_cast<double>(n) / kMegabyte)
                                       : std::to_string(n);
}

std::string Progress::Line() const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  uint64_t n = done_.load() + failed_.load();
  double rate = elapsed > 0 ? n / elapsed : 0.0;
  std::string line = label_ + " ";
  if (total_ > 0) {
    double frac = std::min(1.0, static_cast<double>(n) / static_cast<double>(total_));
    if (tty_) {
      constexpr int kWidth = 24;
      int filled = static_cast<int>(frac * kWidth);
      line += "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] ";
    }
    line += fmt::format("{}/{} ({:.0f}%)", Count(n), Count(total_), 100 * frac);
  } else {
    line += Count(n);
  }
  if (failed_.load() > 0) line += fmt::format(" failed {}", failed_.load());
  line +=
      unit_ == ProgressUnit::kBytes ? fmt::format(" {:.1f} MB/s", rate / kMegabyte) : fmt::format(" {:.1f}/s", rate);
  if (total_ > 0 && rate > 0) line += " eta " + FormatDuration((total_ - std::min(n, total_)) / rate);
  line += " elapsed " + FormatDuration(elapsed);
  if (!note_.empty()) line += " " + note_;
  return line;
}

void Progress::MaybeDraw(bool force) {
  auto now = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock() && !force) return;
  if (!lock.owns_lock()) lock.lock();
  if (!force &&
      now - last_draw_ < (tty_ ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(kTtyRedraw)
                               : std::chrono::duration_cast<std::chrono::steady_clock::duration>(kPlainInterval)))
    return;
  last_draw_ = now;
  std::string line = Line();
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

void Progress::Finish() {
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  MaybeDraw(true);
  if (tty_) std::fputc('\n', stderr);
}

}  // namespace visalign
