// Progress reporting for long work (dataset generation, scoring, generation runs, inference).
// On a terminal: a redrawn bar with count, rate and ETA. Otherwise (CI logs, pipes): one plain line
// every few seconds plus a final line. Thread-safe: workers call Add() concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace visalign {

// What Progress counts: items ("12/40 3.0/s") or bytes ("12.0 MB/40.0 MB 3.0 MB/s", for downloads).
enum class ProgressUnit { kItems, kBytes };

class Progress {
 public:
  // `total` may be 0 when unknown (no ETA is shown then). `enabled=false` makes it silent.
  Progress(std::string label, uint64_t total, bool enabled = true);
  ~Progress();  // calls Finish()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void Add(uint64_t done = 1, uint64_t failed = 0);
  // A short free-text suffix (e.g. "retrying: 429") shown on the next redraw.
  void SetNote(std::string note);
  void SetUnit(ProgressUnit unit) { unit_ = unit; }
  void Finish();

  uint64_t done() const { return done_.load(); }
  uint64_t failed() const { return failed_.load(); }

  // Global switch (the CLI turns progress off for --json output and --log-level=off).
  static void SetGloballyEnabled(bool enabled);

 private:
  void MaybeDraw(bool force);
  std::string Line() const;
  std::string Count(uint64_t n) const;

  std::string label_;
  uint64_t total_;
  bool enabled_;
  bool tty_;
  bool finished_ = false;
  std::atomic<uint64_t> done_{0}, failed_{0};
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::string note_;
  ProgressUnit unit_ = ProgressUnit::kItems;
  std::mutex mu_;
};

}  // namespace visalign
