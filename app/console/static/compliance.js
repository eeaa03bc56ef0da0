// Owner → Compliance: the compliance view of the owner's lines, shown as it comes —
// plain values as a list, lists of records as tables.
import { $, api, el, start } from "/static/console.js";

function label(key) { return key.replaceAll("_", " "); }

function value(v) {
  if (v === null || v === undefined) return "—";
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (Array.isArray(v)) return v.every((x) => typeof x !== "object") ? v.join(", ") : records(v);
  if (typeof v === "object") return pairs(v);
  return String(v);
}

function pairs(object) {
  return el("dl", { class: "pairs" }, Object.entries(object).flatMap(([k, v]) => [el("dt", {}, label(k)), el("dd", {}, value(v))]));
}

function records(list) {
  if (!list.length) return el("p", { class: "muted" }, "None.");
  const keys = [...new Set(list.flatMap((row) => Object.keys(row)))].filter((k) => k !== "id");
  return el("table", {}, el("thead", {}, el("tr", {}, keys.map((k) => el("th", { scope: "col" }, label(k))))),
    el("tbody", {}, list.map((row) => el("tr", {}, keys.map((k) => el("td", {}, value(row[k])))))));
}

start(async () => {
  const view = await api("GET", "/api/telephony/compliance");
  $("#compliance").replaceChildren(...Object.entries(view).map(([key, v]) =>
    el("section", { class: "card" }, el("h2", {}, label(key)), value(v))));
}, $("#compliance-screen"));
