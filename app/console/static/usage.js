// Admin → Usage: stacked bars per day and source (inline SVG, with time and value
// axes), and totals by source, user, key, line and model, for a date range (the
// API's `until` is exclusive).
import { $, addDays, api, fillRows, isoDay, onSubmit, start } from "/static/console.js";

const SOURCES = ["app", "api", "telephone"];
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}


function days(since, until) {
  const all = [];
  for (let day = since; day < until; day = addDays(day, 1)) all.push(day);
  return all;
}

// Labels are drawn at the page's small text size (console.css: .chart text) in the
// chart's own pixels, so a chart is laid out for the width it is shown at.
const FONT = 13.6, DIGIT = FONT * 0.62, DATE = 5 * DIGIT, DATE_GAP = 20;

// The axes: a time axis under the bars with a tick and its date at every `every`-th
// day counted back from the last (as many as fit side by side, at most 8, and the
// last day always named), and a value axis with ticks at 0, half and the peak, each
// with a faint line across.
function axes(picture, allDays, geometry, peak) {
  const { width, height, top, left, bottom, step, scale } = geometry;
  const base = height - bottom;
  picture.append(svg("line", { class: "axis", x1: left - 2, y1: base, x2: width, y2: base }),
    svg("line", { class: "axis", x1: left - 2, y1: top, x2: left - 2, y2: base }));
  for (const value of [...new Set([0, Math.round(peak / 2), peak])]) {
    const y = base - value * scale;
    picture.append(svg("line", { class: "tick", x1: left - 6, y1: y, x2: left - 2, y2: y }),
      svg("line", { class: "grid", x1: left - 2, y1: y, x2: width, y2: y }),
      svg("text", { x: left - 8, y: y + FONT * 0.35, "text-anchor": "end" }, String(value)));
  }
  const fit = Math.max(1, Math.floor((width - left) / (DATE + DATE_GAP)));
  const every = Math.max(1, Math.ceil(allDays.length / Math.min(8, fit)));
  allDays.forEach((day, index) => {
    if ((allDays.length - 1 - index) % every) return;
    const x = left + index * step + step / 2;
    // A date at the right edge ends at the edge, so it is not cut off.
    const anchor = x + DATE / 2 > width - 1 ? "end" : "middle";
    picture.append(svg("line", { class: "tick", x1: x, y1: base, x2: x, y2: base + 5 }),
      svg("text", { x: anchor === "end" ? width - 1 : x, y: height - 6, "text-anchor": anchor }, day.slice(5)));
  });
}

// One bar per day, stacked by source; every segment carries its figure as a title.
// The chart is drawn in pixels at the width of its container, and again whenever
// that width changes.
const drawn = new Map();
const resized = new ResizeObserver((entries) => {
  for (const { target } of entries) {
    const last = drawn.get(target);
    if (last && Math.floor(target.clientWidth) !== last.width) chart(target, ...last.args);
  }
});

function chart(container, rows, since, until, measure, unit) {
  const allDays = days(since, until);
  const byDay = new Map(allDays.map((day) => [day, {}]));
  for (const row of rows) if (byDay.has(row.bucket)) byDay.get(row.bucket)[row.source] = measure(row);
  const peak = Math.max(1, ...allDays.map((day) => SOURCES.reduce((sum, s) => sum + (byDay.get(day)[s] || 0), 0)));
  const width = Math.floor(container.clientWidth) || 760;
  const height = Math.round(Math.min(260, Math.max(180, width * 180 / 760)));
  const top = 12, bottom = 30, left = Math.max(40, Math.ceil(String(peak).length * DIGIT) + 14);
  const step = (width - left) / allDays.length;
  const scale = (height - bottom - top) / peak;
  const picture = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
    "aria-label": `${unit} per day from ${since} to ${addDays(until, -1)}, at most ${peak}` });
  axes(picture, allDays, { width, height, top, left, bottom, step, scale }, peak);
  allDays.forEach((day, index) => {
    let y = height - bottom;
    for (const source of SOURCES) {
      const value = byDay.get(day)[source] || 0;
      if (!value) continue;
      const tall = value * scale;
      y -= tall;
      picture.append(svg("rect", { class: source, x: left + index * step + 1, y,
        width: Math.max(1, step - 2), height: tall },
        svg("title", {}, `${day} ${source}: ${value} ${unit}`)));
    }
  });
  container.replaceChildren(picture);
  drawn.set(container, { width, args: [rows, since, until, measure, unit] });
  resized.observe(container);
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

function lineName(row) {
  if (!row.bucket) return "(no line: the app and the API)";
  if (!row.line_e164) return `${row.bucket} (a released line)`;
  return row.line_label ? `${row.line_e164} (${row.line_label})` : row.line_e164;
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
  rowsWith($("#by-line"), usage.by_line, lineName, none);
  rowsWith($("#by-model"), usage.by_model, (r) => r.bucket, none);
}

const today = isoDay(new Date());
$("#through").value = today;
$("#since").value = addDays(today, -29);
onSubmit($("#range"), async (values) => show(values.since, values.through));
start(() => show($("#since").value, $("#through").value));
