// Direct logit attribution: how much each part that writes into the residual
// stream (the token embedding, the position embedding, each attention head
// through its rows of W_o, each layer's output bias, each feed-forward block)
// adds to one word's logit at the last position.
//
// The last position's stream x is the sum of those parts (with residual
// connections; without them, of the last block's parts alone). final_norm
// is linear once its scale sigma = sqrt(var(x) + eps) is frozen at this
// input, as TransformerLens's logit attribution freezes it, so
//   logit = sum over parts p of ((p - mean(p)) / sigma * w) . C[word]
//           + (b . C[word] + c[word])                      (the constant)
// and without a norm each part adds p . C[word].
#pragma once

#include <string>
#include <vector>

#include "inspect/inspection.h"

namespace nextword {

struct LogitPart {
  std::string name;  // "embed", "pos_embed", "L.attn.H", "L.attn.bias", "L.mlp" (1-based)
  double value = 0;
};

struct Attribution {
  int id = 0;
  float logit = 0;               // the word's logit, as predict computes it
  std::vector<LogitPart> parts;  // in the order they write into the stream
  double constant = 0;           // final_norm's bias and the classifier bias
};

Attribution attribute(const Inspection& inspection, int id);

}  // namespace nextword
