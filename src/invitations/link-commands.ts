import { SETTINGS, type SettingSpec } from '../config.js';
import { configFrom, wholeNumberFlag, type CliIo, type FlagTypes, type ParsedFlags } from '../command-line/flags.js';
import { offlineConfig, valid, withDataDir, type UsersExtension } from '../command-line/offline.js';
import { escapeUnsafeCharacters } from '../log/terminal-safe.js';
import { InvitationNotFound, UsernameTaken } from '../errors.js';
import { openUserStore, type UserStore } from '../store/users.js';
import { checkNewUsername } from '../validate/auth.js';
import { checkGroups } from '../validate/groups.js';
import { checkAccessLevel } from '../validate/level.js';
import { UsageError, EXIT_OK } from '../command-line/usage-error.js';
import type { StoreFileSystem } from '../store/file-system.js';
import type { FeatureFieldChecks } from '../store/stored-fields.js';
import { DEFAULT_INVITATION_DAYS, MAX_INVITATION_DAYS } from './bodies.js';
import { LINK_ID_FORMAT, linkView } from './link-file.js';
import { linkStandingOf } from './link-standing.js';
import { openLinkStore, type LinkStore } from './links.js';
import { linkUrl } from './link-url.js';
import { epochSeconds, type EpochSeconds } from '../time.js';

/** What `gatehouse users invite` reads besides the data directory: where the pages are, to print the link whole. */
const INVITE_SETTINGS: readonly SettingSpec[] =
  SETTINGS.filter((spec) => ['data-dir', 'public-url', 'base-uri'].includes(spec.flag));
const INVITE_FLAGS: FlagTypes = {
  level: 'string', name: 'string', groups: 'string', days: 'string', 'public-url': 'string', 'base-uri': 'string',
};

const INVITE_HELP_LINE = `  invite --level LEVEL [--name NAME] [--groups G,G] [--days N]
                                print a one-time invitation link: whoever opens it makes an
                                account (named NAME, or a name they choose) and sets its
                                password. It lasts N days (1 to ${MAX_INVITATION_DAYS}, default ${DEFAULT_INVITATION_DAYS}); with
                                --public-url URL (or GATEHOUSE_PUBLIC_URL) the link is printed
                                whole, else as a path under --base-uri`;

const nowSeconds = (): EpochSeconds => epochSeconds(Date.now());

const LINKS_HELP_LINES = `  links [--json]                print the open invitations and reset links, one a line: id, kind,
                                account (or a name of their choice), level, until when, made by
                                whom; --json prints them as GET /api/auth/invites answers
  withdraw ID                   withdraw an open invitation or reset link: it opens nothing after`;
const LINKS_FLAGS: FlagTypes = { json: 'boolean' };

/** Runs `work` on the link store and the users of the data directory, holding its lock (offline.ts withDataDir). */
function withLinks<T>(
  fields: FeatureFieldChecks, dataDir: string, purpose: string, io: Pick<CliIo, 'stderr'>, work: (links: LinkStore, users: UserStore) => Promise<T> | T,
): Promise<T> {
  return withDataDir(dataDir, purpose, io, async (fileSystem: StoreFileSystem) => {
    const users = await openUserStore(dataDir, fileSystem, fields);
    const links = await openLinkStore({ fs: fileSystem, dataDir, nowSeconds, stands: linkStandingOf(users) });
    try {
      return await work(links, users);
    } finally {
      await links.close();
    }
  });
}

/** `gatehouse users links`: the open invitations and reset links, as the users page lists them. */
async function linksCommand(fields: FeatureFieldChecks, call: ParsedFlags, io: CliIo): Promise<number> {
  const config = offlineConfig(call, io.env);
  const views = await withLinks(fields, config.dataDir, 'users links', io, (links) => links.openLinks().map(linkView));
  if (call.values['json'] === true) {
    io.stdout.write(`${JSON.stringify(views)}\n`);
    return EXIT_OK;
  }
  for (const view of views) {
    const account = view.username === null ? '(their choice)' : view.username;
    const level = 'level' in view ? String(view.level) : '-';
    const fields = [view.id, view.kind, account, level, new Date(view.expiresAt).toISOString(), view.createdBy];
    // Names are shown with bidi controls, C1 controls and line separators as \uXXXX, so none can disguise itself.
    io.stdout.write(`${fields.map((field) => escapeUnsafeCharacters(field)).join('\t')}\n`);
  }
  return EXIT_OK;
}

/** `gatehouse users withdraw ID`: withdraws an open invitation or reset link. */
async function withdrawCommand(fields: FeatureFieldChecks, call: ParsedFlags, io: CliIo): Promise<number> {
  const config = offlineConfig(call, io.env);
  const id = call.positionals[0] ?? '';
  if (!LINK_ID_FORMAT.test(id)) throw new UsageError('users withdraw needs the id of a link, as users links prints it');
  const isWithdrawn = await withLinks(fields, config.dataDir, 'users withdraw', io, (links) => links.withdraw(id));
  if (!isWithdrawn) throw new InvitationNotFound();
  io.stdout.write(`withdrew ${id}\n`);
  return EXIT_OK;
}

/**
 * `gatehouse users invite`: makes an invitation in the data directory (whose lock the caller holds,
 * through `withDataDir`) and prints its link. The secret is printed once and stored only as a digest.
 */
async function inviteCommand(fields: FeatureFieldChecks, call: ParsedFlags, io: CliIo): Promise<number> {
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

  const made = await withLinks(fields, config.dataDir, 'users invite', io, (links, users) => {
    if (username !== undefined && users.find(username) !== undefined) throw new UsernameTaken();
    return links.makeInvitation({ username, level, groups, expiresAt: nowSeconds() + days * 86_400, createdBy: undefined });
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

/** `users`' subcommands for links (invite, links, withdraw), reading accounts with the features' checks (`fields`). */
export function linkSubcommands(fields: FeatureFieldChecks): UsersExtension {
  return {
    helpLines: `${INVITE_HELP_LINE}\n${LINKS_HELP_LINES}`,
    commands: {
      invite: { arity: 0, flags: INVITE_FLAGS, run: (call, io) => inviteCommand(fields, call, io) },
      links: { arity: 0, flags: LINKS_FLAGS, run: (call, io) => linksCommand(fields, call, io) },
      withdraw: { arity: 1, run: (call, io) => withdrawCommand(fields, call, io) },
    },
  };
}
