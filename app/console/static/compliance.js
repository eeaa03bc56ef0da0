// Owner → Compliance: for each of the owner's lines (every line, for an administrator)
// what a caller hears first, what is recorded, how long each thing is kept, whether a
// screening list holds transfers, and whether news of calls leaves the service.
import { $, api, el, owned, start } from "/static/console.js";

function days(n) { return n ? `${n} days` : "kept until deleted by hand"; }

function line(l) {
  const facts = [
    ["State", l.enabled ? "enabled: answering calls" : "disabled"],
    ["Opening, spoken before anything else", l.opening],
    ["Notice", l.standard_notice ? "the standard wording" : "the line's own wording"],
    ["Recording", l.recording.on ? `every call, kept ${l.recording.days} days` : "off"],
    ["Transcripts", days(l.retention.transcript_days)],
    ["Call log entries", days(l.retention.log_days)],
    ["Screening list", l.screening_list.exists ? `${l.screening_list.size} names: transfers wait for a clear check` : "none"],
    ["Outward notifications", l.notifications.on
      ? `sent to ${l.notifications.enabled_targets} ${l.notifications.enabled_targets === 1 ? "target" : "targets"}`
      : l.notifications.switched_on ? "no enabled target" : "switched off for the whole service"],
  ];
  return el("section", { class: "card" },
    el("h2", {}, l.label ? `${l.e164} (${l.label})` : l.e164),
    el("dl", { class: "pairs" }, facts.flatMap(([name, value]) => [el("dt", {}, name), el("dd", {}, value)])));
}

start(async () => {
  const view = await api("GET", owned("/api/telephony/compliance"));
  $("#compliance").replaceChildren(
    el("p", {}, view.notifications_switched_on ? "Outward notifications are switched on for the service."
      : "Outward notifications are switched off for the service: nothing about calls is sent anywhere."),
    ...(view.data.length ? view.data.map(line) : [el("p", { class: "muted" }, "No lines are registered to this account.")]));
}, $("#compliance-screen"));
