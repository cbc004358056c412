import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { StoreClosed, StoreOutcomeUnknown, StoreWriteFailed } from '../../src/errors.js';
import { DocumentCorrupt, openDocumentStore, type DocumentStore } from '../../src/store/document-store.js';
import { realFileSystem, type StoreFileSystem } from '../../src/store/file-system.js';
import { fail, matching, objectOf, oneOf, pass, stringOf, type Checker, type CheckedType } from '../../src/validate/check.js';
import { faultyFileSystem, injected, type FaultHooks } from '../helpers/faulty-file-system.js';

const FILE = 'notes.json';

const checkNote = objectOf(
  { id: matching(/^[a-z0-9]{1,16}$/, 'a note id'), text: stringOf({ minLength: 1, maxLength: 64 }) },
  { rejectUnknownKeys: true },
);
type Note = CheckedType<typeof checkNote>;
const checkNotes: Checker<readonly Note[]> = (input, path) => {
  if (!Array.isArray(input) || input.length > 100) return fail(path, 'must be an array of at most 100 notes');
  const notes: Note[] = [];
  for (const [index, item] of input.entries()) {
    const result = checkNote(item, `${path}[${index}]`);
    if (!result.ok) return result;
    notes.push(result.value);
  }
  return pass(notes);
};
const checkDocument = objectOf({ format: oneOf([1]), notes: checkNotes }, { rejectUnknownKeys: true });
type Notes = CheckedType<typeof checkDocument>;
const EMPTY: Notes = { format: 1, notes: [] };

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-documents-'));
  dirs.push(dir);
  return dir;
}

const open = (dir: string, fs: StoreFileSystem = realFileSystem): Promise<DocumentStore<Notes>> =>
  openDocumentStore({ fs, dataDir: dir, fileName: FILE, description: 'notes file', check: checkDocument, empty: EMPTY });

/** A change adding one note; resolves with the number of notes after it. */
const add = (id: string, text = `note ${id}`) => (current: Notes) => {
  const next = { ...current, notes: [...current.notes, { id, text }] };
  return { next, result: next.notes.length };
};

async function onDisk(dir: string): Promise<unknown> {
  return JSON.parse(await readFile(join(dir, FILE), 'utf8'));
}

const ids = (document: Notes): string[] => document.notes.map((note) => note.id);

async function rejectsWith(promise: Promise<unknown>, errorClass: abstract new (...args: never[]) => Error): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof errorClass, `expected ${errorClass.name}, got ${String(error)}`);
    return true;
  });
}

describe('openDocumentStore', () => {
  it('starts from the empty document when there is no file, without creating one', async () => {
    const dir = await tempDir();
    const store = await open(dir);
    assert.deepEqual(store.current, EMPTY);
    assert.equal(store.version, 0);
    assert.deepEqual(await readdir(dir), []);
  });

  it('resolves a change with its result only once the file holds it, mode 0600, and a reload gives the same document', async () => {
    const dir = await tempDir();
    const store = await open(dir);
    assert.equal(await store.change(add('a')), 1);
    assert.deepEqual(await onDisk(dir), { format: 1, notes: [{ id: 'a', text: 'note a' }] });
    assert.equal((await stat(join(dir, FILE))).mode & 0o777, 0o600);
    assert.equal(store.version, 1);
    assert.deepEqual((await open(dir)).current, store.current);
  });

  it('keeps the replaced file as .prev', async () => {
    const dir = await tempDir();
    const store = await open(dir);
    await store.change(add('a'));
    await store.change(add('b'));
    assert.deepEqual(JSON.parse(await readFile(join(dir, `${FILE}.prev`), 'utf8')), { format: 1, notes: [{ id: 'a', text: 'note a' }] });
    assert.equal((await stat(join(dir, `${FILE}.prev`))).mode & 0o777, 0o600);
  });

  it('holds the document deep-frozen: neither it nor anything in it can be edited in place', async () => {
    const store = await open(await tempDir());
    await store.change(add('a'));
    const document = store.current;
    assert.throws(() => (document.notes as Note[]).push({ id: 'x', text: 'x' }), TypeError);
    assert.throws(() => {
      (document.notes[0] as { text: string }).text = 'changed';
    }, TypeError);
    assert.equal(store.current.notes[0]?.text, 'note a');
  });

  it('gives a change the document as the changes queued before it left it, and freezes what each returned', async () => {
    const store = await open(await tempDir());
    let editedEarlier: unknown;
    // The first change starts a write; the next two wait for it and run in one batch.
    const writing = store.change(add('a'));
    const first = store.change(add('b'));
    const second = store.change((current) => {
      assert.deepEqual(ids(current), ['a', 'b']);
      try {
        (current.notes as Note[]).pop();
      } catch (error) {
        editedEarlier = error;
      }
      return { next: current, result: 'seen' };
    });
    assert.deepEqual(await Promise.all([writing, first, second]), [1, 2, 'seen']);
    assert.ok(editedEarlier instanceof TypeError, 'a change could edit the document an earlier change returned');
    assert.deepEqual(ids(store.current), ['a', 'b']);
  });

  it('writes nothing when every change of a batch returns the document it was given', async () => {
    const dir = await tempDir();
    const faults = faultyFileSystem();
    const store = await open(dir, faults.fs);
    assert.equal(await store.change((current) => ({ next: current, result: 'unchanged' })), 'unchanged');
    assert.deepEqual(faults.calls, []);
    assert.equal(store.version, 0);
    assert.deepEqual(await readdir(dir), []);
  });

  it('writes the changes that arrive during a write together in the next one', async () => {
    const dir = await tempDir();
    const faults = faultyFileSystem();
    const store = await open(dir, faults.fs);
    const results = await Promise.all(Array.from({ length: 20 }, (_, index) => store.change(add(`n${index}`))));
    assert.deepEqual(results, Array.from({ length: 20 }, (_, index) => index + 1));
    const renames = faults.calls.filter((call) => call.startsWith('rename')).length;
    // The first change is written alone (it started the write), the 19 queued behind it in one more.
    assert.ok(renames <= 2, `20 concurrent changes took ${renames} writes`);
    assert.deepEqual(ids((await open(dir)).current), Array.from({ length: 20 }, (_, index) => `n${index}`));
  });

  it('rejects a throwing change with its own error and keeps nothing it returned, while the rest of its batch is written', async () => {
    const dir = await tempDir();
    const store = await open(dir);
    class Refused extends Error {}
    const results = await Promise.allSettled([
      store.change(add('a')),
      store.change(add('b')),
      store.change(() => {
        throw new Refused();
      }),
      store.change(add('c')),
    ]);
    assert.deepEqual(results.map((result) => result.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    assert.ok((results[2] as PromiseRejectedResult).reason instanceof Refused);
    assert.deepEqual(ids(store.current), ['a', 'b', 'c']);
    assert.deepEqual(ids((await open(dir)).current), ['a', 'b', 'c']);
  });

  it('refuses a change whose document the check would refuse on load, writes nothing, and goes on', async () => {
    const dir = await tempDir();
    const store = await open(dir);
    await store.change(add('a'));
    const before = await readFile(join(dir, FILE));
    await rejectsWith(store.change(add('NOT AN ID')), TypeError);
    await rejectsWith(store.change(() => ({ next: { format: 1, notes: [], extra: 1 } as Notes, result: undefined })), TypeError);
    assert.deepEqual(await readFile(join(dir, FILE)), before);
    assert.deepEqual(ids(store.current), ['a']);
    assert.equal(store.version, 1);
    await store.change(add('b'));
    assert.deepEqual(ids((await open(dir)).current), ['a', 'b']);
  });

  it('holds what the check returns, so memory equals a reload even where the change said more (an undefined field)', async () => {
    const dir = await tempDir();
    const store = await open(dir);
    await store.change((current) => ({ next: { ...current, notes: [{ id: 'a', text: 't' }] }, result: undefined }));
    assert.deepEqual(store.current, (await open(dir)).current);
  });

  it('resolves close() once every queued change is written, then refuses later changes with StoreClosed', async () => {
    const dir = await tempDir();
    const store = await open(dir);
    const queued = [store.change(add('a')), store.change(add('b'))];
    await store.close();
    assert.deepEqual(await Promise.all(queued), [1, 2]);
    await rejectsWith(store.change(add('c')), StoreClosed);
    assert.deepEqual(ids((await open(dir)).current), ['a', 'b']);
  });

  describe('when the write fails, memory stays equal to the file', () => {
    const isTemp = (path: string): boolean => basename(path).startsWith(`.${FILE}.`) && path.endsWith('.tmp');
    const faultsToTry: ReadonlyArray<[string, FaultHooks]> = [
      ['ENOSPC on write', { write: (path) => { if (isTemp(path)) throw injected('ENOSPC'); return undefined; } }],
      ['a write that makes no progress', { write: (path) => (isTemp(path) ? 0 : undefined) }],
      ['EIO on fsync of the new file', { sync: (path) => { if (isTemp(path)) throw injected('EIO'); } }],
      ['EROFS on open', { open: (path) => { if (isTemp(path)) throw injected('EROFS'); } }],
      ['EIO on rename', { rename: () => { throw injected('EIO'); } }],
      ['EIO on the directory fsync (the previous file is put back)', { sync: (_path, flags) => { if (flags === 'r') throw injected('EIO'); } }],
    ];
    for (const [what, hooks] of faultsToTry) {
      it(`rejects every change of the batch with StoreWriteFailed on ${what}, then recovers`, async () => {
        const dir = await tempDir();
        const faults = faultyFileSystem();
        const store = await open(dir, faults.fs);
        await store.change(add('a'));
        const before = await readFile(join(dir, FILE));
        faults.hooks = hooks;
        const failed = await Promise.allSettled([store.change(add('b')), store.change(add('c'))]);
        for (const result of failed) {
          assert.equal(result.status, 'rejected');
          assert.ok((result as PromiseRejectedResult).reason instanceof StoreWriteFailed, String((result as PromiseRejectedResult).reason));
        }
        assert.deepEqual(ids(store.current), ['a']);
        assert.equal(store.version, 1);
        assert.deepEqual(await readFile(join(dir, FILE)), before);
        assert.deepEqual((await readdir(dir)).filter((name) => name.endsWith('.tmp') || name.endsWith('.back')), []);
        faults.hooks = {};
        await store.change(add('d'));
        assert.deepEqual(ids(store.current), ['a', 'd'], 'a failed change came back');
        assert.deepEqual((await open(dir)).current, store.current);
      });
    }

    it('rejects with StoreOutcomeUnknown when the directory fsync and putting the previous file back both fail, memory following the file', async () => {
      const dir = await tempDir();
      const faults = faultyFileSystem();
      const store = await open(dir, faults.fs);
      await store.change(add('a'));
      faults.hooks = {
        sync: (_path, flags) => {
          if (flags === 'r') throw injected('EIO');
        },
        link: (existing) => {
          if (existing.endsWith('.prev')) throw injected('EIO');
        },
      };
      await rejectsWith(store.change(add('b')), StoreOutcomeUnknown);
      faults.hooks = {};
      assert.deepEqual(ids(store.current), ['a', 'b']);
      assert.equal(store.version, 2);
      assert.deepEqual((await open(dir)).current, store.current);
    });
  });

  describe('refuses a file it cannot trust, with DocumentCorrupt, and leaves it unchanged', () => {
    const files: ReadonlyArray<[string, string]> = [
      ['text that is not JSON', '{"format":1,"notes":['],
      ['an empty file', ''],
      ['a JSON array', '[]'],
      ['a newer format', '{"format":2,"notes":[]}'],
      ['an unknown field', '{"format":1,"notes":[],"more":true}'],
      ['a note that breaks its rules', '{"format":1,"notes":[{"id":"a","text":""}]}'],
    ];
    for (const [what, text] of files) {
      it(`refuses ${what}`, async () => {
        const dir = await tempDir();
        await writeFile(join(dir, FILE), text, { mode: 0o600 });
        await rejectsWith(open(dir), DocumentCorrupt);
        assert.equal(await readFile(join(dir, FILE), 'utf8'), text);
        assert.deepEqual(await readdir(dir), [FILE]);
      });
    }

    it('names the file and the field at fault, and quotes no content', async () => {
      const dir = await tempDir();
      await writeFile(join(dir, FILE), '{"format":1,"notes":[{"id":"a","text":"secret-1"},{"id":"B","text":"secret-2"}]}');
      await assert.rejects(open(dir), (error: unknown) => {
        assert.ok(error instanceof DocumentCorrupt);
        assert.match(error.message, /notes file .*notes\.json cannot be used: notes\[1\]\.id is not a note id/);
        assert.doesNotMatch(error.message, /secret/);
        return true;
      });
    });
  });
});
