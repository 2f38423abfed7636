  // AgeVerify SDK v1 (SDK mode). Served by the service itself; the service fills in SERVICE_ORIGIN.
  // Nothing here runs at import: no window, no document, until verify() or mount() is called.
  var VERSION = 1;
  var ENVELOPE = "ageverify";
  // The SDK's own words on the partner's page, in the flow's languages (the flow itself is translated by
  // the service): the dialog's name, its close button, the new-window button and what it says once used.
  var WORDS = {
    en: [
      "Age verification",
      "Close the age verification",
      "Continue the age verification in a new window",
      "The verification is open in another window."
    ],
    de: [
      "Altersverifizierung",
      "Altersverifizierung schließen",
      "Altersverifizierung in einem neuen Fenster fortsetzen",
      "Die Verifizierung ist in einem anderen Fenster geöffnet."
    ],
    fr: [
      "Vérification de l’âge",
      "Fermer la vérification de l’âge",
      "Poursuivre la vérification de l’âge dans une nouvelle fenêtre",
      "La vérification est ouverte dans une autre fenêtre."
    ],
    es: [
      "Verificación de edad",
      "Cerrar la verificación de edad",
      "Continuar la verificación de edad en una ventana nueva",
      "La verificación está abierta en otra ventana."
    ],
    it: [
      "Verifica dell’età",
      "Chiudi la verifica dell’età",
      "Continua la verifica dell’età in una nuova finestra",
      "La verifica è aperta in un’altra finestra."
    ],
    nl: [
      "Leeftijdsverificatie",
      "Leeftijdsverificatie sluiten",
      "Ga verder met de leeftijdsverificatie in een nieuw venster",
      "De verificatie is geopend in een ander venster."
    ],
    pl: [
      "Weryfikacja wieku",
      "Zamknij weryfikację wieku",
      "Kontynuuj weryfikację wieku w nowym oknie",
      "Weryfikacja jest otwarta w innym oknie."
    ],
    pt: [
      "Verificação de idade",
      "Fechar a verificação de idade",
      "Continuar a verificação de idade numa nova janela",
      "A verificação está aberta noutra janela."
    ],
    ar: [
      "التحقق من العمر",
      "إغلاق التحقق من العمر",
      "متابعة التحقق من العمر في نافذة جديدة",
      "التحقق مفتوح في نافذة أخرى."
    ]
  };

  // `locale` as given to start(), else the page's language, else the browser's; English when not one of the flow's.
  function wordsFor(locale) {
    var tag = String(locale || document.documentElement.lang || navigator.language || "en").toLowerCase().split(/[-_]/)[0];
    var list = WORDS[tag] || WORDS.en;
    return { dialog: list[0], close: list[1], newWindow: list[2], opened: list[3] };
  }
  var READY_TIMEOUT_MS = 15000;

  // For the developer (the user reads the frame's own, translated words).
  var MESSAGES = {
    camera_blocked: "The frame may not use the camera: give your iframe allow=\"camera; fullscreen; publickey-credentials-get; publickey-credentials-create\" (mount() and verify() do).",
    storage_blocked: "The browser blocks the frame's cookies and the fallback window could not open.",
    network_error: "The verification service could not be reached."
  };

  function AgeVerifyError(code, message) {
    var error = new Error(message || MESSAGES[code] || code);
    error.name = "AgeVerifyError";
    error.code = code;
    return error;
  }

  function css(element, properties) {
    // CSSOM properties only (no style attribute in markup, no style element): a strict CSP allows them.
    Object.keys(properties).forEach(function (name) { element.style[name] = properties[name]; });
    return element;
  }

  function frameUrl(origin, key, channel, locale) {
    var query = "key=" + encodeURIComponent(key) + "&origin=" + encodeURIComponent(window.location.origin) +
                "&channel=" + channel + (locale ? "&locale=" + encodeURIComponent(locale) : "");
    return origin + "/flow/embed?" + query;
  }

  function run(key, origin, options, mountTarget) {
    var presentation = mountTarget ? "inline" : (options.presentation || "modal");
    var state = { done: false, frame: null, popup: null, ui: null, cleanups: [], timer: null, clientSecret: options.clientSecret };
    var settle = {};
    var promise = new Promise(function (resolve, reject) { settle.resolve = resolve; settle.reject = reject; });

    function call(name, value) {
      if (typeof options[name] === "function") {
        try { options[name](value); } catch (error) { setTimeout(function () { throw error; }); }
      }
    }
    function emit(type, data) { call("onEvent", { type: type, data: data || {} }); }

    function teardown() {
      clearTimeout(state.timer);
      state.cleanups.splice(0).reverse().forEach(function (cleanup) { cleanup(); });
      if (state.popup && !state.popup.closed) { state.popup.close(); }
    }

    function finish(kind, value) {
      if (state.done) { return; }
      state.done = true;
      teardown();
      if (kind === "error") {
        emit("error", { code: value.code, message: value.message });
        if (typeof options.onError === "function") { call("onError", value); settle.resolve({ type: "error", error: value }); }
        else { settle.reject(value); }
        return;
      }
      emit(kind, value);
      if (kind === "complete") { call("onComplete", value); }
      if (kind === "cancel") { call("onCancel", value); }
      settle.resolve({ type: kind, sessionId: value && value.sessionId, status: value && value.status,
                       reason: value && value.reason });
    }

    function listen(source, onMessage) {
      function handler(event) {
        // Only the service's exact origin, and only the one window we opened.
        if (event.origin !== origin || event.source !== source()) { return; }
        var message = event.data;
        if (!message || message.protocol !== ENVELOPE || message.version !== VERSION) { return; }
        onMessage(message.type, message.data || {});
      }
      window.addEventListener("message", handler);
      state.cleanups.push(function () { window.removeEventListener("message", handler); });
    }

    function beginMessage() {
      var data = state.clientSecret ? { clientSecret: state.clientSecret } : { session: { subject: options.session.subject } };
      return { protocol: ENVELOPE, version: VERSION, type: "begin", data: data };
    }

    function onFlowMessage(target, type, data) {
      if (type === "ready") {
        clearTimeout(state.timer);
        emit("ready", data);
        target().postMessage(beginMessage(), origin);
      } else if (type === "started") {
        show();
        emit("started", data);
      } else if (type === "step" || type === "camera") {
        emit(type, data);
      } else if (type === "complete") {
        finish("complete", data);
      } else if (type === "cancel") {
        finish("cancel", data);
      } else if (type === "close-request") {
        handle.close();
      } else if (type === "launch") {
        window.location.assign(data.url);
      } else if (type === "error") {
        if (data.code === "storage_blocked" && presentation !== "popup") {
          if (data.clientSecret) { state.clientSecret = data.clientSecret; }
          offerWindow();
        } else {
          finish("error", AgeVerifyError(data.code || "network_error", data.message));
        }
      }
    }

    function show() {
      if (state.ui) { state.ui.show(); }
    }

    function offerWindow() {
      // The frame cannot keep its cookie: ask for a click (popups need one), then a popup, else a redirect.
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = wordsFor(options.locale).newWindow;
      css(button, { font: "inherit", fontSize: "16px", padding: "12px 18px", margin: "auto", cursor: "pointer",
                    borderRadius: "8px", border: "0", background: "#1f4fd1", color: "#fff" });
      button.addEventListener("click", function () {
        var popup = openPopup();
        if (!popup) {
          state.frame.contentWindow.postMessage({ protocol: ENVELOPE, version: VERSION, type: "launch",
                                                  data: { returnUrl: options.returnUrl || "" } }, origin);
          return;
        }
        state.frame.replaceWith(document.createElement("span"));
        button.disabled = true;
        button.textContent = wordsFor(options.locale).opened;
      });
      state.ui.replaceFrame(button);
      state.ui.show();
      button.focus();
    }

    function openPopup() {
      var popup = window.open(frameUrl(origin, key, "popup", options.locale), "ageverify",
                              "popup=yes,width=480,height=760");
      if (!popup) { return null; }
      state.popup = popup;
      listen(function () { return state.popup; }, function (type, data) {
        onFlowMessage(function () { return state.popup; }, type, data);
      });
      var watch = setInterval(function () {
        if (state.popup.closed) { clearInterval(watch); finish("close", {}); }
      }, 500);
      state.cleanups.push(function () { clearInterval(watch); });
      return popup;
    }

    var handle = promise;
    handle.close = function () { finish("close", {}); };

    if (typeof window === "undefined" || typeof document === "undefined") {
      finish("error", AgeVerifyError("unsupported_environment", "AgeVerify runs in a browser only."));
      return handle;
    }
    if (!options.clientSecret === !options.session) {
      finish("error", AgeVerifyError("invalid_options", "Pass either clientSecret or session: {subject}."));
      return handle;
    }
    if (presentation === "popup") {
      if (!openPopup()) { finish("error", AgeVerifyError("storage_blocked", "The popup was blocked.")); }
      return handle;
    }

    var words = wordsFor(options.locale);
    var frame = mountTarget && mountTarget.tagName === "IFRAME" ? mountTarget : document.createElement("iframe");
    if (frame !== mountTarget) {
      frame.setAttribute("allow", "camera; fullscreen; publickey-credentials-get; publickey-credentials-create");
      frame.title = words.dialog;
      css(frame, { border: "0", width: "100%", height: "100%", display: "block", background: "#fff" });
    }
    state.frame = frame;
    state.ui = presentation === "inline" ? inlineUi(mountTarget, frame)
      : modalUi(frame, function () { handle.close(); }, words);
    state.cleanups.push(function () { state.ui.remove(); });
    listen(function () { return frame.contentWindow; }, function (type, data) {
      onFlowMessage(function () { return frame.contentWindow; }, type, data);
    });
    state.timer = setTimeout(function () {
      finish("error", AgeVerifyError("network_error", "The verification frame did not answer: check that this page's " +
        "origin is allowed for the key and that your CSP allows frame-src " + origin + "."));
    }, READY_TIMEOUT_MS);
    frame.src = frameUrl(origin, key, "frame", options.locale);
    state.ui.attach();
    return handle;
  }

  // What takes the frame's place (the "new window" button) is shown in front of it; the frame stays in the
  // document, hidden, because its window still makes the launch hand-off when no popup may open.
  function hideFrameBehind(frame, element) {
    frame.parentNode.insertBefore(element, frame);
    css(frame, { display: "none" });
    return element;
  }

  function inlineUi(container, frame) {
    var own = frame !== container;
    var shown = null;
    return {
      attach: function () {
        if (own) { css(frame, { minHeight: "640px", visibility: "hidden" }); container.appendChild(frame); }
      },
      show: function () { css(frame, { visibility: "visible" }); },
      replaceFrame: function (element) { shown = hideFrameBehind(frame, element); },
      remove: function () {
        [frame, shown].forEach(function (node) { if (own && node && node.parentNode) { node.parentNode.removeChild(node); } });
      }
    };
  }

  function modalUi(frame, close, words) {
    var previousFocus = document.activeElement;
    var overlay = css(document.createElement("div"), {
      position: "fixed", inset: "0", zIndex: "2147483647", background: "rgba(15, 23, 42, 0.6)",
      display: "flex", alignItems: "center", justifyContent: "center"
    });
    var dialog = css(document.createElement("div"), {
      position: "relative", width: "min(480px, 100vw)", height: "min(760px, 100vh)", background: "#fff",
      borderRadius: "12px", overflow: "hidden", display: "flex", flexDirection: "column"
    });
    dialog.setAttribute("role", "dialog");
    dialog.setAttribute("aria-modal", "true");
    dialog.setAttribute("aria-label", words.dialog);
    var closeButton = css(document.createElement("button"), {
      position: "absolute", top: "8px", right: "8px", width: "36px", height: "36px", border: "0",
      borderRadius: "18px", background: "rgba(15, 23, 42, 0.08)", fontSize: "20px", cursor: "pointer", zIndex: "1"
    });
    closeButton.type = "button";
    closeButton.setAttribute("aria-label", words.close);
    closeButton.textContent = "\u00d7";
    closeButton.addEventListener("click", close);
    dialog.appendChild(closeButton);
    dialog.appendChild(frame);
    overlay.appendChild(dialog);
    var root = document.documentElement;
    var savedOverflow = root.style.overflow;
    var shown = frame;

    function onKey(event) {
      if (event.key === "Escape") { event.preventDefault(); close(); return; }
      if (event.key !== "Tab") { return; }
      // Focus trap: only the close button and the frame (whose own content takes Tab inside it).
      var items = [closeButton, shown];
      var index = items.indexOf(document.activeElement);
      event.preventDefault();
      items[(index + (event.shiftKey ? items.length - 1 : 1)) % items.length].focus();
    }

    return {
      attach: function () { css(overlay, { visibility: "hidden" }); document.body.appendChild(overlay); },
      show: function () {
        if (overlay.style.visibility === "visible") { return; }
        css(overlay, { visibility: "visible" });
        root.style.overflow = "hidden";
        document.addEventListener("keydown", onKey, true);
        shown.focus();
      },
      replaceFrame: function (element) { shown = hideFrameBehind(frame, element); },
      remove: function () {
        document.removeEventListener("keydown", onKey, true);
        root.style.overflow = savedOverflow;
        if (overlay.parentNode) { overlay.parentNode.removeChild(overlay); }
        if (previousFocus && previousFocus.focus) { previousFocus.focus(); }
      }
    };
  }

  function AgeVerify(publishableKey, settings) {
    if (typeof publishableKey !== "string" || !/^av_pk_(live|test)_[A-Za-z0-9_-]+$/.test(publishableKey)) {
      throw AgeVerifyError("invalid_publishable_key", /^av_(live|test)_/.test(String(publishableKey))
        ? "This is a secret key: it must never be in a browser. Use your publishable key (av_pk_...) and rotate the secret key."
        : "Pass your publishable key (av_pk_live_... or av_pk_test_...).");
    }
    var origin = (settings && settings.origin) || SERVICE_ORIGIN;
    return {
      verify: function (options) { return run(publishableKey, origin, options || {}, null); },
      mount: function (element, options) { return run(publishableKey, origin, options || {}, element); }
    };
  }
  AgeVerify.version = VERSION;
