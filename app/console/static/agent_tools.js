// Agents → the tools an agent may use: the built-in ones and the HTTP tools offered
// to this account (GET /api/tools), as checkboxes, each saying whether it may run
// during a telephone call. A tool that only reads always may; one that acts may when an
// administrator has marked it so (per tool: shown here, not chosen per agent).
import { $, api, el } from "/static/console.js";

let known = [];

function onACall(tool) {
  if (!tool.side_effecting) return "reads only; usable on a call";
  return tool.usable_on_call ? "acts; usable on a call" : "acts; refused on a call";
}

function row(tool, note) {
  const id = `tool-${tool.name}`;
  return el("li", {},
    el("input", { type: "checkbox", id, value: tool.name, "data-list": "tools", "aria-describedby": `${id}-about` }), " ",
    el("label", { class: "inline", for: id }, tool.name),
    el("span", { id: `${id}-about`, class: "muted" },
      tool.description ? ` — ${tool.description}` : "",
      ` (${note || onACall(tool)})`));
}

// The checkboxes, ticked for ``chosen``; a tool the agent holds that is no longer
// offered stays listed, so saving does not drop it without the owner seeing it.
export function showTools(chosen = []) {
  const names = new Set(known.map((tool) => tool.name));
  const kept = chosen.filter((name) => !names.has(name)).map((name) => ({ name, description: "" }));
  const items = [...known.map((tool) => row(tool)), ...kept.map((tool) => row(tool, "no longer offered"))];
  $("#a-tools").replaceChildren(items.length ? el("ul", { class: "tool-list" }, items)
    : el("p", { class: "muted" }, "No tools are offered to you."));
  for (const box of document.querySelectorAll("#a-tools input")) box.checked = chosen.includes(box.value);
}

export function chosenTools() {
  return [...document.querySelectorAll("#a-tools input:checked")].map((box) => box.value);
}

export async function loadTools() {
  const { data, builtin } = await api("GET", "/api/tools");
  known = [...builtin, ...data];
  showTools();
}
