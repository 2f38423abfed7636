/* Document page: the rear camera takes the front (or passport page), then the back if the user wants, each checked
   by the user; sent at once, or by the head turns below it under the presence policy. */
(function () {
  "use strict";
  var root = document.querySelector("[data-document]");
  if (!root || !window.AvCamera || !AvCamera.supported()) { return; }

  var panel = root.querySelector("[data-camera]");
  var form = root.querySelector("[data-document-form]");
  var fallback = root.querySelector("[data-fallback]");
  var input = form.querySelector("input[name=document]");
  var backInput = form.querySelector("input[name=document_back]");
  var side = "front";  // the camera takes the front (or passport page), then the back if the user wants
  var video = panel.querySelector("[data-video]");
  var still = panel.querySelector("[data-still]");
  var status = panel.querySelector("[data-camera-status]");
  var buttons = {
    on: panel.querySelector("[data-camera-on]"),
    capture: panel.querySelector("[data-capture]"),
    use: panel.querySelector("[data-use]"),
    retake: panel.querySelector("[data-retake]"),
    back: panel.querySelector("[data-back]"),
    frontOnly: panel.querySelector("[data-front-only]")
  };

  function show(names) {
    Object.keys(buttons).forEach(function (name) { buttons[name].hidden = names.indexOf(name) < 0; });
  }

  panel.hidden = false;
  fallback.open = false;

  buttons.on.addEventListener("click", function () {
    buttons.on.disabled = true;
    status.textContent = AvText("cameraStarting");
    AvCamera.start(video, "environment", 1920, 1080).then(function () {
      show(["capture"]);
      buttons.capture.focus();
      status.textContent = AvText("documentFrame");
    }, function (error) {
      buttons.on.disabled = false;
      status.textContent = AvCamera.explain(error) + " " + AvText("documentCameraFailed");
      fallback.open = true;
    });
  });

  buttons.capture.addEventListener("click", function () {
    AvCamera.draw(video, still, 2560);
    still.hidden = false;
    video.hidden = true;
    show(["use", "retake"]);
    buttons.use.focus();
    status.textContent = AvText("documentCheck");
  });

  buttons.retake.addEventListener("click", function () {
    still.hidden = true;
    video.hidden = false;
    show(["capture"]);
    buttons.capture.focus();
    status.textContent = AvText("documentFrame");
  });

  function done() {
    AvCamera.stop(video);
    var turns = document.querySelector("[data-selfie]");
    if (turns) {  // presence policy: the head turns come next and send the document with them
      show([]);
      status.textContent = AvText("documentThenHeadTurns");
      document.dispatchEvent(new CustomEvent("ageverify:document-ready"));  // their camera may start now
      turns.scrollIntoView();
      return;
    }
    status.textContent = AvText("documentSending");
    form.submit();
  }

  buttons.use.addEventListener("click", function () {
    buttons.use.disabled = true;
    status.textContent = AvText("documentPreparing");
    AvCamera.toJpeg(still, 0.92).then(function (blob) {
      buttons.use.disabled = false;
      if (side === "back") {
        AvCamera.attach(backInput, [blob], "document_back");
        done();
        return;
      }
      AvCamera.attach(input, [blob], "document");
      if (!backInput) { done(); return; }
      show(["back", "frontOnly"]);
      buttons.back.focus();
      status.textContent = AvText("documentBackOffer");
    }, function () {
      buttons.use.disabled = false;
      status.textContent = AvText("documentPrepareFailed");
    });
  });

  buttons.back.addEventListener("click", function () {
    side = "back";
    still.hidden = true;
    video.hidden = false;
    show(["capture"]);
    buttons.capture.focus();
    status.textContent = AvText("documentBackFrame");
  });

  buttons.frontOnly.addEventListener("click", done);
})();
