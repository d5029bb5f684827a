// Reading text files into documents of words, for training and evaluation.
//
// A document ends at a line `<|endoftext|>` (the separator of the TinyStories
// files), at a blank line, and at the end of each file. Words are the
// tokenizer's (text/tokenizer.h), so training sees exactly what prediction sees.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace nextword {

using Document = std::vector<std::string>;

// The largest text file read (train, eval, score --document): 4 GiB.
constexpr size_t kMaxTextBytes = size_t{4} << 30;

// A whole text file. Throws Error(kIo) naming the file when it cannot be
// read, Error(kInput) when it holds a NUL byte or passes kMaxTextBytes (a
// pipe or device: half the free memory, if less), found while reading.
std::string read_text_file(const std::string& path);

// Throws Error(kIo) naming the file that cannot be read. Empty documents are dropped.
std::vector<Document> read_documents(const std::vector<std::string>& paths,
                                     const TokenizerOptions& options);

// The same rules on text already in memory.
void split_documents(const std::string& text, const TokenizerOptions& options,
                     std::vector<Document>& out);

}  // namespace nextword
