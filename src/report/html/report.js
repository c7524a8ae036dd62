// The html report's page script: draws the report's JSON (the element #lockscope-data, written
// by src/report/html_report.cpp) as the findings (the verdict, then each finding), a flame graph
// (d3-flame-graph), the locks table with each lock's name and wait histogram, the blame table,
// the timeline (charts.js) and the notes. Every name
// from the data goes into the page as text (textContent, d3's .text and .attr), never as markup.
(function() {
'use strict';
const data = JSON.parse(document.getElementById('lockscope-data').textContent);
const lockscope = window.lockscopePage;

document.title = 'lockscope: ' + data.directory;
document.getElementById('source').textContent =
    data.directory + (data.command ? '  ·  ' + data.command : '');
document.getElementById('notes-text').textContent = data.notes;

// --- findings --------------------------------------------------------------------------------
// The verdict (always the first finding) as the page's headline, then every other finding as a
// card: its severity and title, its locks by name, its source lines, its evidence, its advice.
function drawFindings() {
  const findings = data.findings || [];
  const verdict = findings.find((f) => f.rule === 'verdict');
  const headline = document.getElementById('verdict');
  headline.textContent = verdict ? verdict.title : 'No verdict: this report has no findings.';
  if (verdict) headline.classList.add(verdict.severity);
  const list = document.getElementById('findings-list');
  const others = findings.filter((f) => f !== verdict);
  if (others.length === 0) {
    list.appendChild(lockscope.element('p', 'empty', 'No finding besides the verdict.'));
  }
  const rows = (box, label, items) => {
    if (items.length === 0) return;
    const dl = document.createElement('dl');
    dl.appendChild(lockscope.element('dt', '', label));
    for (const item of items) dl.appendChild(lockscope.element('dd', '', item));
    box.appendChild(dl);
  };
  // The verdict's figures too, under the headline.
  const all = verdict ? [verdict].concat(others) : others;
  for (const finding of all) {
    const box = lockscope.element('div', 'finding ' + finding.severity, '');
    if (finding === verdict) {
      box.classList.add('verdict-figures');
    } else {
      const title = lockscope.element('h3', '', '');
      title.appendChild(lockscope.element('span', 'severity', finding.severity));
      title.appendChild(document.createTextNode(' ' + finding.title));
      box.appendChild(title);
      box.appendChild(lockscope.element(
          'p', 'rule', finding.rule + ' \u00b7 ' + lockscope.formatNs(finding.time_at_stake_ns) +
              ' at stake'));
    }
    rows(box, finding.locks.length === 1 ? 'Lock' : 'Locks',
         finding.locks.map((l) => l.phrase + (data.processes.length > 1 ? ' (pid ' + l.pid + ')' : '')));
    rows(box, finding.sites.length === 1 ? 'Source line' : 'Source lines', finding.sites);
    rows(box, 'Evidence', finding.evidence.map((e) => e.text));
    if (finding.advice) box.appendChild(lockscope.element('p', 'advice', finding.advice));
    if (finding === verdict) list.before(box);
    else list.appendChild(box);
  }
}
drawFindings();

// --- flame graph -----------------------------------------------------------------------------
const processSelect = document.getElementById('process');
const details = document.getElementById('flame-details');
const graph = document.getElementById('flame-graph');
const search = document.getElementById('search');
let chart = null;
let best = 0;
data.processes.forEach((process, index) => {
  const option = document.createElement('option');
  option.value = String(index);
  option.textContent =
      process.name + ' — ' + lockscope.formatNs(process.flame.wait.value) + ' wait';
  processSelect.appendChild(option);
  if (process.flame.wait.value > data.processes[best].flame.wait.value) best = index;
});
processSelect.value = String(best);
if (data.processes.length < 2) document.getElementById('process-choice').hidden = true;
document.querySelector(`input[name=weight][value=${data.weight}]`).checked = true;

const weight = () => document.querySelector('input[name=weight]:checked').value;
const unit = (w, count) => (w === 'wait' ? ' wait' : ' timed hold') + (count === 1 ? '' : 's');

function drawFlame() {
  const process = data.processes[Number(processSelect.value)];
  const w = weight();
  const tree = process.flame[w];
  if (chart) chart.destroy();
  chart = null;
  graph.textContent = '';
  document.getElementById('flame-title').textContent =
      'Lock ' + w + ' time by call stack: ' + process.name;
  document.getElementById('flame-command').textContent = process.arguments.join(' ');
  document.getElementById('flame-legend').textContent =
      (w === 'wait' ?
           'Where the process\'s threads waited for locks, by the call stack they waited from. ' :
           'How long the process\'s locks were held, by the call stack each hold was released from ' +
               '(the acquire site alone where no stack was captured). ') +
      'A frame\'s width is its share of the total, ' + lockscope.formatNs(tree.value) + ' in ' +
      lockscope.formatCount(tree.count) + unit(w, tree.count) + '. The root is the process and ' +
      'the top of each tower the lock; waits whose stack was not captured (the capture budget, ' +
      '--stack-depth 0) stand on their call site, under \u201c(stack not captured)\u201d. Click a ' +
      'frame to zoom into it; search highlights frames.';
  details.textContent = '\u00a0';
  if (!(tree.value > 0)) {
    graph.appendChild(lockscope.element('p', 'empty', 'No lock ' + w + ' time in this process.'));
    return;
  }
  const total = tree.value;
  chart =
      flamegraph.default()
          .width(Math.max(600, graph.clientWidth || 1200))
          .cellHeight(20)
          .transitionDuration(0)
          .sort(true)
          .minFrameSize(1)
          .setColorMapper((d, original) => {
            if (d.highlight) return original;
            if (d.data.kind === 'process' || d.data.kind === 'not-captured') return '#b8bec6';
            if (d.data.kind === 'lock') return '#d1495b';
            return original;
          })
          .setSearchMatch(
              (d, term) => term !== '' && d.data.name.toLowerCase().includes(term.toLowerCase()))
          .setLabelHandler(
              (d) => d.data.name + ' — ' + lockscope.formatNs(d.data.value) + ' (' +
                  (100 * d.data.value / total).toFixed(1) + ' %), ' +
                  lockscope.formatCount(d.data.count) + unit(w, d.data.count))
          .setDetailsElement(details)
          .setSearchHandler((results, sum) => {
            details.textContent = search.value === '' ? '\u00a0' :
                                                        'search \'' + search.value +
                    '\': ' + results.length + ' frames, ' + lockscope.formatNs(sum) + ' (' +
                    (100 * sum / total).toFixed(1) + ' % of the total)';
          });
  // d3-flame-graph keeps its state in the tree it is given: a copy, so a redraw starts afresh.
  d3.select(graph).datum(JSON.parse(JSON.stringify(tree))).call(chart);
  // d3-flame-graph sizes the frames and writes their labels in transitions, which run on
  // animation frames: the first drawing is made now (transitions of no length, flushed), so that
  // the page is whole once it has loaded (a headless browser's dump or screenshot too); zooming
  // animates.
  d3.timerFlush();
  chart.transitionDuration(300);
  if (search.value !== '') chart.search(search.value);
}
processSelect.addEventListener('change', drawFlame);
document.querySelectorAll('input[name=weight]')
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

// --- locks tables ----------------------------------------------------------------------------
// The locks (mutexes, rwlocks, spinlocks), then apart, as the text report lists them, the
// condition variables, semaphores and barriers, whose waits are mostly idle threads.
function drawLockTable(table, rows, empty) {
  const locks = data.locks;
  if (rows.length === 0) {
    table.replaceWith(lockscope.element('p', 'empty', empty));
    return;
  }
  // The histogram goes after CONTENDED, the waits it draws.
  let at = locks.columns.findIndex((c) => c.key === 'contended');
  at = at < 0 ? locks.columns.length : at + 1;
  const scale = lockscope.histogramScale(rows.map((r) => r.waits));
  // The lock's name first, unless the columns have it already.
  const named = !locks.columns.some((c) => c.key === 'name');
  const head = table.createTHead().insertRow();
  if (named) {
    const th = lockscope.element('th', 'left', 'NAME');
    th.title = 'the lock as the program knows it: its variable, else where it was initialised, ' +
        'else where it was first taken';
    head.appendChild(th);
  }
  locks.columns.forEach((column, i) => {
    if (i === at) head.appendChild(lockscope.element('th', 'left', 'WAIT HISTOGRAM'));
    const th = lockscope.element('th', column.left ? 'left' : '', column.header);
    th.title = column.legend;
    head.appendChild(th);
  });
  if (at === locks.columns.length)
    head.appendChild(lockscope.element('th', 'left', 'WAIT HISTOGRAM'));
  const body = table.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    if (named) {
      const td = lockscope.element('td', 'left', row.name);
      td.title = row.phrase;
      tr.appendChild(td);
    }
    row.cells.forEach((text, i) => {
      if (i === at) tr.appendChild(lockscope.histogramCell(row.waits, scale));
      tr.appendChild(lockscope.element('td', locks.columns[i].left ? 'left' : '', text));
    });
    if (at === locks.columns.length) tr.appendChild(lockscope.histogramCell(row.waits, scale));
  }
}
function drawLocks() {
  const locks = data.locks;
  const sorted = locks.columns.find((c) => c.key === locks.sort);
  document.getElementById('locks-legend').textContent = 'Every lock ' +
      (sorted ? 'by ' + sorted.header : '') + ' (--sort), as the text report lists ' +
      'them; hover a column\'s header for what it counts. WAIT HISTOGRAM: the lock\'s contended ' +
      'waits by duration, on a log scale shared by every row of its table; a bar\'s height is ' +
      'the square root of its count against the row\'s largest (hover a bar for its range and ' +
      'count).';
  drawLockTable(document.getElementById('locks-table'), locks.rows || [], 'No lock was used.');
  drawLockTable(document.getElementById('others-table'), locks.others || [],
                'No condition variable, semaphore or barrier was used.');
}
drawLocks();

// --- blame table -----------------------------------------------------------------------------
const kBlameRows = 200;
function stackCell(label, frames, from) {
  const td = lockscope.element('td', 'frames', '');
  if (!frames) {
    td.textContent = label;
    return td;
  }
  const box = document.createElement('details');
  box.appendChild(lockscope.element('summary', '', label + (from ? '  (stack ' + from + ')' : '')));
  const list = document.createElement('ol');
  for (const frame of frames) list.appendChild(lockscope.element('li', '', frame));
  box.appendChild(list);
  td.appendChild(box);
  return td;
}
function drawBlame() {
  const table = document.getElementById('blame-table');
  const withRows = data.processes.filter((p) => p.blame.rows.length > 0);
  if (withRows.length === 0) {
    table.replaceWith(lockscope.element(
        'p', 'empty', 'No contended wait was recorded, so no hold made anyone wait.'));
    return;
  }
  const head = table.createTHead().insertRow();
  for (const [text, left] of [
           ['PROCESS', true], ['LOCK', true], ['WAITS', false], ['WAIT TIME', false],
           ['WAITED AT (click for the stack)', true], ['BEHIND HOLDS TAKEN AT', true]])
    head.appendChild(lockscope.element('th', left ? 'left' : '', text));
  const body = table.createTBody();
  for (const process of withRows) {
    const {rows, stacks} = process.blame;
    for (const row of rows.slice(0, kBlameRows)) {
      const tr = body.insertRow();
      tr.appendChild(lockscope.element('td', 'left', process.name));
      tr.appendChild(lockscope.element('td', 'left', row.lock));
      tr.appendChild(lockscope.element('td', '', lockscope.formatCount(row.waits)));
      tr.appendChild(lockscope.element('td', '', lockscope.formatNs(row.wait_ns)));
      tr.appendChild(
          stackCell(row.waiter, row.waiter_stack === null ? null : stacks[row.waiter_stack]));
      tr.appendChild(stackCell(
          row.holder, row.holder_stack === null ? null : stacks[row.holder_stack],
          row.holder_stack_from === 'acquire' ? 'of its acquisition' : 'at its release'));
    }
    if (rows.length > kBlameRows) {
      const td = body.insertRow().insertCell();
      td.colSpan = 6;
      td.className = 'left empty';
      td.textContent = '… ' + (rows.length - kBlameRows) + ' more rows of ' + process.name +
          ' (the JSON report has them all)';
    }
  }
}
drawBlame();

lockscope.drawTimelines(document.getElementById('timeline-body'), data.processes);
})();
