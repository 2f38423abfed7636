/* Age passes: save one with a new passkey (result page), use one (first page), show or delete one (own page). */
(function () {
  "use strict";
  var root = document.querySelector("[data-age-pass]");
  if (!root) { return; }
  var status = root.querySelector("[data-age-pass-status]");
  var csrf = root.querySelector("input[name=csrfmiddlewaretoken]").value;
  var role = root.getAttribute("data-age-pass");

  function say(text) { status.textContent = text; }
  function post(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRFToken": csrf},
      body: JSON.stringify(body || {})
    }).then(function (response) { return response.json(); });
  }
  function fromB64url(text) {
    var b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    while (b64.length % 4) { b64 += "="; }
    var raw = atob(b64), bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
    return bytes.buffer;
  }
  function toB64url(buffer) {
    var bytes = new Uint8Array(buffer), raw = "";
    for (var i = 0; i < bytes.length; i++) { raw += String.fromCharCode(bytes[i]); }
    return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function creationOptions(json) {
    var options = Object.assign({}, json);
    options.challenge = fromB64url(json.challenge);
    options.user = Object.assign({}, json.user, {id: fromB64url(json.user.id)});
    options.excludeCredentials = (json.excludeCredentials || []).map(function (c) {
      return Object.assign({}, c, {id: fromB64url(c.id)});
    });
    return options;
  }
  function requestOptions(json) {
    var options = Object.assign({}, json);
    options.challenge = fromB64url(json.challenge);
    options.allowCredentials = (json.allowCredentials || []).map(function (c) {
      return Object.assign({}, c, {id: fromB64url(c.id)});
    });
    return options;
  }
  function credentialJson(credential) {
    var response = credential.response, json = {
      id: credential.id, rawId: toB64url(credential.rawId), type: credential.type,
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment, response: {
        clientDataJSON: toB64url(response.clientDataJSON)
      }
    };
    if (response.attestationObject) {
      json.response.attestationObject = toB64url(response.attestationObject);
      json.response.transports = response.getTransports ? response.getTransports() : [];
    } else {
      json.response.authenticatorData = toB64url(response.authenticatorData);
      json.response.signature = toB64url(response.signature);
      if (response.userHandle) { json.response.userHandle = toB64url(response.userHandle); }
    }
    return json;
  }
  // A day as the page's language writes it (28 novembre 2027), or as sent (2027-11-28) where the browser cannot.
  function day(iso) {
    try {
      return new Date(iso + "T00:00:00Z").toLocaleDateString(document.documentElement.lang, {
        timeZone: "UTC", dateStyle: "long"
      });
    } catch (error) { return iso; }
  }
  function failed(error) { say(root.getAttribute("data-text-failed") + (error && error.name ? " (" + error.name + ")" : "")); }

  if (!window.PublicKeyCredential || !navigator.credentials) { return; }
  root.hidden = false;

  function save() {
    say(root.getAttribute("data-text-working"));
    return post(root.getAttribute("data-options-url")).then(function (answer) {
      if (!answer.publicKey) { say(answer.message || root.getAttribute("data-text-failed")); return; }
      return navigator.credentials.create({publicKey: creationOptions(answer.publicKey)}).then(function (credential) {
        return post(root.getAttribute("data-submit-url"), {credential: credentialJson(credential)});
      }).then(function (saved) {
        if (saved.saved) {
          root.setAttribute("data-saved", "true");
          root.querySelector("[data-age-pass-button]").hidden = true;
          say(root.getAttribute("data-text-saved").replace("%(date)s", day(saved.expiresOn)));
        } else { say(saved.message || root.getAttribute("data-text-failed")); }
      });
    }).catch(failed);
  }

  function assertion(extra) {
    say(root.getAttribute("data-text-working"));
    return post(root.getAttribute("data-options-url")).then(function (answer) {
      if (!answer.publicKey) {
        if (answer.next) { window.location.assign(answer.next); }
        return null;
      }
      return navigator.credentials.get({publicKey: requestOptions(answer.publicKey)}).then(function (credential) {
        return post(root.getAttribute("data-submit-url"), Object.assign({credential: credentialJson(credential)}, extra));
      });
    });
  }

  function use() {
    return assertion({}).then(function (answer) {
      if (!answer) { return; }
      if (answer.next) { window.location.assign(answer.next); return; }
      root.setAttribute("data-refused", answer.code || answer.error || "");
      say(answer.message || root.getAttribute("data-text-failed"));
    }).catch(failed);
  }

  function manage(action) {
    return assertion({action: action}).then(function (answer) {
      if (!answer) { return; }
      var list = root.querySelector("[data-age-pass-list]");
      if (answer.deleted) {
        list.textContent = "";
        root.setAttribute("data-deleted", "true");
        say(root.getAttribute("data-text-deleted"));
      } else if (answer.pass) {
        var p = answer.pass;
        list.textContent = "";
        var method = root.getAttribute("data-text-method-" + p.method) || p.method;
        [["data-text-method", method], ["data-text-proved", day(p.provedOn)], ["data-text-expires", day(p.expiresOn)],
         ["data-text-thresholds", p.thresholds.join(", ")]].forEach(function (row) {
          var item = document.createElement("li");
          item.textContent = root.getAttribute(row[0]) + " " + row[1];
          list.appendChild(item);
        });
        if (p.revoked) {
          var revoked = document.createElement("li");
          revoked.textContent = root.getAttribute("data-text-revoked");
          list.appendChild(revoked);
        }
        root.setAttribute("data-shown", "true");
        say("");
      } else { say(answer.message || root.getAttribute("data-text-failed")); }
    }).catch(failed);
  }

  Array.prototype.forEach.call(root.querySelectorAll("[data-age-pass-button]"), function (button) {
    button.hidden = false;
    // The authenticator is called in the click handler itself: browsers require the user's gesture.
    button.addEventListener("click", function () {
      if (role === "save") { save(); } else if (role === "use") { use(); }
      else { manage(button.getAttribute("data-action")); }
    });
  });
})();
