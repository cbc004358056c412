import { newMachineToken } from '../auth/machine-tokens.js';
import { escapeUnsafeCharacters } from '../log/terminal-safe.js';
import { addMachineToken, removeMachineToken } from '../store/machine-token-rules.js';
import { openUserStore } from '../store/users.js';
import { checkUsername } from '../validate/auth.js';
import { integerIn } from '../validate/check.js';
import { checkMachineTokenId, checkNewMachineToken, MAX_TOKEN_DAYS } from '../validate/machine-token.js';
import { settingsHelp, type Command } from '../command-line/flags.js';
import { DATA_DIR_SETTINGS, existingUser, offlineConfig, parseOffline, valid, withDataDir } from '../command-line/offline.js';
import type { FeatureFieldChecks } from '../store/stored-fields.js';
import { EXIT_OK } from '../command-line/usage-error.js';
import { epochSeconds } from '../time.js';

export const TOKENS_HELP = `Usage: gatehouse tokens COMMAND [options]

Machine tokens while the service is stopped. A token passes the forward endpoint as its account
(Authorization: Bearer TOKEN, or Basic with the username and the token as password), nothing else.

Commands:
  add USER NAME [--days N]      make a token named NAME for USER, expiring after N days (1 to
                                ${MAX_TOKEN_DAYS}; none: it does not expire). The token is printed once, on
                                standard output; only its digest is stored
  list USER                     print USER's tokens: id, name, created, expires, last used
  revoke USER ID                remove one token; it fails at the next request

Options:
${settingsHelp(DATA_DIR_SETTINGS)}
  --days N                       (add) days until the token expires
  --help                         show this help
`;

const isoOf = (seconds: number | undefined): string =>
  (seconds === undefined ? '-' : new Date(seconds * 1000).toISOString());

/** `gatehouse tokens`, reading accounts with the features' checks (`fields`). */
export const tokensCommand = (fields: FeatureFieldChecks): Command => async (args, io) => {
  const call = parseOffline(args, io, {
    name: 'tokens',
    help: TOKENS_HELP,
    settings: DATA_DIR_SETTINGS,
    commands: { add: { arity: 2, flags: { days: 'string' } }, list: { arity: 1 }, revoke: { arity: 2 } },
  });
  if (call === undefined) return EXIT_OK;
  const { command, values, positionals } = call;
  const config = offlineConfig(call, io.env);
  const username = valid(checkUsername, positionals[0], 'USER');
  const shown = escapeUnsafeCharacters(username);
  const nowSeconds = epochSeconds(Date.now());
  let newToken: { name: string; days: number | undefined } | undefined;
  let revokeId = '';
  if (command === 'add') {
    const daysText = values['days'];
    const days = typeof daysText === 'string'
      ? valid(integerIn(1, MAX_TOKEN_DAYS), /^[0-9]{1,5}$/.test(daysText) ? Number(daysText) : daysText, '--days')
      : undefined;
    const body = valid(
      checkNewMachineToken, { name: positionals[1], ...(days === undefined ? {} : { days }) }, 'NAME',
    );
    newToken = { name: body.name, days: body.days };
  } else if (command === 'revoke') {
    revokeId = valid(checkMachineTokenId, positionals[1], 'ID');
  }

  await withDataDir(config.dataDir, `tokens ${command}`, io, async (fileSystem) => {
    const store = await openUserStore(config.dataDir, fileSystem, fields);
    const user = existingUser(store, username);
    if (newToken !== undefined) {
      const { token, digest, id } = newMachineToken();
      const expiresAt = newToken.days === undefined ? undefined : nowSeconds + newToken.days * 86_400;
      await store.change((view) =>
        addMachineToken(view, username, {
          id,
          name: newToken.name,
          digest,
          createdAt: nowSeconds,
          ...(expiresAt === undefined ? {} : { expiresAt }),
        }),
      );
      io.stderr.write(`made token ${id} for ${shown}${expiresAt === undefined ? '' : `, expiring ${isoOf(expiresAt)}`}; it is shown only now:\n`);
      io.stdout.write(`${token}\n`);
    } else if (command === 'list') {
      for (const token of user.tokens ?? []) {
        io.stdout.write(`${token.id}\t${escapeUnsafeCharacters(token.name)}\t${isoOf(token.createdAt)}\t${isoOf(token.expiresAt)}\t${isoOf(token.lastUsedAt)}\n`);
      }
    } else {
      await store.change((view) => removeMachineToken(view, username, revokeId));
      io.stdout.write(`revoked token ${revokeId} of ${shown}\n`);
    }
  });
  return EXIT_OK;
};
