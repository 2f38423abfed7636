/* Small camera helpers shared by the selfie and document pages: start, capture, attach to a form. */
(function () {
  "use strict";

  function supported() {
    return !!(navigator.mediaDevices && navigator.mediaDevices.getUserMedia &&
              window.DataTransfer && window.HTMLCanvasElement && HTMLCanvasElement.prototype.toBlob);
  }

  // Tells the page's channel (static/flow/channel.js) so an embedding SDK can report it.
  function announce(detail) {
    document.dispatchEvent(new CustomEvent("ageverify:camera", { detail: detail }));
  }

  function start(video, facingMode, width, height) {
    var constraints = { audio: false, video: { facingMode: facingMode, width: { ideal: width }, height: { ideal: height } } };
    return navigator.mediaDevices.getUserMedia(constraints).then(function (stream) {
      announce({ allowed: true });
      video.srcObject = stream;
      return video.play().then(function () {
        if (video.videoWidth) { return stream; }
        return new Promise(function (resolve) { video.addEventListener("loadedmetadata", function () { resolve(stream); }, { once: true }); });
      });
    }, function (error) {
      announce({ allowed: false, error: (error && error.name) || "Error" });
      throw error;
    });
  }

  function stop(video) {
    var stream = video.srcObject;
    if (stream) { stream.getTracks().forEach(function (track) { track.stop(); }); }
    video.srcObject = null;
  }

  // Draws the camera's own (unmirrored) frame, scaled to at most maxWidth pixels wide.
  function draw(video, canvas, maxWidth) {
    var scale = Math.min(1, maxWidth / video.videoWidth);
    canvas.width = Math.round(video.videoWidth * scale);
    canvas.height = Math.round(video.videoHeight * scale);
    canvas.getContext("2d").drawImage(video, 0, 0, canvas.width, canvas.height);
    return canvas;
  }

  function toJpeg(canvas, quality) {
    return new Promise(function (resolve, reject) {
      canvas.toBlob(function (blob) { if (blob) { resolve(blob); } else { reject(new Error("capture failed")); } }, "image/jpeg", quality);
    });
  }

  function capture(video, maxWidth, quality) {
    return toJpeg(draw(video, document.createElement("canvas"), maxWidth), quality);
  }

  // Puts the captured pictures into a file input, so the ordinary form carries them (and its CSRF token).
  function attach(input, blobs, baseName) {
    var transfer = new DataTransfer();
    blobs.forEach(function (blob, index) {
      transfer.items.add(new File([blob], baseName + "-" + index + ".jpg", { type: "image/jpeg" }));
    });
    input.files = transfer.files;
  }

  function wait(ms) {
    return new Promise(function (resolve) { setTimeout(resolve, ms); });
  }

  function explain(error) {
    var name = error && error.name;
    if (name === "NotAllowedError" || name === "SecurityError") {
      return AvText("cameraBlocked");
    }
    if (name === "NotFoundError" || name === "OverconstrainedError") {
      return AvText("cameraNotFound");
    }
    if (name === "NotReadableError") {
      return AvText("cameraInUse");
    }
    return AvText("cameraFailed");
  }

  window.AvCamera = { supported: supported, start: start, stop: stop, draw: draw, toJpeg: toJpeg,
                      capture: capture, attach: attach, wait: wait, explain: explain };
})();
