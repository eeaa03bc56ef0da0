// The Project choice of the Agents and Libraries screens. What a project holds is
// reached, and may be edited, by its members; only the thing's owner or an
// administrator moves it into, out of or between projects (the API answers 403
// not_owner to anyone else), so for anyone else the choice is shown disabled, saying why.
import { api, options } from "/static/console.js";

const NOT_SHARED = "None (only you)";
const OWNER_MOVES = "Only its owner or an administrator moves it into or out of a project.";
const ADMINISTRATORS = ["admin", "superadmin"];

export class ProjectChoice {
  // ``select`` is the form's <select name="project_id">; ``hint`` the element its
  // aria-describedby names, which says why the choice is disabled.
  constructor(select, hint) {
    this.select = select;
    this.hint = hint;
    this.viewer = null;  // the signed-in account
    this.projects = [];  // the projects it owns or belongs to
  }

  async load() {
    const [viewer, projects] = await Promise.all([api("GET", "/api/me"), api("GET", "/api/projects")]);
    this.viewer = viewer;
    this.projects = projects.data;
    this.show(null);
  }

  mayMove(item) {
    return ADMINISTRATORS.includes(this.viewer.role) || item.owner_id === this.viewer.id;
  }

  // The choice for ``item`` being edited, or for a new thing (null).
  show(item) {
    const current = item ? item.project_id : null;
    // An owner who has left the project their thing is in still sees where it is.
    const listed = current && !this.projects.some((p) => p.id === current)
      ? [...this.projects, { id: current, name: item.project_name }] : this.projects;
    options(this.select, listed, (p) => p.name, (p) => p.id, NOT_SHARED);
    this.select.value = current || "";
    const fixed = item !== null && !this.mayMove(item);
    this.select.disabled = fixed;
    this.hint.textContent = fixed ? OWNER_MOVES : "";
  }

  // What the form sends of the choice for ``item`` (null: a new thing): project_id
  // only when it changed, null taking the thing out of its project.
  change(item) {
    const chosen = this.select.value || null;
    const before = item ? item.project_id : null;
    return this.select.disabled || chosen === before ? {} : { project_id: chosen };
  }
}

// Where a listed thing is: its project's name, or "none" when only its owner reaches it.
export function projectOf(item) {
  return item.project_name || "none";
}
