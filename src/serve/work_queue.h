// The calls waiting for a worker. Bounded: a full queue refuses the call
// (the server answers 503) rather than piling up. A worker takes the oldest
// call and, with it, waiting calls that may share its forward pass (the same
// batch key): concurrent requests of one kind run as one batch, as lines
// waiting on a stdin stream do. A batch takes its share of the texts
// waiting, split with the workers that wait idle, and at most a number of
// texts: on these models a pass costs about its size, so a worker that took
// everything would leave the others idle and the last call waiting longest.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "serve/call.h"
#include "serve/worker.h"

namespace nextword::serve {

struct Job {
  Call call;
  int key = -1;  // batch_key(call)
  // Called once, on the worker's thread, with the answer.
  std::function<void(Answer)> done;
  // For a streamed generation: each word's event (on the worker's thread).
  EventSink events;
};

class WorkQueue {
 public:
  // At most `capacity` jobs wait; a batch holds at most `max_texts` texts.
  WorkQueue(size_t capacity, size_t max_texts) : capacity_(capacity), max_texts_(max_texts) {}

  // False when the queue is full or closed (the job is not taken).
  bool push(std::unique_ptr<Job> job);
  // Waits for work: the oldest job and the waiting jobs that batch with it,
  // in their order. Empty once the queue is closed and drained.
  std::vector<std::unique_ptr<Job>> pop();
  // Takes no more jobs; pop() drains those waiting, then returns empty.
  void close();
  size_t depth() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::unique_ptr<Job>> jobs_;
  size_t capacity_, max_texts_;
  size_t idle_ = 0;  // workers waiting in pop()
  bool closed_ = false;
};

}  // namespace nextword::serve
