// Setup → Providers (administrators): register, edit, refresh the model list, enable
// or disable, delete. Keys are write-only: a key left empty on edit keeps the stored one.
import { $, api, confirmAction, EditedItem, el, fillRows, focusEdit, guarded, onSubmit, say, start, warn } from "/static/console.js";

const PATH = "/api/admin/providers";
const FORM_WORDS = { heading: "Register a provider", create: "Register provider", save: "Save provider" };
const form = new EditedItem("provider", FORM_WORDS);

function button(label, aria, action, kind = "secondary") {
  return el("button", { type: "button", class: kind, "aria-label": aria, onclick: guarded(action) }, label);
}

async function load() {
  const { data } = await api("GET", PATH);
  fillRows($("#providers"), data, [
    { value: (p) => p.name },
    { value: (p) => el("code", {}, p.base_url) },
    { value: (p) => (p.api_key_set ? "stored" : "none") },
    { value: (p) => p.models.join(", ") || "none" },
    { value: (p) => (p.enabled ? "enabled" : "disabled") },
    { value: (p) => el("div", { class: "actions" },
        el("button", { type: "button", class: "secondary", "aria-label": `Edit ${p.name}`, "data-edit": p.id,
          onclick: () => edit(p) }, "Edit"),
        button("Refresh models", `Refresh models of ${p.name}`, async () => {
          await api("POST", `${PATH}/${encodeURIComponent(p.id)}/refresh`);
          await load();
          say(`The models of ${p.name} are refreshed.`);
        }),
        button(p.enabled ? "Disable" : "Enable", `${p.enabled ? "Disable" : "Enable"} ${p.name}`, async () => {
          await api("PATCH", `${PATH}/${encodeURIComponent(p.id)}`, { enabled: !p.enabled });
          await load();
          say(`${p.name} is ${p.enabled ? "disabled" : "enabled"}.`);
        }),
        button("Delete", `Delete ${p.name}`, async () => {
          if (!(await confirmAction(`Delete the provider ${p.name}? Agents using its models stop answering.`))) return;
          await api("DELETE", `${PATH}/${encodeURIComponent(p.id)}`);
          if (form.editing && form.editing.id === p.id) stopEditing();
          await load();
          say(`${p.name} is deleted.`);
        }, "danger")) },
  ], "No provider is registered: only the built-in local one answers.");
}

// The keyboard back on the row's Edit button once its form is saved or closed.
function edit(provider) {
  form.edit(provider, provider.name);
  $("#p-name").value = provider.name;
  $("#p-url").value = provider.base_url;
  $("#p-key").value = "";
  $("#p-key-hint").textContent = provider.api_key_set ? "empty: keep the stored key" : "empty: no key, as now";
  $("#p-models").value = provider.models.join("\n");
  $("#p-name").focus();
}

function stopEditing() {
  $("#p-key-hint").textContent = "";
  return form.stop();
}

$("#provider-cancel").addEventListener("click", () => {
  const edited = stopEditing();
  if (edited) focusEdit($("#providers"), edited.id);
});

// A list of model names as the API keeps it: each name once, in order.
const listed = (models) => [...new Set(models)].sort().join("\n");

// Only what the form changed: a key left empty keeps the stored one.
function changes(body) {
  const { editing } = form;
  const changed = {};
  if (body.name !== editing.name) changed.name = body.name;
  if (body.base_url !== editing.base_url) changed.base_url = body.base_url;
  if (listed(body.models) !== listed(editing.models)) changed.models = body.models;
  if (body.api_key) changed.api_key = body.api_key;
  return changed;
}

// Why the models could not be listed, in the provider's own words: the API's message
// names the listing and the provider before the reason, which the warning says itself.
function whyNotListed(error, name) {
  let reason = error.message.replace(/^The models could not be listed: /, "");
  if (reason.startsWith(`${name}: `)) reason = reason.slice(name.length + 2);
  return reason.replace(/\.$/, "");
}

onSubmit($("#provider-form"), async (values) => {
  const body = { name: values.name, base_url: values.base_url,
    models: (values.models || "").split("\n").map((m) => m.trim()).filter(Boolean) };
  if (values.api_key) body.api_key = values.api_key;
  const edited = form.editing;
  const provider = edited ? await api("PATCH", `${PATH}/${encodeURIComponent(edited.id)}`, changes(body))
    : await api("POST", PATH, body);
  stopEditing();
  let unlisted = null;
  // No model names given: the server is asked for them, on registering and when an edit
  // moves the address or empties the list.
  if (!provider.models.length && (!edited || body.base_url !== edited.base_url || edited.models.length)) {
    try {
      await api("POST", `${PATH}/${encodeURIComponent(provider.id)}/refresh`);
    } catch (error) {
      unlisted = error;
    }
  }
  await load();
  if (edited) focusEdit($("#providers"), provider.id);
  if (unlisted) {
    warn(`${provider.name} is saved, but its models could not be listed: ${whyNotListed(unlisted, provider.name)}. `
      + "Check the address, or enter the model names.");
  } else {
    say(`${provider.name} is ${edited ? "saved" : "registered"}.`);
  }
});

start(load);
