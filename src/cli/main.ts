#!/usr/bin/env node
/** The `panto` bin entry: runs the CLI with the process's arguments and sets the exit code. */
import { exitQuietlyOnClosedPipe } from './cli-io.js';
import { main } from './panto.js';
import { visibleControls } from './safe-text.js';

exitQuietlyOnClosedPipe();
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`panto: ${visibleControls(String(err))}\n`);
    process.exitCode = 1;
  },
);
