/* The search over every page of the site, offline: the index (search-index.js, written by tools/build_site.py)
 * holds every section of every notebook; a query finds the sections holding every one of its words (as the start
 * of a word: "equivar" finds "equivariant"), headings counting most. Results are links to the section. */
(function () {
  "use strict";
  const script = document.currentScript;
  const root = (script && script.dataset.root) || "";
  const words = text => (text.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .match(/[\p{L}\p{N}_]+/gu) || []);
  let prepared = null;

  function prepare() {
    const index = window.POSENC_SEARCH_INDEX;
    if (!index) return [];
    return index.sections.map(section => {
      const page = index.pages[section.page];
      return {section, page, heading: words(`${page.title} ${section.heading}`), body: words(section.text)};
    });
  }

  function count(list, term) {
    let n = 0;
    for (const word of list) if (word.startsWith(term)) n += 1;
    return n;
  }

  function search(query) {
    prepared = prepared || prepare();
    const terms = words(query);
    if (!terms.length) return [];
    const found = [];
    for (const entry of prepared) {
      let score = 0;
      for (const term of terms) {
        const inHeading = count(entry.heading, term), inBody = count(entry.body, term);
        if (!inHeading && !inBody) { score = 0; break; }
        score += 10 * inHeading + Math.min(inBody, 20);
      }
      if (score) found.push({entry, score});
    }
    return found.sort((a, b) => b.score - a.score).slice(0, 12).map(({entry}) => entry);
  }

  function snippet(text, terms) {
    const lower = text.toLowerCase();
    let at = -1;
    for (const term of terms) { at = lower.indexOf(term); if (at >= 0) break; }
    const start = Math.max(0, at - 50);
    return (start ? "…" : "") + text.slice(start, start + 130) + (text.length > start + 130 ? "…" : "");
  }

  function show(box, results) {
    const query = box.value.trim();
    results.replaceChildren();
    if (!query) return;
    const hits = search(query);
    if (!hits.length) {
      const none = document.createElement("li");
      none.textContent = `Nothing found for "${query}".`;
      results.append(none);
      return;
    }
    for (const {section, page} of hits) {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = `${root}${page.url}#${section.id}`;
      link.textContent = section.heading === page.title ? page.title : `${page.title}: ${section.heading}`;
      const text = document.createElement("span");
      text.className = "posenc-snippet";
      text.textContent = snippet(section.text, words(query));
      item.append(link, text);
      results.append(item);
    }
  }

  function start() {
    const box = document.getElementById("posenc-search-box");
    const results = document.getElementById("posenc-search-results");
    if (!box || !results) return;
    box.addEventListener("input", () => show(box, results));
    box.addEventListener("keydown", event => {
      if (event.key === "Enter") {
        const first = results.querySelector("a");
        if (first) window.location.href = first.href;
      }
    });
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

  window.posencSearch = search;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
