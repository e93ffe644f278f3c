// The dashboard's only script (no inline code: the Content-Security-Policy forbids it).
//
// Live refresh: every few seconds, fetch this page again and swap in its [data-live] parts.
// Skipped while the page is hidden, while the user is in a form, hovers a button, has text
// selected, has just submitted a form or points at a picture, so nothing changes under
// the user's hand.
(function () {
  "use strict";
  // The login page, reached by a link from another site, was requested without the
  // SameSite=Strict session cookie; ask again from here (same-site) before showing the form.
  var login = document.querySelector("[data-session-check]");
  if (login && window.fetch) {
    fetch(login.getAttribute("data-session-check"), { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.json(); })
      .then(function (status) {
        if (status.logged_in) window.location.replace(login.getAttribute("data-next"));
      }).catch(function () { /* stay on the login page */ });
  }

  var every = parseInt(document.body.getAttribute("data-refresh") || "0", 10);
  var submitting = false;
  var timer = null;
  if (!every || !window.fetch || !window.DOMParser) return;

  document.addEventListener("submit", function () { submitting = true; });
  window.addEventListener("pageshow", function () { submitting = false; });

  function inUse() {
    if (submitting || document.hidden) return true;
    var active = document.activeElement;
    if (active && active !== document.body && active.closest("form")) return true;
    // A picture under the pointer keeps its tooltip (an SVG <title>) until the pointer leaves.
    if (document.querySelector("[data-live] form:hover, [data-live] svg.chart:hover")) return true;
    var selection = window.getSelection ? window.getSelection() : null;
    return !!(selection && !selection.isCollapsed && selection.toString());
  }

  function swap(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html");
    document.querySelectorAll("[data-live]").forEach(function (old) {
      var replacement = old.id ? fresh.getElementById(old.id) : null;
      if (replacement) old.replaceWith(document.importNode(replacement, true));
    });
    every = parseInt(fresh.body.getAttribute("data-refresh") || "0", 10);
  }

  function refresh() {
    timer = null;
    if (inUse()) return later();
    fetch(window.location.href, {
      credentials: "same-origin",
      cache: "no-store",
      headers: { "X-Tickwork-Refresh": "1" }
    }).then(function (response) {
      if (response.redirected || response.status === 401 || response.status === 403) {
        window.location.reload();  // logged out (or the key was revoked): show the login page
        return null;
      }
      return response.ok ? response.text() : null;
    }).then(function (html) {
      if (html !== null && !inUse()) swap(html);
    }).catch(function () { /* offline for a moment: try again later */ })
      .then(later);
  }

  function later() {
    if (every && timer === null) timer = window.setTimeout(refresh, every);
  }

  later();
})();
