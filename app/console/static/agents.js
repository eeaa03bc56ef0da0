// Setup → Agents: create, edit (attach Libraries, choose tools, share in a project),
// archive, and call it.
import { agentUse } from "/static/agent_use.js";
import { chosenTools, loadTools, showTools } from "/static/agent_tools.js";
import { $, api, confirmAction, EditedItem, el, fillRows, focusEdit, guarded, onSubmit, options, say, start } from "/static/console.js";
import { ProjectChoice, projectOf } from "/static/project_choice.js";

const FORM_WORDS = { heading: "Create an agent", create: "Create agent", save: "Save agent" };
const form = new EditedItem("agent", FORM_WORDS);  // the agent it edits, if any
const libraries = new Map();
const project = new ProjectChoice($("#a-project"), $("#a-project-hint"));

function chosenLibraries() {
  return [...document.querySelectorAll("#a-libraries input:checked")].map((box) => box.value);
}

async function load() {
  const { data } = await api("GET", "/api/agents");
  fillRows($("#agents"), data, [
    { value: (a) => a.name },
    { value: (a) => a.model },
    { value: (a) => a.library_ids.map((id) => libraries.get(id) || id).join(", ") || "none" },
    { value: projectOf },
    { value: (a) => a.tool_count, num: true },
    { value: (a) => el("div", { class: "actions" },
        el("a", { href: `/chat?agent=${encodeURIComponent(a.id)}`, "aria-label": `Try it: ${a.name} in the chat` }, "Try it"),
        el("button", { type: "button", class: "secondary", "aria-label": `Edit ${a.name}`, "data-edit": a.id, onclick: () => edit(a) }, "Edit"),
        el("button", { type: "button", class: "danger", "aria-label": `Archive ${a.name}`, onclick: guarded(async () => {
          if (!(await confirmAction(`Archive the agent ${a.name}? Lines and chats using it stop answering.`))) return;
          await api("POST", `/api/agents/${encodeURIComponent(a.id)}/archive`);
          await load();
          say(`${a.name} is archived.`);
        }) }, "Archive")) },
  ], "No agents yet.");
  $("#agent-use").replaceChildren(...(data.length ? data.map(agentUse)
    : [el("p", { class: "muted" }, "Create an agent first.")]));
}

function edit(agent) {
  form.edit(agent, agent.name);
  $("#a-name").value = agent.name;
  $("#a-model").value = agent.model;
  $("#a-instructions").value = agent.instructions;
  for (const box of document.querySelectorAll("#a-libraries input")) box.checked = agent.library_ids.includes(box.value);
  showTools(agent.tools);
  project.show(agent);
  $("#a-name").focus();
}

function stopEditing() {
  const edited = form.stop();
  showTools();
  project.show(null);
  return edited;
}

$("#agent-cancel").addEventListener("click", () => {
  const edited = stopEditing();
  if (edited) focusEdit($("#agents"), edited.id);
});

onSubmit($("#agent-form"), async (values) => {
  const body = { name: values.name, model: values.model, instructions: values.instructions || "",
    library_ids: chosenLibraries(), tools: chosenTools(), ...project.change(form.editing) };
  const edited = form.editing;
  if (edited) await api("PATCH", `/api/agents/${encodeURIComponent(edited.id)}`, body);
  else await api("POST", "/api/agents", body);
  stopEditing();
  await loadTools();
  await load();
  if (edited) focusEdit($("#agents"), edited.id);
  // Said only once the list shows what was saved, so an Edit clicked next opens the saved agent.
  say(`${body.name} is saved.`);
});

start(async () => {
  const models = (await api("GET", "/api/models")).data;
  options($("#a-model"), models, (m) => m, (m) => m);
  const libs = (await api("GET", "/api/libraries")).data;
  for (const lib of libs) libraries.set(lib.id, lib.name);
  $("#a-libraries").replaceChildren(...(libs.length ? libs.map((lib) => el("p", {},
    el("input", { type: "checkbox", id: `lib-${lib.id}`, value: lib.id, "data-list": "library_ids" }), " ",
    el("label", { class: "inline", for: `lib-${lib.id}` }, lib.name))) : [el("p", { class: "muted" }, "No Libraries yet.")]));
  await loadTools();
  await project.load();
  await load();
});
