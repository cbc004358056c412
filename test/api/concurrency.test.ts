import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertError,
  createUser,
  deleteUser,
  listUsers,
  login,
  register,
  uniqueName,
  updateUser,
  verify,
  withServer,
} from '../helpers/api.js';
import { CLIENT_SETTINGS } from '../helpers/server.js';

describe('concurrent requests', () => {
  it('lands all of 20 concurrent registrations by an admin', () =>
    withServer(async (server) => {
      const admin = await createUser(server, undefined, { level: 10 });
      const usernames = Array.from({ length: 20 }, () => uniqueName('concurrent'));
      const answers = await Promise.all(
        usernames.map((username, index) =>
          register(server, { username, password: `${username}-pw`, client: CLIENT_SETTINGS, level: index % 2 === 0 ? 5 : 'USER' }, { token: admin.token }),
        ),
      );
      answers.forEach((res, index) => {
        assert.equal(res.status, 200, res.text);
        assert.equal((res.json as { username: string }).username, usernames[index]);
      });
      const list = (await listUsers(server, admin.token)).json as Array<{ username: string; level: unknown }>;
      assert.equal(list.length, 21);
      usernames.forEach((username, index) => {
        assert.deepEqual(list.filter((entry) => entry.username === username), [{ username, level: index % 2 === 0 ? 5 : 'USER' }]);
      });
      // One after another: one address may have at most 4 logins waiting for a hash (docs/security-notes.md "Login storms").
      for (const username of usernames) {
        const res = await login(server, username, `${username}-pw`);
        assert.equal(res.status, 200, res.text);
      }
    }));

  for (const round of [1, 2, 3]) {
    it(`lets exactly one of two concurrent first-user registrations win (round ${round})`, () =>
      withServer(async (server) => {
        const names = [uniqueName('racer'), uniqueName('racer')];
        const answers = await Promise.all(names.map((username) => register(server, { username, password: `${username}-pw`, client: CLIENT_SETTINGS, level: 10 })));
        const statuses = answers.map((res) => res.status).sort();
        assert.deepEqual(statuses, [200, 401]);
        const winner = answers.findIndex((res) => res.status === 200);
        const loser = 1 - winner;
        const loserAnswer = answers[loser];
        assert.ok(loserAnswer !== undefined);
        assertError(loserAnswer, 401);
        const token = answers[winner]?.cookieToken;
        assert.ok(token !== undefined);
        const list = await listUsers(server, token);
        assert.deepEqual(list.json, [{ username: names[winner], level: 10 }]);
        assertError(await login(server, names[loser] ?? '', `${names[loser] ?? ''}-pw`), 401);
      }));
  }

  it('lets exactly one of 10 concurrent registrations of the same username win', () =>
    withServer(async (server) => {
      const admin = await createUser(server, undefined, { level: 10 });
      const username = uniqueName('contested');
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, index) => register(server, { username, password: `password-${index}`, client: CLIENT_SETTINGS, level: 5 }, { token: admin.token, query: '?cookie=false' })),
      );
      const winners = answers.flatMap((res, index) => (res.status === 200 ? [index] : []));
      assert.equal(winners.length, 1);
      for (const res of answers) if (res.status !== 200) assertError(res, 500, 'USERNAME_TAKEN');
      assert.equal((await login(server, username, `password-${winners[0] ?? -1}`)).status, 200);
    }));

  it('lets exactly one of two concurrent renames onto the same name win', () =>
    withServer(async (server) => {
      const admin = await createUser(server, undefined, { level: 10 });
      const first = await createUser(server, admin.token);
      const second = await createUser(server, admin.token);
      const target = uniqueName('target');
      const answers = await Promise.all([first, second].map((user) => updateUser(server, admin.token, user.username, { username: target })));
      assert.deepEqual(answers.map((res) => res.status).sort(), [200, 500]);
      const loser = answers.find((res) => res.status === 500);
      assert.ok(loser !== undefined);
      assertError(loser, 500, 'USERNAME_TAKEN');
      const names = ((await listUsers(server, admin.token)).json as Array<{ username: string }>).map((entry) => entry.username);
      assert.equal(names.filter((name) => name === target).length, 1);
      assert.equal(names.length, 3);
    }));

  it('never deletes both of the last two administrators when they are deleted at once', () =>
    withServer(async (server) => {
      const first = await createUser(server, undefined, { level: 10 });
      const second = await createUser(server, first.token, { level: 'ADMINISTRATOR' });
      const answers = await Promise.all([
        deleteUser(server, first.token, second.username),
        deleteUser(server, second.token, first.username),
      ]);
      const statuses = answers.map((res) => res.status);
      assert.equal(statuses.filter((status) => status === 200).length, 1, JSON.stringify(answers.map((res) => res.text)));
      for (const res of answers) if (res.status !== 200) assert.ok(res.status === 401 || res.status === 409, res.text);
      const survivors = [first, second].filter((admin) => server.running.store.find(admin.username) !== undefined);
      assert.equal(survivors.length, 1);
      assert.equal((await verify(server, survivors[0]?.token)).status, 200);
    }));

  it('never demotes both of the last two administrators when they are demoted at once', () =>
    withServer(async (server) => {
      const first = await createUser(server, undefined, { level: 10 });
      const second = await createUser(server, first.token, { level: 10 });
      const answers = await Promise.all([
        updateUser(server, first.token, second.username, { level: 5 }),
        updateUser(server, first.token, first.username, { level: 5 }),
      ]);
      assert.deepEqual(answers.map((res) => res.status).sort(), [200, 409]);
      const admins = [first, second].filter((admin) => {
        const stored = server.running.store.find(admin.username);
        return stored?.level === 10;
      });
      assert.equal(admins.length, 1);
    }));
});
