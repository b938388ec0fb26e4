// Praxa console: times in the viewer's time zone, and the approvals queue
// refreshed in place. The pages work without it.
"use strict";
function localTimes(root) {
  root.querySelectorAll("time[datetime]").forEach(function (t) {
    var d = new Date(t.getAttribute("datetime"));
    if (!isNaN(d)) { t.textContent = d.toLocaleString(); t.title = t.getAttribute("datetime"); }
  });
}
document.addEventListener("DOMContentLoaded", function () {
  localTimes(document);
  var q = document.getElementById("queue");
  if (!q) return;
  var every = (parseInt(q.dataset.every, 10) || 5) * 1000;
  var shown = null; // the list last put in place: an unchanged one is left alone
  setInterval(function () {
    var active = document.activeElement;
    if (document.hidden || (active && q.contains(active))) return; // never under the keyboard
    fetch(q.dataset.refresh, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) { if (html !== null && html !== shown) { shown = html; q.innerHTML = html; localTimes(q); } })
      .catch(function () {});
  }, every);
});
