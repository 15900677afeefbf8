#include "outputs/write_queue.hpp"

namespace hw::io {

WriteQueue::WriteQueue(std::size_t depth) : depth_(depth == 0 ? 1 : depth), thread_([this] { work(); }) {}

WriteQueue::~WriteQueue() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void WriteQueue::rethrow() {
  if (!error_) return;
  std::exception_ptr e = error_;
  error_ = nullptr;  // said once: the run decides what to do with it
  std::rethrow_exception(e);
}

void WriteQueue::submit(std::function<void()> job) {
  std::unique_lock<std::mutex> lock(m_);
  changed_.wait(lock, [&] { return jobs_.size() < depth_ || error_; });
  rethrow();
  jobs_.push_back(std::move(job));
  lock.unlock();
  changed_.notify_all();
}

void WriteQueue::flush() {
  std::unique_lock<std::mutex> lock(m_);
  changed_.wait(lock, [&] { return jobs_.empty() && !running_; });
  rethrow();
}

void WriteQueue::work() {
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stop_, nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    running_ = true;
    lock.unlock();
    changed_.notify_all();  // a place in the queue is free
    std::exception_ptr e;
    try {
      job();
    } catch (...) {
      e = std::current_exception();
    }
    lock.lock();
    running_ = false;
    if (e && !error_) error_ = e;
    changed_.notify_all();
  }
}

}  // namespace hw::io
