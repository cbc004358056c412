import { printableConfig, SETTINGS } from '../config.js';
import { secretFromEnvironment } from '../auth/secret.js';
import { configFrom, parseFlags, settingsHelp, type Command } from '../command-line/flags.js';
import { EXIT_FAILURE, EXIT_OK } from '../command-line/usage-error.js';
import { stopSignals, type Service, type StartService } from '../lifecycle.js';
import { createLogger } from '../log/logger.js';
import { offlineInstruction, processFacts } from './offline-command.js';

export const SERVE_HELP = `Usage: gatehouse serve [options]

Runs the service. Every option can also come from its environment variable; the flag wins.

Options:
${settingsHelp(SETTINGS)}
  --print-config                 print the effective configuration (secret redacted) and exit
  --help                         show this help
`;

/** `gatehouse serve`, running the service `start` starts (src/server.ts): resolves when it has stopped after SIGTERM or SIGINT. */
export const serveCommand = (start: StartService): Command => async (args, io) => {
  const { values } = parseFlags(args, SETTINGS, { 'print-config': 'boolean' }, 0);
  if (values['help'] === true) {
    io.stdout.write(SERVE_HELP);
    return EXIT_OK;
  }
  const config = configFrom(values, io.env);
  if (values['print-config'] === true) {
    if (config.secret !== undefined) secretFromEnvironment(config.secret);
    io.stdout.write(`${JSON.stringify(printableConfig(config), null, 2)}\n`);
    return EXIT_OK;
  }
  const logger = createLogger({
    level: config.logLevel, format: config.logFormat, stdout: io.stdout, stderr: io.stderr,
  });
  // Signal handlers go in before anything is announced: a supervisor may send SIGTERM the
  // moment it sees the listening line, and that must still be a clean stop.
  // A stop during start-up (the lock wait can take 10 s, Docker kills 10 s after SIGTERM) aborts it.
  const signals = stopSignals();
  // Lines still batched when the process dies (an uncaught exception) go out on the way: writes
  // to a file or pipe are synchronous there.
  const flushOnExit = (): void => logger.flush();
  process.on('exit', flushOnExit);
  try {
    let running: Service;
    try {
      const facts = processFacts();
      running = await start(config, {
        logger,
        signal: signals.signal,
        offlineInstruction: (offlineArgs) => offlineInstruction(facts, config.dataDir, offlineArgs),
      });
    } catch (error) {
      if (!signals.signal.aborted) throw error;
      logger.info('stopped while waiting for the data directory lock; nothing was started', { signal: await signals.stopRequested });
      logger.flush();
      return EXIT_OK;
    }
    logger.announce(`listening on ${running.url}`, {
      url: running.url, dataDir: config.dataDir, authMethod: config.authMethod,
    });
    logger.flush();
    const reason = await Promise.race([
      signals.stopRequested.then((signal) => ({ signal })),
      running.lockLost.then((lost) => ({ lost })),
    ]);
    if ('lost' in reason) logger.error(`stopping: ${reason.lost.message}`, undefined, { exitCode: EXIT_FAILURE });
    else logger.info('stopping', { signal: reason.signal });
    const isClean = await running.close();
    return isClean && !('lost' in reason) ? EXIT_OK : EXIT_FAILURE;
  } finally {
    signals.dispose();
    process.off('exit', flushOnExit);
  }
};
