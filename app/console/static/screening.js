// Owner → Screening list: paste names (the answer counts added and skipped), see and
// remove them. Only the owner and administrators are shown the names themselves.
import { $, api, confirmAction, el, fillRows, guarded, onSubmit, owned, say, start } from "/static/console.js";

const PATH = "/api/conflict-names";

async function load() {
  const list = await api("GET", owned(PATH));
  $("#count").textContent = list.count ? `${list.count} names: transfers wait for a clear check.` : "No list: transfers are not held.";
  fillRows($("#names"), list.names || [], [
    { value: (n) => n.name },
    { value: (n) => n.note || "" },
    { value: (n) => el("button", { type: "button", class: "secondary", "aria-label": `Remove ${n.name}`,
        onclick: guarded(async () => {
          await api("DELETE", owned(`${PATH}/${encodeURIComponent(n.id)}`));
          await load();
          say(`${n.name} is removed.`);
        }) }, "Remove") },
  ], "No names.");
  $("#clear").hidden = !list.count;
}

onSubmit($("#paste"), async (values) => {
  const result = await api("POST", owned(PATH), values);
  $("#paste-result").textContent = `Added ${result.added}, skipped ${result.skipped} already on the list.`;
  $("#paste").reset();
  await load();
});

$("#clear").addEventListener("click", guarded(async () => {
  if (!(await confirmAction("Remove every name from your screening list? Transfers are then no longer held."))) return;
  await api("DELETE", owned(PATH), { all: true });
  await load();
  say("The list is empty.");
}));

start(load, $("#screening-screen"));
