/* The head-turn capture (selfie page, and the document page under the presence policy): a live preview, then
   the challenge step by step, a few frames per step, sent with the form around it. Below a document still to
   be photographed (data-after-document), its camera and Start wait until that photo is taken or chosen.
   The server issues each step's duration ([data-timing], ms): step i starts when the steps before it have
   run their time, and its frames are taken from GRACE_MS after its start to just before its end. The page
   sends its capture record with the frames (a hidden "capture" field, JSON): the camera's label and the
   time, in ms since Start, at which it took each frame; checks.liveness holds the frames to both.
   The server also issues a screen colour per frame ([data-flash]): from just after the frame before, the page
   fills the screen around the camera panel with that colour, so the face reflects it when the frame is taken,
   and records the colour it showed ("colors" in the capture record); checks.flash holds the skin to it.
   On a retake ([data-camera-again]) the camera comes back on by itself where the permission stands. */
(function () {
  "use strict";
  var root = document.querySelector("[data-selfie]");
  if (!root || !window.AvCamera || !AvCamera.supported()) { return; }  // the upload form stays as it is

  var FRAMES_PER_STEP = 3;
  var GRACE_MS = 1000;  // time to follow an instruction before its pictures are taken
  var END_MARGIN_MS = 150;  // the last picture of a step comes this long before the next instruction
  var DEFAULT_STEP_MS = 2600;  // a page without issued timing (kept for pages cached across a release)
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
  var timingField = root.querySelector("[data-timing]");
  var durations = (timingField && timingField.value ? timingField.value.split(",") : []).map(Number);
  var flashField = root.querySelector("[data-flash]");
  var flashes = flashField && flashField.value ? flashField.value.split(",") : [];
  var FLASH_CSS = { red: "#ff0000", green: "#00ff00", blue: "#0000ff" };  // checks.flash.FLASH_COLOURS
  var flashScreen = null;
  var cameraLabel = "";
  var started = 0;
  var times = [];
  var colors = [];

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

  function cameraOn() {
    onButton.disabled = true;
    status.textContent = AvText("cameraStarting");
    AvCamera.start(video, "user", 640, 480).then(function (stream) {
      var track = stream && stream.getVideoTracks ? stream.getVideoTracks()[0] : null;
      cameraLabel = (track && track.label) || "";
      onButton.hidden = true;
      startButton.hidden = false;
      startButton.focus();
      status.textContent = AvText("selfieCameraOn");
    }, function (error) {
      onButton.disabled = false;
      failed(AvCamera.explain(error) + " " + AvText(onDocumentPage ? "headTurnsCameraFailed" : "selfieCameraFailed"));
    });
  }

  onButton.addEventListener("click", cameraOn);

  // A retake: the camera the user turned on for the attempt before comes back on by itself, so trying again is
  // one tap (Start). Only where the browser says the permission stands, so no prompt appears unasked; elsewhere
  // (a browser that cannot say, a permission not kept) the button stays.
  if (root.hasAttribute("data-camera-again") && documentReady && navigator.permissions && navigator.permissions.query) {
    navigator.permissions.query({ name: "camera" }).then(function (permission) {
      if (permission.state === "granted" && !onButton.hidden && !onButton.disabled) { cameraOn(); }
    }, function () {});
  }

  function duration(index) { return durations[index] > 0 ? durations[index] : DEFAULT_STEP_MS; }

  function stepStart(index) {
    var total = 0;
    for (var i = 0; i < index; i += 1) { total += duration(i); }
    return total;
  }

  // Shows the colour of the next frame (the times.length-th); the scripted test camera reads data-flash-color.
  function flash() {
    if (!flashes.length) { return; }
    var name = flashes[times.length % flashes.length];
    if (!flashScreen) {
      flashScreen = document.createElement("div");
      flashScreen.className = "flash-screen";
      flashScreen.setAttribute("aria-hidden", "true");
      document.body.appendChild(flashScreen);
      document.body.classList.add("flashing");
    }
    flashScreen.style.background = FLASH_CSS[name] || "";
    root.setAttribute("data-flash-color", name);
  }

  function flashEnd() {
    if (flashScreen) { flashScreen.remove(); flashScreen = null; }
    document.body.classList.remove("flashing");
    root.removeAttribute("data-flash-color");
  }

  // Waits until `ms` after Start, on the page's clock, whatever the capture before it took.
  function until(ms) { return AvCamera.wait(Math.max(0, ms - (performance.now() - started))); }

  function captureStep(input, index) {
    var blobs = [];
    var start = stepStart(index);
    var span = duration(index) - GRACE_MS - END_MARGIN_MS;
    var chain = until(start).then(function () {
      instruction.textContent = input.getAttribute("data-instruction");
      status.textContent = AvText("selfieStep", { step: index + 1, total: inputs.length });
    });
    for (var i = 0; i < FRAMES_PER_STEP; i += 1) {
      var at = start + GRACE_MS + Math.round(span * i / (FRAMES_PER_STEP - 1));
      chain = chain.then(until.bind(null, at))
                   .then(function () {
                     times.push(Math.round(performance.now() - started));
                     if (flashes.length) { colors.push(root.getAttribute("data-flash-color") || ""); }
                     return AvCamera.capture(video, FRAME_WIDTH, 0.9);
                   })
                   .then(function (blob) { blobs.push(blob); flash(); });
    }
    return chain.then(function () { AvCamera.attach(input, blobs, input.name); });
  }

  function record() {
    var field = form.querySelector("input[name=capture]") || document.createElement("input");
    field.type = "hidden";
    field.name = "capture";
    field.value = JSON.stringify({ label: cameraLabel, times: times, colors: colors });
    form.appendChild(field);
  }

  startButton.addEventListener("click", function () {
    if (!documentReady) { return; }
    capturing = true;
    startButton.disabled = true;
    started = performance.now();
    times = [];
    colors = [];
    flash();
    var chain = Promise.resolve();
    inputs.forEach(function (input, index) {
      chain = chain.then(function () { return captureStep(input, index); });
    });
    chain.then(function () {
      instruction.textContent = AvText("selfieThanks");
      status.textContent = AvText("selfieSending");
      flashEnd();
      record();
      AvCamera.stop(video);
      form.submit();
    }, function () {
      flashEnd();
      capturing = false;
      startButton.disabled = false;  // the document's photo, if any, stays in the form: only the head turns again
      failed(AvText("selfieCaptureFailed"));
    });
  });
})();
