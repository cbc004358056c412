import { openDocumentStore, type DocumentStore } from '../store/document-store.js';
import type { StoreFileSystem } from '../store/file-system.js';
import { checkClientsDocument, CLIENTS_FILE, EMPTY_CLIENTS, type ClientsDocument, type StoredClient } from './clients.js';

export type ClientStore = DocumentStore<ClientsDocument> & {
  /** The client with that id now, or undefined. */
  find(clientId: string): StoredClient | undefined;
};

/** The clients file of the data directory (made by the first change), with a lookup by id. Throws DocumentCorrupt. */
export async function openClientStore(fs: StoreFileSystem, dataDir: string): Promise<ClientStore> {
  const store = await openDocumentStore({
    fs, dataDir, fileName: CLIENTS_FILE, description: 'OpenID Connect clients file', check: checkClientsDocument, empty: EMPTY_CLIENTS,
  });
  // Rebuilt when a change committed since: lookups on the token and userinfo paths cost a map read.
  let byId = new Map<string, StoredClient>();
  let indexed = -1;
  return Object.assign(store, {
    find(clientId: string): StoredClient | undefined {
      if (indexed !== store.version) {
        byId = new Map(store.current.clients.map((client) => [client.clientId, client]));
        indexed = store.version;
      }
      return byId.get(clientId);
    },
  });
}
