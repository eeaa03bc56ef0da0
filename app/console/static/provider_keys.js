// Profile → provider keys: a user's own key per provider (stored, never shown).
import { $, api, confirmAction, el, fillRows, guarded, onSubmit, options, say, start, when } from "/static/console.js";

const PATH = "/api/profile/provider-keys";

function show(data) {
  fillRows($("#keys"), data, [
    { value: (k) => k.provider },
    { value: (k) => when(k.created_at) },
    { value: (k) => el("button", { type: "button", class: "danger", "aria-label": `Remove the key for ${k.provider}`,
        onclick: guarded(() => remove(k)) }, "Remove") },
  ], "You use the shared keys for every provider.");
}

async function remove(key) {
  if (!(await confirmAction(`Remove your key for ${key.provider}? Its models then use the shared key.`))) return;
  await api("DELETE", `${PATH}/${encodeURIComponent(key.id)}`);
  say(`Your key for ${key.provider} is removed.`);
  show((await api("GET", PATH)).data);
}

onSubmit($("#add"), async (values) => {
  const { data } = await api("POST", PATH, values);
  $("#add").reset();
  say("Your key is stored.");
  show(data);
});

start(async () => {
  const providers = (await api("GET", "/api/providers")).data;
  options($("#provider"), providers, (p) => p.name, (p) => p.id);
  show((await api("GET", PATH)).data);
});
