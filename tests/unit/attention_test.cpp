// Scaled dot-product attention of src/math/layers.h (one head, several,
// grouped-query, causal, scaled; forward, through the cache and backward)
// against values worked out by hand.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "math/layers.h"

using namespace nextword;

TEST_CASE("attention is a weighted average: softmax(X X^T) X on two words", "[math]") {
  // X = [[1,0],[1,1]]; X X^T = [[1,1],[1,2]]
  // A = [[.5,.5],[1/(1+e), e/(1+e)]]; A X = [[1,.5],[1,e/(1+e)]]
  const std::vector<float> X = {1, 0, 1, 1};
  std::vector<float> A(4), heads(4);
  attention_forward(heads.data(), A.data(), X.data(), X.data(), X.data(), 2, 1, 1, 2, 2, 1.0f,
                    false);
  CHECK(A[0] == Approx(0.5));
  CHECK(A[1] == Approx(0.5));
  CHECK(A[2] == Approx(0.2689414));
  CHECK(A[3] == Approx(0.7310586));
  CHECK(heads[0] == Approx(1.0));
  CHECK(heads[1] == Approx(0.5));
  CHECK(heads[2] == Approx(1.0));
  CHECK(heads[3] == Approx(0.7310586));
}

TEST_CASE("causal masking: a word never attends to later words", "[math]") {
  const std::vector<float> X = {1, 0, 1, 1};
  std::vector<float> A(4), heads(4);
  attention_forward(heads.data(), A.data(), X.data(), X.data(), X.data(), 2, 1, 1, 2, 2, 1.0f,
                    true);
  CHECK(A[0] == 1.0f);  // the first word sees only itself
  CHECK(A[1] == 0.0f);
  CHECK(A[2] == Approx(0.2689414));  // the second is as before
  CHECK(heads[0] == Approx(1.0));
  CHECK(heads[1] == Approx(0.0));
}

TEST_CASE("scale multiplies the scores before the softmax", "[math]") {
  // d_k = 4, scale 1/sqrt(4) = 0.5: scores [[2, 0]] become [[1, 0]].
  const std::vector<float> Q = {1, 1, 1, 1, 0, 0, 0, 0}, K = {0.5f, 0.5f, 0.5f, 0.5f, 0, 0, 0, 0};
  const std::vector<float> V = {1, 0};
  std::vector<float> A(4), heads(2);
  attention_forward(heads.data(), A.data(), Q.data(), K.data(), V.data(), 2, 1, 1, 4, 1, 0.5f,
                    false);
  CHECK(A[0] == Approx(0.7310586));  // softmax([1, 0])
  CHECK(heads[0] == Approx(0.7310586));
}

TEST_CASE("grouped-query attention: two query heads read one key/value head", "[math]") {
  // h = 2, kv = 1, d_k = d_v = 1, T = 2, no scale, not causal. K = [0, ln3], V = [1, 5].
  // A query of 1 gives scores [0, ln3], A = [.25, .75], head 1*.25 + 5*.75 = 4;
  // a query of 0 gives A = [.5, .5], head 3.
  const float ln3 = std::log(3.0f);
  const std::vector<float> Q = {1, 0,  // word 0: head 0 query 1, head 1 query 0
                                0, 1};
  const std::vector<float> K = {0, ln3}, V = {1, 5};
  std::vector<float> A(8), heads(4);
  attention_forward(heads.data(), A.data(), Q.data(), K.data(), V.data(), 2, 2, 1, 1, 1, 1.0f,
                    false);
  const std::vector<float> expected = {4, 3, 3, 4};
  for (size_t i = 0; i < expected.size(); ++i) CHECK(heads[i] == Approx(expected[i]));
  CHECK(A[0] == Approx(0.25));
  CHECK(A[4] == Approx(0.5));
  // The cache's path gives the same rows: word 1 against both keys.
  std::vector<float> extended(2), scores(2);
  attention_extend(extended.data(), Q.data() + 2, 2, K.data(), 1, V.data(), 1, 1, 1, 2, 1, 1, 1,
                   1.0f, scores.data());
  CHECK(extended[0] == Approx(3));
  CHECK(extended[1] == Approx(4));
  // Backward: a kv head's gradient sums over its query heads. With d heads = [[1, 1], [0, 0]]
  // word 0's two heads feed back, with A = [.25, .75] and [.5, .5]: dV = [.75, 1.25].
  const std::vector<float> d_heads = {1, 1, 0, 0};
  std::vector<float> dQ(4), dK(2), dV(2), dS(4);
  attention_backward(dQ.data(), dK.data(), dV.data(), dS.data(), d_heads.data(), A.data(), nullptr,
                     nullptr, Q.data(), K.data(), V.data(), 2, 2, 1, 1, 1, 1.0f);
  CHECK(dV[0] == Approx(0.75));
  CHECK(dV[1] == Approx(1.25));
  // Head 0: dA = [1, 5]; dS = A (dA - A.dA) = [.25 (1 - 4), .75 (5 - 4)] = [-.75, .75];
  // dQ = dS K = .75 ln3; dK = dS^T q = [-.75, .75] (q = 1). Head 1: dS = [-1, 1],
  // dQ = ln3, and its query 0 adds nothing to dK.
  CHECK(dQ[0] == Approx(0.75 * std::log(3.0)));
  CHECK(dQ[1] == Approx(std::log(3.0)));
  CHECK(dK[0] == Approx(-0.75));
  CHECK(dK[1] == Approx(0.75));
}

TEST_CASE("two heads with d_k != d_v, concatenated and projected by W_o", "[math]") {
  // h = 2, d_k = 1, d_v = 2, T = 2, no scale, not causal.
  const float ln3 = std::log(3.0f), ln4 = std::log(4.0f);
  const std::vector<float> Q = {0, 1,    // word 0: head 0 query 0, head 1 query 1
                                1, 1};   // word 1
  const std::vector<float> K = {0, ln4,  // head 0 keys [0, ln3]; head 1 keys [ln4, 0]
                                ln3, 0};
  const std::vector<float> V = {1, 2, 10, 20,   // head 0 values [1,2],[3,4]
                                3, 4, 30, 40};  // head 1 values [10,20],[30,40]
  std::vector<float> A(8), heads(8);
  attention_forward(heads.data(), A.data(), Q.data(), K.data(), V.data(), 2, 2, 2, 1, 2, 1.0f,
                    false);
  // head 0: scores [[0,0],[0,ln3]] -> A = [[.5,.5],[.25,.75]]
  CHECK(A[0] == Approx(0.5));
  CHECK(A[2] == Approx(0.25));
  CHECK(A[3] == Approx(0.75));
  // head 1: scores [[ln4,0],[ln4,0]] -> A = [[.8,.2],[.8,.2]]
  CHECK(A[4] == Approx(0.8));
  CHECK(A[7] == Approx(0.2));
  // concat(head_0, head_1) = [[2,3,14,24],[2.5,3.5,14,24]]
  const std::vector<float> expected = {2, 3, 14, 24, 2.5f, 3.5f, 14, 24};
  for (size_t i = 0; i < expected.size(); ++i) CHECK(heads[i] == Approx(expected[i]));
  // O = concat W_o + b_o with W_o = [[1,0],[0,1],[1,0],[0,-1]], b_o = [1, 0]
  const std::vector<float> W_o = {1, 0, 0, 1, 1, 0, 0, -1}, b_o = {1, 0};
  std::vector<float> O(4);
  matmul_forward(O.data(), heads.data(), W_o.data(), b_o.data(), 2, 4, 2);
  CHECK(O[0] == Approx(17.0));
  CHECK(O[1] == Approx(-21.0));
  CHECK(O[2] == Approx(17.5));
  CHECK(O[3] == Approx(-20.5));
}
