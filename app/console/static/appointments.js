// Owner → Appointments: a day or a week of the diary, in the diary's own zone, with
// booking into a free slot (the slots a call would offer), moving and cancelling.
// The API writes every time with the diary zone's offset, so an appointment's local
// day and clock time are the first characters of its starts_at, whatever the browser's zone.
import { $, api, clearErrors, confirmAction, el, guarded, invalid, onSubmit, owned, say, start } from "/static/console.js";

const state = { zone: "UTC", today: "", day: "", view: "week", slots: [], diary: null };

// -- plain days ("2027-03-02"), counted in UTC so no browser zone can shift them

function addDays(day, count) {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + count);
  return date.toISOString().slice(0, 10);
}

function dayIn(zone, instant = new Date()) {
  return new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" })
    .format(instant);
}

function dayName(day, style = "long") {
  return new Date(`${day}T12:00:00Z`).toLocaleDateString(undefined, { timeZone: "UTC", weekday: style,
    day: "numeric", month: style, year: style === "long" ? "numeric" : undefined });
}

function shownDays() {
  if (state.view === "day") return [state.day];
  const monday = addDays(state.day, -((new Date(`${state.day}T00:00:00Z`).getUTCDay() + 6) % 7));
  return [0, 1, 2, 3, 4, 5, 6].map((n) => addDays(monday, n));
}

const localDay = (iso) => iso.slice(0, 10);
const clock = (iso) => iso.slice(11, 16);
const span = (item) => `${clock(item.starts_at)}–${clock(item.ends_at)}`;

// -- the days

function appointmentItem(a) {
  const who = `${a.caller_name} at ${clock(a.starts_at)} on ${dayName(localDay(a.starts_at), "short")}`;
  return el("li", { class: "appointment" },
    el("p", { class: "when" }, el("time", { datetime: a.starts_at }, span(a))),
    el("p", {}, el("strong", {}, a.caller_name), " · ", a.subject),
    el("p", { class: "muted" }, [a.contact || a.caller_number || "", " Ref. ", el("code", {}, a.reference)]),
    el("div", { class: "actions" },
      el("button", { type: "button", class: "secondary", "aria-label": `Move the appointment with ${who}`,
        onclick: () => openMove(a) }, "Move"),
      el("button", { type: "button", class: "danger", "aria-label": `Cancel the appointment with ${who}`,
        onclick: guarded(async () => {
          if (!(await confirmAction(`Cancel the appointment with ${who}?`))) return;
          await api("DELETE", owned(`/api/diary/appointments/${encodeURIComponent(a.id)}`));
          await refresh();
          say(`The appointment with ${a.caller_name} is cancelled.`);
        }) }, "Cancel")));
}

function daySection(day, appointments) {
  const heading = `${dayName(day, state.view === "day" ? "long" : "short")}${day === state.today ? " (today)" : ""}`;
  return el("section", { class: "diary-day", "aria-label": heading },
    el("h3", {}, heading),
    appointments.length
      ? el("ol", { class: "appointment-list" }, appointments.map(appointmentItem))
      : el("p", { class: "muted" }, "No appointments."));
}

async function showDays() {
  const days = shownDays();
  // From the day before the first shown, at midnight UTC: early enough for any zone.
  const from = `${addDays(days[0], -1)}T00:00:00Z`;
  const { data } = await api("GET", owned(`/api/diary/appointments?from=${encodeURIComponent(from)}`));
  const byDay = new Map(days.map((day) => [day, []]));
  for (const a of data) byDay.get(localDay(a.starts_at))?.push(a);
  $("#days").className = `diary-days ${state.view}`;
  $("#days").replaceChildren(...days.map((day) => daySection(day, byDay.get(day))));
  $("#range-heading").textContent = days.length === 1 ? dayName(days[0])
    : `${dayName(days[0], "short")} – ${dayName(days[6], "short")}`;
  $("#view-day").setAttribute("aria-pressed", String(state.view === "day"));
  $("#view-week").setAttribute("aria-pressed", String(state.view === "week"));
}

// -- free slots, for booking and moving

// Why no time is offered, and where that is changed: the slots are the ones a caller
// would be offered, so the diary's own settings decide them (none while its lines do
// not offer times, none without weekly hours).
function noTimesBecause() {
  const settings = el("a", { href: owned("/owner/diary") }, "the diary settings");
  const diary = state.diary;
  if (!diary.enabled) {
    return ["No free times are offered while “Lines offer times” is off. Tick it in ", settings, "."];
  }
  if (!diary.hours.length) return ["No free times: the diary has no weekly hours. Add them in ", settings, "."];
  return [`No free times in the next ${diary.horizon_days} days: each is taken, closed or too soon. `,
    "The hours and how far ahead callers may book are in ", settings, "."];
}

function fillSlots(select) {
  const note = $(`#${select.id}-note`);
  note.replaceChildren(...(state.slots.length ? [] : noTimesBecause()));
  if (!state.slots.length) {
    select.replaceChildren(el("option", { value: "" }, "No free times"));
    return;
  }
  const groups = new Map();
  for (const slot of state.slots) {
    const day = localDay(slot.starts_at);
    if (!groups.has(day)) groups.set(day, el("optgroup", { label: dayName(day, "short") }));
    groups.get(day).append(el("option", { value: slot.starts_at }, `${dayName(day, "short")}, ${span(slot)}`));
  }
  select.replaceChildren(...groups.values());
}

async function loadSlots() {
  const answer = await api("GET", owned("/api/diary/slots?limit=200"));
  state.slots = answer.data;
  fillSlots($("#b-slot"));
}

async function refresh() {
  await Promise.all([showDays(), loadSlots()]);
}

// -- refusals

// A time taken meanwhile: the free times are fetched again, and the refusal says to
// choose another.
async function booking(request) {
  try {
    return await request();
  } catch (error) {
    if (error.code !== "slot_taken") throw error;
    await loadSlots();
    fillSlots($("#m-slot"));
    error.message = `${error.message} Choose another time.`;
    throw error;
  }
}

const REQUIRED = [["starts_at", "Choose a time."], ["caller_name", "Enter the caller's name."],
  ["subject", "Enter what the appointment is about."]];

onSubmit($("#book"), async () => {
  const form = $("#book");
  const value = (name) => form.elements.namedItem(name).value.trim();
  const missing = REQUIRED.find(([name]) => !value(name));
  if (missing) throw invalid(...missing);
  const booked = await booking(() => api("POST", owned("/api/diary/appointments"), { starts_at: value("starts_at"),
    caller_name: value("caller_name"), subject: value("subject"), contact: value("contact") || undefined }));
  form.reset();
  state.day = localDay(booked.starts_at);
  await refresh();
  say(`Booked: ${booked.caller_name} on ${dayName(state.day)} at ${clock(booked.starts_at)}, reference ${booked.reference}.`);
});

// -- moving

let moving = null;

function openMove(appointment) {
  moving = appointment;
  clearErrors($("#move-form"));
  $("#move-who").textContent = `${appointment.caller_name}, now ${dayName(localDay(appointment.starts_at))} at ${span(appointment)}.`;
  fillSlots($("#m-slot"));
  $("#move").showModal();
  $("#m-slot").focus();
}

$("#move-cancel").addEventListener("click", () => $("#move").close());

onSubmit($("#move-form"), async ({ starts_at: starts }) => {
  if (!starts) throw invalid("starts_at", "Choose a time.");
  const moved = await booking(() => api("PATCH", owned(`/api/diary/appointments/${encodeURIComponent(moving.id)}`),
    { starts_at: starts }));
  $("#move").close();
  state.day = localDay(moved.starts_at);
  await refresh();
  say(`Moved: ${moved.caller_name} to ${dayName(state.day)} at ${clock(moved.starts_at)}.`);
});

// -- which days

function go(change) {
  return guarded(async () => {
    change();
    await showDays();
  });
}

const step = () => (state.view === "day" ? 1 : 7);
$("#earlier").addEventListener("click", go(() => { state.day = addDays(state.day, -step()); }));
$("#later").addEventListener("click", go(() => { state.day = addDays(state.day, step()); }));
$("#today").addEventListener("click", go(() => { state.day = state.today; }));
$("#view-day").addEventListener("click", go(() => { state.view = "day"; }));
$("#view-week").addEventListener("click", go(() => { state.view = "week"; }));

start(async () => {
  const diary = await api("GET", owned("/api/diary"));
  state.diary = diary;
  state.zone = diary.timezone;
  state.today = dayIn(state.zone);
  state.day = state.today;
  $("#zone-note").textContent = `Times are in the diary's zone, ${state.zone}.`;
  await refresh();
}, $("#appointments-screen"));
