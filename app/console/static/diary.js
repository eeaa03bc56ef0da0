// Owner → Diary: booking settings and the weekly hours (replaced wholesale on save),
// closures, and upcoming appointments shown in the diary's own zone.
import { $, api, confirmAction, el, fillRows, guarded, onSubmit, owned, say, start } from "/static/console.js";

const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
let zone = "UTC";

function clock(minutes) {
  if (!Number.isFinite(minutes)) return "";  // a field left for the owner to fill in
  const m = minutes % 1440;
  return `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;
}

function minutes(text, closing) {
  if (!text) return NaN;
  const [h, m] = text.split(":").map(Number);
  const total = h * 60 + m;
  return closing && total === 0 ? 1440 : total;
}

// A new period's default: office hours for a day's first; a later one opens after an
// hour's break once the day's last has closed, until 17:00 or for three hours. When
// no hour is left after the last (it closes at 23:00 or later) or a closing time is
// not given, office hours if they are free, else empty fields for the owner to fill.
const OFFICE = { opens: 540, closes: 1020 };
const LATEST_CLOSING = 1380;
const UNSET = { opens: NaN, closes: NaN };
function nextPeriod(day) {
  const shown = [...document.querySelectorAll(`#periods-${day} .period`)].map((row) => ({
    opens: minutes(row.querySelector(".opens").value, false),
    closes: minutes(row.querySelector(".closes").value, true) }));
  if (!shown.length) return OFFICE;
  const last = Math.max(...shown.map((p) => p.closes));
  if (Number.isFinite(last) && last < LATEST_CLOSING) {
    const opens = last + 60;
    return { opens, closes: Math.min(Math.max(opens + 180, OFFICE.closes), 1440) };
  }
  // A time not given counts as the far end of the day, so it is never overlapped.
  const overlaps = shown.some((p) => (Number.isFinite(p.opens) ? p.opens : 0) < OFFICE.closes
    && (Number.isFinite(p.closes) ? p.closes : 1440) > OFFICE.opens);
  return overlaps ? UNSET : OFFICE;
}

// Ids are numbered once for the page, so a period added after another was removed
// never takes the id of one still shown; names follow the periods' places in the day.
let periods = 0;

function period(day, opens, closes) {
  const n = ++periods;
  $(`#periods-${day}`).append(el("div", { class: "period", "data-row": "hours" },
    el("p", {}, el("label", { for: `open-${n}` }, "Opens"),
      el("input", { id: `open-${n}`, type: "time", class: "opens", "data-field": "opens_minute", "data-label": "Opening time", value: clock(opens), required: true })),
    el("p", {}, el("label", { for: `close-${n}` }, "Closes"),
      el("input", { id: `close-${n}`, type: "time", class: "closes", "data-field": "closes_minute", "data-label": "Closing time", value: clock(closes), required: true })),
    el("button", { type: "button", class: "secondary remove", onclick: () => removePeriod(day, n) }, "Remove")));
  nameDay(day);
}

// The Remove button goes with its period: the keyboard moves on to the day's Add.
function removePeriod(day, n) {
  $(`#open-${n}`).closest(".period").remove();
  nameDay(day);
  $(`#add-period-${day}`).focus();
}

function nameDay(day) {
  [...$(`#periods-${day}`).children].forEach((row, i) => {
    const name = `${DAYS[day]} period ${i + 1}`;
    row.querySelector(".opens").setAttribute("aria-label", `${name} opens`);
    row.querySelector(".closes").setAttribute("aria-label", `${name} closes`);
    row.querySelector(".remove").setAttribute("aria-label", `Remove ${name}`);
  });
}

function week(hours) {
  $("#week").replaceChildren(...DAYS.map((name, day) => el("fieldset", { class: "hours-day" },
    el("legend", {}, name), el("div", { id: `periods-${day}` }),
    el("button", { type: "button", class: "secondary", id: `add-period-${day}`, "aria-label": `Add a period on ${name}`,
      onclick: () => { const { opens, closes } = nextPeriod(day); period(day, opens, closes); } }, "Add a period"))));
  for (const p of hours) period(p.weekday, p.opens_minute, p.closes_minute);
}

function hoursFromForm() {
  return DAYS.flatMap((_, day) => [...document.querySelectorAll(`#periods-${day} .period`)].map((row) => ({
    weekday: day, opens_minute: minutes(row.querySelector(".opens").value, false),
    closes_minute: minutes(row.querySelector(".closes").value, true) })));
}

function show(diary) {
  zone = diary.timezone;
  $("#d-zone").value = diary.timezone;
  $("#d-slot").value = diary.slot_minutes;
  $("#d-lead").value = diary.lead_minutes;
  $("#d-horizon").value = diary.horizon_days;
  $("#d-enabled").checked = diary.enabled;
  week(diary.hours);
  fillRows($("#closures"), diary.closures || [], [
    { value: (c) => c.closed_on },
    { value: (c) => c.note || "" },
    { value: (c) => el("button", { type: "button", class: "danger", "aria-label": `Remove the closure on ${c.closed_on}`,
        onclick: guarded(async () => {
          await api("DELETE", owned(`/api/diary/closures?closed_on=${encodeURIComponent(c.closed_on)}`));
          show(await api("GET", owned("/api/diary")));
          say(`The closure on ${c.closed_on} is removed.`);
        }) }, "Remove") },
  ], "No closures.");
  $("#zone-note").textContent = `Times are in the diary's zone, ${zone}.`;
  // A closure is today or later in the diary's zone (the API refuses a past day).
  $("#c-day").min = new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(new Date());
}

// The API gives each time with the diary zone's offset; show it in that zone.
function inZone(iso) {
  return new Date(iso).toLocaleString(undefined, { timeZone: zone, weekday: "short", dateStyle: undefined,
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

async function appointments() {
  const { data } = await api("GET", owned(`/api/diary/appointments?from=${encodeURIComponent(new Date().toISOString())}`));
  fillRows($("#appointments"), data, [
    { value: (a) => el("time", { datetime: a.starts_at }, inZone(a.starts_at)) },
    { value: (a) => a.caller_name },
    { value: (a) => a.subject },
    { value: (a) => a.contact || a.caller_number || "" },
    { value: (a) => el("code", {}, a.reference) },
    { value: (a) => el("button", { type: "button", class: "danger", "aria-label": `Cancel the appointment with ${a.caller_name}`,
        onclick: guarded(async () => {
          if (!(await confirmAction(`Cancel the appointment with ${a.caller_name} on ${inZone(a.starts_at)}?`))) return;
          await api("DELETE", owned(`/api/diary/appointments/${encodeURIComponent(a.id)}`));
          await appointments();
          say("The appointment is cancelled.");
        }) }, "Cancel") },
  ], "No appointments ahead.");
}

onSubmit($("#diary"), async (values) => {
  const diary = await api("PUT", owned("/api/diary"), { timezone: values.timezone, slot_minutes: values.slot_minutes,
    lead_minutes: values.lead_minutes, horizon_days: values.horizon_days, enabled: values.enabled,
    hours: hoursFromForm() });
  show(diary);
  await appointments();
  say("The diary is saved.");
});

onSubmit($("#closure"), async (values) => {
  await api("POST", owned("/api/diary/closures"), values);
  $("#closure").reset();
  show(await api("GET", owned("/api/diary")));
  say(`Closed on ${values.closed_on}.`);
});

// The browser knows the time-zone names; offer them as suggestions.
if (Intl.supportedValuesOf) {
  $("#zones").replaceChildren(...Intl.supportedValuesOf("timeZone").map((zone) => el("option", { value: zone })));
}

start(async () => {
  show(await api("GET", owned("/api/diary")));
  await appointments();
}, $("#diary-screen"));
