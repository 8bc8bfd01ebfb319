/* The site's own behaviour: the figure zoom, folded answers opened for
   print, names for controls that have none (copy buttons, the phone
   header's icons, the "Answer" dropdowns), and the theme toggle while the
   page loads. (The maths is typeset when the site is built: nothing to wait
   for.) It runs from the page's <head>, async (site_ext.early_script): on a
   slow link it may run long before the page has arrived, or after. */
(function () {
  "use strict";
  var root = document.documentElement;
  function whenParsed(run) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
    else run();
  }
  function whenLoaded(run) {
    if (document.readyState === "complete") run();
    else window.addEventListener("load", run);
  }

  /* --- the theme toggle while the page loads --------------------------------
     furo hides its toggle (html.no-js) and wires it up only once the whole
     HTML has arrived. Scripts run, so it shows now; until the page is parsed
     a click cycles the theme here, in furo's order (auto, then the opposite
     of the system's theme, then the system's), and furo's own handler takes
     over afterwards. */
  root.classList.remove("no-js");
  function nextTheme(current, systemIsDark) {
    if (systemIsDark) return current === "auto" ? "light" : current === "light" ? "dark" : "auto";
    return current === "auto" ? "dark" : current === "dark" ? "light" : "auto";
  }
  document.addEventListener("click", function (event) {
    if (document.readyState !== "loading" || !event.target.closest || !event.target.closest(".theme-toggle")) return;
    event.stopPropagation();
    var theme = nextTheme(localStorage.getItem("theme") || "auto",
      window.matchMedia("(prefers-color-scheme: dark)").matches);
    document.body.dataset.theme = theme;
    localStorage.setItem("theme", theme);
  }, true);

  /* --- the figure zoom ------------------------------------------------------
     A click on a figure opens it over the whole window with its caption, at
     the window's width (a phone's rendering on a phone); "Enlarge" doubles
     it, to pan around;
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
    dialog.classList.remove("enlarged");
    dialog.querySelector(".figure-zoom-size").textContent = "Enlarge";
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

  /* --- names for screen readers --------------------------------------------
     sphinx-copybutton's buttons have only a tooltip; furo's header icons are
     labels of hidden checkboxes, with no name, not reachable by keyboard. */
  function nameCopyButtons() {
    document.querySelectorAll("button.copybtn:not([aria-label])").forEach(function (button) {
      button.setAttribute("aria-label", "Copy the code");
    });
  }
  function nameHeaderIcons() {
    document.querySelectorAll("label.nav-overlay-icon[for], label.toc-overlay-icon[for]").forEach(function (label) {
      var box = document.getElementById(label.htmlFor);
      if (!box || label.hasAttribute("role")) return;
      label.setAttribute("role", "button");
      label.setAttribute("tabindex", "0");
      label.setAttribute("aria-label", box.getAttribute("aria-label") ||
        (label.htmlFor === "__toc" ? "Contents of this page" : "Site navigation"));
      var expanded = function () { label.setAttribute("aria-expanded", box.checked ? "true" : "false"); };
      expanded();
      box.addEventListener("change", expanded);
      label.addEventListener("keydown", function (event) {
        if (event.key !== "Enter" && event.key !== " ") return;
        event.preventDefault();
        label.click();
      });
    });
  }

  /* Folded answers share one title ("Answer", ten times on a page): each is
     named after the question just before it, "Answer: Why can layer norm's
     output ...?", so a screen reader's list of controls tells them apart.
     The question is the paragraph's last sentence that asks (or its first),
     its maths read from KaTeX's MathML. */
  function questionBefore(details) {
    var p = details.previousElementSibling;
    for (var steps = 0; p && p.tagName !== "P" && steps < 3; steps++) p = p.previousElementSibling;
    if (!p || p.tagName !== "P") return "";
    var copy = p.cloneNode(true);
    copy.querySelectorAll(".katex-html, annotation, .headerlink").forEach(function (el) { el.remove(); });
    var text = copy.textContent.replace(/\s+/g, " ").trim();
    var sentences = text.split(/(?<=[.?!])\s+(?=[A-Z\u201c"(])/);
    var asks = sentences.filter(function (s) { return /\?\s*$/.test(s); });
    var question = asks.length ? asks[asks.length - 1] : sentences[0];
    /* "... which is larger? And is it close to the gradient?": both */
    if (asks.length > 1 && /^(And|Or|But)\b/.test(question)) question = asks[asks.length - 2] + " " + question;
    question = question.trim();
    if (question.length > 140) question = question.slice(0, 140).replace(/\s+\S*$/, "") + "\u2026";
    return question;
  }
  function nameAnswers() {
    var dropdowns = Array.from(document.querySelectorAll("article details.sd-dropdown"));
    var title = function (d) {
      var t = d.querySelector("summary .sd-summary-text");
      return t ? t.textContent.trim() : "";
    };
    var counts = {};
    dropdowns.forEach(function (d) { counts[title(d)] = (counts[title(d)] || 0) + 1; });
    dropdowns.forEach(function (d) {
      var summary = d.querySelector("summary");
      if (!summary || counts[title(d)] < 2 || summary.hasAttribute("aria-label")) return;
      var question = questionBefore(d);
      if (question) summary.setAttribute("aria-label", title(d) + ": " + question);
    });
  }

  /* A figure opens in the zoom from the moment its link is on the page. */
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("article figure > a.image-reference");
    if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    openZoom(link.closest("figure"));
  });

  whenParsed(function () {
    nameHeaderIcons();
    nameAnswers();
    nameCopyButtons();
  });
  /* sphinx-copybutton adds its buttons when the page has loaded, perhaps
     after the call above: name them again once everything has run. */
  whenLoaded(nameCopyButtons);
})();
