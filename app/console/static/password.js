// Profile → Password: the current password, then the new one twice. An account whose
// password was set for one use only comes here first, with the other screens hidden.
import { $, api, invalid, onSubmit, say, start } from "/static/console.js";

onSubmit($("#password"), async (values) => {
  if (values.new_password !== values.repeat) throw invalid("repeat", "The two new passwords differ.");
  await api("POST", "/api/me/password", { current_password: values.current_password,
    new_password: values.new_password });
  $("#password").reset();
  // A one-time password is gone: the other screens are open now.
  for (const hidden of document.querySelectorAll("[data-until-password]")) hidden.hidden = false;
  $("#one-time")?.remove();
  say("Your password is changed.");
});

start(async () => {});
