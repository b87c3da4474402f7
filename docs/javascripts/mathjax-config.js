// MathJax 3 reads the \( \) and \[ \] spans that pymdownx.arithmatex (generic mode) writes.
window.MathJax = {
  tex: {inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]],
        processEscapes: true, processEnvironments: true},
  options: {ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex"},
  svg: {fontCache: "global"}
};
// Material's instant navigation replaces the page without reloading scripts.
if (typeof document$ !== "undefined") {
  document$.subscribe(() => {
    if (window.MathJax.typesetPromise) { window.MathJax.typesetPromise(); }
  });
}
