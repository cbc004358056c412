import { settingsHelp, type CliIo } from '../../command-line/flags.js';
import { DATA_DIR_SETTINGS, offlineConfig, parseOffline, withDataDir } from '../../command-line/offline.js';
import { EXIT_OK } from '../../command-line/usage-error.js';
import { RETIRED_KEY_KEEP_SECONDS } from '../limits.js';
import { rotateSigningKeys, SIGNING_KEYS_FILE } from '../signing-keys.js';
import { epochSeconds } from '../../time.js';

export const KEYS_HELP = `Usage: gatehouse keys rotate [options]

Replaces the OpenID Connect signing keys (one RSA, one P-256) in the data directory while the
service is stopped. The new keys sign every id_token from the next start; the old keys' public
halves stay in the JWKS for ${RETIRED_KEY_KEEP_SECONDS / 60} minutes, the longest an id_token lives, so
apps still verify the id_tokens they already hold. Their private halves are removed at once.
Sessions, refresh tokens and the session secret are not touched.

Options:
${settingsHelp(DATA_DIR_SETTINGS)}
  --help                         show this help
`;

/** `gatehouse keys rotate`: an offline command, holding the data directory's lock. */
export async function keysCommand(args: readonly string[], io: CliIo): Promise<number> {
  const call = parseOffline(args, io, {
    name: 'keys', help: KEYS_HELP, settings: DATA_DIR_SETTINGS, commands: { rotate: { arity: 0 } },
  });
  if (call === undefined) return EXIT_OK;
  const config = offlineConfig(call, io.env);
  const nowSeconds = epochSeconds(Date.now());
  const { added, retired } = await withDataDir(config.dataDir, 'keys rotate', io, (fileSystem) =>
    rotateSigningKeys(fileSystem, config.dataDir, nowSeconds));
  io.stdout.write(`new signing keys in ${config.dataDir}/${SIGNING_KEYS_FILE}: ${added.join(', ')}\n`);
  if (retired.length > 0) {
    const until = new Date((nowSeconds + RETIRED_KEY_KEEP_SECONDS) * 1000).toISOString();
    io.stdout.write(`retired ${retired.join(', ')}: their public keys stay in the JWKS until ${until}\n`);
  }
  return EXIT_OK;
}
