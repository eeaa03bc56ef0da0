// A refusal shown beside the form it answers (its own role="alert" paragraph) and on
// the field the API names, rather than in the page's status line far above.

export function clearError(form, box) {
  box.textContent = "";
  for (const field of form.elements) field.removeAttribute("aria-invalid");
}

export function showError(form, box, message, fieldName) {
  box.textContent = message;
  const field = fieldName ? form.elements.namedItem(fieldName) : null;
  if (field && field.focus) {
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("aria-describedby", box.id);
    field.focus();
  }
}
