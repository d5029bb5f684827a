// Scoring text word by word: every token's log-probability given the tokens
// before it, and its rank among the words `predict` could have shown there.
// `nextword score` prints it per line, `eval` sums it over a file.
//
// A stream of token ids (one line, bos first; or a file's documents back to
// back) is scored from its second token on; bos tokens are never scored.
// Token t is predicted from the last max_len tokens before it, exactly as
// `predict` would from that context. With a causal model the first max_len
// targets of a stream share one pass (all positions at once); later targets
// slide a max_len window, one per target, batched. A model whose attention is
// not causal sees the whole window, so there every target gets its own pass.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "model/model_file.h"
#include "text/documents.h"
#include "transformer/state.h"

namespace nextword {

struct TokenScore {
  int position = 0;    // index of the token in its stream
  double logprob = 0;  // ln softmax(logits)[id], over the whole vocabulary (see add_spelling)
  int rank = 0;        // 1 + the words (not unk, not bos) ranking before id (predict/ranking.h)
};

// The text as the model was trained on it, one stream: every (non-empty)
// document after a bos, back to back. Contexts slide over it across
// document ends, as the training windows do.
std::vector<int> document_stream(const Model& model, const std::vector<Document>& documents);
// The tokens of document_stream(model, documents) as written: the
// documents' words (bos as the model's bos token), or a subword model's
// pieces.
std::vector<std::string> document_tokens(const Model& model, const std::vector<Document>& documents,
                                         const std::vector<int>& stream);

// Not thread-safe: it reuses its buffers from call to call.
class Scorer {
 public:
  explicit Scorer(const Model& model) : model_(model) {}

  // Scores every stream; out[s] gets stream s's scores, in position order.
  // Streams are independent: no context crosses from one to the next.
  // `progress(done, total)` (when given) hears of targets scored after each pass.
  // `stride` S > 1 (causal models): past a stream's first max_len targets,
  // windows of max_len tokens start S tokens apart and each scores its last
  // S targets in one pass, so each target is read after max_len - S + 1 to
  // max_len tokens instead of max_len; 1 slides the window target by target.
  void score(std::span<const std::vector<int>> streams, std::vector<std::vector<TokenScore>>& out,
             const std::function<void(int64_t, int64_t)>& progress = {}, int stride = 1);

 private:
  struct Pass;   // one window of one stream and the targets it scores
  struct Group;  // the passes of one forward pass
  // A thread's buffers.
  struct Workspace {
    RunState state;
    std::vector<int> ids, lengths;
  };
  void run(const Group& group, std::span<const std::vector<int>> streams, Workspace& w,
           std::vector<std::vector<TokenScore>>& out) const;

  const Model& model_;
  std::vector<Workspace> workspaces_;
};

}  // namespace nextword
