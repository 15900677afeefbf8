// The outputs' write queue (outputs/write_queue.hpp): jobs run in order on their own thread, at
// most `depth` wait, and a job's error reaches the caller at the next submit() or flush().
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "outputs/write_queue.hpp"

using hw::io::WriteQueue;

TEST(IoWriteQueue, RunsJobsInOrderOffTheCallingThread) {
  std::vector<int> order;
  std::thread::id worker;
  {
    WriteQueue q(2);
    for (int i = 0; i < 20; ++i)
      q.submit([&, i] {
        order.push_back(i);
        worker = std::this_thread::get_id();
      });
    q.flush();
    EXPECT_EQ(order.size(), 20u);
    EXPECT_NE(worker, std::this_thread::get_id());
  }
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[std::size_t(i)], i);
}

TEST(IoWriteQueue, SubmitWaitsWhileTheQueueIsFull) {
  std::atomic<bool> release{false};
  std::atomic<int> done{0};
  WriteQueue q(1);
  q.submit([&] {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++done;
  });
  q.submit([&] { ++done; });  // waits in the queue: the first job holds the thread
  std::atomic<bool> third_queued{false};
  std::thread t([&] {
    q.submit([&] { ++done; });
    third_queued = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(third_queued);  // one job running, one waiting: the queue of depth 1 is full
  release = true;
  t.join();
  q.flush();
  EXPECT_EQ(done, 3);
}

TEST(IoWriteQueue, AJobsErrorReachesTheNextCallOnce) {
  WriteQueue q(2);
  q.submit([] { throw std::runtime_error("disk full writing fields_000003.vti"); });
  try {
    q.flush();
    FAIL() << "the job's error was lost";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "disk full writing fields_000003.vti");
  }
  int ran = 0;
  q.submit([&] { ++ran; });  // said once: the queue goes on
  q.flush();
  EXPECT_EQ(ran, 1);
}

TEST(IoWriteQueue, DestructionFinishesTheQueuedJobs) {
  int ran = 0;
  {
    WriteQueue q(4);
    for (int i = 0; i < 4; ++i)
      q.submit([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        ++ran;
      });
  }
  EXPECT_EQ(ran, 4);
}
