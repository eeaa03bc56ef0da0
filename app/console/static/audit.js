// Admin → Audit trail: entries newest first, filtered by actor, action and time,
// a page at a time, each read as a sentence with its record behind a <details>.
import { $, api, clearErrors, el, fail, onSubmit, options, start, when } from "/static/console.js";
import { KNOWN_KINDS, sentence } from "/static/audit_sentences.js";

const PAGE = 50;
// The cursors of the pages shown so far: [null] is the newest page.
let cursors = [null];
let filters = {};

function query(before) {
  const params = new URLSearchParams({ limit: String(PAGE) });
  for (const [name, value] of Object.entries(filters)) params.set(name, value);
  if (before !== null) params.set("before", String(before));
  return `/api/admin/audit?${params}`;
}

function record(entry) {
  const rows = [["Action", entry.kind], ["Actor", entry.actor_email || entry.actor_id || "none"],
    ["Subject", entry.subject_name ? `${entry.subject_name} (${entry.subject})` : entry.subject || "none"],
    ["Times", String(entry.occurrences)], ["Entry", String(entry.id)]];
  return el("details", {},
    el("summary", {}, "Details", el("span", { class: "visually-hidden" }, ` of entry ${entry.id}`)),
    el("dl", { class: "pairs" }, rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)])),
    Object.keys(entry.data || {}).length ? el("pre", { class: "audit-data" }, JSON.stringify(entry.data, null, 2)) : null);
}

function item(entry) {
  return el("li", { class: "audit-entry" },
    el("p", { class: "sentence" }, sentence(entry)),
    el("p", { class: "muted" }, el("time", { datetime: entry.at }, when(entry.at))),
    record(entry));
}

async function show() {
  const page = await api("GET", query(cursors[cursors.length - 1]));
  $("#entries").replaceChildren(...(page.data.length ? page.data.map(item)
    : [el("li", { class: "muted" }, "No entries match.")]));
  $("#audit-range").textContent = page.data.length
    ? `Page ${cursors.length}: ${page.data.length} ${page.data.length === 1 ? "entry" : "entries"}, newest first.` : "";
  $("#older").disabled = page.next_before === null;
  $("#older").dataset.before = page.next_before ?? "";
  $("#newer").disabled = cursors.length === 1;
}

// The form's filters as the API takes them: local times become instants.
function filtersFrom(form) {
  const chosen = {};
  for (const name of ["actor_id", "kind"]) {
    const value = form.elements.namedItem(name).value.trim();
    if (value) chosen[name] = value;
  }
  for (const name of ["since", "until"]) {
    const value = form.elements.namedItem(name).value;
    if (value) chosen[name] = new Date(value).toISOString();
  }
  return chosen;
}

async function apply(form) {
  filters = filtersFrom(form);
  cursors = [null];
  await show();
}

const form = $("#audit-filters");
onSubmit(form, () => apply(form));
// After the browser has emptied the fields.
form.addEventListener("reset", () => setTimeout(() => {
  clearErrors(form);
  apply(form).catch((error) => fail(error, form));
}));

$("#older").addEventListener("click", () => {
  cursors.push(Number($("#older").dataset.before));
  show().then(() => $("#entries-heading").scrollIntoView());
});
$("#newer").addEventListener("click", () => {
  cursors.pop();
  show().then(() => $("#entries-heading").scrollIntoView());
});

$("#a-kinds").replaceChildren(...KNOWN_KINDS.map((kind) => el("option", { value: kind })));

start(async () => {
  const { data } = await api("GET", "/api/admin/users");
  options($("#a-actor"), data, (u) => u.email, (u) => u.id, "Anyone");
  await show();
}, $("#audit-screen"));
