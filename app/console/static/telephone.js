// Admin → Telephone: the settings resource (break-glass), the readiness checks, and
// lines — register, edit, enable, disable, release.
import { $, api, confirmAction, el, fillRows, formMode, guarded, onSubmit, options, say, start } from "/static/console.js";

const LINES = "/api/admin/telephony/numbers";
const CLEARABLE = ["label", "greeting", "notice", "transfer_e164", "deliver_group_chat_id"];
let editing = null;
const FORM_WORDS = { heading: "Register a line", create: "Register line", save: "Save line" };
const names = { agents: new Map(), owners: new Map() };
let me = null;  // who is signed in: a line's account and administrators may talk to it

function showSettings(view) {
  $("#t-provider").value = view.provider || "";
  $("#t-public").value = view.public_base_url || "";
  $("#t-listen").value = view.pbx_listen || "";
  $("#t-credential-state").textContent = view.carrier_credential_set ? "stored" : "not stored";
  $("#t-secret-state").textContent = view.shared_secret_set ? "stored" : "not stored";
  $("#t-effective").textContent = view.effective_public_base_url || "none";
  $("#t-listening").textContent = view.pbx_listening ? "yes" : "no";
}

async function loadSettings() {
  showSettings(await api("GET", "/api/admin/telephony"));
}

// The guide's addresses are made from the public address by the server, which renders
// them into this page (telephone_setup.py): after a save the page is asked for again and
// its guide put in place of this one, so the rule is not written a second time here.
// The page is this server's own, its values escaped by the template; nothing in it runs.
// Another server process may answer from settings a moment older than the save (each
// keeps them for up to a second), so a page whose guide is not for the public address
// now in force is asked for again, a few times, after a pause.
const GUIDE_TRIES = 3;
const GUIDE_PAUSE_MS = 600;

async function fetchedGuide() {
  try {
    const response = await fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (!response.ok) return null;
    return new DOMParser().parseFromString(await response.text(), "text/html").getElementById("connect");
  } catch {
    return null;
  }
}

// False when no page had the guide for ``publicBase``: the settings are saved all the same.
async function reloadGuide(publicBase) {
  for (let attempt = 1; attempt <= GUIDE_TRIES; attempt += 1) {
    const guide = await fetchedGuide();
    if (guide && guide.dataset.publicBase === publicBase) {
      $("#connect").replaceWith(document.adoptNode(guide));
      return true;
    }
    if (attempt < GUIDE_TRIES) await new Promise((resolve) => setTimeout(resolve, GUIDE_PAUSE_MS));
  }
  return false;
}

if ($("#settings")) {
  onSubmit($("#settings"), async (values) => {
    const body = { provider: values.provider || null, public_base_url: values.public_base_url || "",
      pbx_listen: values.pbx_listen || "" };
    for (const secret of ["carrier_credential", "shared_secret"]) if (values[secret]) body[secret] = values[secret];
    // The answer is the settings as saved, read by the process that saved them.
    const saved = await api("PUT", "/api/admin/telephony", body);
    $("#t-credential").value = "";
    $("#t-secret").value = "";
    showSettings(saved);
    say(await reloadGuide(saved.effective_public_base_url || "") ? "The telephone settings are saved."
      : "Saved; reload the page to see the new addresses in the guide.");
  });
  guarded(loadSettings)();
}

$("#run-checks").addEventListener("click", guarded(async () => {
  $("#run-checks").disabled = true;
  try {
    const result = await api("GET", "/api/admin/telephony/check");
    fillRows($("#checks"), result.checks, [
      { value: (c) => c.id },
      { value: (c) => el("span", { class: c.status }, c.status) },
      { value: (c) => c.message },
    ]);
    $("#ready").textContent = result.ready ? "Ready to take calls." : "Not ready yet.";
    say("The checks have run.");
  } finally {
    $("#run-checks").disabled = false;
  }
}));

function lineActions(line) {
  const talks = me && (me.role !== "user" || me.id === line.owner_user_id);
  return el("div", { class: "actions" },
    talks ? el("a", { href: `/owner/talk?line=${encodeURIComponent(line.id)}`,
      "aria-label": `Talk to ${line.e164}` }, "Talk") : null,
    el("button", { type: "button", class: "secondary", "aria-label": `Edit ${line.e164}`,
      onclick: () => edit(line) }, "Edit"),
    el("button", { type: "button", "aria-label": `${line.enabled ? "Disable" : "Enable"} ${line.e164}`,
      onclick: guarded(async () => {
        await api("PATCH", `${LINES}/${encodeURIComponent(line.id)}`, { enabled: !line.enabled });
        await loadLines();
        say(`${line.e164} is ${line.enabled ? "disabled" : "enabled"}.`);
      }) }, line.enabled ? "Disable" : "Enable"),
    el("button", { type: "button", class: "danger", "aria-label": `Release ${line.e164}`,
      onclick: guarded(async () => {
        if (!(await confirmAction(`Release ${line.e164} for good? Its calls stay in the log.`))) return;
        await api("DELETE", `${LINES}/${encodeURIComponent(line.id)}`);
        await loadLines();
        say(`${line.e164} is released.`);
      }) }, "Release"));
}

async function loadLines() {
  const { data } = await api("GET", LINES);
  fillRows($("#lines"), data, [
    { value: (l) => [l.e164, l.warning ? el("p", { class: "error" }, l.warning) : null] },
    { value: (l) => l.label || "" },
    { value: (l) => l.provider },
    { value: (l) => names.agents.get(l.agent_id) || l.agent_id || "—" },
    { value: (l) => names.owners.get(l.owner_user_id) || l.owner_user_id || "—" },
    { value: (l) => (l.enabled ? "enabled" : "disabled") },
    { value: (l) => (l.record_calls ? `yes, ${l.recording_days} days` : "no") },
    { value: (l) => l.agent_tool_count, num: true },
    { value: lineActions },
  ], "No line is registered.");
}

function edit(line) {
  editing = line;
  const form = $("#line-form");
  for (const field of form.elements) {
    if (!field.name || !(field.name in line)) continue;
    if (field.type === "checkbox") field.checked = Boolean(line[field.name]);
    else field.value = line[field.name] ?? "";
  }
  formMode("line", line.e164, FORM_WORDS);
  $("#l-e164").focus();
}

function stopEditing() {
  editing = null;
  $("#line-form").reset();
  formMode("line", null, FORM_WORDS);
}

$("#line-cancel").addEventListener("click", stopEditing);

// spec stripping keeps a bracketed trunk prefix, which yields a wrong number.
$("#l-e164").addEventListener("input", (event) => {
  $("#l-e164-hint").textContent = /\(0\)/.test(event.target.value)
    ? "Leave out the (0): it is kept as a digit and makes a wrong number." : "";
});

onSubmit($("#line-form"), async (values) => {
  let saved;
  if (editing) {
    for (const field of CLEARABLE) if (!(field in values) && editing[field] !== null) values[field] = null;
    await api("PATCH", `${LINES}/${encodeURIComponent(editing.id)}`, values);
    saved = `${values.e164} is saved.`;
  } else {
    const line = await api("POST", LINES, values);
    saved = `${line.e164} is registered, switched off until you enable it.`;
  }
  stopEditing();
  await loadLines();
  say(saved);  // once the list shows it, so the next click acts on what was saved
});

async function loadChoices() {
  me = await api("GET", "/api/me");
  const agents = (await api("GET", "/api/agents")).data;
  for (const agent of agents) names.agents.set(agent.id, agent.name);
  options($("#l-agent"), agents, (a) => a.name, (a) => a.id, "Choose an agent");
  try {
    const users = (await api("GET", "/api/admin/users")).data.filter((u) => !u.deactivated);
    for (const user of users) names.owners.set(user.id, user.email);
    options($("#l-owner"), users, (u) => `${u.email}${u.role === "user" ? "" : ` (${u.role})`}`, (u) => u.id,
      "Choose an account");
  } catch (error) {
    if (error.status !== 403) throw error;
    // Only administrators list accounts: others give the account's id.
    $("#l-owner").replaceWith(el("input", { id: "l-owner", name: "owner_user_id", required: true,
      placeholder: "account id" }));
  }
}

start(async () => {
  await loadChoices();
  await loadLines();
});
