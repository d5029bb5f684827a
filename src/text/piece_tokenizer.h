// What a model of subword pieces reads and writes, whichever tokenizer cut
// them: SentencePiece's (text/subword.h: llama2.c's tokenizer.bin, a GGUF
// file's "llama" tokenizer) or byte-level BPE's (text/byte_bpe.h: a GGUF
// file's "gpt2" tokenizer). The Model owns one (model/model_file.h); the
// code that predicts, generates and prints pieces asks it, and never
// assumes an id.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nextword {

// A tokenizer's special pieces: ids, or -1 where it has none.
struct SpecialPieces {
  int unk = -1;
  int bos = -1;
  int eos = -1;
  bool add_bos = true;  // a text's pieces follow a BOS
};

class PieceTokenizer {
 public:
  explicit PieceTokenizer(SpecialPieces special) : special_(special) {}
  virtual ~PieceTokenizer() = default;

  virtual int size() const = 0;
  // The piece as the vocabulary spells it (its name in outputs).
  virtual const std::string& piece(int id) const = 0;
  // The ids of `text`, without the BOS.
  virtual std::vector<int> encode(std::string_view text) const = 0;
  // The bytes `token` writes after `previous` (the BOS, or -1, at the
  // start of a text).
  virtual std::string decode(int previous, int token) const = 0;
  // The bytes a piece writes in the middle of a text.
  virtual std::string text(int id) const = 0;
  // A piece no text is cut into (BOS, EOS, <unk> and the like): it never
  // begins or ends a word.
  virtual bool is_control(int id) const = 0;

  int unk() const { return special_.unk; }
  int bos() const { return special_.bos; }
  int eos() const { return special_.eos; }
  bool add_bos() const { return special_.add_bos && special_.bos >= 0; }

 protected:
  PieceTokenizer(const PieceTokenizer&) = default;
  PieceTokenizer& operator=(const PieceTokenizer&) = default;

 private:
  SpecialPieces special_;
};

}  // namespace nextword
