/* Document page: the rear camera, one still picture, checked by the user before it is sent. */
(function () {
  "use strict";
  var root = document.querySelector("[data-document]");
  if (!root || !window.AvCamera || !AvCamera.supported()) { return; }

  var panel = root.querySelector("[data-camera]");
  var form = root.querySelector("[data-document-form]");
  var fallback = root.querySelector("[data-fallback]");
  var input = form.querySelector("input[type=file]");
  var video = panel.querySelector("[data-video]");
  var still = panel.querySelector("[data-still]");
  var status = panel.querySelector("[data-camera-status]");
  var buttons = {
    on: panel.querySelector("[data-camera-on]"),
    capture: panel.querySelector("[data-capture]"),
    use: panel.querySelector("[data-use]"),
    retake: panel.querySelector("[data-retake]")
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

  buttons.use.addEventListener("click", function () {
    buttons.use.disabled = true;
    status.textContent = AvText("documentSending");
    AvCamera.toJpeg(still, 0.92).then(function (blob) {
      AvCamera.attach(input, [blob], "document");
      AvCamera.stop(video);
      form.submit();
    }, function () {
      buttons.use.disabled = false;
      status.textContent = AvText("documentPrepareFailed");
    });
  });
})();
