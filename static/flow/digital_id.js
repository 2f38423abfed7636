/* The digital-ID block: a single-use request prepared on load, presented through the Digital Credentials API;
   or, without that API or at the user's choice, a QR code (a link on a phone) for a wallet on a phone, whose
   progress the page follows until the session is decided. */
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
  var phoneButton = root.querySelector("[data-phone-button]");
  var phone = root.querySelector("[data-phone]");
  var phoneQr = root.querySelector("[data-phone-qr]");
  var phoneLink = root.querySelector("[data-phone-link]");
  var phoneRenew = root.querySelector("[data-phone-renew]");
  var phoneRequest = null;
  var onPhone = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;
  var POLL_MS = 1500;

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
    phoneRequest = null;
    if (phoneButton) { phoneButton.hidden = true; }
    if (phone) { phone.hidden = true; }
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

  function phoneFollow(requestId) {
    if (!phoneRequest || phoneRequest !== requestId) { return; }
    post(root.getAttribute("data-phone-progress-url"), {requestId: requestId}).then(function (answer) {
      if (phoneRequest !== requestId) { return; }
      if (answer.next) { window.location.assign(answer.next); return; }
      if (answer.error) { withdraw(answer); return; }
      if (answer.state === "waiting" || answer.state === "fetched" || answer.state === "checking") {
        if (answer.state === "fetched") { say(words("digitalIdPhoneFetched")); }
        if (answer.state === "checking") { say(words("digitalIdChecking")); }
        window.setTimeout(function () { phoneFollow(requestId); }, POLL_MS);
        return;
      }
      // Answered without a decision, or past its time: this code is spent; the user may ask for another.
      phoneRequest = null;
      phoneQr.textContent = "";
      phoneLink.hidden = true;
      phoneRenew.hidden = false;
      say(answer.message || words("digitalIdPhoneExpired"));
    }, function () { window.setTimeout(function () { phoneFollow(requestId); }, POLL_MS * 2); });
  }

  function phoneStart() {
    phoneRequest = null;
    phoneRenew.hidden = true;
    if (phoneButton) { phoneButton.hidden = true; }
    button.hidden = true;  // one request per session at a time: the phone's replaces the browser's
    phone.hidden = false;
    return post(root.getAttribute("data-phone-url"), {}).then(function (answer) {
      if (!answer.requestId) { withdraw(answer); return; }
      phoneRequest = answer.requestId;
      phoneQr.innerHTML = answer.qrSvg;  // made by the service (segno) from its own link
      phoneLink.href = answer.link;
      phoneLink.hidden = !onPhone;
      root.setAttribute("data-phone-ready", "true");
      say(words("digitalIdPhoneWaiting"));
      phoneFollow(answer.requestId);
    }, function () { say(words("digitalIdPrepareFailed")); });
  }

  if (root.getAttribute("data-phone-url")) {
    root.hidden = false;
    phoneButton.addEventListener("click", phoneStart);
    phoneRenew.addEventListener("click", phoneStart);
    if (hasApi) { phoneButton.hidden = false; } else { phoneStart(); }
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
