// CPU time of a process from /proc/PID/stat: utime + stime (fields 14 and 15), every thread of
// the process, in clock ticks (getconf CLK_TCK, usually 100: 10 ms). node: modules only.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second (CLK_TCK); 100 when getconf is not there. */
export const CLOCK_TICKS_PER_SECOND = (() => {
  const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const ticks = Number(result.stdout?.trim());
  return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
})();

/** utime + stime of `pid` (all its threads) in ticks, or undefined when /proc cannot tell (not Linux, or gone). */
export function cpuTicksOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from the last ")".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[14 - 3]);
    const stime = Number(fields[15 - 3]);
    return Number.isFinite(utime) && Number.isFinite(stime) ? utime + stime : undefined;
  } catch {
    return undefined;
  }
}

/** The command name of `pid` (/proc/PID/comm), to check that a pid is the node process and not a wrapper. */
export function commandOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Microseconds of CPU per request between two tick readings, or undefined when either is missing. */
export function cpuMicrosPerRequest(ticksBefore, ticksAfter, requests) {
  if (ticksBefore === undefined || ticksAfter === undefined || !(requests > 0)) return undefined;
  return ((ticksAfter - ticksBefore) / CLOCK_TICKS_PER_SECOND / requests) * 1e6;
}
