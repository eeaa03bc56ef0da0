// Admin → Messages: the messages taken on every line (telephony.manage), read only.
import { $, api, callLink, el, fillRows, onSubmit, start, when } from "/static/console.js";

const accounts = new Map();
let status = "";

async function load() {
  const { data } = await api("GET", `/api/admin/telephony/enquiries${status ? `?status=${encodeURIComponent(status)}` : ""}`);
  fillRows($("#messages"), data, [
    { value: (e) => when(e.created_at) },
    { value: (e) => accounts.get(e.account_id) || e.account_id },
    { value: (e) => [e.caller_name || "", el("br"), el("span", { class: "muted" }, e.caller_number || "")] },
    { value: (e) => e.subject || "" },
    { value: (e) => [e.message || "", callLink(e)] },
    { value: (e) => e.status.replace("_", " ") },
  ], "No messages.");
}

onSubmit($("#filter"), async (values) => {
  status = values.status || "";
  await load();
});

start(async () => {
  try {
    for (const user of (await api("GET", "/api/admin/users")).data) accounts.set(user.id, user.email);
  } catch (error) {
    if (error.status !== 403) throw error;  // only administrators list accounts
  }
  await load();
}, $("#messages-screen"));
