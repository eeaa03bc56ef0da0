// Owner → Notification targets: add (the address is write-only, shown as its host),
// test with a live send and its result, enable or disable, delete.
import { $, api, confirmAction, el, fillRows, forAccount, guarded, onSubmit, owned, say, start, when } from "/static/console.js";

const PATH = "/api/notify-targets";

function attempt(a) {
  if (!a) return "none";
  return `${a.result}${a.status_code ? ` (${a.status_code})` : ""}${a.detail ? `: ${a.detail}` : ""}, ${when(a.at)}`;
}

function name(t) { return t.label || t.host; }

// A kind in the words of the form's choice (what the receiver must be compatible with).
function kindWords(kind) {
  const option = [...$("#n-kind").options].find((o) => o.value === kind);
  return option ? option.textContent : kind;
}

async function load() {
  const { data } = await api("GET", owned(PATH));
  fillRows($("#targets"), data, [
    { value: (t) => kindWords(t.kind) },
    { value: (t) => t.label || "" },
    { value: (t) => t.host },
    { value: (t) => t.events.join(", ") },
    { value: (t) => (t.enabled ? "enabled" : "disabled") },
    { value: (t) => attempt(t.last_attempt) },
    { value: (t) => el("div", { class: "actions" },
        el("button", { type: "button", "aria-label": `Test ${name(t)}`, onclick: guarded(async () => {
          const result = await api("POST", `${PATH}/${encodeURIComponent(t.id)}/test`);
          await load();
          say(`Test of ${name(t)}: ${attempt({ ...result, at: new Date().toISOString() })}`);
        }) }, "Test"),
        el("button", { type: "button", class: "secondary", "aria-label": `${t.enabled ? "Disable" : "Enable"} ${name(t)}`,
          onclick: guarded(async () => {
            await api("PATCH", `${PATH}/${encodeURIComponent(t.id)}`, { enabled: !t.enabled });
            await load();
            say(`${name(t)} is ${t.enabled ? "disabled" : "enabled"}.`);
          }) }, t.enabled ? "Disable" : "Enable"),
        el("button", { type: "button", class: "danger", "aria-label": `Delete ${name(t)}`, onclick: guarded(async () => {
          if (!(await confirmAction(`Delete the target ${name(t)}?`))) return;
          await api("DELETE", `${PATH}/${encodeURIComponent(t.id)}`);
          await load();
          say(`${name(t)} is deleted.`);
        }) }, "Delete")) },
  ], "No targets.");
}

onSubmit($("#target-form"), async (values) => {
  const events = [...document.querySelectorAll(".event:checked")].map((box) => box.value);
  const body = { kind: values.kind, url: values.url, events };
  if (values.label) body.label = values.label;
  if (forAccount()) body.account_id = forAccount();
  const made = await api("POST", PATH, body);
  $("#secret-card").hidden = !made.signing_secret;
  $("#secret").textContent = made.signing_secret || "";
  $("#target-form").reset();
  await load();
  say(`The target at ${made.host} is added.`);
});

start(load, $("#targets-screen"));
