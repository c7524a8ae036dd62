// The diff page's script: draws the diff's JSON (the element #lockscope-data, written by
// src/report/diff_html.cpp) as the verdict and the gate, the findings that appeared or went away,
// the changes table, what is on one side only, and a differential flame graph (d3-flame-graph):
// each node carries NEW's wait (value), BASE's (base) and their difference (delta). Every name from
// the data goes into the page as text (textContent, d3's .text), never as markup.
(function() {
'use strict';
const data = JSON.parse(document.getElementById('lockscope-data').textContent);
const {element, formatNs} = window.lockscopePage;
const runs = (n) => n + (n === 1 ? ' run' : ' runs');

document.title = 'lockscope diff: ' + data.base + ' → ' + data.new;
document.getElementById('source').textContent = 'BASE ' + data.base + ' (' + runs(data.base_runs) +
    ')  →  NEW ' + data.new + ' (' + runs(data.new_runs) + ')';

// --- the verdict, the gate, the findings -----------------------------------------------------
function drawSummary() {
  const status = document.getElementById('status');
  status.textContent = data.failed ? 'Regression' : 'No regression';
  status.className = data.failed ? 'failed' : 'passed';
  document.getElementById('verdict').textContent = data.verdict;
  document.getElementById('gate').textContent = 'Gate: ' + data.gate + '.';
  const list = document.getElementById('findings-list');
  const findings = (heading, items) => {
    if (items.length === 0) return;
    list.appendChild(element('h3', '', heading));
    const ul = document.createElement('ul');
    for (const f of items)
      ul.appendChild(element(
          'li', '',
          f.title + ' (base ' + f.base_runs + '/' + data.base_runs + ' runs, new ' + f.new_runs +
              '/' + data.new_runs + ')'));
    list.appendChild(ul);
  };
  findings('Findings that appeared', data.findings_appeared);
  findings('Findings that went away', data.findings_gone);
  if (data.findings_appeared.length + data.findings_gone.length === 0)
    list.appendChild(element('p', 'empty', 'No finding appeared or went away.'));
}
drawSummary();

// --- the changes, and what is on one side only -----------------------------------------------
function drawChanges() {
  const table = document.getElementById('changes-table');
  if (data.changes.length === 0) {
    table.replaceWith(element('p', 'empty', 'No figure was matched on both sides.'));
    return;
  }
  const columns = [
    ['', true], ['WHAT', true], ['FIGURE', true], ['BASE', false], ['NEW', false],
    ['CHANGE', false], ['NEW/BASE [95 %]', true], ['TEST', true]
  ];
  const head = table.createTHead().insertRow();
  for (const [text, left] of columns) head.appendChild(element('th', left ? 'left' : '', text));
  const body = table.createTBody();
  for (const row of data.changes) {
    const tr = body.insertRow();
    if (row.regression) tr.className = 'regression';
    const cells = [
      row.regression ? '✗' : '', row.what, row.figure, row.base, row.new, row.change, row.ratio,
      row.test
    ];
    cells.forEach((text, i) => tr.appendChild(element('td', columns[i][1] ? 'left' : '', text)));
  }
}
drawChanges();

function drawOneSide() {
  const box = document.getElementById('one-side-list');
  const list = (heading, items) => {
    if (items.length === 0) return;
    box.appendChild(element('h3', '', heading + ' (' + items.length + ')'));
    const ul = document.createElement('ul');
    for (const item of items) ul.appendChild(element('li', '', item.what + ': wait ' + item.wait));
    box.appendChild(ul);
  };
  list('Only in the new runs', data.only_new);
  list('Only in the base runs', data.only_base);
  if (data.only_new.length + data.only_base.length === 0)
    box.appendChild(element('p', 'empty', 'Every process and lock is on both sides.'));
}
drawOneSide();

// --- the differential flame graph ------------------------------------------------------------
const flame = data.flame;
const details = document.getElementById('flame-details');
const graph = document.getElementById('flame-graph');
const search = document.getElementById('search');
const side = () => document.querySelector('input[name=side]:checked').value;
let chart = null;

// The tree with `value` the chosen side's wait; `now` and `base` keep both for the labels.
function sized(node, which) {
  return {
    name: node.name,
    kind: node.kind,
    value: which === 'new' ? node.value : node.base,
    now: node.value,
    base: node.base,
    delta: node.delta,
    children: node.children.map((child) => sized(child, which))
  };
}

// Red where NEW waited more, blue where it waited less, the deeper the larger the change against
// the frame's larger side (d3-flame-graph's differential colours, without its orange for frames
// new in NEW: those are red at full depth here, as "more wait" says).
function deltaColour(d) {
  const delta = d.data.delta, scale = Math.max(d.data.now, d.data.base);
  if (!(scale > 0) || delta === 0) return '#d8dce1';
  const c = Math.round(215 * (1 - Math.min(1, Math.abs(delta) / scale)));
  return delta > 0 ? `rgb(220,${c},${c})` : `rgb(${c},${c},220)`;
}

function signed(ns) { return (ns > 0 ? '+' : ns < 0 ? '−' : '±') + formatNs(Math.abs(ns)); }

function label(d) {
  const {now, base, delta} = d.data;
  const percent = base > 0 ?
      ' (' + (delta >= 0 ? '+' : '−') + Math.abs(100 * delta / base).toFixed(1) + ' %)' :
      '';
  return d.data.name + ' — NEW ' + formatNs(now) + ', BASE ' + formatNs(base) + ': ' +
      signed(delta) + percent;
}

function drawFlame() {
  if (chart) chart.destroy();
  chart = null;
  graph.textContent = '';
  details.textContent = '\u00a0';
  const which = side();
  const legend = document.getElementById('flame-legend');
  if (!flame.tree) {
    legend.textContent = '';
    graph.appendChild(element('p', 'empty', 'No lock wait on either side.'));
    return;
  }
  const named = which === 'new' ? 'NEW' : 'BASE';
  const tree = sized(flame.tree, which);
  const total = tree.value;
  legend.textContent = 'Where the threads waited for locks, by the call stack they waited from: ' +
      'the root is the process, the top of each tower the lock. A frame\'s width is its lock ' +
      'wait in ' + named + ' (' + (which === 'new' ? 'the graph\'s default; ' : '') +
      'switch above to ' + (which === 'new' ? 'BASE\'s' : 'NEW\'s') + '): each stack\'s median ' +
      'over ' + named + '\'s ' + runs(which === 'new' ? data.new_runs : data.base_runs) +
      ' (a run without it counts 0), added up along the stacks, ' + formatNs(total) + ' in all; ' +
      'the median of ' + named + '\'s runs\' lock wait is ' +
      (which === 'new' ? flame.new_total.text : flame.base_total.text) + '. Red: NEW waited ' +
      'more there than BASE, blue: less; the deeper, the larger the change against the ' +
      'frame\'s wait. ' +
      (which === 'new' ? 'A stack only in BASE has no width here: switch to BASE\'s wait.' :
                         'A stack only in NEW has no width here.') +
      ' Click a frame to zoom into it; search highlights frames.';
  if (!(total > 0)) {
    graph.appendChild(element('p', 'empty', 'No lock wait in ' + named + '.'));
    return;
  }
  chart =
      flamegraph.default()
          .width(Math.max(600, graph.clientWidth || 1200))
          .cellHeight(20)
          .transitionDuration(0)
          .sort(true)
          .minFrameSize(1)
          .setColorMapper((d, original) => (d.highlight ? original : deltaColour(d)))
          .setSearchMatch(
              (d, term) => term !== '' && d.data.name.toLowerCase().includes(term.toLowerCase()))
          .setLabelHandler(label)
          .setDetailsElement(details)
          .setSearchHandler((results, sum) => {
            details.textContent = search.value === '' ?
                '\u00a0' :
                'search \'' + search.value + '\': ' + results.length + ' frames, ' + formatNs(sum) +
                    ' (' + (100 * sum / total).toFixed(1) + ' % of ' + named + '\'s)';
          });
  d3.select(graph).datum(tree).call(chart);
  // As report.js: the first drawing made now (transitions of no length, flushed), so that the page
  // is whole once it has loaded; zooming animates.
  d3.timerFlush();
  // d3-flame-graph widens a frame it adds over d3's default 250 ms, whatever transitionDuration
  // says: drawn again at once (no frame is new then), every frame has its width now.
  chart.update();
  d3.timerFlush();
  chart.transitionDuration(300);
  if (search.value !== '') chart.search(search.value);
}
document.querySelectorAll('input[name=side]')
    .forEach((r) => r.addEventListener('change', drawFlame));
search.addEventListener(
    'input',
    () => (search.value === '' ? chart && chart.clear() : chart && chart.search(search.value)));
document.getElementById('reset-zoom').addEventListener('click', () => chart && chart.resetZoom());
let resized = null;
window.addEventListener('resize', () => {
  clearTimeout(resized);
  resized = setTimeout(drawFlame, 200);
});
drawFlame();
})();
