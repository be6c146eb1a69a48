// medlink's page works without this file; it only adds two conveniences, and runs nothing from elsewhere
// (the Content-Security-Policy allows scripts from this service only, none inline).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // Ctrl+Enter (or Cmd+Enter) in a text box submits its form.
  for (const box of document.querySelectorAll("form textarea")) {
    box.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        box.form.requestSubmit();
      }
    });
  }
  // A file chosen in an <input type=file data-fills=ID> is read into the text box ID (nothing is uploaded
  // until the form is submitted).
  for (const input of document.querySelectorAll("input[type=file][data-fills]")) {
    input.addEventListener("change", async () => {
      const file = input.files && input.files[0];
      if (file) {
        document.getElementById(input.dataset.fills).value = await file.text();
      }
    });
  }
});
