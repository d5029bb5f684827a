// How well a model predicts a text: every next-word position, scored.
//
// The text is read as training reads it: each document (text/documents.h)
// after a bos token, back to back. The word at position t is predicted from
// the max_len tokens before it (a sliding window over that stream, fewer at
// its start), exactly as `nextword predict` would from that context; or, with
// a stride, from windows that move several words at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/model_file.h"
#include "text/documents.h"

namespace nextword {

struct EvalResult {
  int64_t documents = 0;
  int64_t tokens = 0;        // positions scored
  int64_t unknown = 0;       // of which the target word is not in the vocabulary
  double cross_entropy = 0;  // mean -ln p(target), nats; an unknown target scores p(unk) q(word)
  int64_t top1 = 0;          // target ranked first among the words predict can show
  int64_t top5 = 0;          // ... in the first five. An unknown target is always a miss.

  double perplexity() const;
  double unknown_rate() const;
  double top1_accuracy() const;
  double top5_accuracy() const;
};

// `progress(done, total)` is called now and then with positions scored so far.
// `stride` as for Scorer::score (1: every word after the first max_len read
// after exactly max_len tokens).
EvalResult evaluate(const Model& model, const std::vector<Document>& documents,
                    const std::function<void(int64_t, int64_t)>& progress = {}, int stride = 1);

}  // namespace nextword
