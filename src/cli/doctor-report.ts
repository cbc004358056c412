/** How one check ended: passed, passed with a weakness, failed, or was not made (and why). */
type Status = 'ok' | 'WARN' | 'FAIL' | 'skip';

export interface Outcome {
  readonly status: Status;
  readonly text: string;
}

export const ok = (text: string): Outcome => ({ status: 'ok', text });
export const warn = (text: string): Outcome => ({ status: 'WARN', text });
export const fail = (text: string): Outcome => ({ status: 'FAIL', text });
export const skip = (text: string): Outcome => ({ status: 'skip', text });

export type Report = (name: string, outcome: Outcome) => void;

/**
 * The last line of every report: the probe shows one location, the app has others. Said every
 * time, because a clean report is exactly when a reader would take it for more than it is.
 */
export const PROBE_LIMIT_NOTE =
  'Not seen: the probe shows only what reaches its own location. An app location that differs from it (a header copied on one and not the other, a regular-expression location serving .png without the gate) is checked only when its URL is given: gatehouse doctor URL URL... or --paths FILE (docs/doctor.md).';

/** Printable ASCII only: every line goes to a terminal, and may carry a server's bytes. */
const printable = (text: string): string => text.replace(/[^\x20-\x7e]/g, '?');

/** Text from the network, cut short (and printable, as every line the report writes is). */
export function shown(text: string, max = 160): string {
  const safe = printable(text);
  return safe.length > max ? `${safe.slice(0, max)}...` : safe;
}

export const placeOf = (url: URL): string => shown(url.origin + url.pathname);

/** Writes each check's line and counts the outcomes; `summary()` is the line after them. */
export function createReport(write: (text: string) => void): { report: Report; summary(): string; isClean(): boolean } {
  const counts: Record<Status, number> = { ok: 0, WARN: 0, FAIL: 0, skip: 0 };
  return {
    report(name, outcome) {
      counts[outcome.status] += 1;
      write(`${outcome.status.padEnd(5)} ${name}: ${printable(outcome.text)}\n`);
    },
    isClean: () => counts.WARN + counts.FAIL + counts.skip === 0,
    summary() {
      if (counts.WARN + counts.FAIL + counts.skip === 0) return 'Every check passed.';
      const parts = [
        counts.FAIL > 0 ? `${counts.FAIL} failed` : '',
        counts.WARN > 0 ? `${counts.WARN} passed with a warning` : '',
        counts.skip > 0 ? `${counts.skip} skipped (not made: each line says why)` : '',
      ].filter((part) => part !== '');
      return `${counts.ok} of ${counts.ok + counts.WARN + counts.FAIL + counts.skip} checks passed; ${parts.join(', ')}.`;
    },
  };
}
