// Admin → Configuration: every runtime setting grouped by area (voice, telephony,
// limits, …), each with a sentence on what it does, its default, its range, its boot
// and current value and who may change it. A search box filters settings by key and
// description as you type. An area is saved at once: one request with every value
// changed in it, which the API checks whole (one refused, none changed), and each
// refusal is shown beside its field.
import { $, api, clearErrors, el, fail, guarded, say, start } from "/static/console.js";

const WHO = {
  boot: "only at boot (restart)",
  "config.manage": "config.manage",
  "voice.manage": "voice.manage",
  superadmin: "the super-administrator",
};

function shown(value) {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value === "boolean") return value ? "on" : "off";
  return String(value);
}

function range(s) {
  const empty = s.nullable ? ", or empty" : "";
  if (s.choices) return `one of ${s.choices.join(", ")}${empty}`;
  if (s.type === "bool") return "on or off";
  if (s.minimum !== null || s.maximum !== null) return `${shown(s.minimum)} to ${shown(s.maximum)}${empty}`;
  return s.type === "str" ? `text${empty}` : s.type;
}

// What the editor shows for the value in force, to tell a change from no change.
function editorText(s) {
  if (s.value_set !== undefined) return "";
  if (s.type === "bool") return String(Boolean(s.value));
  return s.value === null || s.value === undefined ? "" : String(s.value);
}

function parse(setting, text) {
  if (text === "" && setting.nullable) return null;
  if (setting.type === "bool") return text === "true";
  if (setting.type === "int") return text.trim() === "" ? null : Number(text);
  if (setting.type === "float") return text.trim() === "" ? null : Number(text);
  return text;
}

function editor(setting) {
  const common = { name: setting.key, "data-field": setting.key, "aria-label": `New value of ${setting.key}`,
    "data-label": setting.key };
  if (setting.type === "bool") {
    return el("select", common, el("option", { value: "true" }, "on"), el("option", { value: "false" }, "off"));
  }
  if (setting.choices) {
    return el("select", common, setting.nullable ? el("option", { value: "" }, "—") : null,
      setting.choices.map((c) => el("option", { value: String(c) }, String(c))));
  }
  const numeric = setting.type === "int" || setting.type === "float";
  return el("input", { ...common,
    type: setting.value_set !== undefined ? "password" : numeric ? "number" : "text",
    step: setting.type === "float" ? "any" : null, min: setting.minimum, max: setting.maximum,
    autocomplete: "off",
    // a stored secret is replaced by typing a new one; an empty box leaves it as it is
    placeholder: setting.value_set ? "replace the stored value" : null });
}

function current(setting) {
  const value = setting.value_set !== undefined ? (setting.value_set ? "stored" : "not stored") : shown(setting.value);
  return [value, setting.overridden ? el("span", { class: "badge" }, " runtime") : null,
    setting.follows && setting.value === null ? el("span", { class: "muted" }, ` (follows ${setting.follows})`) : null];
}

function about(s) {
  return [el("code", {}, s.key), el("br"), el("span", { class: "muted" }, s.description),
    s.value_set === undefined ? [el("br"), el("span", { class: "muted" }, `Default: ${shown(s.default)}.`)] : null];
}

function row(s, refresh) {
  const control = s.may_change ? editor(s) : null;
  if (control) control.value = editorText(s);
  return el("tr", { "data-key": s.key },
    el("td", {}, about(s)),
    el("td", {}, s.value_set !== undefined ? "hidden" : shown(s.boot_value)),
    el("td", {}, current(s)),
    el("td", {}, range(s)),
    el("td", {}, WHO[s.access] || s.access, s.restart_required && s.access !== "boot" ? el("span", { class: "muted" }, " · restart needed") : null),
    el("td", {}, control ? [el("div", { class: "field" }, control),
      s.overridden ? el("button", { type: "button", class: "secondary", "aria-label": `Reset ${s.key}`,
        onclick: guarded(async () => {
          await api("DELETE", `/api/admin/settings/${encodeURIComponent(s.key)}`);
          await refresh();
          say(`${s.key} is back to its boot value.`);
        }) }, "Reset") : null] : el("span", { class: "muted" }, "not you")));
}

// The values changed in an area's form: only those, so saving an area never turns an
// untouched setting into a runtime value.
function changes(form, settings) {
  const values = {};
  for (const s of settings) {
    const control = form.elements.namedItem(s.key);
    if (!control || control.value === editorText(s)) continue;
    values[s.key] = parse(s, control.value);
  }
  return values;
}

function area(info, settings, refresh) {
  const id = `area-${info.name}`;
  const editable = settings.some((s) => s.may_change);
  const form = el("form", { id: `${id}-form`, "aria-labelledby": `${id}-heading`, novalidate: true },
    el("table", { class: "settings" },
      el("thead", {}, el("tr", {}, ["Setting", "Boot value", "Current value", "Range", "Who may change it", "New value"]
        .map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, settings.map((s) => row(s, refresh)))),
    editable ? el("p", { class: "actions" }, el("button", { type: "submit" }, `Save ${info.title}`)) : null);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form);
    const values = changes(form, settings);
    const keys = Object.keys(values);
    if (!keys.length) {
      say(`Nothing changed in ${info.title}.`);
      return;
    }
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      await api("PATCH", "/api/admin/settings", { values });
      await refresh();
      say(`${info.title} is saved: ${keys.join(", ")}.`);
    } catch (error) {
      fail(error, form);
    } finally {
      button.disabled = false;
    }
  });
  return el("section", { class: "card area", id, "data-area": info.name, "aria-labelledby": `${id}-heading` },
    el("h2", { id: `${id}-heading` }, info.title), el("p", { class: "muted" }, info.summary), form);
}

// Show the settings whose key or description holds every word typed, and the areas
// that still have one; say how many match.
function filter() {
  const words = $("#search").value.toLowerCase().split(/\s+/).filter(Boolean);
  let shownCount = 0;
  let total = 0;
  for (const section of document.querySelectorAll("#areas section")) {
    let visible = 0;
    for (const tr of section.querySelectorAll("tbody tr")) {
      const text = `${tr.dataset.key} ${tr.cells[0].textContent}`.toLowerCase();
      tr.hidden = !words.every((word) => text.includes(word));
      if (!tr.hidden) visible += 1;
      total += 1;
    }
    section.hidden = visible === 0;
    shownCount += visible;
  }
  $("#search-count").textContent = words.length
    ? (shownCount ? `${shownCount} of ${total} settings match.` : "No setting matches; try fewer or other words.")
    : "";
}

async function load() {
  const { data, areas } = await api("GET", "/api/admin/settings");
  const sections = areas.map((info) => [info, data.filter((s) => s.area === info.name)])
    .filter(([, settings]) => settings.length)
    .map(([info, settings]) => area(info, settings, load));
  $("#areas").replaceChildren(...sections);
  filter();
}

$("#search").addEventListener("input", filter);
start(load);
