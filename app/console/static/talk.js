// Owner → Talk to a line: type a caller's turns and read the agent's replies, with the
// tools it used, under the rules of a call. ?line= in the address picks the line.
import { $, api, el, onSubmit, options, owned, say, start } from "/static/console.js";

let conversation = null;

function line() { return $("#talk-line").value; }

function startAgain() {
  conversation = null;
  $("#talk-log").replaceChildren();
  $("#talk-ended").hidden = true;
  $("#talk-form").hidden = !line();
}

function toolLine(call) {
  return el("li", {}, `${call.name}: ${call.status}`);
}

function show(text, answer) {
  const items = [el("li", { class: "caller" }, el("strong", {}, "You: "), text),
    el("li", { class: "agent" }, el("strong", {}, "Line: "), answer.reply)];
  if (answer.tool_calls.length) {
    items.push(el("li", { class: "tools" }, "Tools used:", el("ul", {}, answer.tool_calls.map(toolLine))));
  }
  $("#talk-log").append(...items);
}

onSubmit($("#talk-form"), async (values) => {
  const body = { text: values.text };
  if (conversation) body.conversation_id = conversation;
  const answer = await api("POST", `/api/lines/${encodeURIComponent(line())}/conversation`, body);
  conversation = answer.conversation_id;
  show(values.text, answer);
  $("#talk-text").value = "";
  if (answer.ended) {
    $("#talk-ended").textContent = answer.ended === "transferred"
      ? `The line put the caller through to ${answer.transfer_to}. Start again to talk more.`
      : "The line ended the conversation. Start again to talk more.";
    $("#talk-ended").hidden = false;
    $("#talk-form").hidden = true;
  }
  say("The line answered.");
});

$("#talk-new").addEventListener("click", () => { startAgain(); $("#talk-text").focus(); });
$("#talk-line").addEventListener("change", startAgain);

start(async () => {
  const { data } = await api("GET", owned("/api/telephony/compliance"));
  options($("#talk-line"), data, (l) => `${l.e164}${l.label ? ` (${l.label})` : ""}${l.enabled ? "" : " — disabled"}`,
    (l) => l.line_id);
  const wanted = new URLSearchParams(location.search).get("line");
  if (wanted) $("#talk-line").value = wanted;
  $("#talk-form").hidden = !data.length;
  if (!data.length) {
    $("#talk-ended").textContent = "No line answers for this account.";
    $("#talk-ended").hidden = false;
  }
}, $("#talk-screen"));
