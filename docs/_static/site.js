/* The site's own behaviour: the figure zoom and folded answers opened for
   print. (The maths is typeset when the site is built: nothing to wait for.) */
(function () {
  "use strict";
  var root = document.documentElement;

  /* --- the figure zoom ------------------------------------------------------
     A click on a figure opens it over the whole window with its caption, at
     the window's width (on a phone: "Enlarge" doubles it, to pan around);
     Esc, "Close", a click on the backdrop or the browser's Back closes it.
     Without script the link still opens the SVG itself. */
  var dialog = null;
  function buildDialog() {
    dialog = document.createElement("dialog");
    dialog.className = "figure-zoom";
    dialog.setAttribute("aria-label", "Figure, enlarged");
    dialog.innerHTML =
      '<div class="figure-zoom-bar">' +
      '<button type="button" class="figure-zoom-size">Enlarge</button>' +
      '<button type="button" class="figure-zoom-close">Close</button></div>' +
      '<div class="figure-zoom-image"></div><div class="figure-zoom-caption"></div>';
    document.body.appendChild(dialog);
    dialog.querySelector(".figure-zoom-close").addEventListener("click", function () { closeZoom(true); });
    var size = dialog.querySelector(".figure-zoom-size");
    size.addEventListener("click", function () {
      var big = dialog.classList.toggle("enlarged");
      size.textContent = big ? "Fit to window" : "Enlarge";
    });
    dialog.addEventListener("cancel", function (event) { event.preventDefault(); closeZoom(true); });
    dialog.addEventListener("click", function (event) { if (event.target === dialog) closeZoom(true); });
    window.addEventListener("popstate", function () { if (dialog.open) closeZoom(false); });
  }
  function openZoom(figure) {
    if (!dialog) buildDialog();
    var img = figure.querySelector("img");
    var copy = document.createElement("img");
    copy.src = img.currentSrc || img.src;
    copy.alt = img.alt;
    dialog.querySelector(".figure-zoom-image").replaceChildren(copy);
    var caption = figure.querySelector("figcaption");
    dialog.querySelector(".figure-zoom-caption").innerHTML = caption ? caption.innerHTML : "";
    dialog.querySelectorAll(".figure-zoom-caption a.headerlink").forEach(function (a) { a.remove(); });
    var phone = window.matchMedia("(max-width: 46em)").matches;
    dialog.classList.toggle("enlarged", phone);
    dialog.querySelector(".figure-zoom-size").textContent = phone ? "Fit to window" : "Enlarge";
    history.pushState({ figureZoom: figure.id }, "", "#" + figure.id);
    dialog.showModal();
    dialog.querySelector(".figure-zoom-close").focus();
  }
  function closeZoom(goBack) {
    if (!dialog || !dialog.open) return;
    dialog.close();
    if (goBack && history.state && history.state.figureZoom) history.back();
  }

  /* --- print: every folded answer open -------------------------------------- */
  var openedForPrint = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("article details:not([open])").forEach(function (d) {
      d.open = true;
      openedForPrint.push(d);
    });
  });
  window.addEventListener("afterprint", function () {
    openedForPrint.forEach(function (d) { d.open = false; });
    openedForPrint = [];
  });

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("article figure > a.image-reference").forEach(function (link) {
      link.addEventListener("click", function (event) {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
        event.preventDefault();
        openZoom(link.closest("figure"));
      });
    });
  });
})();
