// The inspections of one pass (inspect/): the trace's values worked by hand
// on the fruit model, whose projections are identities; the logit lens,
// whose last step is predict's; and the logit attribution, whose parts add
// up to the logit, on fruit and on random models with norms and biases.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "encoded_input.h"
#include "inspect/attribution.h"
#include "inspect/inspection.h"
#include "inspect/lens.h"
#include "inspect/trace.h"
#include "predict/predictor.h"
#include "test_models.h"

using namespace nextword;
using testing::fruit;

namespace {

std::map<std::string, NamedActivation> by_name(const std::vector<NamedActivation>& all) {
  std::map<std::string, NamedActivation> out;
  for (const NamedActivation& a : all) out[a.name] = a;
  return out;
}

std::vector<std::string> names_of(const std::vector<NamedActivation>& all) {
  std::vector<std::string> out;
  for (const NamedActivation& a : all) out.push_back(a.name);
  return out;
}

std::vector<std::string> names_of(const Attribution& a) {
  std::vector<std::string> out;
  for (const LogitPart& p : a.parts) out.push_back(p.name);
  return out;
}

// parts + constant == logit, relative to the size of the terms.
void check_sum(const Attribution& a) {
  double sum = a.constant, size = std::abs(a.constant);
  for (const LogitPart& p : a.parts) sum += p.value, size += std::abs(p.value);
  INFO("word id " << a.id);
  CHECK(sum == Approx(a.logit).epsilon(1e-5).margin(1e-5 * size));
}

void check_close(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    if (std::isinf(want[i])) {
      CHECK(got[i] == -std::numeric_limits<float>::infinity());
    } else {
      CHECK(got[i] == Approx(want[i]).margin(1e-6));
    }
  }
}

const std::vector<std::string> kFruitNames{"hook_embed",
                                           "blocks.0.hook_resid_pre",
                                           "blocks.0.attn.hook_q",
                                           "blocks.0.attn.hook_k",
                                           "blocks.0.attn.hook_v",
                                           "blocks.0.attn.hook_attn_scores",
                                           "blocks.0.attn.hook_pattern",
                                           "blocks.0.attn.hook_z",
                                           "blocks.0.hook_attn_out",
                                           "blocks.0.hook_resid_mid",
                                           "blocks.0.hook_resid_post",
                                           "logits"};

}  // namespace

TEST_CASE("trace by hand on fruit: softmax(X X^T) X", "[inspect]") {
  // banana phone apple: X = [[2,0],[0,2],[1,1]], no positions, no norm,
  // identity projections, scale 1, causal, no residual.
  const Inspection inspection(fruit(), encode(fruit(), "banana phone apple"));
  const std::vector<NamedActivation> all = trace(inspection);
  CHECK(names_of(all) == kFruitNames);
  auto a = by_name(all);
  const std::vector<double> X{2, 0, 0, 2, 1, 1};
  CHECK(a["hook_embed"].shape == std::vector<int>{3, 2});
  check_close(a["hook_embed"].data, X);
  check_close(a["blocks.0.hook_resid_pre"].data, X);
  for (const char* name :
       {"blocks.0.attn.hook_q", "blocks.0.attn.hook_k", "blocks.0.attn.hook_v"}) {
    INFO(name);
    CHECK(a[name].shape == std::vector<int>{3, 1, 2});
    check_close(a[name].data, X);
  }
  // X X^T = [[4,0,2],[0,4,2],[2,2,2]], keys after the query masked.
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(a["blocks.0.attn.hook_attn_scores"].shape == std::vector<int>{1, 3, 3});
  check_close(a["blocks.0.attn.hook_attn_scores"].data, {4, -inf, -inf, 0, 4, -inf, 2, 2, 2});
  // Softmax rows: [1], [1, e^4] / (1 + e^4), [1, 1, 1] / 3.
  const double w = 1 / (1 + std::exp(4.0));
  CHECK(a["blocks.0.attn.hook_pattern"].shape == std::vector<int>{1, 3, 3});
  check_close(a["blocks.0.attn.hook_pattern"].data,
              {1, 0, 0, w, 1 - w, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3});
  // Weighted averages of V's rows: [2,0], w [2,0] + (1-w) [0,2], the mean [1,1].
  const std::vector<double> z{2, 0, 2 * w, 2 * (1 - w), 1, 1};
  CHECK(a["blocks.0.attn.hook_z"].shape == std::vector<int>{3, 1, 2});
  check_close(a["blocks.0.attn.hook_z"].data, z);
  // W_o is the identity and there is no residual: the stream is z.
  for (const char* name :
       {"blocks.0.hook_attn_out", "blocks.0.hook_resid_mid", "blocks.0.hook_resid_post"}) {
    INFO(name);
    CHECK(a[name].shape == std::vector<int>{3, 2});
    check_close(a[name].data, z);
  }
  // Classifier rows pie [2,0], store [0,2]: both 2 after [1,1].
  CHECK(a["logits"].shape == std::vector<int>{6});
  check_close(a["logits"].data, {0, 0, 0, 0, 2, 2});

  // The article's banana apple: scores [[4,-inf],[2,2]], A [[1,0],[.5,.5]], logits pie 3 store 1.
  auto b = by_name(trace(Inspection(fruit(), encode(fruit(), "banana apple"))));
  check_close(b["blocks.0.attn.hook_attn_scores"].data, {4, -inf, 2, 2});
  check_close(b["blocks.0.attn.hook_pattern"].data, {1, 0, 0.5, 0.5});
  check_close(b["blocks.0.attn.hook_z"].data, {2, 0, 1.5, 0.5});
  check_close(b["logits"].data, {0, 0, 0, 0, 3, 1});
}

TEST_CASE("trace names every hook of a full config, in pass order", "[inspect]") {
  const Config c = testing::small_config();  // 2 layers, learned positions, layernorm, d_ff 12
  const Model m = testing::random_model(c, true, true, 5);
  const Inspection inspection(m, testing::encoded(m, {1, 4, 7, 2}));
  const std::vector<NamedActivation> all = trace(inspection);
  std::vector<std::string> names{"hook_embed", "hook_pos_embed"};
  for (const std::string l : {"0", "1"}) {
    for (const char* hook :
         {"hook_resid_pre", "ln1.hook_normalized", "attn.hook_q", "attn.hook_k", "attn.hook_v",
          "attn.hook_attn_scores", "attn.hook_pattern", "attn.hook_z", "hook_attn_out",
          "hook_resid_mid", "ln2.hook_normalized", "mlp.hook_pre", "mlp.hook_post", "hook_mlp_out",
          "hook_resid_post"}) {
      names.push_back("blocks." + l + "." + hook);
    }
  }
  names.push_back("ln_final.hook_normalized");
  names.push_back("logits");
  CHECK(names_of(all) == names);
  auto a = by_name(all);
  const int T = 4, d = 8, h = 2;
  CHECK(a["hook_pos_embed"].shape == std::vector<int>{T, d});
  CHECK(a["blocks.1.attn.hook_q"].shape == std::vector<int>{T, h, 3});
  CHECK(a["blocks.1.attn.hook_v"].shape == std::vector<int>{T, h, 5});
  CHECK(a["blocks.1.attn.hook_pattern"].shape == std::vector<int>{h, T, T});
  CHECK(a["blocks.1.attn.hook_z"].shape == std::vector<int>{T, h, 5});
  CHECK(a["blocks.0.mlp.hook_post"].shape == std::vector<int>{T, 12});
  CHECK(a["logits"].shape == std::vector<int>{11});
  // The stream adds up: pre + attn_out = mid, mid + mlp_out = post = the next pre.
  for (size_t i = 0; i < a["hook_embed"].data.size(); ++i) {
    CHECK(a["blocks.0.hook_resid_pre"].data[i] ==
          Approx(a["hook_embed"].data[i] + a["hook_pos_embed"].data[i]).margin(1e-6));
    for (const std::string l : {"blocks.0.", "blocks.1."}) {
      CHECK(a[l + "hook_resid_mid"].data[i] ==
            Approx(a[l + "hook_resid_pre"].data[i] + a[l + "hook_attn_out"].data[i]).margin(1e-5));
      CHECK(a[l + "hook_resid_post"].data[i] ==
            Approx(a[l + "hook_resid_mid"].data[i] + a[l + "hook_mlp_out"].data[i]).margin(1e-5));
    }
    CHECK(a["blocks.1.hook_resid_pre"].data[i] == a["blocks.0.hook_resid_post"].data[i]);
  }
  // Each pattern row is a distribution over the keys up to the query.
  const std::vector<float>& A = a["blocks.0.attn.hook_pattern"].data;
  for (int row = 0; row < h * T; ++row) {
    double sum = 0;
    for (int k = 0; k < T; ++k) {
      sum += A[static_cast<size_t>(row * T + k)];
      if (k > row % T) CHECK(A[static_cast<size_t>(row * T + k)] == 0.0f);
    }
    CHECK(sum == Approx(1.0).margin(1e-6));
  }
  CHECK(a["logits"].data == inspection.final_logits());

  // Without positions, a norm or a feed-forward block, their names are gone.
  Config bare = c;
  bare.positional = Positional::kNone;
  bare.norm = Norm::kNone;
  bare.d_ff = 0;
  bare.n_layers = 1;
  const Model b = testing::random_model(bare, false, false, 6);
  CHECK(names_of(trace(Inspection(b, testing::encoded(b, {1, 3})))) ==
        std::vector<std::string>{"hook_embed", "blocks.0.hook_resid_pre", "blocks.0.attn.hook_q",
                                 "blocks.0.attn.hook_k", "blocks.0.attn.hook_v",
                                 "blocks.0.attn.hook_attn_scores", "blocks.0.attn.hook_pattern",
                                 "blocks.0.attn.hook_z", "blocks.0.hook_attn_out",
                                 "blocks.0.hook_resid_mid", "blocks.0.hook_resid_post", "logits"});
}

TEST_CASE("lens on fruit: the embedding's guess, then predict's", "[inspect]") {
  const Encoded input = encode(fruit(), "banana apple");
  const Inspection inspection(fruit(), input);
  const std::vector<LensStep> lens = logit_lens(inspection, 1, 5, true);
  REQUIRE(lens.size() == 3);  // embed, 1.mid, 1
  CHECK(lens[0].step.layer == 0);
  CHECK((lens[1].step.layer == 1 && lens[1].step.mid));
  CHECK((lens[2].step.layer == 1 && !lens[2].step.mid));
  // After the embedding apple is [1,1]: pie and store 2, the rest 0.
  const double tie = std::exp(2.0) / (2 * std::exp(2.0) + 4);
  REQUIRE(lens[0].top.size() == 5);
  CHECK(lens[0].top[0].id == 4);
  CHECK(lens[0].top[1].id == 5);
  CHECK(lens[0].top[0].probability == Approx(tie));
  CHECK(lens[0].final_word_rank == 1);  // pie, by its lower id
  CHECK(lens[0].final_word_probability == Approx(tie));
  // After the layer: predict's words and probabilities, exactly.
  Predictor predictor(fruit());
  const Prediction p = predictor.predict(input, 5);
  for (size_t s : {size_t{1}, size_t{2}}) {
    REQUIRE(lens[s].top.size() == p.top.size());
    for (size_t i = 0; i < p.top.size(); ++i) {
      CHECK(lens[s].top[i].id == p.top[i].id);
      CHECK(lens[s].top[i].probability == p.top[i].probability);
    }
  }
  CHECK(lens[2].final_word_rank == 1);
  CHECK(lens[2].final_word_probability == p.top[0].probability);
  CHECK(lens[2].top[0].probability == Approx(std::exp(3.0) / (std::exp(3.0) + std::exp(1.0) + 4)));
  // At position 0 (banana alone) the stream is [2,0] throughout: pie e^4 / (e^4 + 5).
  const std::vector<LensStep> first = logit_lens(inspection, 0, 2, false);
  REQUIRE(first.size() == 2);
  for (const LensStep& s : first) {
    CHECK(s.top[0].id == 4);
    CHECK(s.top[0].probability == Approx(std::exp(4.0) / (std::exp(4.0) + 5)));
    CHECK(s.top.size() == 2);
  }
}

TEST_CASE("lens: the last step at every position is predict on that prefix", "[inspect]") {
  const Model m = testing::random_model(testing::small_config(), true, true, 7);
  const std::vector<int> ids{1, 5, 9, 2, 0, 6};  // bos, words, unk; max_len 6
  const Inspection inspection(m, testing::encoded(m, ids));
  Predictor predictor(m);
  for (int position = 0; position < 6; ++position) {
    INFO("position " << position);
    const std::vector<LensStep> lens = logit_lens(inspection, position, 4, true);
    REQUIRE(lens.size() == 5);  // embed, 1.mid, 1, 2.mid, 2
    const Prediction p =
        predictor.predict(testing::encoded(m, {ids.begin(), ids.begin() + position + 1}), 4);
    const LensStep& last = lens.back();
    REQUIRE(last.top.size() == 4);
    for (size_t i = 0; i < 4; ++i) {
      CHECK(last.top[i].id == p.top[i].id);
      if (position == 5) {
        CHECK(last.top[i].probability == p.top[i].probability);  // the phrase's own: exact
      } else {
        CHECK(last.top[i].probability == Approx(p.top[i].probability).margin(1e-6));
      }
    }
    CHECK(last.final_word_rank == 1);
    // The final word's rank and probability at each earlier step agree with that step's top.
    for (const LensStep& s : lens) {
      for (size_t i = 0; i < s.top.size(); ++i) {
        if (s.top[i].id == last.top[0].id) {
          CHECK(s.final_word_rank == static_cast<int>(i) + 1);
          CHECK(s.final_word_probability == s.top[i].probability);
        }
      }
      CHECK(s.final_word_rank >= 1);
    }
  }
}

TEST_CASE("attribution on fruit: one head, the whole logit", "[inspect]") {
  const Inspection inspection(fruit(), encode(fruit(), "banana apple"));
  // apple' = [1.5, .5] is all head 1's (no residual): pie 2 * 1.5, store 2 * .5.
  const Attribution pie = attribute(inspection, 4);
  CHECK(names_of(pie) == std::vector<std::string>{"1.attn.1"});
  CHECK(pie.logit == 3.0f);
  CHECK(pie.parts[0].value == Approx(3.0).margin(1e-6));
  CHECK(pie.constant == 0.0);
  const Attribution store = attribute(inspection, 5);
  CHECK(store.logit == 1.0f);
  CHECK(store.parts[0].value == Approx(1.0).margin(1e-6));
  CHECK(attribute(inspection, 1).parts[0].value == 0.0);
}

TEST_CASE("attribution: parts and constant add up to the logit", "[inspect]") {
  Config c = testing::small_config();  // layernorm, learned positions, 2 layers
  const Model m = testing::random_model(c, true, true, 9);
  const Inspection inspection(m, testing::encoded(m, {1, 3, 8, 0, 4}));
  const Attribution first = attribute(inspection, 2);
  CHECK(names_of(first) == std::vector<std::string>{"embed", "pos_embed", "1.attn.1", "1.attn.2",
                                                    "1.attn.bias", "1.mlp", "2.attn.1", "2.attn.2",
                                                    "2.attn.bias", "2.mlp"});
  CHECK(first.constant != 0.0);  // final_norm's bias and the classifier bias
  for (int id = 0; id < c.vocab_size; ++id) {
    const Attribution a = attribute(inspection, id);
    CHECK(a.id == id);
    CHECK(a.logit == inspection.final_logits()[static_cast<size_t>(id)]);
    check_sum(a);
  }
  // Sinusoids, no biases, a tied classifier, relu: the same.
  c.positional = Positional::kSinusoidal;
  c.tied_classifier = true;
  c.activation = Activation::kRelu;
  const Model s = testing::random_model(c, false, false, 10);
  const Inspection si(s, testing::encoded(s, {1, 2, 3, 4, 5, 6}));
  CHECK(names_of(attribute(si, 7)) == std::vector<std::string>{"embed", "pos_embed", "1.attn.1",
                                                               "1.attn.2", "1.mlp", "2.attn.1",
                                                               "2.attn.2", "2.mlp"});
  for (int id = 0; id < c.vocab_size; ++id) check_sum(attribute(si, id));

  // Without a norm each part is p . C[id]: the embedding's is E[last] . C[id].
  Config plain = testing::small_config();
  plain.norm = Norm::kNone;
  plain.positional = Positional::kNone;
  const Model p = testing::random_model(plain, true, true, 12);
  const Inspection pi(p, testing::encoded(p, {1, 6, 3}));
  const Attribution a = attribute(pi, 9);
  CHECK(names_of(a).front() == "embed");
  CHECK(names_of(a)[1] == "1.attn.1");
  double dot = 0;
  const int d = plain.d_model;
  for (int j = 0; j < d; ++j)
    dot += p.weights.embedding[3 * d + j] * p.weights.classifier[9 * d + j];
  CHECK(a.parts[0].value == Approx(dot).margin(1e-6));
  CHECK(a.constant == Approx(p.weights.classifier_bias[9]).margin(1e-7));
  for (int id = 0; id < plain.vocab_size; ++id) check_sum(attribute(pi, id));
}

TEST_CASE("attribution without residual connections: the last block only", "[inspect]") {
  Config c = testing::small_config();
  c.residual = false;
  const Model m = testing::random_model(c, true, true, 13);
  const Inspection mlp(m, testing::encoded(m, {1, 4, 4, 9}));
  CHECK(names_of(attribute(mlp, 3)) == std::vector<std::string>{"2.mlp"});
  for (int id = 0; id < c.vocab_size; ++id) check_sum(attribute(mlp, id));
  // Without a feed-forward block the last block is its heads and bias.
  c.d_ff = 0;
  const Model h = testing::random_model(c, true, true, 14);
  const Inspection heads(h, testing::encoded(h, {1, 4, 4, 9}));
  CHECK(names_of(attribute(heads, 3)) ==
        std::vector<std::string>{"2.attn.1", "2.attn.2", "2.attn.bias"});
  for (int id = 0; id < c.vocab_size; ++id) check_sum(attribute(heads, id));
  // With no layers at all, the embeddings are the stream.
  c.n_layers = 0;
  for (const bool residual : {true, false}) {
    c.residual = residual;
    const Model z = testing::random_model(c, true, true, 15);
    const Inspection none(z, testing::encoded(z, {1, 4, 4, 9}));
    CHECK(names_of(attribute(none, 3)) == std::vector<std::string>{"embed", "pos_embed"});
    for (int id = 0; id < c.vocab_size; ++id) check_sum(attribute(none, id));
  }
}
