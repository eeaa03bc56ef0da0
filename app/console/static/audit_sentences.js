// The audit trail read aloud: each entry as one sentence ("ann@example.org archived
// the agent Desk", "3 failed carrier signatures from 203.0.113.9"). An entry holds
// kinds and ids; the API adds the actor's email and the subject's current name.

// What an entry's kind is about, longest prefix first, and how to call it.
const THINGS = [
  ["telephony.recording", "the recording of a call"], ["telephony.transcript", "the transcript of a call"],
  ["telephony.line", "the line"], ["notify.target", "the notification target"],
  ["feature.override", "a feature override"], ["provider_key", "a provider key"],
  ["api_key", "the API key"], ["http_tool", "the HTTP tool"], ["appointment", "an appointment"],
  ["account", "the account"], ["agent", "the agent"], ["library", "the Library"],
  ["document", "the document"], ["provider", "the provider"], ["project", "the project"],
  ["settings", "the setting"],
];

const VERBS = { created: "created", changed: "changed", deleted: "deleted", archived: "archived",
  restored: "restored", revoked: "revoked", released: "released", stored: "stored", played: "played",
  offered: "offered", withdrawn: "withdrew", booked: "booked", cancelled: "cancelled", moved: "moved",
  added: "added", reset: "reset", set: "set", cleared: "cleared", member_added: "added a member to",
  member_removed: "removed a member from", member_invited: "invited someone to",
  invitation_withdrawn: "withdrew an invitation to", invitation_declined: "declined an invitation to",
  joined: "joined", left: "left", talked: "talked in text to" };

const plural = (count, one, many) => `${count} ${count === 1 ? one : many}`;

// What the trail says of sources past its bound for a kind and window: they are counted
// together, without an account or an address (app.services.audit.MANY_SOURCES).
const MANY_ADDRESSES = "many addresses";

// Whose account a stranger tried and from where; an email no account has is not kept.
function signInTarget(e) {
  if (e.data.address === MANY_ADDRESSES) return `from ${MANY_ADDRESSES}`;
  const account = e.subject_name || (e.subject ? "a removed account" : "an unknown email");
  return `as ${account} from ${e.data.address || "an unknown address"}`;
}

// Entries no one acted for: what a stranger or the clock caused, counted.
const UNATTENDED = {
  "telephony.signature.rejected": (e) =>
    `${plural(e.occurrences, "failed carrier signature", "failed carrier signatures")} from ${e.data.address || "an unknown address"}`,
  "telephony.refused": (e) =>
    `${plural(e.occurrences, "call refused", "calls refused")}${e.data.reason ? ` (${String(e.data.reason).replaceAll("_", " ")})` : ""}${e.subject ? ` to ${e.subject}` : ""}`,
  "account.sign_in_failed": (e) =>
    `${plural(e.occurrences, "failed sign-in", "failed sign-ins")} ${signInTarget(e)}`,
  "account.sign_in_slowed": (e) =>
    `${plural(e.occurrences, "sign-in", "sign-ins")} refused while slowed down ${signInTarget(e)}`,
  "telephony.replayed": (e) => `${plural(e.occurrences, "repeated carrier request", "repeated carrier requests")} for a call`,
  "retention.swept": () => "The retention sweep removed old records",
  "telephony.retention.swept": () => "The retention sweep removed old call records",
};

function nameOf(entry) {
  const d = entry.data || {};
  return entry.subject_name || d.name || d.title || d.e164 || d.host || null;
}

export function sentence(entry) {
  if (UNATTENDED[entry.kind]) return UNATTENDED[entry.kind](entry);
  const who = entry.actor_email || (entry.actor_id ? "A removed account" : "The system");
  const times = entry.occurrences > 1 ? ` (${entry.occurrences} times)` : "";
  if (entry.kind === "account.password_changed") return `${who} changed their password${times}`;
  if (entry.kind.startsWith("settings.")) {
    return `${who} ${entry.kind === "settings.reset" ? "reset" : "changed"} the setting ${entry.subject}${times}`;
  }
  if (entry.kind.startsWith("feature.override.")) {
    const whose = entry.subject_name ? ` for ${entry.subject_name}` : "";
    const value = entry.kind.endsWith(".set") ? ` to ${JSON.stringify(entry.data.value)}` : "";
    return `${who} ${entry.kind.endsWith(".set") ? "set" : "cleared"} ${entry.data.key || "a feature"}${value}${whose}${times}`;
  }
  const thing = THINGS.find(([prefix]) => entry.kind.startsWith(`${prefix}.`));
  const verb = thing && VERBS[entry.kind.slice(thing[0].length + 1)];
  if (!verb) return `${who}: ${entry.kind}${entry.subject ? ` on ${entry.subject}` : ""}${times}`;
  const name = nameOf(entry);
  return `${who} ${verb} ${thing[1]}${name ? ` ${name}` : ""}${times}`;
}

// The kinds the action filter suggests.
export const KNOWN_KINDS = [
  ...Object.keys(UNATTENDED), "account.created", "account.changed", "account.password_changed",
  "agent.created", "agent.changed", "agent.archived", "library.created", "library.changed",
  "library.deleted", "document.added", "document.deleted", "provider.created", "provider.changed",
  "provider.deleted", "api_key.created", "api_key.revoked", "settings.changed", "settings.reset",
  "feature.override.set", "feature.override.cleared", "telephony.line.created",
  "telephony.line.changed", "telephony.line.released", "telephony.line.talked",
  "telephony.recording.played",
  "telephony.recording.deleted", "telephony.transcript.deleted", "notify.target.created",
  "notify.target.changed", "notify.target.deleted", "appointment.booked", "appointment.moved",
  "appointment.cancelled",
];
