/* Progress page: asks the flow status endpoint every second and moves on when the analysis is done. */
(function () {
  "use strict";
  var root = document.querySelector("[data-progress]");
  if (!root || !window.fetch) { return; }  // the <noscript> refresh takes over
  var url = root.getAttribute("data-status-url");
  var message = root.querySelector("[data-progress-message]");
  var started = Date.now();
  var INTERVAL_MS = 1000;

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" }, cache: "no-store" })
      .then(function (response) {
        if (response.status === 403) { window.location.reload(); }  // the cookie is gone: show why
        return response.ok ? response.json() : null;
      })
      .then(function (body) {
        if (body && body.status !== "processing" && body.next) {
          window.location.assign(body.next);
          return;
        }
        if (Date.now() - started > 30000) {
          message.textContent = AvText("progressSlow");
        }
        setTimeout(poll, INTERVAL_MS);
      }, function () { setTimeout(poll, INTERVAL_MS * 2); });
  }
  setTimeout(poll, INTERVAL_MS);
})();
