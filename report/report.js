// The report's interactive charts: each figure of the page drawn again
// with uPlot (embedded before this script) from the data the page carries
// in #maple-data, with controls for the y scale (linear, logarithmic, dB),
// the x axis (the iteration or a cumulative column, linear or logarithmic)
// and exponential smoothing; hovering shows the values under the cursor in
// the legend, dragging zooms, the wheel zooms, Shift+drag pans, a
// double-click restores the whole range and clicking a legend entry hides
// or shows its curve. Without scripts the page shows the static SVG figures
// this script hides.
(function () {
  "use strict";
  var root = document.documentElement;
  var source = document.getElementById("maple-data");
  if (!source || typeof uPlot !== "function") {
    return;
  }
  root.classList.add("js");
  var specs = JSON.parse(source.textContent);
  var charts = {};
  // The charts by id, for people poking at the page and for its tests.
  window.mapleCharts = charts;

  // fmt writes a value with five significant digits, trailing zeros
  // dropped and a true minus sign.
  function fmt(v) {
    if (v == null || !isFinite(v)) {
      return "—";
    }
    var a = Math.abs(v), s;
    if (a !== 0 && (a >= 1e6 || a < 1e-4)) {
      var parts = v.toExponential(4).split("e");
      s = String(parseFloat(parts[0])) + "e" + parts[1].replace("+", "");
    } else {
      s = String(parseFloat(v.toPrecision(5)));
    }
    return s.replace(/-/g, "−");
  }
  window.mapleFormat = fmt;

  function ticks(u, splits) {
    return splits.map(function (v) { return v == null ? "" : fmt(v); });
  }

  // point returns a line's value and band at one x on the scale: the band
  // is ±1 standard error of the mean, cut at a tenth of the mean (10 dB
  // below it) on the logarithmic and dB scales, as in the figures.
  function point(scale, m, se) {
    if (m == null) {
      return [null, null, null];
    }
    var lo = se == null ? null : m - se, hi = se == null ? null : m + se;
    if (scale === "linear") {
      return [m, lo, hi];
    }
    if (!(m > 0)) {
      return [null, null, null];
    }
    if (lo != null) {
      lo = Math.max(lo, m / 10);
    }
    if (scale === "log") {
      return [m, lo, hi];
    }
    var db = function (x) { return x == null ? null : 10 * Math.log10(x); };
    return [db(m), db(lo), db(hi)];
  }

  // smooth applies an exponential moving average of weight w, corrected
  // for its start (as TensorBoard does), skipping missing values.
  function smooth(ys, w) {
    if (!(w > 0)) {
      return ys;
    }
    var out = [], acc = 0, n = 0;
    for (var i = 0; i < ys.length; i++) {
      if (ys[i] == null || !isFinite(ys[i])) {
        out.push(null);
        continue;
      }
      acc = acc * w + (1 - w) * ys[i];
      n++;
      out.push(acc / (1 - Math.pow(w, n)));
    }
    return out;
  }

  function dashPx(d) {
    return (d || []).map(function (x) { return x * 4 / 3; });
  }

  // build turns the chart's state into uPlot's aligned data, its series
  // and its bands.
  function build(st) {
    var spec = st.spec, view = spec.views[st.view];
    var tables = [], series = [{label: view.x, value: function (u, v) { return fmt(v); }}], bands = [];
    var role = [null];
    view.lines.forEach(function (l, j) {
      var xs = [], ys = [], los = [], his = [];
      for (var k = 0; k < l.x.length; k++) {
        if (st.logX && !(l.x[k] > 0)) {
          continue;
        }
        var p = point(st.scale, l.m[k], l.se ? l.se[k] : null);
        xs.push(l.x[k]);
        ys.push(p[0]);
        los.push(p[1]);
        his.push(p[2]);
      }
      if (xs.length === 0) {
        return;
      }
      var hidden = st.hidden[j] === true;
      var main = series.length;
      tables.push([xs, smooth(ys, st.smoothing)]);
      series.push({
        label: l.label, stroke: l.color, dash: dashPx(l.dash), width: spec.sweep ? 1.5 : 1.7, spanGaps: true, show: !hidden,
        points: {show: spec.sweep, size: 6, fill: l.color},
        value: function (u, v) { return fmt(v); }
      });
      role.push({line: j});
      if (l.se) {
        tables.push([xs, smooth(his, st.smoothing)]);
        tables.push([xs, smooth(los, st.smoothing)]);
        [" (mean + SE)", " (mean − SE)"].forEach(function (what) {
          series.push({label: l.label + what, stroke: l.color, width: 0, spanGaps: true, show: !hidden, "class": "maple-aux",
            points: {show: false}, value: function (u, v) { return fmt(v); }});
          role.push({line: j, of: main});
        });
        bands.push({series: [main + 1, main + 2], fill: l.band});
      }
      if (l.fit) {
        var fx = [l.fit[0][0], l.fit[1][0]];
        var fy = [l.fit[0][1], l.fit[1][1]].map(function (y) { return point(st.scale, y, null)[0]; });
        tables.push([fx, fy]);
        series.push({label: l.label + " (fit)", stroke: l.color, width: 0.8, dash: [1.5, 3], spanGaps: true, show: !hidden,
          "class": "maple-aux", points: {show: false}, value: function (u, v) { return fmt(v); }});
        role.push({line: j, of: main});
      }
    });
    var data = tables.length ? uPlot.join(tables) : [[]];
    if (!spec.sweep) {
      role.forEach(function (r, i) {
        if (r && r.of == null) {
          var at = markers(data[0], data[i], r.line, view.lines.length, st.logX);
          series[i].points = {show: true, size: 7, width: 1.5, fill: "#fff", filter: function () { return at; }};
        }
      });
    }
    return {data: data, series: series, bands: bands, role: role};
  }

  // markers picks ten points of a curve to mark, evenly spaced along the x
  // axis (logarithmically if log) and shifted by (line + ½)/lines of the
  // spacing, so that curves that coincide show all their markers, as in the
  // figures.
  function markers(xs, ys, line, lines, log) {
    var idx = [];
    for (var k = 0; k < xs.length; k++) {
      if (ys[k] != null && (!log || xs[k] > 0)) {
        idx.push(k);
      }
    }
    if (idx.length === 0) {
      return [];
    }
    var pos = function (x) { return log ? Math.log(x) : x; };
    var lo = pos(xs[idx[0]]), hi = pos(xs[idx[idx.length - 1]]), out = [], j = 0;
    for (var m = 0; m < 10; m++) {
      var target = lo + (hi - lo) * (m + (line + 0.5) / lines) / 10;
      while (j + 1 < idx.length && Math.abs(pos(xs[idx[j + 1]]) - target) <= Math.abs(pos(xs[idx[j]]) - target)) {
        j++;
      }
      if (out[out.length - 1] !== idx[j]) {
        out.push(idx[j]);
      }
    }
    return out;
  }

  // yLabel names the y scale; the chart's heading names the quantity.
  function yLabel(scale) {
    return {db: "dB", log: "log scale", linear: ""}[scale];
  }

  // logRange pads a logarithmic axis's data range by a fifth on each side
  // (uPlot's own snaps it to whole decades).
  function logRange(u, min, max) {
    if (!(min > 0) || !(max > 0)) {
      return [min, max];
    }
    return [min / 1.2, max * 1.2];
  }

  // logSplits places a logarithmic axis's ticks at 1, 2, …, 9 times the
  // powers of ten (the powers alone beyond six decades), and logValues
  // labels 1, 2 and 5 times them over at most two decades, the powers of
  // ten alone beyond, as the figures do.
  function logSplits(u, axisIdx, min, max) {
    var out = [], decades = Math.log10(max / min);
    for (var e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) {
      for (var m = 1; m <= 9; m++) {
        var v = m * Math.pow(10, e);
        if (v >= min && v <= max && (m === 1 || decades <= 6)) {
          out.push(v);
        }
      }
    }
    return out;
  }

  function logValues(u, splits, axisIdx) {
    var sc = u.scales[u.axes[axisIdx].scale], decades = Math.log10(sc.max / sc.min);
    return splits.map(function (v) {
      var m = Math.round(v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9)));
      return m === 1 || decades <= 2 && (m === 2 || m === 5) ? fmt(v) : "";
    });
  }

  // The increments of the iteration axis's ticks: whole numbers.
  var wholeIncrs = [];
  for (var e = 0; e < 10; e++) {
    [1, 2, 5].forEach(function (m) { wholeIncrs.push(m * Math.pow(10, e)); });
  }

  // zoomAndPan: the wheel zooms the x axis around the cursor, Shift+drag
  // (or a middle-button drag) pans it.
  function zoomAndPan(st) {
    return {hooks: {ready: function (u) {
      var over = u.over;
      var log = u.scales.x.distr === 3;
      var fwd = function (v) { return log ? Math.log10(v) : v; };
      var back = function (v) { return log ? Math.pow(10, v) : v; };
      over.addEventListener("wheel", function (e) {
        e.preventDefault();
        var r = over.getBoundingClientRect();
        var at = fwd(u.posToVal(e.clientX - r.left, "x"));
        var lo = fwd(u.scales.x.min), hi = fwd(u.scales.x.max);
        var f = e.deltaY < 0 ? 0.8 : 1.25;
        u.setScale("x", {min: back(at - (at - lo) * f), max: back(at + (hi - at) * f)});
      }, {passive: false});
      u.root.addEventListener("mousedown", function (e) {
        if (!(e.shiftKey || e.button === 1) || !over.contains(e.target)) {
          return;
        }
        e.preventDefault();
        e.stopPropagation();
        var x0 = e.clientX, lo = fwd(u.scales.x.min), hi = fwd(u.scales.x.max);
        var perPx = (hi - lo) / over.clientWidth;
        var move = function (m) {
          var d = (m.clientX - x0) * perPx;
          u.setScale("x", {min: back(lo - d), max: back(hi - d)});
        };
        var up = function () {
          document.removeEventListener("mousemove", move);
          document.removeEventListener("mouseup", up);
        };
        document.addEventListener("mousemove", move);
        document.addEventListener("mouseup", up);
      }, true);
    }}};
  }

  function draw(st) {
    var b = build(st);
    if (st.u) {
      st.u.destroy();
    }
    st.legend.textContent = "";
    st.role = b.role;
    var width = Math.max(240, st.plot.clientWidth);
    var opts = {
      width: width,
      height: Math.round(Math.min(380, Math.max(220, width * 0.55))),
      scales: {
        x: {time: false, distr: st.logX ? 3 : 1, range: st.logX ? logRange : undefined},
        y: {distr: st.scale === "log" ? 3 : 1, range: st.scale === "log" ? logRange : undefined}
      },
      axes: [
        st.spec.sweep && st.logX ?
          {label: st.spec.views[st.view].x, values: ticks, splits: function () { return st.spec.xticks; },
            filter: function (u, splits) { return splits; }} :
          st.logX ?
            {label: st.spec.views[st.view].x, values: logValues, splits: logSplits, filter: function (u, splits) { return splits; }} :
            {label: st.spec.views[st.view].x, values: ticks, incrs: st.spec.views[st.view].whole ? wholeIncrs : undefined},
        st.scale === "log" ?
          {label: yLabel(st.scale), values: logValues, splits: logSplits, filter: function (u, splits) { return splits; }, size: 64} :
          {label: yLabel(st.scale), values: ticks, size: 64}
      ],
      series: b.series,
      bands: b.bands,
      cursor: {drag: {x: true, y: false}},
      legend: {mount: function (u, el) { st.legend.appendChild(el); }},
      hooks: {setSeries: [function (u, i, o) {
        var r = st.role[i];
        if (i == null || !r || r.of != null || o.show == null) {
          return;
        }
        st.hidden[r.line] = !o.show;
        st.role.forEach(function (x, k) {
          if (x && x.of === i && u.series[k].show !== o.show) {
            u.setSeries(k, {show: o.show});
          }
        });
      }]},
      plugins: [zoomAndPan(st)]
    };
    st.u = new uPlot(opts, b.data, st.plot);
  }

  function control(parent, label, el) {
    var l = document.createElement("label");
    l.textContent = label + " ";
    l.appendChild(el);
    parent.appendChild(l);
    return el;
  }

  function select(options, value) {
    var s = document.createElement("select");
    options.forEach(function (o) {
      var opt = document.createElement("option");
      opt.value = o[0];
      opt.textContent = o[1];
      opt.selected = o[0] === value;
      s.appendChild(opt);
    });
    return s;
  }

  specs.forEach(function (spec) {
    var fig = document.getElementById(spec.id);
    var host = fig && fig.querySelector(".interactive");
    if (!host) {
      return;
    }
    var st = {spec: spec, view: 0, scale: spec.scale, logX: spec.views[0].log, smoothing: 0, hidden: {}};
    var bar = document.createElement("div");
    bar.className = "controls";
    var scales = [["linear", "linear"], ["log", "logarithmic"]];
    if (spec.db) {
      scales.push(["db", "dB"]);
    }
    control(bar, "y", select(scales, st.scale)).addEventListener("change", function (e) {
      st.scale = e.target.value;
      draw(st);
    });
    if (spec.views.length > 1) {
      control(bar, "x", select(spec.views.map(function (v, i) { return [String(i), v.x]; }), "0")).addEventListener("change", function (e) {
        st.view = Number(e.target.value);
        st.logX = spec.views[st.view].log;
        logX.checked = st.logX;
        draw(st);
      });
    }
    var logX = document.createElement("input");
    logX.type = "checkbox";
    logX.checked = st.logX;
    control(bar, "logarithmic x", logX).addEventListener("change", function (e) {
      st.logX = e.target.checked;
      draw(st);
    });
    if (!spec.sweep) {
      var slider = document.createElement("input");
      slider.type = "range";
      slider.min = "0";
      slider.max = "0.99";
      slider.step = "0.01";
      slider.value = "0";
      var shown = document.createElement("output");
      shown.textContent = "0";
      control(bar, "smoothing", slider).addEventListener("input", function (e) {
        st.smoothing = Number(e.target.value);
        shown.textContent = e.target.value;
        draw(st);
      });
      bar.appendChild(shown);
    }
    var body = document.createElement("div");
    body.className = "chart-body";
    st.plot = document.createElement("div");
    st.plot.className = "plot";
    st.legend = document.createElement("div");
    st.legend.className = "legend-side";
    body.appendChild(st.plot);
    body.appendChild(st.legend);
    host.appendChild(bar);
    host.appendChild(body);
    draw(st);
    var width = st.plot.clientWidth;
    new ResizeObserver(function () {
      if (st.plot.clientWidth !== width) {
        width = st.plot.clientWidth;
        st.u.setSize({width: Math.max(240, width), height: Math.round(Math.min(380, Math.max(220, width * 0.55)))});
      }
    }).observe(st.plot);
    charts[spec.id] = st;
  });
})();
