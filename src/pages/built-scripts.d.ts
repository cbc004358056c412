// The pages' browser scripts, bundled and hashed at build time (scripts/build-page-scripts.mjs
// writes built-scripts.js beside this file, from every src/**/browser/*.entry.ts). A new entry gets
// its name here, or the build refuses.

/** One script: its code, the content of a <script> element, and its CSP source ('sha256-…'). */
export interface BuiltScript {
  readonly code: string;
  readonly hash: string;
}

/** Each entry's path under src/ without browser/ and .entry.ts. */
type ScriptName =
  | 'invitations/join'
  | 'invitations/reset'
  | 'invitations/users-section'
  | 'oidc/pages/clients-section'
  | 'oidc/pages/logout-confirm'
  | 'oidc/pages/profile-section'
  | 'passkeys/account-section'
  | 'pages/account'
  | 'pages/sign-in'
  | 'pages/sign-out'
  | 'pages/users'
  | 'sessions/account-section'
  | 'totp/account-section';

export declare const BUILT_SCRIPTS: Readonly<Record<ScriptName, BuiltScript>>;
