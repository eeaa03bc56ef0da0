// Owner → Enquiries: messages taken on the owner's lines, each one's status changed
// in place (new, in hand, done).
import { $, api, callLink, el, fail, fillRows, onSubmit, owned, say, start, when } from "/static/console.js";

const STATUSES = [["new", "new"], ["in_hand", "in hand"], ["done", "done"]];
let status = "";

function statusControl(enquiry) {
  const select = el("select", { "aria-label": `Status of the message from ${enquiry.caller_name || enquiry.caller_number}` },
    STATUSES.map(([value, label]) => el("option", { value }, label)));
  select.value = enquiry.status;
  select.addEventListener("change", async () => {
    try {
      await api("PATCH", `/api/enquiries/${encodeURIComponent(enquiry.id)}`, { status: select.value });
      say(`The message from ${enquiry.caller_name || enquiry.caller_number} is now ${select.value.replace("_", " ")}.`);
    } catch (error) {
      select.value = enquiry.status;
      fail(error);
    }
  });
  return select;
}

async function load() {
  const { data } = await api("GET", owned(`/api/enquiries${status ? `?status=${encodeURIComponent(status)}` : ""}`));
  fillRows($("#enquiries"), data, [
    { value: (e) => when(e.created_at) },
    { value: (e) => [e.caller_name || "", el("br"), el("span", { class: "muted" }, e.caller_number || "")] },
    { value: (e) => e.subject || "" },
    { value: (e) => [e.message || "", callLink(e)] },
    { value: statusControl },
  ], "No messages.");
}

onSubmit($("#filter"), async (values) => {
  status = values.status || "";
  await load();
});

start(load, $("#enquiries-screen"));
