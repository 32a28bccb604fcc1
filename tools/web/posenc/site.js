/* The site's script (tools/build_site.py writes the pages):
 * - the search over every page, offline: MiniSearch (from npm, _static/minisearch.js) over the index that
 *   build_site.py writes (search-index.js: each section's heading, prose and code). A notebook's exact title, then
 *   a section's exact heading, comes first; then the rest, ranked by BM25 (any word matches, the best first), a typo
 *   forgiven (fuzzy), the last word as a prefix while it is typed. Arrow keys move through the results, Enter
 *   opens one; the page opened highlights the words found (?highlight=...).
 * - the contents folded behind the top bar's button on a narrow screen;
 * - a copy button on each code cell, never over its code (a box that scrolls sideways gives it a strip above);
 * - display math and wide tables that overflow scroll in their own box, and take the keyboard's focus to do so. */
(function () {
  "use strict";
  const script = document.currentScript;
  const root = (script && script.dataset.root) || "";
  const SHOWN = 10;  // results shown at first; a button shows the rest
  // Words too common to rank by (a query of them alone still finds nothing rather than everything).
  const STOP = new Set(("a an and are as at be but by for from has have in into is it its of on or so than that the "
    + "their them then there these they this to was we were what when which while who will with you your").split(" "));
  const fold = text => text.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
  const WORD = /[\p{L}\p{N}_]+/gu;
  // Words of a text: "sinusoidal_encoding" counts as itself and as "sinusoidal" and "encoding".
  function tokenize(text) {
    const out = [];
    for (const word of fold(text).match(WORD) || []) {
      out.push(word);
      if (word.includes("_")) for (const part of word.split("_")) if (part.length > 1) out.push(part);
    }
    return out;
  }
  const escape = text => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // A word that starts with one of the terms (the whole word is marked).
  const termPattern = terms => new RegExp(
    `(?<![\\p{L}\\p{N}_])(?:${terms.map(escape).join("|")})[\\p{L}\\p{N}_]*`, "giu");

  let engine = null, docs = null;
  function prepare() {
    const index = window.POSENC_SEARCH_INDEX;
    if (!index || !window.MiniSearch) return false;
    docs = index.sections.map((section, n) => {
      const page = index.pages[section.page];
      return {n, title: page.title, url: page.url, anchor: section.id, heading: section.heading,
              text: section.text, code: section.code || "", words: fold(section.heading).match(WORD) || []};
    });
    engine = new window.MiniSearch({
      idField: "n",
      fields: ["title", "heading", "text", "code"],
      tokenize,
      processTerm: term => (STOP.has(term) ? null : term),
      searchOptions: {
        boost: {heading: 3, title: 1.5, text: 1, code: 0.6},
        prefix: (term, i, terms) => i === terms.length - 1 && term.length > 1,
        fuzzy: term => (term.length >= 5 ? 0.2 : false),
        combineWith: "OR",
      },
    });
    engine.addAll(docs);
    return true;
  }

  // Edits between two words (Levenshtein), at most `most` + 1 (counting stops there).
  function edits(a, b, most) {
    if (Math.abs(a.length - b.length) > most) return most + 1;
    let row = Array.from({length: b.length + 1}, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++)
        next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (Math.min(...next) > most) return most + 1;
      row = next;
    }
    return row[b.length];
  }

  /* 2 if the query is the section's notebook title, 1 if it is the section's heading, else 0: word for word, in any
   * case and punctuation, its number ("3.") left out or not, a typo forgiven in a long word as the search forgives it. */
  function exactTitle(words, doc) {
    const heading = doc.words;
    const typos = word => (word.length >= 5 ? Math.floor(0.2 * word.length) : 0);
    const same = title => title.length === words.length
      && title.every((word, k) => edits(word, words[k], typos(words[k])) <= typos(words[k]));
    const matches = same(heading) || (/^\d+$/.test(heading[0] || "") && same(heading.slice(1)));
    return matches ? (doc.heading === doc.title ? 2 : 1) : 0;
  }

  /* The sections for a query, best first: a notebook whose title the query is, then a section whose heading it is
   * (`exactTitle`); then those that hold the query's words as a phrase ("attention is all you need"), then the
   * others, each group by BM25 over the words (any word matches). */
  function search(query) {
    if (!engine && !prepare()) return [];
    const words = fold(query).match(WORD) || [];
    const phrase = words.length > 1 && new RegExp(words.map(escape).join("[^\\p{L}\\p{N}]+"), "iu");
    const found = engine.search(query).map(result => {
      const doc = docs[result.id];
      return {doc, terms: result.terms, score: result.score, exact: words.length ? exactTitle(words, doc) : 0,
              phrase: Boolean(phrase && phrase.test(fold(`${doc.heading} ${doc.text}`)))};
    });
    return found.sort((a, b) => (b.exact - a.exact) || (b.phrase - a.phrase) || (b.score - a.score));
  }

  // Text with the words that start with a term marked, as nodes (no HTML is parsed).
  function marked(text, terms) {
    const nodes = [];
    let last = 0;
    for (const match of text.matchAll(termPattern(terms))) {
      if (match.index > last) nodes.push(document.createTextNode(text.slice(last, match.index)));
      const mark = document.createElement("mark");
      mark.textContent = match[0];
      nodes.push(mark);
      last = match.index + match[0].length;
    }
    if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
    return nodes;
  }

  // About 160 characters of the section's prose around the first word found, cut at spaces; or, when only its code
  // holds the words, the line of code that does; or the prose's start.
  function snippet(doc, terms) {
    const span = document.createElement("span");
    span.className = "posenc-snippet";
    const pattern = termPattern(terms);
    const inText = doc.text.search(pattern);
    if (inText < 0 && doc.code) {
      const line = doc.code.split("\n").find(l => l.search(termPattern(terms)) >= 0);
      if (line) {
        const code = document.createElement("code");
        code.append(...marked(line.trim().slice(0, 160), terms));
        span.append(code);
        return span;
      }
    }
    let start = Math.max(0, inText - 60);
    if (start) start = doc.text.indexOf(" ", start) + 1 || start;
    let end = Math.min(doc.text.length, start + 170);
    if (end < doc.text.length) end = doc.text.lastIndexOf(" ", end) > start ? doc.text.lastIndexOf(" ", end) : end;
    span.append(...marked((start ? "… " : "") + doc.text.slice(start, end) + (end < doc.text.length ? " …" : ""),
      terms));
    return span;
  }

  function item({doc, terms}) {
    const li = document.createElement("li");
    const link = document.createElement("a");
    const words = encodeURIComponent([...new Set(terms)].join(" "));
    link.href = `${root}${doc.url}?highlight=${words}#${encodeURIComponent(doc.anchor)}`;
    const name = document.createElement("span");
    name.className = "posenc-result-title";
    name.textContent = doc.heading === doc.title ? doc.title : `${doc.title}: ${doc.heading}`;
    link.append(name, snippet(doc, terms));
    li.append(link);
    return li;
  }

  function show(box, results, status) {
    const query = box.value.trim();
    results.replaceChildren();
    status.textContent = "";
    if (!query) return;
    const hits = search(query);
    if (!hits.length) {
      const none = document.createElement("li");
      none.textContent = `Nothing found for "${query}".`;
      results.append(none);
      status.textContent = "No results.";
      return;
    }
    status.textContent = `${hits.length} result${hits.length > 1 ? "s" : ""}.`;
    results.append(...hits.slice(0, SHOWN).map(item));
    if (hits.length > SHOWN) {
      const li = document.createElement("li");
      const more = document.createElement("button");
      more.type = "button";
      more.className = "posenc-more";
      more.textContent = `Show all ${hits.length} results`;
      more.addEventListener("click", () => {
        const next = hits.slice(SHOWN).map(item);
        li.replaceWith(...next);
        next[0].querySelector("a").focus();
      });
      li.append(more);
      results.append(li);
    }
  }

  function startSearch() {
    const box = document.getElementById("posenc-search-box");
    const results = document.getElementById("posenc-search-results");
    const status = document.getElementById("posenc-search-status");
    if (!box || !results || !status) return;
    box.addEventListener("input", () => show(box, results, status));
    const stops = () => Array.from(results.querySelectorAll("a, button"));
    box.addEventListener("keydown", event => {
      const first = stops()[0];
      if (event.key === "ArrowDown" && first) {
        event.preventDefault();
        first.focus();
      } else if (event.key === "Enter" && first && first.tagName === "A") {
        event.preventDefault();
        window.location.href = first.href;
      } else if (event.key === "Escape" && box.value) {
        event.stopPropagation();  // a first Escape clears the query; the next folds the contents away (phone)
        box.value = "";
        show(box, results, status);
      }
    });
    results.addEventListener("keydown", event => {
      const all = stops(), at = all.indexOf(document.activeElement);
      if (at < 0) return;
      if (event.key === "ArrowDown" && at + 1 < all.length) {
        event.preventDefault();
        all[at + 1].focus();
      } else if (event.key === "ArrowUp") {
        event.preventDefault();
        (at ? all[at - 1] : box).focus();
      } else if (event.key === "Escape") {
        box.focus();
      }
    });
  }

  /* The words a search found, marked on the page it opened (in the text and the code, not in outputs or math). */
  function highlight() {
    const words = new URLSearchParams(window.location.search).get("highlight");
    const main = document.querySelector("main");
    if (!words || !main) return;
    const terms = words.split(/\s+/).filter(Boolean);
    if (!terms.length) return;
    const skip = "script, style, mark, button, .jp-OutputArea, .jupyter-widgets, .MathJax, .MathJax_CHTML, "
      + ".MathJax_Display, .MJXc-display, .MathJax_Preview, .anchor-link";
    const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {
      acceptNode: node => (node.parentElement.closest(skip) || node.nodeValue.includes("$")
        || node.nodeValue.search(termPattern(terms)) < 0 ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    const nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    for (const node of nodes) {
      const parts = marked(node.nodeValue, terms);
      parts.forEach(part => { if (part.tagName === "MARK") part.className = "posenc-hit"; });
      node.replaceWith(...parts);
    }
    const note = document.createElement("p");
    note.className = "posenc-highlighted";
    note.setAttribute("role", "status");
    note.append(`${nodes.length ? "Highlighted" : "Not found on this page"}: `);
    const shown = document.createElement("mark");
    shown.textContent = terms.join(" ");
    const clear = document.createElement("button");
    clear.type = "button";
    clear.textContent = "Clear the highlights";
    clear.addEventListener("click", () => {
      main.querySelectorAll("mark.posenc-hit").forEach(mark => mark.replaceWith(mark.textContent));
      main.normalize();
      note.remove();
    });
    note.append(shown, " ", clear);
    main.before(note);
    const target = window.location.hash && document.getElementById(decodeURIComponent(window.location.hash.slice(1)));
    if (target) target.scrollIntoView();
  }

  /* The contents behind the top bar's button on a narrow screen (site.css folds them). */
  function startContents() {
    const button = document.querySelector(".posenc-contents-button");
    const sidebar = document.getElementById("posenc-sidebar");
    if (!button || !sidebar) return;
    const open = value => {
      sidebar.classList.toggle("posenc-open", value);
      button.setAttribute("aria-expanded", String(value));
    };
    button.addEventListener("click", () => {
      const value = button.getAttribute("aria-expanded") !== "true";
      open(value);
      if (value) document.getElementById("posenc-search-box").focus();
    });
    sidebar.addEventListener("click", event => { if (event.target.closest("a")) open(false); });
    document.addEventListener("keydown", event => {
      if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
        open(false);
        button.focus();
      }
    });
  }

  /* A copy button on each code cell: the cell's source, as written (the In [n] prompt is not part of it). */
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    const area = document.createElement("textarea");  // file:// pages and older browsers
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.append(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    return done ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function startCopyButtons() {
    document.querySelectorAll(".jp-CodeCell .jp-Cell-inputWrapper").forEach((area, k) => {
      const pre = area.querySelector(".jp-InputArea-editor pre");
      if (!pre || area.querySelector(".posenc-copy")) return;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "posenc-copy";
      button.textContent = "Copy";
      button.setAttribute("aria-label", `Copy code cell ${k + 1}`);
      button.addEventListener("click", () => {
        const source = pre.textContent.replace(/\n$/, "");
        copyText(source).then(() => {
          button.textContent = "Copied";
          button.dataset.copied = "true";
        }, () => { button.textContent = "Select and copy"; })
          .finally(() => setTimeout(() => { button.textContent = "Copy"; }, 2000));
      });
      area.append(button);
    });
  }

  /* A code box wider than the screen scrolls sideways, and its lines would pass under the copy button: that button
   * gets a strip of its own above the code's first line (site.css: .posenc-copy-strip). Measured again on resize. */
  function placeCopyButtons() {
    const areas = Array.from(document.querySelectorAll(".jp-CodeCell .jp-Cell-inputWrapper"));
    areas.forEach(area => area.classList.remove("posenc-copy-strip"));
    const wide = areas.filter(area => {
      const editor = area.querySelector(".jp-InputArea-editor");
      return editor && area.querySelector(".posenc-copy") && editor.scrollWidth > editor.clientWidth + 1;
    });
    wide.forEach(area => area.classList.add("posenc-copy-strip"));
  }

  /* Boxes that scroll sideways on this screen take the keyboard's focus (to scroll them without a mouse). */
  function scrollBoxes() {
    document.querySelectorAll(".jp-RenderedMarkdown table").forEach(table => {
      if (table.parentElement.classList.contains("posenc-scroll")) return;
      const box = document.createElement("div");
      box.className = "posenc-scroll";
      table.replaceWith(box);
      box.append(table);
    });
    document.querySelectorAll(".MathJax_Display, .MJXc-display, .posenc-scroll").forEach(box => {
      if (box.scrollWidth > box.clientWidth + 1) {
        box.tabIndex = 0;
        if (!box.hasAttribute("role")) box.setAttribute("role", "group");
        if (!box.hasAttribute("aria-label")) box.setAttribute("aria-label", box.matches(".MathJax_Display, .MJXc-display")
          ? "formula, scrolls sideways" : "table, scrolls sideways");
      } else if (box.tabIndex === 0 && box.getAttribute("role") === "group") {
        box.removeAttribute("tabindex");
      }
    });
  }

  function startOutline() {
    // The open page's own section stays highlighted in the contents as the reader scrolls.
    const links = Array.from(document.querySelectorAll(".posenc-sections a"));
    const targets = links.map(link => document.getElementById(decodeURIComponent(link.hash.slice(1)))).filter(Boolean);
    if (targets.length && "IntersectionObserver" in window) {
      const observer = new IntersectionObserver(entries => {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          links.forEach(link => link.removeAttribute("aria-current"));
          const link = links.find(l => decodeURIComponent(l.hash.slice(1)) === entry.target.id);
          if (link) link.setAttribute("aria-current", "location");
        }
      }, {rootMargin: "0px 0px -70% 0px"});
      targets.forEach(target => observer.observe(target));
    }
  }

  // What waits for MathJax (it typesets after the page loads): marks must not split a formula's TeX, and a formula's
  // width is known only once it is typeset.
  function afterMath(work) {
    const hub = window.MathJax && window.MathJax.Hub;
    if (hub && hub.Queue) hub.Queue(work);
    else work();
  }

  function start() {
    startSearch();
    startContents();
    startCopyButtons();
    placeCopyButtons();
    startOutline();
    window.addEventListener("load", () => afterMath(() => {
      placeCopyButtons();  // with the page's fonts
      scrollBoxes();
      highlight();
    }));
    window.addEventListener("resize", () => {
      placeCopyButtons();
      scrollBoxes();
    });
  }

  window.posencSearch = query => search(query).map(({doc}) => doc);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
