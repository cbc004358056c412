import type { StoredClient } from './clients.js';

/**
 * The ready sign-out URLs of an app (RP-Initiated Logout 1.0 section 2), one per registered
 * post-logout URI: `client_id` names the app, so the confirmation page's button, and the answer
 * after it, return to that URI (docs/contract/oidc.md, logout). For apps that take one fixed
 * sign-out URL (Grafana, Portainer, JupyterHub, Node-RED) and send no id_token_hint.
 */
export function signOutUrls(issuer: string, client: Pick<StoredClient, 'clientId' | 'postLogoutRedirectUris'>): string[] {
  return (client.postLogoutRedirectUris ?? []).map((uri) =>
    `${issuer}/oidc/logout?${new URLSearchParams({ client_id: client.clientId, post_logout_redirect_uri: uri }).toString()}`);
}
