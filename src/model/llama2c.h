// llama2.c's checkpoints (Karpathy's run.c and export.py) read into format
// v1's tensors, so that a model trained there runs here.
//
// Three file versions, all little-endian:
//   0 (legacy): int32 dim, hidden_dim, n_layers, n_heads, n_kv_heads,
//     vocab_size (negative: the classifier is a tensor of its own, not the
//     embedding), seq_len; then float32 token_embedding_table, rms_att_weight,
//     wq, wk, wv, wo, rms_ffn_weight, w1, w2, w3, rms_final_weight, two RoPE
//     tables of seq_len * head_size / 2 (unused: the angles follow from the
//     shape), and wcls when not shared.
//   1: uint32 magic 0x616b3432 ("ak42"), int32 version 1, the 7 int32 above
//     (vocab_size positive), uint8 shared_classifier, zeros to byte 256; then
//     float32 rms_att_weight, rms_ffn_weight, rms_final_weight,
//     token_embedding_table, wq, wk, wv, wo, w1, w2, w3, [wcls].
//   2 (Q8_0): as 1 with int32 group_size after the shared byte; the norms in
//     float32, then each other tensor (each layer's apart) as int8 values
//     followed by one float32 scale per group_size of them: x = q * scale.
// llama2.c's matrices are [out, in] (y = W x); format v1's are [in, out]
// (y = x W), so every projection is transposed. The mapping: rms_att_weight
// -> norm1, wq/wk/wv/wo -> attn.w_q/w_k/w_v/w_o, rms_ffn_weight -> norm2,
// w1 -> ffn.w_gate, w3 -> ffn.w_in, w2 -> ffn.w_out, rms_final_weight ->
// final_norm, wcls -> classifier; rmsnorm (eps 1e-5), swiglu, rotary
// positions of base 10000 with adjacent pairs, as run.c computes.
#pragma once

#include <string>
#include <string_view>

#include "model/model_file.h"

namespace nextword {

struct Llama2cCheckpoint {
  int version = 0;  // 0, 1 or 2
  // The shape, with a sentencepiece tokenizer and unk_token "<unk>"; the
  // bos_token is the tokenizer's to name.
  Config config;
  Weights weights;  // owned; piece_scores left zero
};

// Every size is checked against the header before a byte is used: a file
// that ends early, runs past its tensors, names a shape that cannot be, or
// holds a value that is not finite is a model_error naming `file` and the
// header field or tensor at fault.
Llama2cCheckpoint read_llama2c(std::string_view bytes, const std::string& file);

// A whole model from a checkpoint and its tokenizer.bin: the pieces are the
// vocabulary (ids as in the file), their scores piece_scores, piece 0 the
// unk_token and piece 1 the bos_token, as llama2.c fixes them.
Model import_llama2c(const std::string& checkpoint, const std::string& tokenizer);

}  // namespace nextword
