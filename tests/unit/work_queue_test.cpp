// The server's queue (src/serve/work_queue.h): bounded, oldest first, and a
// batch gathers every waiting call with the oldest one's key, up to a number
// of texts.
#include "serve/work_queue.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>

#include "serve/call.h"

using namespace nextword::serve;

namespace {

std::unique_ptr<Job> job(Endpoint endpoint, size_t texts, const std::string& tag) {
  auto j = std::make_unique<Job>();
  j->call.endpoint = endpoint;
  j->call.texts.assign(texts, tag);
  j->key = batch_key(j->call);
  return j;
}

std::string tags(const std::vector<std::unique_ptr<Job>>& batch) {
  std::string out;
  for (const auto& j : batch) out += j->call.texts.front();
  return out;
}

}  // namespace

TEST_CASE("a batch is the oldest call and the waiting calls of its key, up to max texts",
          "[work_queue]") {
  WorkQueue queue(8, 4);
  REQUIRE(queue.push(job(Endpoint::kPredict, 1, "a")));
  REQUIRE(queue.push(job(Endpoint::kLens, 1, "b")));
  REQUIRE(queue.push(job(Endpoint::kPredict, 2, "c")));
  REQUIRE(queue.push(job(Endpoint::kPredict, 2, "d")));  // 1 + 2 + 2 > 4: waits
  REQUIRE(queue.push(job(Endpoint::kScore, 1, "e")));
  REQUIRE(queue.push(job(Endpoint::kPredict, 1, "f")));
  CHECK(queue.depth() == 6);
  CHECK(tags(queue.pop()) == "acf");  // 1 + 2 + 1 texts
  CHECK(tags(queue.pop()) == "b");    // lens: one call at a time
  CHECK(tags(queue.pop()) == "d");
  CHECK(tags(queue.pop()) == "e");
  CHECK(queue.depth() == 0);
}

TEST_CASE("a full queue refuses, a closed one drains, then returns empty", "[work_queue]") {
  WorkQueue queue(2, 64);
  CHECK(queue.push(job(Endpoint::kGenerate, 1, "a")));
  CHECK(queue.push(job(Endpoint::kGenerate, 1, "b")));
  CHECK_FALSE(queue.push(job(Endpoint::kGenerate, 1, "c")));
  queue.close();
  CHECK_FALSE(queue.push(job(Endpoint::kGenerate, 1, "d")));
  CHECK(tags(queue.pop()) == "a");
  CHECK(tags(queue.pop()) == "b");
  CHECK(queue.pop().empty());
  // A worker waiting on an empty queue wakes when it is closed.
  WorkQueue idle(2, 64);
  std::thread worker([&idle] { CHECK(idle.pop().empty()); });
  idle.close();
  worker.join();
}

TEST_CASE("predict with and without --explain, attention and score batch apart", "[work_queue]") {
  Call c;
  c.endpoint = Endpoint::kPredict;
  const int plain = batch_key(c);
  c.explain = true;
  const int explained = batch_key(c);
  c.endpoint = Endpoint::kAttention;
  const int attention = batch_key(c);
  c.endpoint = Endpoint::kScore;
  const int score = batch_key(c);
  CHECK(plain >= 0);
  CHECK(explained != plain);
  CHECK(attention != plain);
  CHECK(score != plain);
  for (const Endpoint one_by_one : {Endpoint::kComplete, Endpoint::kLens, Endpoint::kTrace,
                                    Endpoint::kAttribute, Endpoint::kGenerate}) {
    c.endpoint = one_by_one;
    CHECK(batch_key(c) == -1);
  }
}
