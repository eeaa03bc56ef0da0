// Profile → Password: the current password, then the new one twice.
import { $, api, invalid, onSubmit, say, start } from "/static/console.js";

onSubmit($("#password"), async (values) => {
  if (values.new_password !== values.repeat) throw invalid("repeat", "The two new passwords differ.");
  await api("POST", "/api/me/password", { current_password: values.current_password,
    new_password: values.new_password });
  $("#password").reset();
  say("Your password is changed.");
});

start(async () => {});
