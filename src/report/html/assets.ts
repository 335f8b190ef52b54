/**
 * The page's one style sheet and one script, inlined, and the Content-Security-Policy that allows
 * exactly these two by their SHA-256 hashes (CSP level 2): nothing else runs or styles the page,
 * not even a ClientId that slipped through escaping. The script only adds: sorting, filtering and
 * a tooltip; the page reads the same without it (the SVG has <title>s, the tables are complete).
 */
import { createHash } from 'node:crypto';

export const STYLE = `
:root{--fg:#1d2330;--muted:#5b6475;--line:#d8dce4;--bg:#fff;--band:#f4f6f9;--error:#c62828;--warning:#d76a00;--info:#1565c0;--ok:#2e7d5b;--bar:#9fb3d1}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;padding:16px;font:14px/1.45 "DejaVu Sans",system-ui,sans-serif;color:var(--fg);background:var(--bg);max-width:1400px}
h1{font-size:20px;margin:0 0 4px}
h2{font-size:16px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:14px;margin:16px 0 4px}
p,li{overflow-wrap:anywhere}
.muted,.note{color:var(--muted)}
.note{font-size:13px;margin:4px 0}
.summary{font-size:15px;font-weight:600;overflow-wrap:anywhere}
code,.mono,td.id{font-family:"DejaVu Sans Mono",ui-monospace,monospace;font-size:12.5px}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:13px;min-width:100%}
th,td{text-align:left;padding:3px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--band);white-space:nowrap;position:relative}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.msg{min-width:18em;overflow-wrap:anywhere}
tr[hidden]{display:none}
th button{all:unset;cursor:pointer;display:block;width:100%}
th button:focus-visible{outline:2px solid var(--info)}
th[aria-sort=ascending] button::after{content:" \\25B2";font-size:10px}
th[aria-sort=descending] button::after{content:" \\25BC";font-size:10px}
.sev{font-weight:600;white-space:nowrap}
.sev-error{color:var(--error)}.sev-warning{color:var(--warning)}.sev-info{color:var(--info)}
.controls{display:none;gap:12px;flex-wrap:wrap;align-items:center;margin:6px 0}
.js .controls{display:flex}
.controls label{font-size:13px}
.controls select{font:inherit;max-width:100%}
svg{display:block;width:100%;height:auto;max-width:100%}
svg text{font:11px "DejaVu Sans",sans-serif;fill:var(--muted)}
svg .lane-label{fill:var(--fg);font-size:11px}
svg .band{fill:var(--band)}
svg .grid{stroke:var(--line);stroke-width:1}
svg .conn{fill:var(--bar)}
svg .tick{fill:var(--ok)}
svg .tick.err{fill:var(--error)}
svg .tick.none{fill:#8a8f99}
svg .marker-error{fill:var(--error)}svg .marker-warning{fill:var(--warning)}svg .marker-info{fill:var(--info)}
svg .req{fill:#7d9cc9}
svg .errs{fill:var(--error)}
svg .lat{fill:#7d9cc9}
svg .p50{stroke:var(--ok);stroke-width:2}
svg .p99{stroke:var(--error);stroke-width:2}
svg [tabindex]:focus{outline:none;stroke:#000;stroke-width:1.5}
.legend{display:flex;gap:14px;flex-wrap:wrap;font-size:12px;color:var(--muted);margin:4px 0}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}
.legend .l-ok{background:var(--ok)}.legend .l-err{background:var(--error)}.legend .l-none{background:#8a8f99}.legend .l-conn{background:var(--bar)}
.legend .l-error{background:var(--error);transform:rotate(45deg)}.legend .l-warning{background:var(--warning);transform:rotate(45deg)}.legend .l-info{background:var(--info);transform:rotate(45deg)}
.legend .l-req{background:#7d9cc9}
#tip{position:absolute;display:none;pointer-events:none;background:#1d2330;color:#fff;padding:4px 7px;border-radius:4px;font-size:12px;max-width:min(420px,90vw);white-space:pre-wrap;overflow-wrap:anywhere;z-index:10}
svg.wide{min-width:760px}
@media (min-width:1260px){#findings-table td.mono{white-space:nowrap}}
@media (max-width:600px){body{padding:10px;font-size:13px}
#findings-table thead{display:none}
#findings-table,#findings-table tbody,#findings-table tr,#findings-table td{display:block;min-width:0}
#findings-table tr{border-bottom:1px solid var(--line);padding:4px 0}
#findings-table tr[hidden]{display:none}
#findings-table td{border:0;padding:1px 4px;text-align:left}
#findings-table td::before{content:attr(data-label) " ";color:var(--muted);font-family:"DejaVu Sans",sans-serif;font-size:12px}
#findings-table td.sev::before,#findings-table td.msg::before{content:none}}
@media print{.controls,#tip{display:none!important}.scroll{overflow:visible}body{max-width:none;padding:0}section{break-inside:auto}svg{break-inside:avoid}}
`;

export const SCRIPT = `
(function () {
  'use strict';
  document.documentElement.classList.add('js');
  function key(cell) {
    var v = cell.getAttribute('data-sort');
    return v === null ? cell.textContent : v;
  }
  function compare(a, b) {
    var x = Number(a), y = Number(b);
    if (a !== '' && b !== '' && !isNaN(x) && !isNaN(y)) return x - y;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, column) {
      var button = document.createElement('button');
      button.type = 'button';
      button.textContent = th.textContent;
      th.textContent = '';
      th.appendChild(button);
      button.addEventListener('click', function () {
        var descending = th.getAttribute('aria-sort') === 'ascending';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.forEach(function (r, i) { r.__order = i; });
        rows.sort(function (a, b) {
          var c = compare(key(a.cells[column]), key(b.cells[column]));
          return (descending ? -c : c) || a.__order - b.__order;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  var findings = document.getElementById('findings-table');
  if (findings) {
    var rule = document.getElementById('filter-rule');
    var severity = document.getElementById('filter-severity');
    var shown = document.getElementById('findings-shown');
    var apply = function () {
      var n = 0, rows = findings.tBodies[0].rows;
      for (var i = 0; i < rows.length; i++) {
        var r = rows[i];
        var ok = (rule.value === '' || r.getAttribute('data-rule') === rule.value) &&
          (severity.value === '' || r.getAttribute('data-severity') === severity.value);
        r.hidden = !ok;
        if (ok) n++;
      }
      shown.textContent = n + ' of ' + rows.length + ' shown';
    };
    rule.addEventListener('change', apply);
    severity.addEventListener('change', apply);
    apply();
  }
  // Each mark's <title> is the browser's tooltip when scripts are off. With them on it becomes the
  // mark's aria-label, shown at once on hover and on keyboard focus (a title would show a second
  // tooltip a moment later).
  Array.prototype.forEach.call(document.querySelectorAll('svg [tabindex] > title'), function (title) {
    title.parentNode.setAttribute('aria-label', title.textContent);
    title.parentNode.removeChild(title);
  });
  var tip = document.getElementById('tip');
  var show = function (e) {
    var t = e.target.closest && e.target.closest('svg [aria-label][tabindex]');
    if (!t) return;
    tip.textContent = t.getAttribute('aria-label');
    tip.style.display = 'block';
    var r = t.getBoundingClientRect();
    var left = Math.min(window.scrollX + r.left, window.scrollX + document.documentElement.clientWidth - tip.offsetWidth - 4);
    tip.style.left = Math.max(window.scrollX + 4, left) + 'px';
    tip.style.top = (window.scrollY + r.bottom + 6) + 'px';
  };
  var hide = function () { tip.style.display = 'none'; };
  document.addEventListener('mouseover', show);
  document.addEventListener('focusin', show);
  document.addEventListener('mouseout', hide);
  document.addEventListener('focusout', hide);
})();
`;

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64');

/** Only the page's own style and script; no fetch of any kind (default-src 'none'), no base, no forms. */
export const CSP = `default-src 'none'; style-src 'sha256-${sha256(STYLE)}'; script-src 'sha256-${sha256(SCRIPT)}'; img-src 'none'; base-uri 'none'; form-action 'none'`;
