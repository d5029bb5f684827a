// eval/keystrokes.h: keystroke savings worked by hand on the fruit model.
#include "eval/keystrokes.h"

#include <catch2/catch.hpp>

#include "test_models.h"

using namespace nextword;

using testing::fruit;

TEST_CASE("typing 'banana apple pie' with one suggestion", "[ksr]") {
  // banana: "" offers Apple (uniform: the lowest id), "b" offers Banana: 1 typed + 1 selection.
  // apple: "banana " offers pie (logit 4), "banana a" offers apple: 1 + 1.
  // pie: "banana apple " offers pie: 1 selection. Spaces come with selections.
  Completer c(fruit(), nullptr, {.k = 1});
  const KeystrokeCount k = simulate_typing("banana apple pie", c);
  CHECK(k.ki == 2);
  CHECK(k.ks == 3);
  CHECK(k.kn == 17);  // 14 characters + 3 spaces
  CHECK(k.words == 3);
  CHECK(k.selected == 3);
  CHECK(k.queries == 5);
  CHECK(k.ksr() == Approx(1 - 5.0 / 17));
}

TEST_CASE("punctuation is typed, and so is the space after it", "[ksr]") {
  // "(banana": "(" typed; "(" is read as <unk>, whose embedding is 0, so the
  //   logits are all 0 and "apple" (lowest id) is offered; "b" typed, banana
  //   selected: ki 2, ks 1.
  // "apple": "(banana " offers pie (banana attends to itself: pie's logit
  //   2 * 2e^4/(1+e^4)); "a" typed, apple selected: ki 1, ks 1.
  // "pie.": "(banana apple " offers pie: ks 1; "." and the space typed: ki 2.
  // "--": no word: 2 characters and a space, ki 3.
  // "store" (after two newlines, read as spaces): the last token "-" is <unk>,
  //   its query 0 attends evenly to all 7 tokens, (3/7, 1/7): pie 6/7 beats
  //   store 2/7; "s" typed, store selected: ki 1, ks 1.
  Completer c(fruit(), nullptr, {.k = 1});
  const KeystrokeCount k = simulate_typing("(banana apple pie. --\n\nstore", c);
  CHECK(k.ki == 9);
  CHECK(k.ks == 4);
  CHECK(k.kn == 8 + 6 + 5 + 3 + 6);
  CHECK(k.words == 4);
  CHECK(k.queries == 7);
  CHECK(k.ksr() == Approx(1 - 13.0 / 28));
}

TEST_CASE("without suggestions nothing is saved; a word never offered is typed whole", "[ksr]") {
  Completer c(fruit(), nullptr, {.k = 1});
  const KeystrokeCount k = simulate_typing("zzz qq", c);
  CHECK(k.ks == 0);
  CHECK(k.ki == k.kn);
  CHECK(k.kn == 7);
  CHECK(k.ksr() == 0);
  CHECK(simulate_typing("", c).kn == 0);
}

TEST_CASE("a word counts as offered in its own spelling, up to case", "[ksr]") {
  // "don’t" with "don't" learned (the fruit model's one d word), k = 1:
  // "" offers apple (uniform logits, the lowest id); "d", "do" and "don" offer
  // don't, which is not don’t; after "don’" the writer's apostrophe is
  // curly and don’t is offered: 4 typed + 1 selection of 6.
  Completer c(fruit(), nullptr, {.k = 1, .learn = true});
  c.learn("don't");
  const KeystrokeCount k = simulate_typing("Don\xE2\x80\x99t", c);
  CHECK(k.ki == 4);
  CHECK(k.ks == 1);
  CHECK(k.kn == 6);
  CHECK(k.queries == 5);
}
