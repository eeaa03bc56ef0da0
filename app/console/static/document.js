// A document of a Library, as a citation opens it: its title and text, with the cited
// passage (?passage=, as the citation quotes it) marked and scrolled to.
import { $, api, el, start } from "/static/console.js";

const main = $("#main");
const library = main.dataset.libraryId;
const documentId = main.dataset.documentId;

// Where the quoted passage lies in the text: the quote has its whitespace made single
// and may end with "…" where it was shortened, so match word by word.
function locate(text, passage) {
  const words = passage.replace(/…$/, "").split(/\s+/).filter(Boolean);
  if (!words.length) return null;
  const escaped = words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const found = new RegExp(escaped.join("\\s+")).exec(text);
  return found ? [found.index, found.index + found[0].length] : null;
}

function show(doc, passage) {
  $("#document-title").textContent = doc.title || "Untitled document";
  document.title = `${doc.title || "Document"} · svc`;
  $("#document-about").textContent = `${doc.media_type}, ${doc.size_bytes} bytes`;
  const text = doc.content || "";
  const span = passage ? locate(text, passage) : null;
  if (passage && !span) {
    const note = $("#passage-note");
    note.hidden = false;
    note.replaceChildren("The cited passage is no longer in this document. It read: ",
      el("q", {}, passage));
  }
  if (!span) {
    $("#document-text").replaceChildren(text);
    return;
  }
  const cited = el("mark", { id: "cited", tabindex: "-1" }, text.slice(span[0], span[1]));
  $("#document-text").replaceChildren(text.slice(0, span[0]), cited, text.slice(span[1]));
  cited.scrollIntoView({ block: "center" });
  cited.focus({ preventScroll: true });
}

start(async () => {
  const passage = new URLSearchParams(location.search).get("passage");
  show(await api("GET", `/api/libraries/${encodeURIComponent(library)}/documents/${encodeURIComponent(documentId)}`), passage);
  // Back to the very conversation the citation was in, when it came from one.
  const from = document.referrer ? new URL(document.referrer) : null;
  if (from && from.origin === location.origin && from.pathname === "/chat") {
    $("#back").setAttribute("href", from.pathname + from.search);
  }
});
