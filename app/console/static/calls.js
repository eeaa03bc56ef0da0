// Admin → Call log: filters by line, outcome, days and caller; pages through `next_before`.
import { $, addDays, api, el, fillRows, formValues, guarded, length, onSubmit, options, start, when } from "/static/console.js";

let filters = { limit: 50 };
let pages = [null];  // the cursor of each page shown so far; the last is the current one

function lineName(call) { return call.line_label ? `${call.e164} (${call.line_label})` : call.e164; }

async function show() {
  const { through, ...given } = filters;
  // The form's last day is inclusive; the API's `until` is the day after it.
  if (through) given.until = addDays(through, 1);
  const query = new URLSearchParams(Object.entries(given).filter(([, v]) => v !== undefined && v !== ""));
  const cursor = pages[pages.length - 1];
  if (cursor) query.set("before", cursor);
  const page = await api("GET", `/api/admin/telephony/calls?${query}`);
  fillRows($("#calls"), page.data, [
    { value: (c) => when(c.started_at) },
    { value: lineName },
    { value: (c) => c.agent_name || "—" },
    { value: (c) => c.from },
    { value: (c) => c.outcome },
    { value: length, num: true },
    { value: (c) => [c.recording_failed ? "recording failed " : "", c.tidied_away ? "tidied away" : ""].join("").trim() },
    { value: (c) => el("a", { href: `/calls/${encodeURIComponent(c.id)}`, "aria-label": `Open the call from ${c.from} at ${when(c.started_at)}` }, "Open") },
  ], "No calls match.");
  $("#older").disabled = !page.next_before;
  $("#older").dataset.cursor = page.next_before || "";
  $("#newest").disabled = pages.length === 1;
  $("#page-note").textContent = `Page ${pages.length}`;
}

onSubmit($("#filters"), async (values) => {
  filters = values;
  pages = [null];
  await show();
});

$("#older").addEventListener("click", guarded(async () => {
  pages.push($("#older").dataset.cursor);
  await show();
}));

$("#newest").addEventListener("click", guarded(async () => {
  pages = [null];
  await show();
}));

start(async () => {
  const lines = (await api("GET", "/api/admin/telephony/numbers")).data;
  options($("#f-line"), lines, (l) => (l.label ? `${l.e164} (${l.label})` : l.e164), (l) => l.id, "any");
  filters = formValues($("#filters"));
  await show();
});
