// Shared by every screen's script: calling the JSON API with the session cookie,
// building elements (never from HTML strings), the status line, errors shown beside
// the field they are about, the confirmation dialog, dates, the collapsing navigation,
// and the notice for a part of the API this server does not have.
import { fieldOf, inWords } from "/static/field_errors.js";

export { fieldOf, inWords };

export class ApiError extends Error {
  constructor(status, payload, path, requestId = null) {
    super((payload && payload.error && payload.error.message) || plainStatus(status));
    this.status = status;
    this.code = payload && payload.error ? payload.error.code : null;
    this.field = payload && payload.error ? payload.error.field : null;
    // Every field refused, when one request checked several ({field, code, message}).
    this.errors = payload && payload.error && payload.error.errors ? payload.error.errors : null;
    this.path = path;
    // The server's x-request-id: the key to the detail in its log.
    this.requestId = requestId;
  }
}

// What a bare status means, for answers without our error body (a proxy's page).
function plainStatus(status) {
  if (status === 0) return "The server could not be reached. Check the connection and try again.";
  if (status >= 500) return "Something went wrong on the server. Try again in a moment.";
  if (status === 404) return "That was not found; it may have been removed.";
  if (status === 403) return "You may not do that.";
  return `The server refused this (status ${status}).`;
}

// A file (a Blob) is sent as itself, with its media type; anything else as JSON.
export async function api(method, path, body, mediaType = null) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body instanceof Blob) {
    init.headers["Content-Type"] = mediaType || body.type || "application/octet-stream";
    init.body = body;
  } else if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, null, path);
  }
  const type = response.headers.get("content-type") || "";
  const payload = type.includes("json") ? await response.json().catch(() => null) : null;
  const error = response.ok ? null
    : new ApiError(response.status, payload, path, response.headers.get("x-request-id"));
  // The session ended (expired, signed out elsewhere): sign in again and come back.
  // Other 401s, such as a wrong current password, are answers to show.
  if (error && error.code === "not_signed_in") {
    location.assign("/login?next=" + encodeURIComponent(location.pathname));
  }
  // The one-time password must be changed before anything else.
  if (error && error.code === "password_change_required" && location.pathname !== "/profile/password") {
    location.assign("/profile/password");
  }
  if (error) throw error;
  return payload;
}

export function $(selector, root = document) { return root.querySelector(selector); }

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const status = () => document.getElementById("status");

export function say(text) {
  status().className = "status ok";
  status().replaceChildren(text);
}

// Done, but with something the person must see to (a provider saved whose models could
// not be listed): in the warning style, with the keyboard put on it so it is read first.
export function warn(text) {
  status().className = "status warning";
  status().replaceChildren(text);
  status().tabIndex = -1;
  status().focus();
}

// Errors shown on a form go when it is sent again.
export function clearErrors(form) {
  for (const note of form.querySelectorAll(".field-error, .form-error")) note.remove();
  for (const control of form.querySelectorAll("[aria-invalid]")) {
    control.removeAttribute("aria-invalid");
    const ids = (control.getAttribute("aria-describedby") || "").split(" ")
      .filter((id) => id && !id.endsWith("-error"));
    if (ids.length) control.setAttribute("aria-describedby", ids.join(" "));
    else control.removeAttribute("aria-describedby");
  }
}

let notes = 0;

// The error beside its field: marked invalid, described by the note, and focused.
export function markField(control, text) {
  if (!control.id) control.id = `field-${++notes}`;
  // At the end of the field's own line (its paragraph, its cell, a ticked box's list
  // item), so it stays under the field when a row of fields flows side by side.
  const note = el("span", { class: "field-error", id: `${control.id}-error` }, text);
  const line = control.closest("p, .field, li");
  if (line) line.append(note);
  else control.after(note);
  control.setAttribute("aria-invalid", "true");
  const described = (control.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
  control.setAttribute("aria-describedby", [...described, note.id].join(" "));
  control.addEventListener("input", () => clearErrors(control.form || control.closest("form")), { once: true });
  control.focus();
}

// The reference a person can quote to whoever reads the server's log: a list, empty
// when the page refused by itself, since replaceChildren would write a null as "null".
function reference(error) {
  return error && error.requestId ? [el("span", { class: "ref" }, ` Reference: ${error.requestId}`)] : [];
}

function words(error) {
  if (error instanceof ApiError) return error.message;
  console.error(error);  // a fault in this page's script: its detail is for developers
  return "Something went wrong in this page. Reload it and try again.";
}

// A refusal the page makes itself before asking the API (two passwords that differ),
// thrown from a form's action to be shown like the API's own.
export function invalid(field, message) {
  return new ApiError(422, { error: { code: "invalid_value", message, field } }, null);
}

// Every field a refusal names: the one of ``field``, or each of ``errors`` when one
// request checked several (the first of them is the refusal's own field).
function refusals(error) {
  if (error.errors && error.errors.length) return error.errors;
  return [{ field: error.field, message: error.message }];
}

// A failure: in the status line in the error style (with the request's reference), and
// on a form, beside each field the API named, or at the top of the form.
export function fail(error, form) {
  let text = words(error);
  if (form && error instanceof ApiError) {
    const marked = refusals(error).map((refusal) => {
      const control = refusal.field ? fieldOf(form, refusal.field) : null;
      return { control, text: inWords(form, refusal, control) };
    });
    // Several refused: the status line says how many, each note says what.
    text = marked.length > 1 ? inWords(form, error, null) : marked[0].text;
    // Marked last to first, so the first refused field keeps the focus.
    for (const { control, text: note } of [...marked].reverse()) if (control) markField(control, note);
    if (!marked.some((m) => m.control)) {
      form.prepend(el("p", { class: "form-error", role: "alert" }, text, reference(error)));
      form.scrollIntoView({ block: "nearest" });
    }
  }
  status().className = "status error";
  status().replaceChildren(el("span", { class: "sign" }, "Not done: "), text, ...reference(error));
}

// A screen's own API answering 404 means this server does not offer it yet.
export function missing(container, error) {
  if (!(error instanceof ApiError) || error.status !== 404) return false;
  container.replaceChildren(el("p", { class: "unavailable", role: "note" },
    `This part is not available on this server yet (${error.path} answered 404).`));
  return true;
}

// A screen's first load: the main region is marked busy until it is filled. With a
// container, a 404 from the screen's own API (this build does not have it) replaces
// the container with a notice; any other refusal shows in the status line.
export async function start(load, container = null) {
  const main = document.getElementById("main");
  main.setAttribute("aria-busy", "true");
  try {
    await load();
  } catch (error) {
    if (!(container && missing(container, error))) fail(error);
  } finally {
    main.setAttribute("aria-busy", "false");
  }
}

export function confirmAction(text) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "cancel";
    dialog.showModal();
    // On the harmless choice, so an Enter pressed out of habit destroys nothing.
    document.getElementById("confirm-cancel").focus();
  });
}

export function when(iso, timeZone) {
  if (!iso) return "—";
  const options = { dateStyle: "medium", timeStyle: "short" };
  if (timeZone) options.timeZone = timeZone;
  return new Date(iso).toLocaleString(undefined, options);
}

// Days as the API reads them (YYYY-MM-DD, UTC), and the day n days after one.
export function isoDay(date) { return date.toISOString().slice(0, 10); }
export function addDays(day, n) { const d = new Date(day + "T00:00:00Z"); d.setUTCDate(d.getUTCDate() + n); return isoDay(d); }

// How long a call lasted, as minutes:seconds ("" while it is still going).
export function length(call) {
  if (!call.ended_at || !call.started_at) return "";
  const total = Math.round((new Date(call.ended_at) - new Date(call.started_at)) / 1000);
  return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, "0")}`;
}

// A link to the page of the call a message or appointment came from, if any.
export function callLink(item) {
  return item.call_id ? [el("br"), el("a", { href: `/calls/${encodeURIComponent(item.call_id)}` }, "The call")] : null;
}

// The form's fields as JSON: checkboxes as booleans, number inputs as numbers, and
// empty optional fields left out (so the API applies its default).
export function formValues(form) {
  const values = {};
  for (const field of form.elements) {
    if (!field.name || field.disabled || field.type === "submit") continue;
    if (field.type === "checkbox") values[field.name] = field.checked;
    else if (field.value === "") continue;
    else if (field.type === "number") values[field.name] = Number(field.value);
    else values[field.name] = field.value;
  }
  return values;
}

// Run a form's submission against the API, with the button held while it runs.
export function onSubmit(form, action) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    clearErrors(form);
    try {
      await action(formValues(form));
    } catch (error) {
      fail(error, form);
    } finally {
      if (button) button.disabled = false;
    }
  });
}

// A form that creates an item or edits a listed one says which: its heading, its submit
// button, and a Cancel button shown only while editing. ``prefix`` names the elements
// (#agent-form-heading, #agent-submit, #agent-cancel); ``edited`` is the name of the item
// being edited, or null while creating.
export function formMode(prefix, edited, { heading, create, save }) {
  $(`#${prefix}-form-heading`).textContent = edited === null ? heading : `Edit ${edited}`;
  $(`#${prefix}-submit`).textContent = edited === null ? create : save;
  $(`#${prefix}-cancel`).hidden = edited === null;
}

// Which listed item such a form (#<prefix>-form) edits: ``editing`` holds it, or null
// while the form creates one.
export class EditedItem {
  constructor(prefix, words) {
    this.prefix = prefix;
    this.words = words;
    this.editing = null;
  }

  // The form edits ``item``, named ``name`` in its heading.
  edit(item, name) {
    this.editing = item;
    formMode(this.prefix, name, this.words);
  }

  // The form emptied and back to creating; what it was editing, if anything.
  stop() {
    const edited = this.editing;
    this.editing = null;
    $(`#${this.prefix}-form`).reset();
    formMode(this.prefix, null, this.words);
    return edited;
  }
}

// The keyboard back on a listed item's Edit (the button in ``list`` marked
// data-edit with the item's id) once the item is saved or its edit cancelled, rather
// than left on a form that has gone back to creating.
export function focusEdit(list, id) {
  const button = list.querySelector(`[data-edit="${CSS.escape(id)}"]`);
  if (button) button.focus();
}

// Fill a table body: one row per item, one cell per column ({label, value, num}).
export function fillRows(tbody, items, columns, empty = "Nothing yet.") {
  const focused = tbody.contains(document.activeElement);
  if (!items.length) {
    tbody.replaceChildren(el("tr", {}, el("td", { colspan: columns.length, class: "muted" }, empty)));
  } else {
    tbody.replaceChildren(...items.map((item) => el("tr", {},
      columns.map((column) => el("td", { class: column.num ? "num" : null }, column.value(item))))));
  }
  if (focused) focusListHeading(tbody);
}

// Redrawing a list takes away the row's button the keyboard was on (the row deleted
// once confirmed, or its Enable become Disable), which drops the focus to the page's
// body and the next Tab back to the top: it goes to the list's heading instead, near
// where it was.
function focusListHeading(tbody) {
  const labelled = tbody.closest("[aria-labelledby]");
  const heading = labelled && document.getElementById(labelled.getAttribute("aria-labelledby"));
  if (!heading) return;
  heading.tabIndex = -1;
  heading.focus();
}

export function options(select, items, label, value, blank) {
  const current = select.value;
  select.replaceChildren(...(blank ? [el("option", { value: "" }, blank)] : []),
    ...items.map((item) => el("option", { value: value(item) }, label(item))));
  if (current) select.value = current;
}

export function guarded(action) {
  return async (...args) => {
    try {
      await action(...args);
    } catch (error) {
      fail(error);
    }
  };
}

// Owner screens act on the signed-in account, or for an administrator on the account
// named by ?account_id= in the page's address (the API takes the same parameter).
export function forAccount() {
  return new URLSearchParams(location.search).get("account_id");
}

export function owned(path) {
  const account = forAccount();
  if (!account) return path;
  return `${path}${path.includes("?") ? "&" : "?"}account_id=${encodeURIComponent(account)}`;
}

// The administrator's choice of whose owner screens these are.
const whose = document.getElementById("whose");
if (whose) {
  api("GET", "/api/admin/users").then(({ data }) => {
    options(whose, data.filter((u) => !u.deactivated), (u) => u.email, (u) => u.id, "myself");
    whose.value = forAccount() || "";
  }).catch(fail);
}

// A button with data-copy="#id" copies that element's text (a value shown once).
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  try {
    await navigator.clipboard.writeText(document.querySelector(button.dataset.copy).textContent);
    say("Copied to your clipboard.");
  } catch (error) {
    fail(error);
  }
});

// On a narrow screen the navigation folds behind the Menu button.
const menu = document.querySelector("button.menu");
if (menu) {
  document.documentElement.classList.add("folding-nav");
  const folded = document.getElementById(menu.getAttribute("aria-controls"));
  const unfold = (open) => {
    menu.setAttribute("aria-expanded", String(open));
    folded.classList.toggle("open", open);
  };
  const unfolded = () => menu.getAttribute("aria-expanded") === "true";
  menu.addEventListener("click", () => unfold(!unfolded()));
  // Escape folds it again, as it closes any menu, and puts the keyboard back on the
  // button rather than on a link that is no longer shown: only from the button or the
  // navigation itself, since elsewhere Escape is a field's (a list of suggestions
  // dismissed) or an open dialog's.
  document.addEventListener("keydown", (event) => {
    const within = event.target === menu || folded.contains(event.target);
    if (event.key !== "Escape" || !unfolded() || !within || document.querySelector("dialog[open]")) return;
    unfold(false);
    menu.focus();
  });
}

// A run of this many characters without a space (an e-mail address, an id, a web
// address) may be broken anywhere in a narrow column; shorter words, media types such
// as "text/markdown" among them, are kept whole.
const UNBROKEN = /\S{14,}/;

// Each cell carries its column's heading, which a narrow screen shows beside it when a
// table's rows become cards (whatever script filled the table), and is marked when it
// holds a long unbroken string (console.css).
function labelCells(table) {
  for (const cell of table.querySelectorAll("td")) cell.classList.toggle("unbroken", UNBROKEN.test(cell.textContent));
  const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
  if (!heads.length) return;
  for (const row of table.querySelectorAll("tbody tr")) {
    [...row.children].forEach((cell, i) => {
      if (heads[i] && !cell.hasAttribute("colspan")) cell.dataset.label = heads[i];
    });
  }
}
// The tables a change touched: the one around what changed (rows filled in), and any
// that came in whole with the added nodes (a section built with its tables).
function tablesChanged(change) {
  const around = change.target.closest && change.target.closest("table");
  const added = [...change.addedNodes].filter((node) => node instanceof Element)
    .flatMap((node) => (node.matches("table") ? [node] : [...node.querySelectorAll("table")]));
  return around ? [around, ...added] : added;
}
const main = document.getElementById("main");
if (main) {
  new MutationObserver((changes) => {
    for (const table of new Set(changes.flatMap(tablesChanged))) labelCells(table);
  }).observe(main, { childList: true, subtree: true });
  main.querySelectorAll("table").forEach(labelCells);
}
