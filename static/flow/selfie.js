/* The head-turn capture (selfie page, and the document page under the presence policy): a live preview, then
   the challenge step by step, a few frames per step, sent with the form around it. Below a document still to
   be photographed (data-after-document), its camera and Start wait until that photo is taken or chosen. */
(function () {
  "use strict";
  var root = document.querySelector("[data-selfie]");
  if (!root || !window.AvCamera || !AvCamera.supported()) { return; }  // the upload form stays as it is

  var FRAMES_PER_STEP = 3;
  var SETTLE_MS = 1800;  // time to follow an instruction before its pictures are taken
  var GAP_MS = 250;
  var FRAME_WIDTH = 640;

  var panel = root.querySelector("[data-camera]");
  var form = root.closest("form");  // the selfie's form, or the document's that carries the head turns too
  var fallback = root.querySelector("[data-fallback]");
  var video = panel.querySelector("[data-video]");
  var instruction = panel.querySelector("[data-instruction]");
  var status = panel.querySelector("[data-camera-status]");
  var onButton = panel.querySelector("[data-camera-on]");
  var startButton = panel.querySelector("[data-capture]");
  var inputs = Array.prototype.slice.call(form.querySelectorAll("input[type=file][data-step]"));
  var onDocumentPage = root.getAttribute("data-page") === "document";
  var documentInput = root.hasAttribute("data-after-document") ? form.querySelector("input[name=document]") : null;
  var waitHint = panel.querySelector("[data-wait-for-document]");
  var documentReady = !documentInput;
  var capturing = false;

  panel.hidden = false;
  fallback.open = false;

  function refresh() {
    onButton.disabled = !documentReady;
    startButton.disabled = !documentReady || capturing;
    if (waitHint) { waitHint.hidden = documentReady; }
  }

  if (documentInput) {
    // The document page's camera panel (static/flow/document.js) says when its photo is taken; an upload says so itself.
    document.addEventListener("ageverify:document-ready", function () { documentReady = true; refresh(); });
    documentInput.addEventListener("change", function () { documentReady = documentInput.files.length > 0; refresh(); });
    refresh();
  }

  function failed(message) {
    instruction.textContent = "";
    status.textContent = message;
    fallback.open = true;
  }

  onButton.addEventListener("click", function () {
    onButton.disabled = true;
    status.textContent = AvText("cameraStarting");
    AvCamera.start(video, "user", 640, 480).then(function () {
      onButton.hidden = true;
      startButton.hidden = false;
      startButton.focus();
      status.textContent = AvText("selfieCameraOn");
    }, function (error) {
      onButton.disabled = false;
      failed(AvCamera.explain(error) + " " + AvText(onDocumentPage ? "headTurnsCameraFailed" : "selfieCameraFailed"));
    });
  });

  function captureStep(input, index) {
    var blobs = [];
    instruction.textContent = input.getAttribute("data-instruction");
    status.textContent = AvText("selfieStep", { step: index + 1, total: inputs.length });
    var chain = AvCamera.wait(SETTLE_MS);
    for (var i = 0; i < FRAMES_PER_STEP; i += 1) {
      chain = chain.then(function () { return AvCamera.capture(video, FRAME_WIDTH, 0.9); })
                   .then(function (blob) { blobs.push(blob); return AvCamera.wait(GAP_MS); });
    }
    return chain.then(function () { AvCamera.attach(input, blobs, input.name); });
  }

  startButton.addEventListener("click", function () {
    if (!documentReady) { return; }
    capturing = true;
    startButton.disabled = true;
    var chain = Promise.resolve();
    inputs.forEach(function (input, index) {
      chain = chain.then(function () { return captureStep(input, index); });
    });
    chain.then(function () {
      instruction.textContent = AvText("selfieThanks");
      status.textContent = AvText("selfieSending");
      AvCamera.stop(video);
      form.submit();
    }, function () {
      capturing = false;
      startButton.disabled = false;  // the document's photo, if any, stays in the form: only the head turns again
      failed(AvText("selfieCaptureFailed"));
    });
  });
})();
