// Subword pieces as sentencepiece's BPE models hold them, in the layout of
// llama2.c's tokenizer.bin, and the encoding and decoding llama2.c's run.c
// does with them: what a model nobody here trained reads and
// writes.
//
//   encode(text): a space piece first (sentencepiece's dummy prefix) when the
//     text is not empty; then each UTF-8 character (a lead byte and up to 3
//     continuation bytes, as they come: bytes that are not UTF-8 are taken
//     as they are) is its piece when there is one, else its bytes' pieces
//     <0xNN>; then, while any two neighbours make a piece, the pair whose
//     piece scores highest is merged (the leftmost of equal scores).
//   decode(previous, token): the piece's bytes; the space after <s> is
//     dropped and a byte piece <0xNN> is the byte NN.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/piece_tokenizer.h"

namespace nextword {

struct SubwordPieces {
  std::vector<std::string> pieces;  // by id; sentencepiece's U+2581 already a space
  std::vector<float> scores;        // by id; the higher merges first
  int max_piece_length = 0;
};

// The byte NN of a piece "<0xNN>" (two upper-case hex digits, as
// sentencepiece writes them), else -1.
int byte_piece(std::string_view piece);
// The bytes a piece writes in the middle of a text: a byte piece's byte,
// any other piece's text.
std::string piece_text(std::string_view piece);

// tokenizer.bin (little-endian): int32 max_piece_length, then for each of
// `vocab_size` pieces (the checkpoint's header says how many) float32 score,
// int32 length, `length` bytes. Bytes past the last piece are refused, as
// is a piece longer than max_piece_length, a negative length or a score that is not finite, or a
// file that ends early: model_error naming `file` and the piece.
SubwordPieces read_tokenizer_bin(std::string_view bytes, int vocab_size, const std::string& file);

class SubwordTokenizer : public PieceTokenizer {
 public:
  // llama2.c's fixed ids (a GGUF file names its own).
  static constexpr int kUnk = 0, kBos = 1, kEos = 2;
  static constexpr SpecialPieces kLlama2c{kUnk, kBos, kEos, true};

  // Needs a piece " " and the 256 byte pieces <0x00> .. <0xFF> (every
  // sentencepiece model with byte fallback has them): model_error naming
  // `file` otherwise.
  SubwordTokenizer(SubwordPieces pieces, const std::string& file, SpecialPieces special = kLlama2c);

  int size() const override { return static_cast<int>(pieces_.pieces.size()); }
  const std::string& piece(int id) const override {
    return pieces_.pieces[static_cast<size_t>(id)];
  }
  // The id of a piece spelled `text`, or -1 (of equal pieces, the first).
  int find(std::string_view text) const;
  // The byte a piece <0xNN> stands for, or -1 for any other piece.
  int byte_of(int id) const { return byte_of_[static_cast<size_t>(id)]; }

  // The ids of `text`, without <s> or </s>.
  std::vector<int> encode(std::string_view text) const override;
  // The bytes `token` writes after `previous`: the space after the BOS goes.
  std::string decode(int previous, int token) const override;
  std::string text(int id) const override { return piece_text(piece(id)); }
  // The unknown piece, the BOS and the EOS.
  bool is_control(int id) const override { return id == unk() || id == bos() || id == eos(); }

 private:
  SubwordPieces pieces_;
  std::unordered_map<std::string_view, int> ids_;  // into pieces_.pieces
  std::vector<int> byte_of_;
  std::array<int, 256> byte_ids_{};
  int space_ = -1;
};

}  // namespace nextword
