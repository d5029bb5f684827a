// The matrix products of training (Threading::kBlas): OpenBLAS's sgemm in
// float32, or, in a build with -DNEXTWORD_DNNL=ON and `train --bf16`, oneDNN's
// bf16 matmul: both operands rounded to bfloat16 (round to nearest even),
// products summed in float32 into a float32 C. Master weights, AdamW,
// softmax, norms and the loss stay float32, and prediction never uses bf16.
#pragma once

namespace nextword {

enum class Precision { kFloat32, kBfloat16 };

// Whether this build can train in bf16 on this processor (oneDNN linked in,
// and its bf16 matmul kernels run here), and why not when it cannot.
bool bf16_available();
const char* bf16_unavailable_reason();
// The precision of the products that follow (the trainer sets it once).
// Throws std::logic_error for bf16 in a build without oneDNN.
void set_training_precision(Precision precision);

// C[M, N] = A' B' + beta C, row-major, A' = A [M, K] (lda) or, with
// transpose_a, A^T of A [K, M]; B' = B [K, N] (ldb) or B^T of B [N, K].
// beta is 0 or 1.
void training_product(bool transpose_a, bool transpose_b, int M, int N, int K, const float* A,
                      int lda, const float* B, int ldb, float beta, float* C, int ldc);

}  // namespace nextword
