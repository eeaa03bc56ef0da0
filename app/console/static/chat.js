// Chat: pick an agent, ask, and read the answer as it arrives, with links to the
// passages it cites. Conversations are listed beside it, to reopen and rename.
// The address carries the open conversation (?chat=) or the agent to start with (?agent=).
import { $, ApiError, api, el, fail, onSubmit, options, say, start } from "/static/console.js";

const agents = new Map();
let chat = null; // the open conversation, as GET /api/chats/{id} answers it
let running = null; // the AbortController of the answer being received

// The document page of a citation, with the cited passage to mark in it.
function sourceHref(citation) {
  return `/libraries/${encodeURIComponent(citation.library_id)}/documents/`
    + `${encodeURIComponent(citation.document_id)}?passage=${encodeURIComponent(citation.snippet || "")}#cited`;
}

// The answer's text with each [n] it cites made a link to that source.
function withMarkers(text, citations) {
  const byNumber = new Map(citations.map((c) => [String(c.number), c]));
  return text.split(/(\[\d{1,3}\])/).map((part) => {
    const cited = byNumber.get(part.slice(1, -1));
    return cited && /^\[\d+\]$/.test(part)
      ? el("a", { href: sourceHref(cited), "aria-label": `Source ${cited.number}: ${cited.title}` }, part)
      : part;
  });
}

function sources(citations) {
  if (!citations.length) return null;
  return el("div", {}, el("span", { class: "who" }, "Sources"),
    el("ol", { class: "sources" }, citations.map((c) => el("li", { value: c.number },
      el("a", { href: sourceHref(c) }, c.title || "Untitled document")))));
}

function bubble(role, text, citations = []) {
  return el("li", { class: role },
    el("span", { class: "who" }, role === "user" ? "You" : agentName(chat && chat.agent_id)),
    el("p", { class: "text" }, role === "assistant" ? withMarkers(text, citations) : text),
    role === "assistant" ? sources(citations) : null);
}

function agentName(id) {
  return agents.get(id) || "The agent";
}

function showChat() {
  $("#chat-heading").textContent = chat ? chat.title || "Untitled conversation" : "New conversation";
  $("#chat-with").textContent = chat ? `With ${agentName(chat.agent_id)}` : "Ask a question to start.";
  $("#rename-form").hidden = !chat;
  if (chat) $("#chat-title").value = chat.title;
  $("#messages").replaceChildren(...(chat ? chat.messages.map((m) => bubble(m.role, m.content, m.citations || [])) : []));
  for (const link of document.querySelectorAll("#chats a")) {
    if (chat && link.dataset.chat === chat.id) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

async function listChats() {
  const { data } = await api("GET", "/api/chats");
  // The first question names an untitled conversation: take the name it was given.
  const open = chat && data.find((c) => c.id === chat.id);
  if (open) chat.title = open.title;
  $("#chats").replaceChildren(...(data.length ? data.map((c) => el("li", {},
    el("a", { href: `/chat?chat=${encodeURIComponent(c.id)}`, "data-chat": c.id, onclick: (event) => {
      event.preventDefault();
      openChat(c.id).catch(fail);
    } }, c.title || "Untitled conversation"))) : [el("li", { class: "muted" }, "No conversations yet.")]));
  showChat();
}

async function openChat(id) {
  chat = await api("GET", `/api/chats/${encodeURIComponent(id)}`);
  history.replaceState(null, "", `/chat?chat=${encodeURIComponent(chat.id)}`);
  if (agents.has(chat.agent_id)) $("#chat-agent").value = chat.agent_id;
  showChat();
  $("#question").focus();
}

function newChat() {
  chat = null;
  history.replaceState(null, "", `/chat?agent=${encodeURIComponent($("#chat-agent").value)}`);
  showChat();
  $("#question").focus();
}

// One server-sent event block ("event: x\ndata: {...}") as [name, payload].
function parseFrame(block) {
  let name = "message";
  let data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) name = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  return [name, data ? JSON.parse(data) : {}];
}

async function* frames(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      yield parseFrame(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
    }
    if (done) return;
  }
}

// Send the question and show the answer piece by piece; the list item is busy until
// the answer is whole, so a screen reader announces it once, complete.
async function ask(content) {
  const response = await fetch(`/api/chats/${encodeURIComponent(chat.id)}/messages`, {
    method: "POST", credentials: "same-origin", signal: running.signal,
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify({ content, stream: true }),
  });
  if (!response.ok) {
    const payload = (response.headers.get("content-type") || "").includes("json") ? await response.json() : null;
    throw new ApiError(response.status, payload, response.url, response.headers.get("x-request-id"));
  }
  chat.messages.push({ role: "user", content, citations: [] });
  const answer = el("li", { class: "assistant", "aria-busy": "true" },
    el("span", { class: "who" }, agentName(chat.agent_id)), el("p", { class: "text" }));
  $("#messages").append(answer);
  const text = $(".text", answer);
  let finished = null;
  try {
    for await (const [name, payload] of frames(response)) {
      if (name === "delta") text.append(payload.text);
      else if (name === "error") answer.append(el("p", { class: "failed", role: "alert" }, payload.message));
      else if (name === "finished") finished = payload;
    }
  } finally {
    answer.setAttribute("aria-busy", "false"); // stopped or broken off: what came is all
  }
  if (finished) {
    chat.messages.push({ role: "assistant", content: finished.text, citations: finished.citations });
    answer.replaceWith(bubble("assistant", finished.text, finished.citations));
  }
}

onSubmit($("#ask-form"), async ({ content }) => {
  if (!content || !content.trim()) return;
  running = new AbortController();
  $("#stop").hidden = false;
  try {
    if (!chat) {
      const made = await api("POST", "/api/chats", { agent_id: $("#chat-agent").value });
      chat = { ...made, messages: [] };
      history.replaceState(null, "", `/chat?chat=${encodeURIComponent(chat.id)}`);
      showChat();
    }
    $("#question").value = "";
    $("#messages").append(bubble("user", content));
    await ask(content);
    await listChats();
  } catch (error) {
    if (error.name === "AbortError") say("The answer was stopped.");
    else throw error;
  } finally {
    running = null;
    $("#stop").hidden = true;
    $("#question").focus();
  }
});

$("#stop").addEventListener("click", () => running && running.abort());

// Enter sends, Shift+Enter starts a new line (as in other chat programs).
$("#question").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("#ask-form").requestSubmit();
  }
});

$("#new-chat").addEventListener("submit", (event) => {
  event.preventDefault();
  newChat();
});

onSubmit($("#rename-form"), async ({ title }) => {
  const renamed = await api("PATCH", `/api/chats/${encodeURIComponent(chat.id)}`, { title });
  chat = { ...chat, ...renamed };
  await listChats();
  say("The conversation is renamed.");
});

start(async () => {
  const { data } = await api("GET", "/api/agents");
  for (const agent of data) agents.set(agent.id, agent.name);
  options($("#chat-agent"), data, (a) => a.name, (a) => a.id);
  if (!data.length) {
    $("#ask-form").replaceChildren(el("p", { class: "unavailable", role: "note" },
      "You have no agents yet. ", el("a", { href: "/agents" }, "Create one"), " to start a conversation."));
  }
  const query = new URLSearchParams(location.search);
  const wanted = query.get("agent");
  if (wanted && agents.has(wanted)) $("#chat-agent").value = wanted;
  await listChats();
  if (query.get("chat")) await openChat(query.get("chat"));
});
