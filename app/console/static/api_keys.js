// Profile → API keys: mint (the value shown once), list, revoke after confirmation.
import { $, api, confirmAction, el, fillRows, guarded, onSubmit, say, start, when } from "/static/console.js";

const PATH = "/api/profile/api-keys";

async function load() {
  const { data } = await api("GET", PATH);
  fillRows($("#keys"), data.slice().reverse(), [
    { value: (k) => k.name },
    { value: (k) => el("code", {}, k.prefix + "…") },
    { value: (k) => when(k.created_at) },
    { value: (k) => (k.expires_at ? when(k.expires_at) : "never") },
    { value: (k) => (k.last_used_at ? when(k.last_used_at) : "never") },
    { value: (k) => k.state },
    { value: (k) => (k.state === "revoked" ? "" : el("button", {
        type: "button", class: "danger", "aria-label": `Revoke ${k.name}`,
        onclick: guarded(() => revoke(k)) }, "Revoke")) },
  ], "You have no keys yet.");
}

async function revoke(key) {
  if (!(await confirmAction(`Revoke the key “${key.name}”? Anything using it stops working at once.`))) return;
  await api("DELETE", `${PATH}/${encodeURIComponent(key.id)}`);
  await load();
  say(`The key “${key.name}” is revoked.`);
}

onSubmit($("#mint"), async (values) => {
  const minted = await api("POST", PATH, values);
  $("#minted-value").textContent = minted.key;
  $("#minted").hidden = false;
  $("#mint").reset();
  await load();
  say(`The key “${minted.name}” is minted.`);
  $("#copy").focus();
});

$("#minted-done").addEventListener("click", () => {
  $("#minted-value").textContent = "";
  $("#minted").hidden = true;
  $("#key-name").focus();
});

start(load);
