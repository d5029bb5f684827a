// The drawing code of both attention pages: `nextword attention -f html`'s
// static page (src/views/attention_page.html) and `nextword serve`'s live
// page (src/serve/page.html), embedded in each at build time. It only picks
// and draws: the data D is computed in C++ (src/views/attention_page.cpp),
// put in the static page, or answered by POST /v1/attention with "format":
// "page". The elements it draws into have these ids: layers, heads, map,
// grid, why, predictions, lens, lens-note, attribution, attribution-note.
"use strict";
function nextwordView() {
  let D = null, layer = 0, head = 0, grid = false, hovered = null;
  const $ = id => document.getElementById(id);
  // An element with a class and text, appended to parent.
  function add(parent, tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    parent.appendChild(e);
    return e;
  }
  function bar(parent, className, width) {
    add(parent, "span", className).style.width = width + "px";
  }
  function buttons(id, labels, get, set, extra) {
    const box = $(id);
    box.textContent = "";
    labels.concat(extra ? [extra] : []).forEach((label, i) => {
      const b = add(box, "button", i === get() ? "on" : "", label);
      b.onclick = () => { set(i); attention(); };
    });
  }
  // One heatmap: rows are the words pulling (queries), columns the words
  // pulled from (keys); a row's hover line says whom it attends to most.
  function heatmap(table, view, small) {
    table.textContent = "";
    const header = table.insertRow();
    header.appendChild(document.createElement("th"));
    D.tokens.forEach(t => add(header, "th", "col", small ? "" : t));
    view.rows.forEach((visible, q) => {
      const row = table.insertRow();
      add(row, "th", "row", D.tokens[q]);
      row.onmouseenter = () => { hovered = q; explain(view); };
      D.tokens.forEach((key, k) => {
        const cell = add(row.insertCell(), "div", small ? "cell small" : "cell");
        const pair = D.tokens[q] + " \u2192 " + key + ": ";
        if (k < visible.length) {
          const [fill, ink, label, exact] = D.scale[visible[k]];
          cell.style.background = fill;
          cell.style.color = ink;
          if (!small) cell.textContent = label;
          cell.title = pair + exact;
        } else {
          cell.className += " masked";
          cell.title = pair + "masked (a later word)";
        }
      });
    });
  }
  // The hovered row (the last word unless another is hovered) of every table.
  function explain(view) {
    const q = hovered === null || hovered >= D.tokens.length ? D.tokens.length - 1 : hovered;
    document.querySelectorAll("tr.hot").forEach(r => r.classList.remove("hot"));
    document.querySelectorAll("#map, #grid table").forEach(t => t.rows[q + 1].classList.add("hot"));
    $("why").textContent = view.why[q];
  }
  function attention() {
    const heads = D.heads.length;
    buttons("layers", D.layers, () => layer, v => { layer = v; });
    buttons("heads", D.heads, () => (grid ? heads : head), v => {
      grid = v === heads;
      if (!grid) head = v;
    }, D.heads.length > 2 ? "grid" : undefined);
    const map = $("map"), box = $("grid");
    map.hidden = grid;
    box.hidden = !grid;
    box.textContent = "";
    if (grid) {
      D.views[layer].forEach((view, h) => {
        if (h === 0) return;  // the mean is its own button
        const figure = add(box, "figure");
        heatmap(add(figure, "table"), view, true);
        add(figure, "figcaption", "", "head " + D.heads[h]);
      });
      explain(D.views[layer][0]);
    } else {
      heatmap(map, D.views[layer][head], false);
      explain(D.views[layer][head]);
    }
  }
  function predictions() {
    const list = $("predictions");
    list.textContent = "Next word: ";
    D.predictions.forEach(p => {
      const item = add(list, "div", "", p.text);
      bar(item, "bar", parseInt(p.bar, 10));
    });
  }
  function lens() {
    const L = D.lens, table = $("lens");
    table.textContent = "";
    const word = L.word === null ? "the predicted word" : "\u201c" + L.word + "\u201d";
    const steps = L.layers.length > 1 ? "at each step: after the embedding, after each " +
      "layer\u2019s attention block (1.mid, \u2026) and after each layer" : "after the embedding " +
      "(the model has no layers)";
    $("lens-note").textContent = "What the model would predict after \u201c" +
      L.token + "\u201d if the residual stream were already final " + steps + ". Outlined: " + word +
      ", the word it predicts in the end.";
    const header = table.insertRow();
    ["step", "rank of " + word, "its probability", "top words"].forEach(t => add(header, "th", "", t));
    header.cells[3].colSpan = Math.max(1, ...L.layers.map(s => s.top.length));
    L.layers.forEach(s => {
      const row = table.insertRow(), name = String(s.layer);
      row.className = name.endsWith(".mid") ? "step mid" : "step";
      add(row, "td", "name", name);
      add(row, "td", "num rank", s.final_word_rank > 0 ? s.final_word_rank : "\u2013");
      const final = add(row, "td", "final");
      if (s.final_word_rank > 0) {
        add(final, "span", "p", D.scale[s.final_look][3]);
        bar(final, "bar", Math.round(s.final_word_probability * 100));
        final.title = word + ": " + s.final_word_probability;
      }
      s.top.forEach((t, i) => {
        const [fill, ink, , exact] = D.scale[s.looks[i]];
        const chip = add(row.insertCell(), "div", t.word === L.word ? "chip final" : "chip");
        chip.style.background = fill;
        chip.style.color = ink;
        chip.title = t.word + ": " + t.probability;
        add(chip, "span", "word", t.word);
        chip.appendChild(document.createTextNode(" "));
        add(chip, "span", "p", exact);
      });
    });
  }
  function attribution() {
    const A = D.attribution, note = $("attribution-note"), table = $("attribution");
    table.textContent = "";
    if (A === null) { note.textContent = "The vocabulary has no word to predict."; return; }
    note.textContent = "The logit of \u201c" + A.word + "\u201d after \u201c" + D.lens.token +
      "\u201d: " + A.logit.toFixed(4) + " = the " + A.parts.length +
      (A.parts.length === 1 ? " part" : " parts") + " below + the constant " +
      A.constant.toFixed(4) + (A.norm ? " (the final norm\u2019s bias and the classifier\u2019s " +
      "bias). A part\u2019s bar is what it adds through the final norm (its scale as at this " +
      "input) and the classifier" : " (the classifier\u2019s bias). A part\u2019s bar is what it " +
      "adds through the classifier") + "; largest first.";
    const legend = add(note, "span", "legend");
    bar(legend, "bar pos", 14);
    legend.appendChild(document.createTextNode("adds to the logit"));
    bar(legend, "bar neg", 14);
    legend.appendChild(document.createTextNode("takes from it"));
    const largest = A.parts.length ? Math.abs(A.parts[0].value) : 0;
    A.parts.forEach(p => {
      const row = table.insertRow(), sign = p.value < 0 ? "neg" : "pos";
      const width = largest > 0 ? Math.round(Math.abs(p.value) / largest * 200) : 0;
      row.className = "part " + sign;
      row.title = p.name + ": " + p.value;
      add(row, "td", "name", p.name);
      add(row, "td", "num value", (p.value < 0 ? "" : "+") + p.value.toFixed(4));
      const negative = add(row, "td", "side neg"), positive = add(row, "td", "side pos");
      bar(p.value < 0 ? negative : positive, "bar " + sign, width);
    });
  }
  return {
    // Draws D; the layer and head chosen stay chosen while they exist
    // (the first D shows its own choice, the last layer's mean).
    draw(data) {
      if (D === null || layer >= data.layers.length || head >= data.heads.length) {
        layer = data.layer;
        head = data.head;
      }
      D = data;
      attention();
      predictions();
      lens();
      attribution();
    },
  };
}
