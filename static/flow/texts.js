/* The words the flow's scripts show, in the page's language: rendered by the server into #flow-texts (flow/texts.py). */
(function () {
  "use strict";
  var texts = {};
  var source = document.getElementById("flow-texts");
  if (source) {
    try { texts = JSON.parse(source.textContent); } catch (error) { texts = {}; }
  }

  // AvText("selfieStep", {step: 2, total: 4}) fills the %(name)s placeholders of the translated sentence.
  window.AvText = function (key, values) {
    var sentence = Object.prototype.hasOwnProperty.call(texts, key) ? texts[key] : key;
    Object.keys(values || {}).forEach(function (name) {
      sentence = sentence.split("%(" + name + ")s").join(String(values[name]));
    });
    return sentence;
  };
})();
