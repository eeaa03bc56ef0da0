// One call: its details, the transcript (its chat), and the recording player. The
// transcript and recording are the line's account's or an administrator's only; for
// anyone else the API answers 404 and the page says so.
import { $, api, ApiError, confirmAction, el, fail, fillRows, guarded, length, say, start, when } from "/static/console.js";

const callId = $("main").dataset.callId;
const base = `/api/telephony/calls/${encodeURIComponent(callId)}`;

function pairs(call) {
  const rows = [["Line", call.line_label ? `${call.e164} (${call.line_label})` : call.e164],
    ["Agent", call.agent_name || "—"], ["From", call.from], ["Provider", call.provider],
    ["Outcome", call.outcome], ["Started", when(call.started_at)], ["Ended", when(call.ended_at)],
    ["Length", length(call) || "—"], ["Recording failed", call.recording_failed ? "yes" : "no"],
    ["Tidied away", call.tidied_away ? `yes, ${when(call.tidied_at)}` : "no"]];
  $("#call").replaceChildren(...rows.flatMap(([name, value]) => [el("dt", {}, name), el("dd", {}, value)]));
}

function unavailable(container, text) {
  container.replaceChildren(el("p", { class: "unavailable", role: "note" }, text));
}

// Seconds after the caller stopped speaking, to a tenth; a step that never came is a dash.
function seconds(value) { return value === null || value === undefined ? "—" : `${value.toFixed(1)} s`; }

function timings(call) {
  fillRows($("#turns"), call.turns.map((turn, index) => ({ ...turn, number: index + 1 })), [
    { value: (t) => String(t.number) },
    { value: (t) => seconds(t.asked_s), num: true },
    { value: (t) => seconds(t.first_text_s), num: true },
    { value: (t) => seconds(t.first_audio_s), num: true },
    { value: (t) => seconds(t.finished_s), num: true },
  ], "The agent answered no turn on this call.");
}

async function transcript(call) {
  if (!call.chat_id) {
    unavailable($("#transcript"), call.tidied_away ? "The transcript has been tidied away." : "This call has no transcript.");
    return;
  }
  try {
    const chat = await api("GET", `/api/chats/${encodeURIComponent(call.chat_id)}`);
    $("#transcript").replaceChildren(...chat.messages.map((m) => el("li", {},
      el("span", { class: "who" }, m.role === "user" ? "Caller" : m.role === "assistant" ? "Line" : m.role),
      m.content, el("span", { class: "muted" }, ` · ${when(m.created_at)}`))));
    if (!chat.messages.length) unavailable($("#transcript"), "Nothing was said.");
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    unavailable($("#transcript"), "The transcript is not available to you: only the line's account or an administrator may read it.");
  }
}

$("#play").addEventListener("click", async () => {
  try {
    const response = await fetch(`${base}/recording`, { credentials: "same-origin" });
    if (response.status === 404) {
      unavailable($("#recording"), "There is no recording of this call that you may play.");
      return;
    }
    if (!response.ok) throw new Error(`The recording could not be fetched (${response.status}).`);
    const player = $("#player");
    player.src = URL.createObjectURL(await response.blob());
    player.hidden = false;
    await player.play();
    say("Playing the recording.");
  } catch (error) {
    fail(error);
  }
});

$("#delete-recording").addEventListener("click", guarded(async () => {
  if (!(await confirmAction("Delete the recording of this call? The call and its transcript stay."))) return;
  await api("DELETE", `${base}/recording`);
  $("#player").hidden = true;
  unavailable($("#recording"), "The recording is deleted.");
  say("The recording is deleted.");
}));

$("#delete-transcript").addEventListener("click", guarded(async () => {
  if (!(await confirmAction("Delete the transcript and the recording of this call? The call stays in the log."))) return;
  await api("DELETE", `${base}/transcript`);
  $("#player").hidden = true;
  unavailable($("#transcript"), "The transcript is deleted.");
  unavailable($("#recording"), "The recording is deleted.");
  say("The transcript and recording are deleted.");
}));

start(async () => {
  let call;
  try {
    call = await api("GET", `/api/admin/telephony/calls/${encodeURIComponent(callId)}`);
  } catch (error) {
    // The log entry is for telephony managers; the line's account may still listen.
    if (!(error instanceof ApiError) || error.status !== 403) throw error;
    $("#back").replaceWith(el("a", { href: "/owner/enquiries" }, "Back to the messages"));
    $("#call").replaceWith(el("p", { id: "call", class: "unavailable", role: "note" }, "The call's log entry is for telephony managers."));
    unavailable($("#timings"), "The turns' timings are shown with the call log, which is for telephony managers.");
    unavailable($("#transcript"), "The transcript is shown with the call log, which is for telephony managers.");
    return;
  }
  pairs(call);
  timings(call);
  await transcript(call);
});
