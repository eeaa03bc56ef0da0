// The API's field paths and messages in a form's own words: which control a path such
// as "hours.0.closes_minute", "tools.2" or "secret_header_name" points at, and its
// message reworded with the labels a person sees. No requests and no page state here:
// console.js marks the control and shows the words.

// The API names a field as "hours[0].closes_minute" (or pydantic's "hours.0.closes_minute").
export function fieldPath(field) {
  return String(field).replace(/\.(\d+)(?=\.|$)/g, "[$1]");
}

// Controls answering to a field: data-field holds one or more paths, space-separated
// (a file input answers for both "content" and "media_type").
const answering = (word) => `[data-field~="${CSS.escape(word)}"], [name="${CSS.escape(word)}"]`;

// The n-th item of a list the form sends: the n-th element marked data-row="list"
// (rows in the order sent), or the n-th ticked box marked data-list="list" (a list
// sent as the boxes ticked).
function item(form, list, n) {
  const rows = form.querySelectorAll(`[data-row="${CSS.escape(list)}"]`);
  if (rows.length) return rows[n] || null;
  return form.querySelectorAll(`[data-list="${CSS.escape(list)}"]:checked`)[n] || null;
}

// The control a field path points at in a form: one marked data-field with the whole
// path, or with the path's name inside the list item the path indexes, else the control
// of that name, else the first box of a ticked list of that name.
export function fieldOf(form, field) {
  const path = fieldPath(field);
  const direct = form.querySelector(`[data-field~="${CSS.escape(path)}"]`) || form.elements.namedItem(path);
  if (direct && direct.nodeType === 1) return direct;
  const indexed = /^([^.[\]]+)\[(\d+)\]\.?(.*)$/.exec(path);
  if (indexed) {
    const row = item(form, indexed[1], Number(indexed[2]));
    const inner = indexed[3] || null;
    if (row && !inner) return row.matches("input, select, textarea") ? row : row.querySelector("input, select, textarea, button");
    if (row) return row.querySelector(answering(inner));
  }
  const name = path.split(/[.[]/)[0];
  const named = form.elements.namedItem(name);
  if (named && named.nodeType === 1) return named;
  return form.querySelector(`[data-list="${CSS.escape(name)}"]`);
}

// A control's name as a person reads it: its data-label, its label, or its aria-label.
export function labelOf(control) {
  if (control.dataset.label) return control.dataset.label;
  const label = control.labels && control.labels[0];
  if (label) return label.textContent.trim().replace(/\s*\(.*\)$/, "");
  return control.getAttribute("aria-label") || control.name || "This field";
}

// A label inside a sentence: "The last day" becomes "the last day", "API key" stays.
function lower(label) {
  return /^[A-Z][a-z]/.test(label) ? label.charAt(0).toLowerCase() + label.slice(1) : label;
}

// What follows a field's name to make a sentence of it ("url must be …"); anything
// else follows a colon ("title: 1 to 200 characters").
const VERB = /^(must|is|are|has|have|cannot|can|may|needs?|should)\b/;

// A sentence starts with a capital, unless it starts with a setting's key
// ("telephony.max_concurrent_calls"), which is written as it is typed.
function sentence(text) {
  const trimmed = text.trim();
  const key = /^[a-z][a-z0-9_]*\.[a-z]/.test(trimmed);
  const capital = key ? trimmed : trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

// The API's message in the form's words: "hours[0].closes_minute: must be after
// opens_minute" becomes "Closing time must be after opening time", naming every field
// by its label (a sibling in the same row first, for a list's item).
export function inWords(form, error, control) {
  const path = error.field ? fieldPath(error.field) : "";
  // A list item's own name ("closes_minute" of "hours[0].closes_minute"); a dotted
  // key such as "telephony.max_concurrent_calls" is one name, not a path.
  const short = /\[\d+\]/.test(path) ? path.split(/[.[\]]/).filter(Boolean).pop() : path;
  let text = String(error.message || "");
  const scope = (control && control.closest("[data-row]")) || form;
  const name = (word) => {
    if (control && (word === path || word === short || word === error.field)) return lower(labelOf(control));
    const other = scope.querySelector(answering(word)) || form.querySelector(answering(word))
      || (form.elements && form.elements.namedItem(word));
    return other && other.nodeType === 1 ? lower(labelOf(other)) : null;
  };
  for (const prefix of [`${error.field}: `, `${path}: `]) {
    if (!error.field || !text.startsWith(prefix)) continue;
    const label = control ? labelOf(control) : short.replace(/_/g, " ");
    const rest = text.slice(prefix.length);
    text = VERB.test(rest) ? `${label} ${rest}` : `${label}: ${rest}`;
  }
  text = text.replace(/^Field '([^']+)' is required\.?$/, (_, word) => `${name(word) || word} is required`);
  text = text.replace(/(?<![.\w])'?[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?:\[\d+\](?:\.[a-z_]+)?)?\b'?|^[a-z][a-z0-9]*\b/g,
    (word) => name(word.replace(/'/g, "")) || word);
  // A plain word is a field's name only where a control says so in its data-field
  // ("until" for the last day of a range), never an ordinary word of the sentence.
  text = text.replace(/(?<![.\w])[a-z]+\b(?!\.\w)/g, (word) =>
    (form.querySelector(`[data-field~="${CSS.escape(word)}"]`) ? name(word) : null) || word);
  return sentence(text);
}
