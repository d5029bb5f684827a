#include "serve/work_queue.h"

#include <algorithm>

namespace nextword::serve {

bool WorkQueue::push(std::unique_ptr<Job> job) {
  {
    const std::lock_guard lock(mutex_);
    if (closed_ || jobs_.size() >= capacity_) return false;
    jobs_.push_back(std::move(job));
  }
  ready_.notify_one();
  return true;
}

std::vector<std::unique_ptr<Job>> WorkQueue::pop() {
  std::unique_lock lock(mutex_);
  ++idle_;
  ready_.wait(lock, [this] { return closed_ || !jobs_.empty(); });
  --idle_;
  std::vector<std::unique_ptr<Job>> batch;
  if (jobs_.empty()) return batch;
  batch.push_back(std::move(jobs_.front()));
  jobs_.pop_front();
  const int key = batch.front()->key;
  size_t texts = batch.front()->call.texts.size();
  if (key < 0) return batch;
  // This worker's share of the texts waiting with its key: the workers
  // waiting idle take the rest.
  size_t waiting = texts;
  for (const auto& job : jobs_) waiting += job->key == key ? job->call.texts.size() : 0;
  const size_t share = std::min(max_texts_, (waiting + idle_) / (idle_ + 1));
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    const size_t more = (*it)->call.texts.size();
    if ((*it)->key == key && texts + more <= share) {
      texts += more;
      batch.push_back(std::move(*it));
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
  return batch;
}

void WorkQueue::close() {
  {
    const std::lock_guard lock(mutex_);
    closed_ = true;
  }
  ready_.notify_all();
}

size_t WorkQueue::depth() const {
  const std::lock_guard lock(mutex_);
  return jobs_.size();
}

}  // namespace nextword::serve
