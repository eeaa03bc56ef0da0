// Admin → Usage: stacked bars per day and source (inline SVG), and tables by source,
// user, key and model, for a date range (the API's `until` is exclusive).
import { $, api, fillRows, onSubmit, start } from "/static/console.js";

const SOURCES = ["app", "api", "telephone"];
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

function isoDay(date) { return date.toISOString().slice(0, 10); }
function addDays(day, n) { const d = new Date(day + "T00:00:00Z"); d.setUTCDate(d.getUTCDate() + n); return isoDay(d); }

function days(since, until) {
  const all = [];
  for (let day = since; day < until; day = addDays(day, 1)) all.push(day);
  return all;
}

// One bar per day, stacked by source; every segment carries its figure as a title.
function chart(container, rows, since, until, measure, unit) {
  const allDays = days(since, until);
  const byDay = new Map(allDays.map((day) => [day, {}]));
  for (const row of rows) if (byDay.has(row.bucket)) byDay.get(row.bucket)[row.source] = measure(row);
  const peak = Math.max(1, ...allDays.map((day) => SOURCES.reduce((sum, s) => sum + (byDay.get(day)[s] || 0), 0)));
  const width = 760, height = 180, left = 48, bottom = 22, step = (width - left) / allDays.length;
  const scale = (height - bottom - 8) / peak;
  const picture = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `${unit} per day from ${since} to ${addDays(until, -1)}, at most ${peak}` });
  picture.append(svg("text", { x: 4, y: 14 }, String(peak)), svg("text", { x: 4, y: height - bottom }, "0"),
    svg("line", { x1: left - 2, y1: height - bottom, x2: width, y2: height - bottom, stroke: "#4a5360" }));
  allDays.forEach((day, index) => {
    let top = height - bottom;
    for (const source of SOURCES) {
      const value = byDay.get(day)[source] || 0;
      if (!value) continue;
      const tall = value * scale;
      top -= tall;
      picture.append(svg("rect", { class: source, x: left + index * step + 1, y: top,
        width: Math.max(1, step - 2), height: tall },
        svg("title", {}, `${day} ${source}: ${value} ${unit}`)));
    }
    if (allDays.length <= 31 && (index % Math.ceil(allDays.length / 10) === 0)) {
      picture.append(svg("text", { x: left + index * step, y: height - 6 }, day.slice(5)));
    }
  });
  container.replaceChildren(picture);
}

const FIGURES = [
  { value: (r) => r.requests, num: true },
  { value: (r) => r.prompt_tokens, num: true },
  { value: (r) => r.completion_tokens, num: true },
  { value: (r) => r.errors, num: true },
  { value: (r) => r.avg_latency_ms, num: true },
];

function rowsWith(tbody, rows, name, empty) {
  fillRows(tbody, rows, [{ value: name }, ...FIGURES], empty);
}

function keyName(row) {
  if (!row.bucket) return "(no key: the app and telephone lines)";
  return row.key_name ? `${row.key_name} (${row.key_prefix}…, ${row.owner_email})` : row.bucket;
}

async function show(since, through) {
  const until = addDays(through, 1);
  const usage = await api("GET", `/api/admin/usage?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`);
  chart($("#chart-requests"), usage.by_day_source, since, until, (r) => r.requests, "requests");
  chart($("#chart-tokens"), usage.by_day_source, since, until,
    (r) => r.prompt_tokens + r.completion_tokens, "tokens");
  const users = new Map((await api("GET", "/api/admin/users")).data.map((u) => [u.id, u.email]));
  const none = "No usage in this range.";
  rowsWith($("#by-source"), usage.by_source, (r) => r.bucket, none);
  rowsWith($("#by-user"), usage.by_user, (r) => users.get(r.bucket) || r.bucket || "(no account)", none);
  rowsWith($("#by-key"), usage.by_key, keyName, none);
  rowsWith($("#by-model"), usage.by_model, (r) => r.bucket, none);
}

const today = isoDay(new Date());
$("#through").value = today;
$("#since").value = addDays(today, -29);
onSubmit($("#range"), async (values) => show(values.since, values.through));
start(() => show($("#since").value, $("#through").value));
