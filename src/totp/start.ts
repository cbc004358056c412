import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Logger } from '../log/logger.js';
import { isErrorCode } from '../store/atomic-file.js';
import type { StoreFileSystem } from '../store/file-system.js';
import type { UserStore } from '../store/users.js';
import { createSealer, loadOrCreateSealKey, readSealKeyFile, SEAL_KEY_FILE, SealKeyInvalid } from './seal.js';
import { createTotpAccounts, type TotpAccounts } from './accounts.js';

/**
 * TOTP at start-up: the seal key (--seal-key-file, else seal.key in the data directory, made on first
 * start), and the accounts' TOTP sealed with it. A seed the key cannot open is logged once, as an
 * error. Throws SealKeyInvalid when seal.key is missing while accounts have TOTP: a lost key must be
 * restored, not replaced by a new one that quietly locks everyone out.
 */
export async function openTotpAccounts(deps: {
  readonly config: Config;
  readonly fs: StoreFileSystem;
  readonly store: UserStore;
  readonly logger: Logger;
}): Promise<TotpAccounts> {
  const { logger } = deps;
  const sealer = createSealer(await sealKeyOf(deps));
  let isUnreadableSeedLogged = false;
  return createTotpAccounts(sealer, () => {
    if (isUnreadableSeedLogged) return;
    isUnreadableSeedLogged = true;
    logger.error('a TOTP seed in the users file cannot be opened with the seal key, so that account cannot sign in with a code; restore the seal key it was made with (or the account can use a recovery code, or an administrator can reset its TOTP)');
  });
}

async function sealKeyOf({ config, fs, store, logger }: Parameters<typeof openTotpAccounts>[0]): Promise<Buffer> {
  if (config.sealKeyFile !== undefined) return readSealKeyFile(config.sealKeyFile, (message) => logger.warn(message));
  const path = join(config.dataDir, SEAL_KEY_FILE);
  if ([...store.list()].some((user) => user.totp !== undefined)) {
    try {
      await fs.readFile(path);
    } catch (error) {
      if (!isErrorCode(error, 'ENOENT')) throw error;
      throw new SealKeyInvalid(`${path} is missing, but accounts have TOTP sealed with it: restore it from a backup (or name it with --seal-key-file). Without it no enrolled authenticator works.`);
    }
  }
  return loadOrCreateSealKey(fs, config.dataDir);
}
