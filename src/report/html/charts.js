// The html report's drawings besides the flame graph, with d3: each lock's wait histogram and each
// traced process's timeline of waits against holds; and the formatting report.js shares. Loaded
// before report.js, which calls them (window.lockscopePage).
(function() {
'use strict';
const svgNs = 'http://www.w3.org/2000/svg';

// As the text report writes durations (src/report/duration_format.cpp): 812ns, 3.40µs, 12.5ms.
function formatNs(ns) {
  if (!(ns > 0)) return '0';
  if (ns < 1e3) return ns.toFixed(0) + 'ns';
  const digits = (v, base) => (v < base * 10 ? 2 : v < base * 100 ? 1 : 0);
  if (ns < 1e6) return (ns / 1e3).toFixed(digits(ns, 1e3)) + 'µs';
  if (ns < 1e9) return (ns / 1e6).toFixed(digits(ns, 1e6)) + 'ms';
  return (ns / 1e9).toFixed(digits(ns, 1e9)) + 's';
}
const formatCount = (n) => Number(n).toLocaleString('en-US');

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.textContent = text;
  return node;
}

// --- wait histograms -------------------------------------------------------------------------
// Bins are [lower ns (exclusive), upper ns, count]: one log scale over every lock's bins.
function histogramScale(histograms) {
  let low = Infinity, high = 0;
  for (const bins of histograms)
    for (const [lower, upper] of bins) {
      low = Math.min(low, Math.max(lower, 1));
      high = Math.max(high, upper);
    }
  if (!(high > low)) return null;
  return d3.scaleLog().domain([low, high]).range([0, 160]).clamp(true);
}

function histogramCell(bins, scale) {
  const td = element('td', 'left', '');
  if (bins.length === 0 || !scale) {
    td.appendChild(element('span', 'empty', 'no contended waits'));
    return td;
  }
  const width = 162, height = 26, axis = 11;
  // Square roots: one bucket with most of the waits leaves the others visible.
  const y = d3.scaleSqrt().domain([0, d3.max(bins, (b) => b[2])]).range([0, height]);
  const svg = d3.select(td)
                  .append('svg')
                  .attr('class', 'histogram')
                  .attr('width', width + 2)
                  .attr('height', height + axis);
  svg.append('rect')
      .attr('class', 'back')
      .attr('x', 0)
      .attr('y', 0)
      .attr('width', width)
      .attr('height', height);
  svg.selectAll('rect.bar')
      .data(bins)
      .enter()
      .append('rect')
      .attr('class', 'bar')
      .attr('x', (b) => scale(Math.max(b[0], 1)))
      .attr('width', (b) => Math.max(1.5, scale(b[1]) - scale(Math.max(b[0], 1)) - 0.5))
      .attr('y', (b) => height - Math.max(1, y(b[2])))
      .attr('height', (b) => Math.max(1, y(b[2])))
      .append('title')
      .text(
          (b) => '(' + formatNs(b[0]) + ', ' + formatNs(b[1]) + ']: ' + formatCount(b[2]) +
              ' wait' + (b[2] === 1 ? '' : 's'));
  const [low, high] = scale.domain();
  svg.append('text').attr('x', 0).attr('y', height + axis - 1).text(formatNs(low));
  svg.append('text')
      .attr('x', width)
      .attr('y', height + axis - 1)
      .attr('text-anchor', 'end')
      .text(formatNs(high));
  return td;
}

// --- timelines -------------------------------------------------------------------------------
// A process's timeline: a lane per thread, its waits (above) against its holds (below), each
// [thread, begin ns, end ns, lock]. Wheel or drag to zoom and pan the time axis.
function drawTimeline(container, process) {
  const t = process.timeline;
  container.appendChild(element('h3', '', process.name));
  const shown = t.shown < t.intervals ? ' The first ' + formatCount(t.shown) + ' of its ' +
          formatCount(t.intervals) + ' waits and holds are drawn.' :
                                        '';
  const lost = t.lost > 0 ? ' The trace lost ' + formatCount(t.lost) + ' events.' : '';
  const legend = element('p', 'legend', '');
  legend.append(
      element('span', 'swatch wait', ''),
      ' waiting for a lock (or a condition, ' +
          'semaphore, barrier)',
      element('span', 'swatch hold', ''),
      ' holding a lock.  Time since ' +
          'the process started; Ctrl+wheel to zoom, drag to pan, hover for the lock.' + shown +
          lost);
  container.appendChild(legend);
  if (t.waits.length + t.holds.length === 0) {
    container.appendChild(element('p', 'empty', 'Nothing was traced in this process.'));
    return;
  }
  const left = 190, band = 9, lane = 2 * band + 6, top = 4, axisHeight = 24;
  const width = Math.max(700, (container.clientWidth || 1200) - 10);
  const height = top + lane * t.threads.length + axisHeight;
  let end = 0;
  for (const list of [t.waits, t.holds])
    for (const i of list) end = Math.max(end, i[2]);
  const x0 = d3.scaleLinear().domain([0, end || 1]).range([left, width - 10]);
  const svg = d3.select(container)
                  .append('svg')
                  .attr('class', 'timeline')
                  .attr('width', width)
                  .attr('height', height);
  svg.append('defs')
      .append('clipPath')
      .attr('id', 'clip-' + process.pid)
      .append('rect')
      .attr('x', left)
      .attr('y', 0)
      .attr('width', width - 10 - left)
      .attr('height', height);
  t.threads.forEach((thread, i) => {
    svg.append('rect')
        .attr('class', 'lane')
        .attr('x', left)
        .attr('y', top + i * lane)
        .attr('width', width - 10 - left)
        .attr('height', 2 * band);
    svg.append('text')
        .attr('x', left - 8)
        .attr('y', top + i * lane + band + 4)
        .attr('text-anchor', 'end')
        .text(thread.name + ' (' + thread.tid + ')');
  });
  const plot = svg.append('g').attr('clip-path', 'url(#clip-' + process.pid + ')');
  const draw = (list, kind, offset) =>
      plot.selectAll('rect.' + kind)
          .data(list)
          .enter()
          .append('rect')
          .attr('class', kind)
          .attr('height', band)
          .attr('y', (i) => top + i[0] * lane + offset)
          .call(
              (r) => r.append('title').text(
                  (i) => (kind === 'wait' ? 'waited for ' : 'held ') + t.locks[i[3]] + ': ' +
                      formatNs(i[2] - i[1]) + ' at ' + formatNs(i[1])));
  const waits = draw(t.waits, 'wait', 0), holds = draw(t.holds, 'hold', band);
  const axis = svg.append('g')
                   .attr('class', 'axis')
                   .attr('transform', 'translate(0,' + (top + lane * t.threads.length) + ')');
  function place(x) {
    for (const rects of [waits, holds])
      rects.attr('x', (i) => x(i[1])).attr('width', (i) => Math.max(0.5, x(i[2]) - x(i[1])));
    axis.call(d3.axisBottom(x).ticks(8).tickFormat(formatNs));
  }
  place(x0);
  // The wheel zooms only with Ctrl or Shift held: without, it scrolls the page past the timeline.
  svg.call(d3.zoom()
               .filter(
                   (event) =>
                       !event.button && (event.type !== 'wheel' || event.ctrlKey || event.shiftKey))
               .scaleExtent([1, 1e6])
               .translateExtent([[left, 0], [width - 10, height]])
               .extent([[left, 0], [width - 10, height]])
               .on('zoom', (event) => place(event.transform.rescaleX(x0))));
}

function drawTimelines(container, processes) {
  const traced = processes.filter((p) => p.timeline !== null);
  if (traced.length === 0) {
    container.appendChild(element(
        'p', 'empty',
        'No timeline: this profile was recorded without --trace. Record with ' +
            '`lockscope record --trace -- PROGRAM` to see each thread\'s waits against its holds.'));
    return;
  }
  for (const process of traced) drawTimeline(container, process);
}

window.lockscopePage = {
  formatNs,
  formatCount,
  element,
  histogramScale,
  histogramCell,
  drawTimelines
};
})();
