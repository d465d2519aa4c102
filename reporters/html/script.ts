// Plain DOM, no server: the outcome filter hides clause cards and dims their matrix cells; the
// copy buttons stay hidden when scripts do not run.
export const SCRIPT = `
(function () {
  var boxes = Array.prototype.slice.call(document.querySelectorAll('.filter input[type=checkbox]'));
  var clauses = document.querySelectorAll('.clause');
  var cells = document.querySelectorAll('.cell');
  var shown = document.getElementById('shown');
  function apply() {
    var on = {};
    boxes.forEach(function (b) { if (b.checked) on[b.value] = true; });
    var n = 0;
    Array.prototype.forEach.call(clauses, function (c) {
      var visible = on[c.getAttribute('data-outcome')] === true;
      c.hidden = !visible;
      if (visible) n++;
    });
    Array.prototype.forEach.call(cells, function (c) {
      c.classList.toggle('dim', on[c.getAttribute('data-outcome')] !== true);
    });
    if (shown) shown.textContent = String(n);
  }
  boxes.forEach(function (b) { b.addEventListener('change', apply); });
  Array.prototype.forEach.call(document.querySelectorAll('[data-preset]'), function (btn) {
    btn.addEventListener('click', function () {
      var preset = btn.getAttribute('data-preset');
      boxes.forEach(function (b) { b.checked = preset === 'all' || b.hasAttribute('data-problem'); });
      apply();
    });
  });
  apply();

  function fallbackCopy(text) {
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok;
  }
  Array.prototype.forEach.call(document.querySelectorAll('button.copy'), function (btn) {
    btn.hidden = false;
    btn.addEventListener('click', function () {
      var source = document.getElementById(btn.getAttribute('data-target'));
      var text = source ? source.textContent : '';
      function done(ok) {
        btn.textContent = ok ? 'Copied' : 'Copy failed';
        setTimeout(function () { btn.textContent = 'Copy'; }, 1500);
      }
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(fallbackCopy(text)); });
      } else {
        done(fallbackCopy(text));
      }
    });
  });
})();
`;
