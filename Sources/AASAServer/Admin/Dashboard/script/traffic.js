// --- /traffic: requests per second by client class over the last hour, as stacked areas ---

async function loadTraffic() {
  view.traffic = await api('/traffic');
  drawTraffic();
}

/** Per minute, each class's rate: the count / 60, or for the current, partial minute / the seconds elapsed. */
function trafficSeries({ classes, now, minutes = [] }) {
  const names = classes?.length ? classes : CLIENT_CLASSES;
  return {
    names,
    minutes: minutes.map((minute, i) => {
      const start = Date.parse(minute.start);
      const seconds = i === minutes.length - 1 ? Math.min(60, Math.max(1, (Date.parse(now) - start) / 1000)) : 60;
      const counts = names.map((name) => minute.counts?.[name] || 0);
      const rates = counts.map((count) => count / seconds);
      return { start, seconds, counts, rates, total: rates.reduce((a, b) => a + b, 0) };
    }),
  };
}

/** The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10ⁿ at or above `value`: the y-axis maximum. */
function niceCeiling(value) {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].map((step) => step * power).find((step) => step >= value * 0.999);
}

function drawTraffic() {
  const box = $('#traffic-chart');
  const width = Math.round(box.clientWidth);
  if (!view.traffic || !width) return;
  const { names, minutes } = trafficSeries(view.traffic);
  const height = width < 480 ? 180 : 220;
  const pad = { top: 14, right: 10, bottom: 24, left: 44 };
  const plotHeight = height - pad.top - pad.bottom;
  const peak = minutes.reduce((best, minute) => (minute.total > best.total ? minute : best), { total: 0 });
  const max = niceCeiling(peak.total);
  const x = (i) => pad.left + (i / Math.max(1, minutes.length - 1)) * (width - pad.left - pad.right);
  const y = (rate) => pad.top + plotHeight * (1 - rate / max);
  const description = trafficDescription(minutes, peak);
  box.replaceChildren(svg('svg', { class: 'chart', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': 'chart-title chart-desc' },
    svg('title', { id: 'chart-title' }, 'Requests per second by client class, last hour'),
    svg('desc', { id: 'chart-desc' }, description),
    // Grid lines at 0, half and the maximum, labelled on the y axis.
    [0, max / 2, max].map((rate) => [
      svg('line', { class: 'grid', x1: pad.left, x2: width - pad.right, y1: y(rate), y2: y(rate) }),
      svg('text', { x: pad.left - 6, y: y(rate) + 4, 'text-anchor': 'end' }, `${rateText(rate)}${rate === max ? '/s' : ''}`),
    ]),
    stackedAreas(names, minutes, x, y),
    timeLabels(minutes, x, height),
    // A dashed line over the current minute: its rate is over the seconds elapsed so far.
    svg('line', { class: 'partial', x1: x(minutes.length - 1), x2: x(minutes.length - 1), y1: pad.top, y2: pad.top + plotHeight }),
    minuteTooltips(names, minutes, x, pad.top, plotHeight)));
  $('#traffic-note').textContent = description;
  renderLegend(names, minutes);
}

function trafficDescription(minutes, peak) {
  const total = minutes.reduce((sum, minute) => sum + minute.counts.reduce((a, b) => a + b, 0), 0);
  if (!total) return 'No association-file requests in the last hour.';
  const last = minutes[minutes.length - 1];
  return `${plural(total, 'request')} in the last hour; peak ${rateText(peak.total)}/s at ${minuteFormat.format(peak.start)}; `
    + `now ${rateText(last.total)}/s (this minute so far, ${Math.round(last.seconds)} s).`;
}

/** An area per class, stacked in the classes' order, its upper edge drawn as a line. */
function stackedAreas(names, minutes, x, y) {
  const base = minutes.map(() => 0);
  return names.map((name, series) => {
    const bottom = minutes.map((_, i) => `${x(i).toFixed(1)},${y(base[i]).toFixed(1)}`).reverse();
    minutes.forEach((minute, i) => { base[i] += minute.rates[series]; });
    const top = minutes.map((_, i) => `${x(i).toFixed(1)},${y(base[i]).toFixed(1)}`);
    return svg('g', { class: `series-${rank(CLIENT_CLASSES, name) % 5}` },
      svg('path', { class: 'area', d: `M${top.join('L')}L${bottom.join('L')}Z` }),
      svg('path', { class: 'line', d: `M${top.join('L')}` }));
  });
}

/** Clock times every quarter hour (every half hour when narrow), and "now" at the right. */
function timeLabels(minutes, x, height) {
  const step = x(15) - x(0) > 80 ? 15 : 30;
  return [
    [0, 15, 30, 45].filter((i) => i % step === 0 && i < minutes.length - 5).map((i) =>
      svg('text', { x: x(i), y: height - 6, 'text-anchor': i ? 'middle' : 'start' }, minuteFormat.format(minutes[i].start))),
    svg('text', { x: x(minutes.length - 1), y: height - 6, 'text-anchor': 'end' }, 'now'),
  ];
}

/** Invisible columns whose tooltips give each minute's figures. */
function minuteTooltips(names, minutes, x, top, plotHeight) {
  const step = x(1) - x(0);
  return svg('g', { class: 'hover' }, minutes.map((minute, i) => svg('rect', { x: x(i) - step / 2, y: top, width: step, height: plotHeight },
    svg('title', {}, `${minuteFormat.format(minute.start)}${i === minutes.length - 1 ? ' (so far)' : ''}: ${rateText(minute.total)}/s\n`
      + names.map((name, series) => `${name} ${rateText(minute.rates[series])}/s (${num(minute.counts[series])})`).join('\n')))));
}

function renderLegend(names, minutes) {
  const last = minutes[minutes.length - 1];
  $('#traffic-legend').replaceChildren(...names.map((name, series) => h('li', {},
    h('span', { class: `swatch series-${rank(CLIENT_CLASSES, name) % 5}`, 'aria-hidden': 'true' }),
    h('strong', { text: name }),
    muted(`${rateText(last ? last.rates[series] : 0)}/s now · ${num(minutes.reduce((sum, m) => sum + m.counts[series], 0))} in the hour`))));
}
