// Setup → Projects: the invitations waiting for you (accept or decline), your projects
// (create one; rename or delete one you manage), and the members of the one opened,
// with, for those who manage it, its invitations (invite an email, withdraw one) and a
// Remove beside each member. Who manages a project is the API's word: it lists a
// project's invitations only to its owner and administrators, so a plain member is
// offered no button the API would refuse.
import { $, api, confirmAction, EditedItem, el, fillRows, focusEdit, guarded, onSubmit, say, start, when } from "/static/console.js";

const PATH = "/api/projects";
const FORM_WORDS = { heading: "Create a project", create: "Create project", save: "Save name" };
const me = $("main").dataset.me;
const form = new EditedItem("project", FORM_WORDS);  // the project whose name it edits
let openId = null;  // the project whose members are shown below the form

const manages = (project) => Array.isArray(project.invitations);
const projectPath = (project) => `${PATH}/${encodeURIComponent(project.id)}`;

// What the signed-in person is to a project, in the words of the "You are" column.
function part(project) {
  if (project.owner_id === me) return "owner";
  return manages(project) ? "administrator" : "member";
}

function button(label, aria, action, kind = "secondary") {
  return el("button", { type: "button", class: kind, "aria-label": aria, onclick: guarded(action) }, label);
}

// Take something away once the person has confirmed it: the list is redrawn before the
// status line says so, and fillRows puts the keyboard on that list's heading.
async function removeOnceConfirmed(question, path, done) {
  if (!(await confirmAction(question))) return;
  await api("DELETE", path);
  await load();
  say(done);
}

async function loadInvitations() {
  const { data } = await api("GET", "/api/me/invitations");
  fillRows($("#invitations"), data, [
    { value: (i) => i.project_name },
    { value: (i) => i.invited_by },
    { value: (i) => when(i.invited_at) },
    { value: (i) => el("div", { class: "actions" },
        button("Accept", `Accept the invitation to ${i.project_name}`, () => accept(i), null), declineButton(i)) },
  ], "No invitations for you.");
}

function declineButton(invitation) {
  const project = invitation.project_name;
  return button("Decline", `Decline the invitation to ${project}`, () => removeOnceConfirmed(
    `Decline the invitation to ${project}? Only a new invitation lets you join it.`,
    `/api/me/invitations/${encodeURIComponent(invitation.id)}`, `The invitation to ${project} is declined.`), "danger");
}

async function accept(invitation) {
  const project = await api("POST", `/api/me/invitations/${encodeURIComponent(invitation.id)}/accept`);
  await load();
  say(`You are a member of ${project.name}.`);
}

// A plain member may open a project to see who is in it, and leave it; only those who
// manage it may rename or delete it.
function projectActions(project) {
  const members = button("Members", `Members of ${project.name}`, () => openProject(project));
  if (!manages(project)) return [members, leaveButton(project)];
  return [members,
    el("button", { type: "button", class: "secondary", "aria-label": `Rename ${project.name}`,
      "data-edit": project.id, onclick: () => rename(project) }, "Rename"),
    button("Delete", `Delete ${project.name}`, () => removeOnceConfirmed(
      `Delete the project ${project.name}? Its agents and Libraries stay with their owners; its members no longer reach them.`,
      projectPath(project), `${project.name} is deleted.`), "danger")];
}

function leaveButton(project) {
  return button("Leave", `Leave ${project.name}`, () => removeOnceConfirmed(
    `Leave ${project.name}? You no longer reach what it holds; only a new invitation lets you return.`,
    `${projectPath(project)}/members/${encodeURIComponent(me)}`, `You have left ${project.name}.`), "danger");
}

async function loadProjects() {
  const { data } = await api("GET", PATH);
  fillRows($("#projects"), data, [
    { value: (p) => p.name },
    { value: part },
    { value: (p) => p.members.length, num: true },
    { value: (p) => when(p.created_at) },
    { value: (p) => el("div", { class: "actions" }, projectActions(p)) },
  ], "No projects yet: create one, or accept an invitation.");
  return data;
}

async function load() {
  const [projects] = await Promise.all([loadProjects(), loadInvitations()]);
  // A project deleted while its name was being edited leaves the form creating again.
  if (form.editing && !projects.some((p) => p.id === form.editing.id)) form.stop();
  const open = projects.find((p) => p.id === openId);
  if (open) showProject(open);
  else closeProject();
}

function showMembers(project, managing) {
  $("#members-heading").textContent = `Members of ${project.name}`;
  const owner = `Its owner is ${project.owner_email}. `;
  $("#members-note").textContent = owner + (managing
    ? "Members reach what the project holds. A member removed loses that at once and needs a new invitation to return."
    : "You are a member: you reach what it holds, and may leave. Only its owner or an administrator renames or deletes it, invites or removes members.");
  $("#members-actions").hidden = !managing;
  const remove = { value: (member) => removeButton(project, member) };
  fillRows($("#members"), project.members, [{ value: (m) => m.email }, ...(managing ? [remove] : [])],
    "No members yet.");
}

function removeButton(project, member) {
  return button("Remove", `Remove ${member.email} from ${project.name}`, () => removeOnceConfirmed(
    `Remove ${member.email} from ${project.name}? They no longer reach what it holds.`,
    `${projectPath(project)}/members/${encodeURIComponent(member.account_id)}`,
    `${member.email} is removed from ${project.name}.`), "danger");
}

function showInvited(project) {
  $("#invited-heading").textContent = `Invited to ${project.name}`;
  fillRows($("#invited"), project.invitations, [
    { value: (i) => i.email },
    { value: (i) => when(i.invited_at) },
    { value: (invitation) => withdrawButton(project, invitation) },
  ], "Nobody is invited.");
}

function withdrawButton(project, invitation) {
  return button("Withdraw", `Withdraw the invitation of ${invitation.email}`, () => removeOnceConfirmed(
    `Withdraw the invitation of ${invitation.email} to ${project.name}?`,
    `${projectPath(project)}/invitations/${encodeURIComponent(invitation.id)}`,
    `The invitation of ${invitation.email} is withdrawn.`), "danger");
}

function showProject(project) {
  const managing = manages(project);
  showMembers(project, managing);
  if (managing) showInvited(project);
  $("#members-card").hidden = false;
  $("#invited-card").hidden = !managing;
}

function closeProject() {
  openId = null;
  $("#members-card").hidden = true;
  $("#invited-card").hidden = true;
}

// The members are shown further down the page: the keyboard is taken there.
function openProject(project) {
  openId = project.id;
  showProject(project);
  const heading = $("#members-heading");
  heading.tabIndex = -1;
  heading.focus();
}

function rename(project) {
  form.edit(project, project.name);
  $("#p-name").value = project.name;
  $("#p-name").focus();
}

$("#project-cancel").addEventListener("click", () => {
  const edited = form.stop();
  if (edited) focusEdit($("#projects"), edited.id);
});

onSubmit($("#project-form"), async ({ name }) => {
  const renamed = form.editing;
  const project = renamed ? await api("PATCH", projectPath(renamed), { name }) : await api("POST", PATH, { name });
  form.stop();
  if (!renamed) openId = project.id;
  await load();
  if (!renamed) {
    say(`${project.name} is created; invite its members below.`);
    $("#i-email").focus();
    return;
  }
  focusEdit($("#projects"), project.id);
  say(`${renamed.name} is renamed ${project.name}.`);
});

onSubmit($("#invite-form"), async ({ email }) => {
  const invited = await api("POST", `${PATH}/${encodeURIComponent(openId)}/members`, { email });
  $("#invite-form").reset();
  await load();
  say(invited.message);
});

start(load, $("#projects-screen"));
