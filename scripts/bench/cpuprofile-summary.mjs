#!/usr/bin/env node
// Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time and inclusive time per
// function (name + file + line), and self time per file. node: modules only.
//
//   node scripts/bench/cpuprofile-summary.mjs FILE.cpuprofile [--top 30] [--from-us T --to-us T] [--requests N]
//
// --from-us/--to-us keep only samples taken in that window (V8's profile clock, which on Linux is
// CLOCK_MONOTONIC in microseconds: process.hrtime.bigint() / 1000n in another process); with
// --requests, every time is also shown as microseconds per request.
//
// Self time of a sample is the time until the next sample (timeDeltas[i + 1]), the convention
// Chrome DevTools uses. Inclusive time counts each function once per sample even when it is
// on the stack several times (recursion).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const SPECIAL = new Set(['(root)', '(program)', '(idle)', '(garbage collector)']);

function shortUrl(url) {
  if (url === '') return '';
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

function keyOf(callFrame) {
  const name = callFrame.functionName === '' ? '(anonymous)' : callFrame.functionName;
  if (SPECIAL.has(name)) return name;
  const url = shortUrl(callFrame.url);
  return url === '' ? `${name} [native]` : `${name} ${url}:${callFrame.lineNumber + 1}`;
}

/**
 * Returns { totalMs, rows: [{key, selfMs, inclusiveMs}], files: [{file, selfMs}], callers: [{file, selfMs}] }
 * sorted by self time. `callers` charges a native function's self time (no script url: the HMAC,
 * writev, ...) to the nearest JavaScript caller's file. With fromUs/toUs only samples in that window count.
 */
export function summarizeCpuProfile(profile, { fromUs = -Infinity, toUs = Infinity } = {}) {
  const nodes = new Map();
  const parentOf = new Map();
  for (const node of profile.nodes) {
    nodes.set(node.id, node);
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  }
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const self = new Map();
  const inclusive = new Map();
  const fileSelf = new Map();
  const callerSelf = new Map();
  const callerFileOf = (id) => {
    for (let at = id; at !== undefined; at = parentOf.get(at)) {
      const frame = nodes.get(at)?.callFrame;
      if (frame !== undefined && frame.url !== '') return shortUrl(frame.url);
    }
    return '[native, no JavaScript caller]';
  };
  const stackKeys = new Map(); // node id -> unique function keys on its stack
  const keysFor = (id) => {
    let keys = stackKeys.get(id);
    if (keys !== undefined) return keys;
    const set = new Set();
    for (let at = id; at !== undefined; at = parentOf.get(at)) {
      const node = nodes.get(at);
      if (node === undefined) break;
      const key = keyOf(node.callFrame);
      if (key !== '(root)') set.add(key);
    }
    keys = [...set];
    stackKeys.set(id, keys);
    return keys;
  };
  let totalUs = 0;
  const meanDelta = deltas.length > 1 ? deltas.slice(1).reduce((a, b) => a + b, 0) / (deltas.length - 1) : 0;
  let at = profile.startTime ?? 0;
  for (let i = 0; i < samples.length; i++) {
    at += deltas[i] ?? 0;
    const us = deltas[i + 1] ?? meanDelta;
    if (!(us > 0) || at < fromUs || at > toUs) continue;
    totalUs += us;
    const node = nodes.get(samples[i]);
    if (node === undefined) continue;
    const key = keyOf(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + us);
    const file = SPECIAL.has(key) ? key : shortUrl(node.callFrame.url) || '[native]';
    fileSelf.set(file, (fileSelf.get(file) ?? 0) + us);
    const caller = SPECIAL.has(key) ? key : callerFileOf(samples[i]);
    callerSelf.set(caller, (callerSelf.get(caller) ?? 0) + us);
    for (const k of keysFor(samples[i])) inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  }
  const rows = [...new Set([...self.keys(), ...inclusive.keys()])]
    .map((key) => ({ key, selfMs: (self.get(key) ?? 0) / 1000, inclusiveMs: (inclusive.get(key) ?? 0) / 1000 }))
    .sort((a, b) => b.selfMs - a.selfMs);
  const files = [...fileSelf].map(([file, us]) => ({ file, selfMs: us / 1000 })).sort((a, b) => b.selfMs - a.selfMs);
  const callers = [...callerSelf].map(([file, us]) => ({ file, selfMs: us / 1000 })).sort((a, b) => b.selfMs - a.selfMs);
  return { totalMs: totalUs / 1000, rows, files, callers };
}

/** Formats the summary as text tables. */
export function formatSummary(summary, { top = 30, inclusiveFilter = /dist\//, requests } = {}) {
  const { totalMs, rows, files, callers } = summary;
  const idle = rows.find((r) => r.key === '(idle)')?.selfMs ?? 0;
  const busy = totalMs - idle;
  const pct = (ms, of) => (of > 0 ? `${((100 * ms) / of).toFixed(1)}%` : '-');
  // With a request count, the first column is µs per request instead of ms.
  const perRequest = requests > 0;
  const amount = (ms) => (perRequest ? ((ms * 1000) / requests).toFixed(2) : ms.toFixed(1)).padStart(9);
  const unit = perRequest ? 'µs/req' : 'self ms';
  const lines = [];
  lines.push(`sampled ${totalMs.toFixed(0)} ms; idle ${idle.toFixed(0)} ms (${pct(idle, totalMs)}); busy ${busy.toFixed(0)} ms${perRequest ? ` = ${((busy * 1000) / requests).toFixed(2)} µs per request over ${requests} requests` : ''}. Percentages below are of busy time.`);
  lines.push('');
  lines.push(`top ${top} functions by self time`);
  lines.push(`${unit.padStart(9)} ${'self'.padStart(6)} ${'incl'.padStart(6)}  function`);
  for (const row of rows.filter((r) => r.key !== '(idle)').slice(0, top)) {
    lines.push(`${amount(row.selfMs)} ${pct(row.selfMs, busy).padStart(6)} ${pct(row.inclusiveMs, busy).padStart(6)}  ${row.key}`);
  }
  lines.push('');
  lines.push('self time by file');
  for (const file of files.filter((f) => f.file !== '(idle)').slice(0, top)) {
    lines.push(`${amount(file.selfMs)} ${pct(file.selfMs, busy).padStart(6)}  ${file.file}`);
  }
  lines.push('');
  lines.push('self time by file, native functions charged to the file that called them');
  for (const file of callers.filter((f) => f.file !== '(idle)').slice(0, top)) {
    lines.push(`${amount(file.selfMs)} ${pct(file.selfMs, busy).padStart(6)}  ${file.file}`);
  }
  lines.push('');
  lines.push('inclusive time of the service\'s own functions (dist/)');
  lines.push(`${(perRequest ? 'µs/req' : 'incl ms').padStart(9)} ${'incl'.padStart(6)} ${'self'.padStart(6)}  function`);
  for (const row of rows.filter((r) => inclusiveFilter.test(r.key)).sort((a, b) => b.inclusiveMs - a.inclusiveMs).slice(0, top)) {
    lines.push(`${amount(row.inclusiveMs)} ${pct(row.inclusiveMs, busy).padStart(6)} ${pct(row.selfMs, busy).padStart(6)}  ${row.key}`);
  }
  return lines.join('\n');
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values, positionals: files } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '30' }, 'from-us': { type: 'string' }, 'to-us': { type: 'string' }, requests: { type: 'string' } },
  });
  if (files.length === 0) {
    process.stderr.write('usage: node scripts/bench/cpuprofile-summary.mjs FILE.cpuprofile [--top N] [--from-us T --to-us T] [--requests N]\n');
    process.exit(2);
  }
  const window = { fromUs: Number(values['from-us'] ?? -Infinity), toUs: Number(values['to-us'] ?? Infinity) };
  for (const file of files) {
    const summary = summarizeCpuProfile(JSON.parse(readFileSync(file, 'utf8')), window);
    process.stdout.write(`== ${file}\n${formatSummary(summary, { top: Number(values.top), requests: values.requests === undefined ? undefined : Number(values.requests) })}\n`);
  }
}
