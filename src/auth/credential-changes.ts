/**
 * Word that an account's credentials changed (a new password, every session ended): whoever changed
 * them says so, and a feature that holds something made under the old ones drops it (a TOTP set-up
 * still pending, src/totp/). A listener runs at once and must not throw.
 */
export interface CredentialChanges {
  changed(username: string): void;
  whenChanged(listener: (username: string) => void): void;
}

export function createCredentialChanges(): CredentialChanges {
  const listeners: ((username: string) => void)[] = [];
  return {
    changed(username) {
      for (const listener of listeners) listener(username);
    },
    whenChanged(listener) {
      listeners.push(listener);
    },
  };
}
