import assert from 'node:assert/strict';
import { scryptSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { createScryptPool } from '../../src/auth/scrypt-pool.js';

const job = (password: string, N = 1024) => ({ password, salt: Buffer.alloc(16, 1), keyBytes: 32, options: { N, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } });

describe('scrypt pool', () => {
  it('derives the same key as scrypt on the main thread', async () => {
    const pool = createScryptPool(1);
    try {
      const key = await pool.derive(job('correct horse'));
      assert.deepEqual(key, scryptSync('correct horse', Buffer.alloc(16, 1), 32, { N: 1024, r: 8, p: 1 }));
    } finally {
      await pool.close();
    }
  });

  it('runs more jobs than workers, in order, and all of them finish', async () => {
    const pool = createScryptPool(2);
    try {
      const keys = await Promise.all(Array.from({ length: 7 }, (_, i) => pool.derive(job(`password ${i}`))));
      keys.forEach((key, i) => assert.deepEqual(key, scryptSync(`password ${i}`, Buffer.alloc(16, 1), 32, { N: 1024, r: 8, p: 1 })));
    } finally {
      await pool.close();
    }
  });

  it('rejects a job scrypt refuses (maxmem too small) and keeps working', async () => {
    const pool = createScryptPool(1);
    try {
      await assert.rejects(pool.derive({ ...job('x', 2 ** 15), options: { N: 2 ** 15, r: 8, p: 1, maxmem: 1024 } }), /scrypt failed/);
      assert.equal((await pool.derive(job('y'))).length, 32);
    } finally {
      await pool.close();
    }
  });

  it('settles running and waiting jobs when closed, and refuses later ones', async () => {
    const pool = createScryptPool(1);
    const running = assert.rejects(pool.derive(job('slow', 2 ** 16)), /closed/);
    const waiting = assert.rejects(pool.derive(job('next')), /closed/);
    await pool.close();
    await running;
    await waiting;
    await assert.rejects(pool.derive(job('late')), /closed/);
  });
});
