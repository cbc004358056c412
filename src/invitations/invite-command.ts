import { SETTINGS, type SettingSpec } from '../config.js';
import { configFrom, wholeNumberFlag, type CliIo, type FlagTypes, type ParsedFlags } from '../cli/commands.js';
import { valid, withDataDir } from '../cli/offline.js';
import { escapeUnsafeCharacters } from '../log/terminal-safe.js';
import { UsernameTaken } from '../errors.js';
import { openUserStore } from '../store/users.js';
import { checkNewUsername } from '../validate/auth.js';
import { checkGroups } from '../validate/groups.js';
import { checkAccessLevel } from '../validate/level.js';
import { UsageError, EXIT_OK } from '../cli/usage-error.js';
import { DEFAULT_INVITATION_DAYS, MAX_INVITATION_DAYS } from './bodies.js';
import { openLinkStore } from './links.js';
import { linkUrl } from './link-url.js';

/** What `gatehouse users invite` reads besides the data directory: where the pages are, to print the link whole. */
const INVITE_SETTINGS: readonly SettingSpec[] =
  SETTINGS.filter((spec) => ['data-dir', 'public-url', 'base-uri'].includes(spec.flag));
export const INVITE_FLAGS: FlagTypes = {
  level: 'string', name: 'string', groups: 'string', days: 'string', 'public-url': 'string', 'base-uri': 'string',
};

export const INVITE_HELP_LINE = `  invite --level LEVEL [--name NAME] [--groups G,G] [--days N]
                                print a one-time invitation link: whoever opens it makes an
                                account (named NAME, or a name they choose) and sets its
                                password. It lasts N days (1 to ${MAX_INVITATION_DAYS}, default ${DEFAULT_INVITATION_DAYS}); with
                                --public-url URL (or GATEHOUSE_PUBLIC_URL) the link is printed
                                whole, else as a path under --base-uri`;

/**
 * `gatehouse users invite`: makes an invitation in the data directory (whose lock the caller holds,
 * through `withDataDir`) and prints its link. The secret is printed once and stored only as a digest.
 */
export async function inviteCommand(call: ParsedFlags, io: CliIo): Promise<number> {
  const { values } = call;
  const config = configFrom(values, Object.fromEntries(INVITE_SETTINGS.map((spec) => [spec.env, io.env[spec.env]])));
  if (typeof values['level'] !== 'string') throw new UsageError('users invite needs --level ADMINISTRATOR or --level USER');
  const levelText = values['level'];
  const level = valid(checkAccessLevel, levelText === '10' || levelText === '5' ? Number(levelText) : levelText, 'level');
  const username = typeof values['name'] === 'string' ? valid(checkNewUsername, values['name'], 'name') : undefined;
  const groupsText = typeof values['groups'] === 'string' ? values['groups'] : '';
  const groups = valid(checkGroups, groupsText === '' ? [] : groupsText.split(','), 'groups');
  const days = wholeNumberFlag(values['days'], DEFAULT_INVITATION_DAYS, MAX_INVITATION_DAYS,
    `--days must be a whole number from 1 to ${MAX_INVITATION_DAYS}`);
  const nowSeconds = (): number => Math.floor(Date.now() / 1000);

  const made = await withDataDir(config.dataDir, 'users invite', io, async (fileSystem) => {
    if (username !== undefined) {
      const users = await openUserStore(config.dataDir, fileSystem);
      if (users.find(username) !== undefined) throw new UsernameTaken();
    }
    const links = await openLinkStore({ fs: fileSystem, dataDir: config.dataDir, nowSeconds });
    try {
      return await links.makeInvitation({
        username, level, groups, expiresAt: nowSeconds() + days * 86_400, createdBy: undefined,
      });
    } finally {
      await links.close();
    }
  });
  const url = linkUrl(config.publicUrl ?? config.baseUri, 'join', made.secret);
  const who = username === undefined ? 'a name they choose' : escapeUnsafeCharacters(JSON.stringify(username));
  io.stdout.write(`${url}\n`);
  io.stderr.write(
    `invitation ${made.id} for ${who}, level ${String(level)}, until ${new Date(made.expiresAt * 1000).toISOString()}; it works once.` +
      (config.publicUrl === undefined
        ? ' The link above is a path: put the address where Gatehouse\'s pages are reached in front of it (or give --public-url).\n'
        : '\n'),
  );
  return EXIT_OK;
}
