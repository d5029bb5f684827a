// Byte-level BPE, GPT-2's tokenizer and the many that copied it (GGUF's
// tokenizer.ggml.model "gpt2"): what a GGUF model of that family reads
// and writes.
//
// A vocabulary spells every token as characters that each stand for one
// byte (byte_character: GPT-2's printable stand-ins, so a space is "Ġ"
// and a line feed "Ċ"), and lists its merges, "LEFT RIGHT", the first
// merged first. encode(text):
//   1. the text's bytes that are not UTF-8 are each read as U+FFFD;
//   2. user-defined tokens (type 4) spelled in UTF-8 are found in the text
//      as they are spelled, the longest of those starting at the leftmost
//      place first, and are their ids; control tokens (type 3) are never
//      found in text;
//   3. the text between them is cut into pieces by the vocabulary's
//      pre-tokenizer (text/pretokenizer.h);
//   4. each piece starts as its bytes' tokens, and while two neighbours
//      have a merge, the pair of the first merge (the leftmost of equal
//      ones) becomes the one token it spells. A byte whose character is no
//      token is dropped. With Llama 3's pre-tokenizer a piece that is a
//      token as a whole is that token, merges or not.
// token_bytes(id) writes a token's bytes back.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/piece_tokenizer.h"
#include "text/pretokenizer.h"

namespace nextword {

// tokenizer.ggml.token_type's values.
enum BpeTokenType : int32_t {
  kNormalToken = 1,
  kUnknownToken = 2,
  kControlToken = 3,
  kUserDefinedToken = 4,
  kUnusedToken = 5,
  kByteToken = 6,
};

// A vocabulary as a GGUF file holds it.
struct BpeVocabulary {
  std::vector<std::string> tokens;  // by id, as spelled
  std::vector<int32_t> types;       // by id, BpeTokenType; empty: every token normal
  std::vector<std::string> merges;  // "LEFT RIGHT", the first merged first
  std::string pre = "default";      // the pre-tokenizer's name (PreTokenizer::names())
};

// GPT-2's stand-in for `byte`: '!' to '~', 0xA1 to 0xAC and 0xAE to 0xFF
// stand for themselves (as code points); the 68 others (the controls,
// space, DEL, 0x80 to 0xA0 and 0xAD), in byte order, for U+0100 to U+0143.
char32_t byte_character(uint8_t byte);
// The byte `c` stands for, or -1 when it stands for none.
int character_byte(char32_t c);

class ByteBpeTokenizer : public PieceTokenizer {
 public:
  // Throws model_error(file, FIELD, ...) naming the field at fault: no
  // tokens, a count of types that is not the count of tokens, a
  // pre-tokenizer nextword does not know (the message lists those it
  // knows), a merge that is not two tokens with a space between, or whose
  // tokens, or the token they make, are not in the vocabulary
  // ("metadata.tokenizer.ggml.merges[N]").
  ByteBpeTokenizer(BpeVocabulary vocabulary, const std::string& file, SpecialPieces special = {});

  int size() const override { return static_cast<int>(tokens_.size()); }
  // The token as the vocabulary spells it.
  const std::string& token(int id) const { return tokens_[static_cast<size_t>(id)]; }
  int32_t type(int id) const { return types_[static_cast<size_t>(id)]; }
  // The id of the token spelled `spelling`, or -1 (of equal ones, the first).
  int find(std::string_view spelling) const;
  const PreTokenizer& pre_tokenizer() const { return pre_; }

  // The ids of `text` (any bytes), without bos or eos.
  std::vector<int> encode(std::string_view text) const override;
  // The bytes a token stands for: a normal token's characters read back
  // as bytes (a character that stands for no byte as its UTF-8); a control,
  // unknown or user-defined token as it is spelled. An id outside the
  // vocabulary is an input_error (exit 4).
  std::string token_bytes(int id) const;
  // The bytes of `ids`, one after another.
  std::string decode(const std::vector<int>& ids) const;

  // PieceTokenizer: a piece is a token; it writes its bytes wherever it
  // stands; control, unknown and unused tokens are its control pieces.
  const std::string& piece(int id) const override { return token(id); }
  std::string decode(int, int token) const override { return token_bytes(token); }
  std::string text(int id) const override { return token_bytes(id); }
  bool is_control(int id) const override {
    const int32_t t = type(id);
    return t == kControlToken || t == kUnknownToken || t == kUnusedToken;
  }

 private:
  // A merge's slot in an open-addressed table: the pair (left id << 32 |
  // right id), its rank and the token it makes; rank -1 when empty.
  struct Merge {
    uint64_t pair = 0;
    int32_t rank = -1;
    int32_t id = -1;
  };
  struct TrieNode {
    std::vector<std::pair<unsigned char, int32_t>> next;  // byte, node
    int32_t id = -1;                                      // a user-defined token ending here
  };
  struct Scratch;  // what encoding a piece reuses (byte_bpe.cpp)

  // The merge of `left` and `right`, or null.
  const Merge* merge_of(int left, int right) const;
  // The user-defined token longest among those spelled at `text`'s start,
  // and its length, or {-1, 0}.
  std::pair<int, size_t> user_token_at(std::string_view text) const;
  // Appends the ids of `fragment` (valid UTF-8, no user-defined token in it).
  void encode_fragment(std::string_view fragment, Scratch& scratch, std::vector<int>& out) const;
  // Appends the ids of one pre-tokenizer piece.
  void encode_piece(std::string_view piece, Scratch& scratch, std::vector<int>& out) const;

  std::vector<std::string> tokens_;
  std::vector<int32_t> types_;
  std::unordered_map<std::string_view, int> ids_;  // into tokens_
  std::vector<Merge> merges_;                      // a power of two slots, at most half full
  std::array<int, 256> byte_ids_{};                // a byte's token, or -1
  std::vector<TrieNode> user_tokens_;              // a trie of the user-defined tokens
  PreTokenizer pre_;
};

}  // namespace nextword
