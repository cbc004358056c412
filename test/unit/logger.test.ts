import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/log/logger.js';

function capture(): { writes: string[]; sink: { write(text: string): void } } {
  const writes: string[] = [];
  return { writes, sink: { write: (text: string) => void writes.push(text) } };
}

const lines = (writes: readonly string[]): Array<Record<string, unknown>> =>
  writes
    .join('')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('logger batching', () => {
  it('writes request lines in one batch, within a short delay, not one write per line', async () => {
    const out = capture();
    const logger = createLogger({ level: 'info', format: 'json', stdout: out.sink, stderr: out.sink, now: () => 0 });
    for (let i = 0; i < 50; i++) logger.request('GET', '/api/auth/verify', 200, 0.05, '127.0.0.1');
    assert.equal(out.writes.length, 0, 'nothing written synchronously');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(out.writes.length, 1, 'one write for the batch');
    assert.equal(lines(out.writes).length, 50);
  });

  it('writes at once on flush(), and again only for lines logged after it', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', format: 'json', stdout: out.sink, stderr: out.sink, now: () => 0 });
    logger.info('first');
    logger.flush();
    assert.deepEqual(lines(out.writes).map((line) => line['msg']), ['first']);
    logger.flush();
    assert.equal(out.writes.length, 1, 'an empty flush writes nothing');
    logger.info('second');
    logger.flush();
    assert.deepEqual(lines(out.writes).map((line) => line['msg']), ['first', 'second']);
  });

  it('writes without waiting once 1024 lines are waiting, so a burst cannot pile up', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', format: 'json', stdout: out.sink, stderr: out.sink, now: () => 0 });
    for (let i = 0; i < 1024; i++) logger.request('GET', '/p', 200, 1, '::1');
    assert.equal(out.writes.length, 1);
    assert.equal(lines(out.writes).length, 1024);
    logger.flush();
  });

  it('flushes waiting stdout lines before an error line, so the order is kept', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', format: 'json', stdout: out.sink, stderr: out.sink, now: () => 0 });
    logger.info('before');
    logger.error('broke', new Error('x'));
    assert.deepEqual(lines(out.writes).map((line) => line['msg']), ['before', 'broke']);
  });

  it('quotes each request field from its own value, whatever came before (the last value is remembered)', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', format: 'json', stdout: out.sink, stderr: out.sink, now: () => 0 });
    const requests: Array<[string, string, string]> = [
      ['GET', '/api/auth/verify', '127.0.0.1'],
      ['GET', '/api/auth/verify', '127.0.0.1'],
      ['POST', '/api/auth/users/"quoted"\n', '::1'],
      ['GET', '/api/auth/verify', '127.0.0.1'],
      ['DELETE', '', '10.0.0.1'],
    ];
    for (const [method, path, address] of requests) logger.request(method, path, 200, 0.5, address);
    logger.flush();
    assert.deepEqual(
      lines(out.writes).map((line) => [line['method'], line['path'], line['address']]),
      requests,
    );
  });
});

describe('request line durations', () => {
  it('writes durationMs as the same text String() gives, for every hundredth up to 12 ms and for odd values', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', format: 'json', stdout: out.sink, stderr: out.sink, now: () => 0 });
    const durations = [...Array.from({ length: 1200 }, (_, hundredths) => Math.round(hundredths) / 100), 0.001, 0.125, 3.14159, 9.995, 1234.56, 1e21];
    for (const duration of durations) logger.request('GET', '/p', 200, duration, '::1');
    logger.flush();
    const texts = out.writes.join('').split('\n').filter((line) => line !== '').map((line) => /"durationMs":([^,]*),/.exec(line)?.[1]);
    assert.deepEqual(texts, durations.map((duration) => String(duration)));
  });
});
