/* The head-turn capture (selfie page, and the document page under the presence policy): a live preview, then
   the challenge step by step, a few frames per step, sent with the form around it. */
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

  panel.hidden = false;
  fallback.open = false;

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
      failed(AvCamera.explain(error) + " " + AvText("selfieCameraFailed"));
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
      startButton.disabled = false;
      failed(AvText("selfieCaptureFailed"));
    });
  });
})();
