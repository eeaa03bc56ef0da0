// Agents → calling an agent from one's own programs: its /v1 model id and a ready
// curl and Python (openai SDK) request against this server's own address, each with
// a copy button.
import { el } from "/static/console.js";

function curlSnippet(base, model) {
  return [
    `curl ${base}/v1/chat/completions \\`,
    `  -H "Authorization: Bearer $SVC_API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello"}]}'`,
  ].join("\n");
}

function pythonSnippet(base, model) {
  return [
    "import os",
    "from openai import OpenAI",
    "",
    `client = OpenAI(base_url="${base}/v1", api_key=os.environ["SVC_API_KEY"])`,
    "reply = client.chat.completions.create(",
    `    model="${model}",`,
    '    messages=[{"role": "user", "content": "Hello"}],',
    ")",
    "print(reply.choices[0].message.content)",
  ].join("\n");
}

// A value in a <pre> or <code> with an id, and a button copying it (console.js
// copies the text of the element named by data-copy). The value scrolls sideways on a
// narrow screen, so the keyboard can reach it, and a named region says what it is.
function copyable(tag, id, label, value) {
  const named = label.charAt(0).toUpperCase() + label.slice(1);
  return el("div", { class: "copyable" },
    el(tag, { id, class: "secret", tabindex: "0", role: "region", "aria-label": named }, value),
    el("button", { type: "button", class: "secondary", "data-copy": `#${id}`, "aria-label": `Copy ${label}` }, "Copy"));
}

export function agentUse(agent) {
  const base = window.location.origin;
  const model = "agent/" + agent.id; // a model id, not an address
  return el("details", { class: "agent-use" },
    el("summary", {}, agent.name, " ", el("code", {}, model)),
    el("p", {}, "Model id for the API under /v1 (use it as ", el("code", {}, "model"), "), with a key from ",
      el("a", { href: "/profile/keys" }, "API keys"), ":"),
    copyable("code", `model-${agent.id}`, `the model id of ${agent.name}`, model),
    el("p", {}, "With curl:"),
    copyable("pre", `curl-${agent.id}`, `the curl request for ${agent.name}`, curlSnippet(base, model)),
    el("p", {}, "With Python and the openai package:"),
    copyable("pre", `python-${agent.id}`, `the Python request for ${agent.name}`, pythonSnippet(base, model)));
}
