// Profile → Password: the current password, then the new one twice.
import { $, api, fail, onSubmit, say, start } from "/static/console.js";

onSubmit($("#password"), async (values) => {
  if (values.new_password !== values.repeat) {
    fail({ message: "The two new passwords differ.", field: "repeat" }, $("#password"));
    return;
  }
  await api("POST", "/api/me/password", { current_password: values.current_password,
    new_password: values.new_password });
  $("#password").reset();
  say("Your password is changed.");
});

start(async () => {});
