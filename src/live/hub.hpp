// Where the stepping thread and the server's thread meet: the latest frame and status, the
// replies, the controls waiting for the next step, and who is watching.
//
// Why a latest-only slot and bounded queues: the stepping must never wait for a browser.
// The run publishes its newest frame over the last one (a tab that is slow, or a socket
// that is full, skips frames); replies are kept as the last kMaxReplies; controls beyond
// kMaxControls waiting are refused at once. Nothing grows with time or with the tabs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hw::live {

class Hub {
 public:
  static constexpr std::size_t kMaxControls = 64;
  static constexpr std::size_t kMaxReplies = 64;

  // --- the stepping side ---
  void publish_frame(std::shared_ptr<const std::string> bytes) {
    std::lock_guard<std::mutex> l(m_);
    frame_ = std::move(bytes);
    ++frame_seq_;
  }
  void publish_status(std::string json) {
    std::lock_guard<std::mutex> l(m_);
    status_ = std::make_shared<const std::string>(std::move(json));
    ++status_seq_;
  }
  // What every tab hears first (the grid, the controls, the fields); again after a change.
  void set_hello(std::string json) {
    std::lock_guard<std::mutex> l(m_);
    hello_ = std::make_shared<const std::string>(std::move(json));
    ++hello_seq_;
  }
  void reply(std::string json) {
    std::lock_guard<std::mutex> l(m_);
    replies_.push_back(std::make_shared<const std::string>(std::move(json)));
    ++reply_seq_;
    if (replies_.size() > kMaxReplies) replies_.pop_front();
  }
  // The controls that arrived, oldest first; waits up to `wait` for one when none is there.
  std::vector<std::string> take_controls(std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
    std::unique_lock<std::mutex> l(m_);
    if (controls_.empty() && wait.count() > 0) cv_.wait_for(l, wait, [&] { return !controls_.empty() || woken_; });
    woken_ = false;
    std::vector<std::string> out(controls_.begin(), controls_.end());
    controls_.clear();
    return out;
  }
  int watchers() const {
    std::lock_guard<std::mutex> l(m_);
    return watchers_;
  }

  // --- the server side ---
  // False when too many wait (the caller refuses the message).
  bool push_control(std::string text) {
    {
      std::lock_guard<std::mutex> l(m_);
      if (controls_.size() >= kMaxControls) return false;
      controls_.push_back(std::move(text));
    }
    cv_.notify_all();
    return true;
  }
  void watch(int delta) {
    {
      std::lock_guard<std::mutex> l(m_);
      watchers_ += delta;
      woken_ = true;
    }
    cv_.notify_all();
  }

  // What a tab has not been sent yet: it passes its counters and gets what is newer.
  struct Cursor {
    std::uint64_t hello = 0, frame = 0, status = 0, reply = 0;
  };
  struct News {
    std::shared_ptr<const std::string> hello, frame, status;
    std::vector<std::shared_ptr<const std::string>> replies;
    bool empty() const { return !hello && !frame && !status && replies.empty(); }
  };
  News news(Cursor& c) const {
    std::lock_guard<std::mutex> l(m_);
    News n;
    if (c.hello != hello_seq_ && hello_) n.hello = hello_;
    if (c.frame != frame_seq_ && frame_) n.frame = frame_;
    if (c.status != status_seq_ && status_) n.status = status_;
    // A tab joining late gets none of the earlier replies.
    if (c.hello == 0) c.reply = reply_seq_;
    const std::uint64_t first = reply_seq_ - replies_.size();
    for (std::uint64_t q = std::max(c.reply, first); q < reply_seq_; ++q) n.replies.push_back(replies_[q - first]);
    c = {hello_seq_, frame_seq_, status_seq_, reply_seq_};
    return n;
  }

 private:
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::shared_ptr<const std::string> hello_, frame_, status_;
  std::uint64_t hello_seq_ = 0, frame_seq_ = 0, status_seq_ = 0, reply_seq_ = 0;
  std::deque<std::shared_ptr<const std::string>> replies_;
  std::deque<std::string> controls_;
  int watchers_ = 0;
  bool woken_ = false;
};

}  // namespace hw::live
