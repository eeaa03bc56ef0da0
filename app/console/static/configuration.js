// Admin → Configuration: every runtime setting grouped by area, with its boot value,
// current value, range and who may change it; a change or reset goes through the API,
// which decides whether this caller may make it.
import { $, api, el, fail, guarded, say, start } from "/static/console.js";

const WHO = {
  boot: "only at boot (restart)",
  "config.manage": "config.manage",
  "voice.manage": "voice.manage",
  superadmin: "the super-administrator",
};

function area(key) { return key.includes(".") ? key.slice(0, key.lastIndexOf(".")) : "general"; }

function shown(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "boolean") return value ? "on" : "off";
  return String(value);
}

function range(s) {
  if (s.choices) return s.choices.join(", ");
  if (s.minimum !== null || s.maximum !== null) return `${shown(s.minimum)} to ${shown(s.maximum)}`;
  return s.type;
}

function parse(setting, text) {
  if (text === "" && setting.nullable) return null;
  if (setting.type === "bool") return text === "true";
  if (setting.type === "int") return Number.parseInt(text, 10);
  if (setting.type === "float") return Number.parseFloat(text);
  return text;
}

function editor(setting, refresh) {
  const label = `New value of ${setting.key}`;
  let input;
  if (setting.type === "bool") {
    input = el("select", { name: "value", "aria-label": label },
      el("option", { value: "true" }, "on"), el("option", { value: "false" }, "off"));
    input.value = String(Boolean(setting.value));
  } else if (setting.choices) {
    input = el("select", { name: "value", "aria-label": label },
      setting.nullable ? el("option", { value: "" }, "—") : null,
      setting.choices.map((c) => el("option", { value: c }, c)));
    input.value = setting.value ?? "";
  } else {
    const numeric = setting.type === "int" || setting.type === "float";
    input = el("input", { name: "value", "aria-label": label,
      type: setting.encrypted || setting.value_set !== undefined ? "password" : numeric ? "number" : "text",
      step: setting.type === "float" ? "any" : null, min: setting.minimum, max: setting.maximum,
      autocomplete: "off",
      // a stored secret is replaced, never blanked by an empty Save; Reset removes it
      required: setting.value_set !== undefined,
      placeholder: setting.value_set ? "replace the stored value" : null });
    if (setting.value_set === undefined) input.value = setting.value ?? "";
  }
  const form = el("form", { class: "actions" }, input,
    el("button", { type: "submit" }, "Save"),
    setting.overridden ? el("button", { type: "button", class: "secondary",
      onclick: guarded(async () => {
        await api("DELETE", `/api/admin/settings/${encodeURIComponent(setting.key)}`);
        await refresh();
        say(`${setting.key} is back to its boot value.`);
      }) }, "Reset") : null);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api("PUT", `/api/admin/settings/${encodeURIComponent(setting.key)}`, { value: parse(setting, input.value) });
      await refresh();
      say(`${setting.key} is saved.`);
    } catch (error) {
      fail(error);
      input.focus();
    }
  });
  return form;
}

function current(setting) {
  const value = setting.value_set !== undefined ? (setting.value_set ? "stored" : "not stored") : shown(setting.value);
  return [value, setting.overridden ? el("span", { class: "badge" }, " runtime") : null,
    setting.follows && setting.value === null ? el("span", { class: "muted" }, ` (follows ${setting.follows})`) : null];
}

async function load() {
  const { data } = await api("GET", "/api/admin/settings");
  const groups = new Map();
  for (const setting of data) {
    if (!groups.has(area(setting.key))) groups.set(area(setting.key), []);
    groups.get(area(setting.key)).push(setting);
  }
  $("#areas").replaceChildren(...[...groups].map(([name, settings]) => el("section", { class: "card" },
    el("h2", {}, name),
    el("table", { class: "settings" },
      el("thead", {}, el("tr", {}, ["Setting", "Boot value", "Current value", "Range", "Who may change it", "Change"]
        .map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, settings.map((s) => el("tr", { "data-key": s.key },
        el("td", {}, el("code", {}, s.key), el("br"), el("span", { class: "muted" }, s.description)),
        el("td", {}, s.value_set !== undefined ? "hidden" : shown(s.boot_value)),
        el("td", {}, current(s)),
        el("td", {}, range(s)),
        el("td", {}, WHO[s.access] || s.access, s.restart_required ? el("span", { class: "muted" }, " · restart needed") : null),
        el("td", {}, s.may_change ? editor(s, load) : el("span", { class: "muted" }, "not you")))))))));
}

start(load);
