// Admin → Accounts: create accounts, change role and permissions, deactivate, switch a
// feature on or off for one account (config.manage), and revoke an account's API keys.
// Only the super-administrator is offered the administrator roles; the API decides.
import { $, api, confirmAction, el, fillRows, guarded, onSubmit, say, start, when } from "/static/console.js";

const PERMISSIONS = ["telephony.manage", "voice.manage", "config.manage"];
const main = $("main");
const roles = main.dataset.superadmin === "yes" ? ["user", "admin", "superadmin"] : ["user"];
let chosen = null;

function permissionBoxes(container, prefix, granted = []) {
  container.replaceChildren(...PERMISSIONS.map((p) => el("p", {},
    el("input", { type: "checkbox", id: `${prefix}-${p}`, value: p, "data-list": "permissions", checked: granted.includes(p) }), " ",
    el("label", { class: "inline", for: `${prefix}-${p}` }, p))));
}

function checked(container) {
  return [...container.querySelectorAll("input:checked")].map((box) => box.value);
}

function roleOptions(select, current) {
  const choices = roles.includes(current) ? roles : [current, ...roles];
  select.replaceChildren(...choices.map((r) => el("option", { value: r }, r)));
  select.value = current;
}

async function load() {
  const { data } = await api("GET", "/api/admin/users");
  fillRows($("#accounts"), data, [
    { value: (a) => a.email },
    { value: (a) => a.role },
    { value: (a) => (a.role === "user" ? a.permissions.join(", ") || "none" : "all, by role") },
    { value: (a) => (a.deactivated ? "deactivated" : "active") },
    { value: (a) => el("div", { class: "actions" },
        el("button", { type: "button", class: "secondary", "aria-label": `Manage ${a.email}`, onclick: guarded(() => choose(a)) }, "Manage"),
        a.id === main.dataset.me ? null : el("button", { type: "button", class: a.deactivated ? "secondary" : "danger",
          "aria-label": `${a.deactivated ? "Reactivate" : "Deactivate"} ${a.email}`, onclick: guarded(async () => {
            if (!a.deactivated && !(await confirmAction(`Deactivate ${a.email}? Their sessions end at once and their lines refuse calls.`))) return;
            await api("PATCH", `/api/admin/users/${encodeURIComponent(a.id)}`, { deactivated: !a.deactivated });
            await load();
            say(`${a.email} is ${a.deactivated ? "active again" : "deactivated"}.`);
          }) }, a.deactivated ? "Reactivate" : "Deactivate")) },
  ]);
}

async function features(account) {
  if (main.dataset.config !== "yes") {
    $("#features").replaceChildren(el("tr", {}, el("td", { colspan: 3, class: "muted" }, "Needs the config.manage permission.")));
    return;
  }
  const view = await api("GET", `/api/admin/users/${encodeURIComponent(account.id)}/features`);
  fillRows($("#features"), view.features, [
    { value: (f) => f.key },
    { value: (f) => (f.global ? "on" : "off") },
    { value: (f) => {
        const select = el("select", { "aria-label": `${f.key} for ${account.email}` },
          el("option", { value: "" }, "as for everyone"), el("option", { value: "true" }, "on"), el("option", { value: "false" }, "off"));
        select.value = f.override === null ? "" : String(f.override);
        select.addEventListener("change", guarded(async () => {
          const path = `/api/admin/users/${encodeURIComponent(account.id)}/features/${encodeURIComponent(f.key)}`;
          if (select.value === "") await api("DELETE", path);
          else await api("PUT", path, { value: select.value === "true" });
          await features(account);
          say(`${f.key} for ${account.email}: ${select.value === "" ? "as for everyone" : select.value === "true" ? "on" : "off"}.`);
        }));
        return select;
      } },
  ]);
}

async function keys(account) {
  const { data } = await api("GET", `/api/admin/users/${encodeURIComponent(account.id)}/api-keys`);
  fillRows($("#account-keys"), data, [
    { value: (k) => k.name },
    { value: (k) => el("code", {}, `${k.prefix}…`) },
    { value: (k) => (k.last_used_at ? when(k.last_used_at) : "never") },
    { value: (k) => k.state },
    { value: (k) => (k.state === "revoked" ? "" : el("button", { type: "button", class: "danger", "aria-label": `Revoke ${k.name}`,
        onclick: guarded(async () => {
          if (!(await confirmAction(`Revoke ${account.email}'s key “${k.name}”? It stops working at once.`))) return;
          await api("DELETE", `/api/admin/api-keys/${encodeURIComponent(k.id)}`);
          await keys(account);
          say(`The key “${k.name}” is revoked.`);
        }) }, "Revoke")) },
  ], "No keys.");
}

async function choose(account) {
  chosen = account;
  $("#account-heading").textContent = account.email;
  roleOptions($("#g-role"), account.role);
  permissionBoxes($("#g-permissions"), "g", account.permissions);
  $("#account-card").hidden = false;
  await features(account);
  try {
    await keys(account);
  } catch (error) {
    // key management is absent while the public API is off
    $("#account-keys").replaceChildren(el("tr", {}, el("td", { colspan: 5, class: "muted" }, error.message)));
  }
  $("#g-role").focus();
}

onSubmit($("#grants"), async (values) => {
  const body = { permissions: checked($("#g-permissions")) };
  if (values.role !== chosen.role) body.role = values.role;
  chosen = await api("PATCH", `/api/admin/users/${encodeURIComponent(chosen.id)}`, body);
  await load();
  say(`${chosen.email} is saved.`);
});

onSubmit($("#new-account"), async (values) => {
  const made = await api("POST", "/api/admin/users", { email: values.email, password: values.password,
    role: values.role, permissions: checked($("#n-permissions")) });
  $("#new-account").reset();
  await load();
  say(`${made.email} is created.`);
});

roleOptions($("#n-role"), "user");
permissionBoxes($("#n-permissions"), "n");
start(load);
