/* The digital-ID block: a single-use request prepared on load, presented through the Digital Credentials API. */
(function () {
  "use strict";
  var root = document.querySelector("[data-digital-id]");
  if (!root) { return; }
  var button = root.querySelector("[data-digital-id-button]");
  var status = root.querySelector("[data-digital-id-status]");
  var csrf = root.querySelector("input[name=csrfmiddlewaretoken]").value;
  var testWalletUrl = root.getAttribute("data-test-wallet-url");
  var hasApi = typeof window.DigitalCredential !== "undefined" && navigator.credentials;
  var prepared = null;

  function post(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRFToken": csrf},
      body: JSON.stringify(body)
    }).then(function (response) { return response.json(); });
  }

  function say(text) { status.textContent = text; }
  // The sentences come from the page (flow/texts.py SCRIPT_TEXTS, static/flow/texts.js), in its language.
  function words(key) { return window.AvText ? window.AvText(key) : ""; }

  function withdraw(answer) {
    if (answer.error !== "unavailable" && answer.next) { window.location.assign(answer.next); return; }
    button.hidden = true;
    Array.prototype.forEach.call(root.querySelectorAll("[data-test-wallet]"), function (test) { test.hidden = true; });
    say(answer.message || words("digitalIdUnavailable"));
  }

  function prepare() {
    prepared = null;
    button.disabled = true;
    return post(root.getAttribute("data-request-url"), {}).then(function (answer) {
      if (!answer.requestId) { withdraw(answer); return; }
      prepared = answer;
      button.disabled = false;
      root.setAttribute("data-ready", "true");
    }, function () { say(words("digitalIdPrepareFailed")); });
  }

  function submit(protocol, data) {
    say(words("digitalIdChecking"));
    return post(root.getAttribute("data-response-url"), {
      requestId: prepared.requestId, protocol: protocol, data: data
    }).then(function (answer) {
      if (answer.next) { window.location.assign(answer.next); return; }
      if (answer.error) { withdraw(answer); return; }
      say(answer.message || words("digitalIdNotVerified"));
      return prepare();  // the request was used up: a fresh one for another try
    });
  }

  if (hasApi) {
    root.hidden = false;
    button.hidden = false;
    // The wallet is called in the click handler itself: browsers require the user's gesture.
    button.addEventListener("click", function () {
      if (!prepared) { return; }
      button.disabled = true;
      say(words("digitalIdFollow"));
      navigator.credentials.get({digital: prepared.digital, mediation: "required"}).then(function (credential) {
        return submit(credential.protocol, credential.data);
      }, function () {
        button.disabled = false;
        say(words("digitalIdDeclined"));
      });
    });
  }

  if (testWalletUrl) {
    Array.prototype.forEach.call(root.querySelectorAll("[data-test-wallet]"), function (test) {
      test.addEventListener("click", function () {
        if (!prepared) { return; }
        post(testWalletUrl, {requestId: prepared.requestId, over: test.getAttribute("data-test-wallet") === "true"})
          .then(function (answer) {
            if (!answer.protocol) { withdraw(answer); return; }
            return submit(answer.protocol, answer.data);
          });
      });
    });
  }

  if (hasApi || testWalletUrl) { prepare(); }
}());
