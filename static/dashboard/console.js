// The dashboard's only script: copy buttons and the tenant switcher. Every page works without it.
'use strict';
(function () {
  function copyWithSelection(text) {
    // For browsers without the async clipboard (plain http, older engines): a hidden textarea and execCommand.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch (error) {
      ok = false;
    }
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error('copy refused'));
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return copyWithSelection(text); });
    }
    return copyWithSelection(text);
  }

  function selectText(element) {
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  // A live region, so screen readers hear the outcome of a copy.
  const live = document.createElement('div');
  live.className = 'av-visually-hidden';
  live.setAttribute('aria-live', 'polite');
  document.body.appendChild(live);

  function announce(button, message, state) {
    const label = button.querySelector('.av-copy__text');
    live.textContent = message;
    button.dataset.state = state;
    if (label) label.textContent = message;
    clearTimeout(button._resetTimer);
    button._resetTimer = setTimeout(function () {
      delete button.dataset.state;
      if (label) label.textContent = 'Copy';
    }, 2000);
  }

  document.addEventListener('click', function (event) {
    const button = event.target.closest('[data-copy-target]');
    if (!button) return;
    const source = document.getElementById(button.dataset.copyTarget);
    if (!source) return;
    const text = source.textContent.trim();
    copyText(text).then(
      function () { announce(button, 'Copied', 'copied'); },
      function () {
        // Nothing could be copied: select the text so Ctrl+C / Cmd+C does it.
        selectText(source);
        announce(button, 'Press Ctrl+C', 'manual');
      }
    );
  });

  document.querySelectorAll('form[data-autosubmit] select').forEach(function (select) {
    select.addEventListener('change', function () { select.form.submit(); });
  });
  document.querySelectorAll('[data-noscript-only]').forEach(function (element) {
    element.hidden = true;
  });

})();
