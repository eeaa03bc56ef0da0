// Setup → Libraries: create, edit (name, description, project), delete, and upload
// documents (sent as the file itself, its media type from its name, its title in
// ?title=); each document is listed with the start of its text, its size in units and
// whether searches can find it.
import { $, api, confirmAction, EditedItem, el, fillRows, focusEdit, guarded, invalid, onSubmit, say, start, when } from "/static/console.js";
import { ProjectChoice, projectOf } from "/static/project_choice.js";
import { byteSize } from "/static/sizes.js";

let open = null;
const FORM_WORDS = { heading: "Create a Library", create: "Create Library", save: "Save Library" };
const form = new EditedItem("library", FORM_WORDS);  // the Library it edits, if any
const project = new ProjectChoice($("#lib-project"), $("#lib-project-hint"));
const TYPES = { md: "text/markdown", markdown: "text/markdown", html: "text/html", htm: "text/html" };

function mediaType(file) {
  const extension = file.name.split(".").pop().toLowerCase();
  return TYPES[extension] || "text/plain";
}

async function load() {
  const { data } = await api("GET", "/api/libraries");
  fillRows($("#libraries"), data, [
    { value: (l) => l.name },
    { value: (l) => l.description },
    { value: projectOf },
    { value: (l) => l.document_count, num: true },
    { value: (l) => el("div", { class: "actions" },
        el("button", { type: "button", class: "secondary", "aria-label": `Documents of ${l.name}`, onclick: guarded(() => show(l)) }, "Documents"),
        el("button", { type: "button", class: "secondary", "aria-label": `Edit ${l.name}`, "data-edit": l.id, onclick: () => edit(l) }, "Edit"),
        el("button", { type: "button", class: "danger", "aria-label": `Delete ${l.name}`, onclick: guarded(async () => {
          if (!(await confirmAction(`Delete the Library ${l.name} and all its documents?`))) return;
          await api("DELETE", `/api/libraries/${encodeURIComponent(l.id)}`);
          if (open && open.id === l.id) $("#documents-card").hidden = true;
          if (form.editing && form.editing.id === l.id) stopEditing();
          await load();
          say(`${l.name} is deleted.`);
        }) }, "Delete")) },
  ], "No Libraries yet.");
}

// Whether a search can find the document: its passages are written with it.
function indexing(d) {
  if (!d.indexed) return el("span", { class: "fail" }, "not searchable");
  return `searchable, ${d.passages} ${d.passages === 1 ? "passage" : "passages"}`;
}

async function show(library) {
  open = library;
  const { data } = await api("GET", `/api/libraries/${encodeURIComponent(library.id)}/documents`);
  $("#documents-heading").textContent = `Documents of ${library.name}`;
  fillRows($("#documents"), data, [
    { value: (d) => [d.title, el("br"), el("span", { class: "muted preview" }, d.preview)] },
    { value: (d) => d.media_type },
    { value: (d) => byteSize(d.size_bytes), num: true },
    { value: indexing },
    { value: (d) => when(d.created_at) },
    { value: (d) => el("button", { type: "button", class: "danger", "aria-label": `Delete ${d.title}`, onclick: guarded(async () => {
        if (!(await confirmAction(`Delete the document ${d.title}?`))) return;
        await api("DELETE", `/api/libraries/${encodeURIComponent(library.id)}/documents/${encodeURIComponent(d.id)}`);
        await show(library);
        await load();
        say(`${d.title} is deleted.`);
      }) }, "Delete") },
  ], "No documents yet.");
  $("#documents-card").hidden = false;
}

function edit(library) {
  form.edit(library, library.name);
  $("#lib-name").value = library.name;
  $("#lib-description").value = library.description;
  project.show(library);
  $("#lib-name").focus();
}

function stopEditing() {
  project.show(null);
  return form.stop();
}

$("#library-cancel").addEventListener("click", () => {
  const edited = stopEditing();
  if (edited) focusEdit($("#libraries"), edited.id);
});

// Only what the form changed: the API changes only the fields sent.
function changes(library, values) {
  const changed = project.change(library);
  for (const field of ["name", "description"]) {
    const value = values[field] || "";
    if (value !== library[field]) changed[field] = value;
  }
  return changed;
}

async function save(values) {
  const edited = form.editing;
  if (edited) return api("PATCH", `/api/libraries/${encodeURIComponent(edited.id)}`, changes(edited, values));
  return api("POST", "/api/libraries", { name: values.name, description: values.description || "",
    ...project.change(null) });
}

onSubmit($("#library-form"), async (values) => {
  const created = !form.editing;
  const library = await save(values);
  stopEditing();
  await load();
  if (created || (open && open.id === library.id)) await show(library);
  if (!created) focusEdit($("#libraries"), library.id);
  say(created ? `${library.name} is created; upload its documents below.` : `${library.name} is saved.`);
});

onSubmit($("#upload"), async (values) => {
  const file = $("#doc-file").files[0];
  if (!open) return;
  if (!file) throw invalid("content", "Choose a file to upload.");
  const title = (values.title || "").trim() || file.name;
  await api("POST", `/api/libraries/${encodeURIComponent(open.id)}/documents?title=${encodeURIComponent(title)}`,
    file, mediaType(file));
  $("#upload").reset();
  await show(open);
  await load();
  say(`${title} is uploaded.`);
});

start(async () => {
  await project.load();
  await load();
});
