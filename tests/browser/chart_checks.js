// What a reader sees of each plotly chart, read from the rendered page (the SVG plotly drew),
// and the legibility checks every chart must pass: non-empty traces, tick labels on every
// axis, no legend box over an axis title's box.
(() => {
  const text = (el) => (el ? el.textContent.trim() : "");
  const boxesOverlap = (a, b) =>
    a.width > 0 && a.height > 0 && b.width > 0 && b.height > 0 &&
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

  function axes(gd) {
    const layout = gd._fullLayout || {};
    return Object.keys(layout)
      .filter((k) => /^[xy]axis\d*$/.test(k) && layout[k] && layout[k]._id)
      .map((k) => layout[k]);
  }

  // plotly.js's resolved trace (arrays decoded from plotly.py's base64 form)
  function traceHasData(t) {
    if (t.visible === false) return false;
    if (t._length > 0) return true;
    for (const key of ["x", "y", "values", "z", "lat", "r"]) {
      if (t[key] && t[key].length > 0) return true;
    }
    return Boolean(t.cells && t.cells.values && t.cells.values.length);
  }

  function describe(gd) {
    return {
      title: text(gd.querySelector(".gtitle")),
      traces: (gd.data || []).map((t) => t.name || ""),
      legend: [...gd.querySelectorAll(".legendtext")].map(text),
      ticks: Object.fromEntries(
        axes(gd).map((ax) => [
          ax._id,
          [...gd.querySelectorAll(`.${ax._id}tick text`)].map(text).filter(Boolean),
        ]),
      ),
      axisTitles: [...gd.querySelectorAll("[class^='g-'][class$='title'] text")].map(text),
      text: text(gd),
      meta: (gd.layout && gd.layout.meta) || null, // e.g. the step a step-through draws
    };
  }

  function problems(gd, name) {
    const found = [];
    const data = gd.data || [];
    if (!(gd._fullData || []).some(traceHasData)) found.push(`${name}: no trace with data`);
    const layout = gd._fullLayout || {};
    for (const ax of axes(gd)) {
      if (!ax.visible || !ax.showticklabels) continue;
      // an axis no trace uses (plotly's default axes of a non-cartesian chart) is not drawn
      const used = (gd._fullData || []).some((t) => t.xaxis === ax._id || t.yaxis === ax._id);
      if (!used) continue;
      const labels = [...gd.querySelectorAll(`.${ax._id}tick text`)].filter((t) => text(t));
      if (!labels.length) found.push(`${name}: no tick labels on axis ${ax._id}`);
    }
    for (const ax of axes(gd)) {
      const title = gd.querySelector(`.g-${ax._id}title`);
      if (!title) continue;
      const box = title.getBoundingClientRect();
      const crossed = [...gd.querySelectorAll(`.${ax._id}tick text`)].filter(
        (t) => text(t) && boxesOverlap(box, t.getBoundingClientRect()),
      );
      if (crossed.length) {
        found.push(`${name}: the axis title "${text(title)}" lies over its tick labels`);
      }
    }
    if (layout.showlegend !== false) {
      for (const legend of gd.querySelectorAll("g.legend")) {
        const box = legend.getBoundingClientRect();
        for (const title of gd.querySelectorAll("[class^='g-'][class$='title']")) {
          if (!/^g-[xy]\d*title$/.test(title.getAttribute("class"))) continue;
          if (boxesOverlap(box, title.getBoundingClientRect())) {
            found.push(`${name}: the legend lies over the axis title "${text(title)}"`);
          }
        }
      }
    }
    return found;
  }

  window.skewlabCharts = (root) =>
    [...(root || document).querySelectorAll(".js-plotly-plot")].map(describe);
  window.skewlabChartProblems = (root) =>
    [...(root || document).querySelectorAll(".js-plotly-plot")].flatMap((gd, i) =>
      problems(gd, `chart ${i + 1} "${text(gd.querySelector(".gtitle"))}"`),
    );
})();
