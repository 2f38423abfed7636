/* Tells whoever embeds the flow what happens in it: the SDK (postMessage to the parent frame or the
   opener, exact target origin only) and a mobile app's WebView bridge when one is present.
   The envelope: {protocol: "ageverify", version: 1, type, data}. Never a secret, never a result number. */
(function () {
  "use strict";
  var body = document.body;
  var channel = body.getAttribute("data-flow-channel") || "web";
  var target = body.getAttribute("data-flow-target") || "";
  var peer = channel === "embed" ? window.parent : (channel === "popup" ? window.opener : null);

  function bridges(message) {
    var text = JSON.stringify(message);
    var handlers = window.webkit && window.webkit.messageHandlers;
    if (window.ReactNativeWebView && window.ReactNativeWebView.postMessage) { window.ReactNativeWebView.postMessage(text); }
    if (handlers && handlers.ageverify) { handlers.ageverify.postMessage(message); }
    if (window.AgeVerifyBridge && window.AgeVerifyBridge.postMessage) { window.AgeVerifyBridge.postMessage(text); }
  }

  function send(type, data) {
    var message = { protocol: "ageverify", version: 1, type: type, data: data || {} };
    if (peer && target && peer !== window) { peer.postMessage(message, target); }
    bridges(message);
  }

  window.AvChannel = { send: send, channel: channel, target: target, peer: peer };

  var step = body.getAttribute("data-flow-step");
  if (step) { send("step", { step: step }); }
  var result = document.getElementById("flow-result");
  if (result) {
    var reason = result.getAttribute("data-reason") || null;
    send(reason === "cancelled" ? "cancel" : "complete", {
      sessionId: result.getAttribute("data-session-id"), status: result.getAttribute("data-status"), reason: reason
    });
  }
  document.addEventListener("ageverify:camera", function (event) { send("camera", event.detail || {}); });
  if (peer) {
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { send("close-request", {}); }
    });
  }
})();
