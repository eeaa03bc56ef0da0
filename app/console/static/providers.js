// Setup → Providers (administrators): register, refresh the model list, enable or
// disable, delete. Keys are write-only.
import { $, api, confirmAction, el, fillRows, guarded, onSubmit, say, start, warn } from "/static/console.js";

const PATH = "/api/admin/providers";

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
          await load();
          say(`${p.name} is deleted.`);
        }, "danger")) },
  ], "No provider is registered: only the built-in local one answers.");
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
  const provider = await api("POST", PATH, body);
  $("#provider-form").reset();
  let unlisted = null;
  if (!body.models.length) {
    try {
      await api("POST", `${PATH}/${encodeURIComponent(provider.id)}/refresh`);
    } catch (error) {
      unlisted = error;
    }
  }
  await load();
  if (unlisted) {
    warn(`${provider.name} is saved, but its models could not be listed: ${whyNotListed(unlisted, provider.name)}. `
      + "Check the address, or enter the model names.");
  } else {
    say(`${provider.name} is registered.`);
  }
});

start(load);
