/* The frame (or popup) document of SDK mode. It answers only its parent (or opener) at the exact origin
   the page was opened for, and only messages from that very window. `begin` carries the client secret
   (or, with client sessions on, a subject); the frame binds itself to the session, checks that its
   cookie came back, then opens the flow. Errors go back as typed codes before the user does anything. */
(function () {
  "use strict";
  var root = document.getElementById("embed");
  var parentOrigin = root.getAttribute("data-parent-origin");
  var channel = root.getAttribute("data-channel");
  var peer = channel === "popup" ? window.opener : window.parent;
  var begun = false;
  var clientSecret = "";

  function send(type, data) {
    if (peer && peer !== window) {
      peer.postMessage({ protocol: "ageverify", version: 1, type: type, data: data || {} }, parentOrigin);
    }
  }

  // What the user reads comes translated from the page; `detail` (for the developer) goes to the SDK only.
  function fail(code, detail, extra) {
    var text = { camera_blocked: "data-text-camera", storage_blocked: "data-text-storage" }[code] || "data-text-generic";
    document.getElementById("embed-title").textContent = root.getAttribute("data-text-refused");
    document.getElementById("embed-message").textContent = root.getAttribute(text);
    var data = { code: code, message: detail || "" };
    if (extra) { Object.keys(extra).forEach(function (name) { data[name] = extra[name]; }); }
    send("error", data);
  }

  function post(url, body) {
    body.key = root.getAttribute("data-key");
    body.origin = parentOrigin;
    body.channel = channel;
    return fetch(url, {
      method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().then(function (answer) { return { ok: response.ok, body: answer }; });
    });
  }

  function cameraAllowed() {
    var policy = document.permissionsPolicy || document.featurePolicy;
    return !(channel === "frame" && policy && policy.allowsFeature && !policy.allowsFeature("camera"));
  }

  function begin(data) {
    var body = { locale: root.getAttribute("data-locale") };
    if (data.session) { body.session = { subject: String(data.session.subject || "") }; }
    else { body.clientSecret = String(data.clientSecret || ""); }
    post(root.getAttribute("data-begin-url"), body).then(function (answer) {
      if (!answer.ok) { fail(answer.body.code, answer.body.detail); return null; }
      clientSecret = answer.body.clientSecret || body.clientSecret;
      // The cookie just set must come back, or the browser blocks this frame's storage.
      return fetch(root.getAttribute("data-check-url"), { credentials: "same-origin" }).then(function (check) {
        if (!check.ok) {
          fail("storage_blocked", "", answer.body.clientSecret ? { clientSecret: answer.body.clientSecret } : null);
          return;
        }
        send("started", { mode: answer.body.mode });
        window.location.replace(answer.body.next);
      });
    }).catch(function () {
      fail("network_error", "");
    });
  }

  function launch(data) {
    post(root.getAttribute("data-launch-url"), { clientSecret: clientSecret, returnUrl: data.returnUrl || "" })
      .then(function (answer) {
        if (!answer.ok) { fail(answer.body.code, answer.body.detail); return; }
        send("launch", { url: answer.body.launchUrl });
      });
  }

  window.addEventListener("message", function (event) {
    var message = event.data;
    if (event.origin !== parentOrigin || event.source !== peer) { return; }
    if (!message || message.protocol !== "ageverify" || message.version !== 1) { return; }
    if (message.type === "begin" && !begun) { begun = true; begin(message.data || {}); }
    else if (message.type === "launch" && clientSecret) { launch(message.data || {}); }
  });

  if (root.getAttribute("data-refusal")) {
    fail(root.getAttribute("data-refusal"), root.getAttribute("data-refusal-detail"));
    return;
  }
  if (!cameraAllowed()) {
    fail("camera_blocked", "");
    return;
  }
  send("ready", {});
})();
