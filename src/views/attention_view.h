// Pictures of attention: which earlier words each word pulled from.
//
// One T x T matrix is shown at a time: a head of a layer, or the mean over a
// layer's heads, or over every layer. Rows are the words doing the pulling
// (the queries), columns the words pulled from (the keys), as in the
// attention article's heatmaps.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "model/model_file.h"
#include "predict/predictor.h"

namespace nextword::views {

// -1 means "the mean over all of them".
struct AttentionChoice {
  int layer = -1;
  int head = -1;
  std::string describe(const Config& c) const;  // "layer 2 of 4, mean of 4 heads"
};

// Characters a UTF-8 word takes on screen (one per code point; good enough
// for the words of a vocabulary).
size_t width_of(const std::string& s);
// The first `width` characters of s, padded with spaces to `width`.
std::string fit(const std::string& s, size_t width);

// A token as text and pictures show it: a word as it is; a subword model's
// piece with its leading space as U+2581 (sentencepiece's own mark) and
// control bytes escaped ("\\n"), so that a piece reads as a piece and a
// row stays one line.
std::string shown_token(const Model& model, std::string_view token);
std::vector<std::string> shown_tokens(const Model& model, const std::vector<std::string>& tokens);
// What the model's tokens are, for headings: "word" or "piece".
std::string token_noun(const Model& model);
// Before a token named in a heading: "piece " ("pieces " for several) for
// a subword model's, nothing for a word-level model's.
std::string piece_label(const Model& model, bool several = false);

// The chosen [T, T] matrix from p.attention ([L][h][T][T]).
std::vector<float> attention_matrix(const Config& c, const Prediction& p, AttentionChoice choice);
// True when query q cannot see key k (a later word, in a causal model).
bool masked(const Config& c, size_t q, size_t k);
// The n keys (at most) that query q attends to most, from its row [T] of an
// attention matrix: strongest first, the earlier key first on a tie; masked
// keys never.
std::vector<size_t> strongest_keys(const Config& c, std::span<const float> row, size_t q, size_t n);
// What the HTML page shows on hovering row q: its four strongest keys,
// "\u201conce\u201d attends to: <bos> 61%, once 39%".
std::string attends_to(const Config& c, const std::vector<std::string>& words,
                       const std::vector<float>& m, size_t q);

enum class Color { kNone, k256, kTrue };
// What stdout can show: none when NO_COLOR is set, stdout is not a terminal
// or TERM is dumb; true color when COLORTERM says so; else 256 colors.
Color terminal_color();

// A heatmap for the terminal: Unicode shades, colored when `color` allows.
std::string attention_text(const Model& model, const Prediction& p, AttentionChoice choice,
                           Color color);
// The same heatmap as a standalone SVG document (no fonts, scripts or links).
std::string attention_svg(const Model& model, const Prediction& p, AttentionChoice choice);
// {"tokens", "attention": [layer][1][head][query][key]}: what bertviz's
// head_view takes (one tensor per layer of shape [batch, heads, T, T]).
std::string attention_bertviz(const Model& model, const Prediction& p);
// After the predictions: the words the last word attended to most in each
// layer (mean over heads), in plain words.
std::vector<std::string> explain_lines(const Model& model, const Prediction& p);

}  // namespace nextword::views
