// Shared by every screen's script: calling the JSON API with the session cookie,
// building elements (never from HTML strings), the status line, the confirmation
// dialog, dates, and the notice for a part of the API this server does not have.

export class ApiError extends Error {
  constructor(status, payload, path) {
    super((payload && payload.error && payload.error.message) || `The server answered ${status}.`);
    this.status = status;
    this.code = payload && payload.error ? payload.error.code : null;
    this.field = payload && payload.error ? payload.error.field : null;
    this.path = path;
  }
}

export async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const type = response.headers.get("content-type") || "";
  const payload = type.includes("json") ? await response.json() : null;
  const error = response.ok ? null : new ApiError(response.status, payload, path);
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
  status().textContent = text;
}

export function fail(error, form) {
  status().className = "status error";
  status().textContent = error.message || String(error);
  if (form && error.field) {
    const field = form.elements.namedItem(error.field);
    if (field && field.focus) {
      field.setAttribute("aria-invalid", "true");
      field.focus();
    }
  }
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
    document.getElementById("confirm-ok").focus();
  });
}

export function when(iso, timeZone) {
  if (!iso) return "—";
  const options = { dateStyle: "medium", timeStyle: "short" };
  if (timeZone) options.timeZone = timeZone;
  return new Date(iso).toLocaleString(undefined, options);
}

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
    field.removeAttribute("aria-invalid");
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
    try {
      await action(formValues(form));
    } catch (error) {
      fail(error, form);
    } finally {
      if (button) button.disabled = false;
    }
  });
}

// Fill a table body: one row per item, one cell per column ({label, value, num}).
export function fillRows(tbody, items, columns, empty = "Nothing yet.") {
  if (!items.length) {
    tbody.replaceChildren(el("tr", {}, el("td", { colspan: columns.length, class: "muted" }, empty)));
    return;
  }
  tbody.replaceChildren(...items.map((item) => el("tr", {},
    columns.map((column) => el("td", { class: column.num ? "num" : null }, column.value(item))))));
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
