/** `panto image FILE`: what `processMedia` does to one file (input, output, changes, timing); `--out` writes the result. Exit 1 on bad media. */
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { isPantoError } from '../../errors.js';
import { processMedia } from '../../media/index.js';
import { DEFAULT_PROCESS_OPTIONS } from '../../media/policy.js';
import type { ProcessOptions } from '../../media/types.js';
import { notRegular, openRegular, readUpTo } from '../../regular-file.js';
import { CliError, EXIT_USAGE } from '../cli-error.js';
import { type CliIo, withProgress } from '../cli-io.js';
import { describeInput, describeSide, orientationSwapsAxes } from '../media-summary.js';
import { parseIntOption } from '../parse-options.js';
import { escapeJsonControls } from '../safe-text.js';
import { describeSystemError, isSystemError } from '../system-error.js';
import { detectImageProtocol } from '../tty/image-protocol.js';
import { inlineImage } from '../tty/inline-image.js';

export const imageHelp = `Usage: panto image FILE [options]

Show what the media pipeline does to one image or PDF: detection, size before and
after, every change made (resize, re-encode, orientation, metadata strip...), timing.

Options:
  --max-dimension N   fit inside N x N pixels (default 2000)
  --max-bytes N       cap on output bytes (default 3932160: base64 <= 5 MiB)
  --quality Q         JPEG quality for re-encodes (default 80)
  --keep-metadata     keep EXIF/XMP/text chunks on pass-through
  --out FILE          write the processed bytes to FILE (created or replaced; a pipe or terminal, directly
                      or as /dev/stdout, also works)
  --json              print a JSON object instead of text
  --no-preview        do not draw the result in the terminal (it is drawn where the terminal supports
                      kitty graphics or iTerm2 inline images; PANTO_IMAGES=kitty|iterm|off overrides)
  -h, --help          show this help
`;

export async function runImage(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'max-dimension': { type: 'string' },
      'max-bytes': { type: 'string' },
      quality: { type: 'string' },
      'keep-metadata': { type: 'boolean' },
      out: { type: 'string' },
      json: { type: 'boolean' },
      preview: { type: 'boolean', default: true },
      help: { type: 'boolean', short: 'h' },
    },
    allowNegative: true,
  });
  if (values.help) {
    io.out(imageHelp);
    return 0;
  }
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new CliError(`expected one FILE\n\n${imageHelp}`, EXIT_USAGE);

  const options: ProcessOptions = {};
  const maxDim = parseIntOption(values['max-dimension'], '--max-dimension');
  if (maxDim !== undefined) options.maxDimension = maxDim;
  const maxBytes = parseIntOption(values['max-bytes'], '--max-bytes');
  if (maxBytes !== undefined) options.maxEncodedBytes = maxBytes;
  const quality = parseIntOption(values.quality, '--quality');
  if (quality !== undefined) options.jpegQuality = quality;
  if (values['keep-metadata']) options.keepMetadata = true;

  const bytes = await readInput(file);
  const started = process.hrtime.bigint();
  let result: Awaited<ReturnType<typeof processMedia>>;
  try {
    result = await withProgress(io, `processing ${file}`, () => processMedia(bytes, options));
  } catch (err) {
    if (isPantoError(err)) throw new CliError(`${file}: ${err.message} [${err.code}]`);
    throw err;
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (values.out) await writeOutput(values.out, result.data);

  if (values.json) {
    io.out(
      escapeJsonControls(
        JSON.stringify({
          file,
          input: result.original,
          output: {
            mediaType: result.mediaType,
            width: result.width,
            height: result.height,
            byteLength: result.data.byteLength,
            base64Length: Math.ceil(result.data.byteLength / 3) * 4,
            ...(result.pages === undefined ? {} : { pages: result.pages }),
          },
          changes: result.changes,
          ms: Math.round(ms * 100) / 100,
          ...(values.out ? { written: values.out } : {}),
        }),
      ),
    );
    return 0;
  }
  const o = result.original;
  const swapped = orientationSwapsAxes(o.orientation);
  io.out(`${file}`);
  io.out(`  input:   ${describeInput({ ...o, pages: result.pages }, swapped)}`);
  io.out(
    `  output:  ${describeSide({ mediaType: result.mediaType, width: result.width, height: result.height, byteLength: result.data.byteLength, pages: result.pages })}`,
  );
  io.out(
    `  changes: ${result.changes.length === 0 ? 'none (passed through unchanged)' : result.changes.join(', ')}`,
  );
  io.out(`  time:    ${ms.toFixed(1)} ms`);
  if (values.out) io.out(`  written: ${values.out}`);
  if (values.preview && process.stdout.isTTY && !isStdout(values.out)) {
    const protocol = detectImageProtocol(process.env);
    const drawn = await inlineImage(
      {
        data: result.data,
        mediaType: result.mediaType,
        width: result.width,
        height: result.height,
        name: file,
      },
      {
        protocol,
        maxColumns: Math.min(80, (process.stdout.columns ?? 80) - 2),
        maxRows: Math.max(4, (process.stdout.rows ?? 24) - 8),
      },
    );
    // Our own escape sequence, built from the pipeline's bytes: written as is (io.out would show it visibly).
    if (drawn !== undefined) process.stdout.write(`${drawn}\r\n`);
  }
  return 0;
}

/** The input file: a regular file of at most the pipeline's input cap (anything larger is refused unread). */
async function readInput(file: string): Promise<Buffer> {
  const cap = Math.max(DEFAULT_PROCESS_OPTIONS.maxInputBytes, DEFAULT_PROCESS_OPTIONS.maxPdfBytes);
  let opened: Awaited<ReturnType<typeof openRegular>>;
  try {
    opened = await openRegular(file);
  } catch (err) {
    throw new CliError(
      isSystemError(err) ? describeSystemError(err, file) : `cannot read ${file}: ${String(err)}`,
    );
  }
  if ('not' in opened) throw new CliError(`cannot read ${file}: ${opened.not}, not a regular file`);
  try {
    const bytes = await readUpTo(opened.fh, cap + 1);
    if (bytes.byteLength > cap) {
      throw new CliError(`${file}: over the ${cap}-byte input cap of the media pipeline; not read`);
    }
    return bytes;
  } catch (err) {
    if (isSystemError(err)) throw new CliError(describeSystemError(err, file));
    throw err;
  } finally {
    await opened.fh.close();
  }
}

/**
 * `--out FILE`: a regular file is created or replaced. It is opened non-blocking first, so a FIFO nobody reads fails
 * (ENXIO) instead of hanging; a FIFO with a reader (`| …` through `/dev/stdout`) and a character device (`/dev/null`,
 * a terminal) are written as streams, through a second, blocking open (non-blocking writes to a pipe could fail with
 * EAGAIN). A socket (also as /dev/stdout: ENXIO), a directory or a block device is refused.
 *
 * The window: between the non-blocking open that proved a reader and the blocking reopen, the reader may go away, or
 * the path may be replaced. A FIFO whose last reader left then blocks the reopen until a new reader comes (as a shell
 * redirection would); a path swapped for another file in that window is written over from its start (not
 * truncated). The data is the same either way; only where it lands can change, and the path is the caller's own.
 */
async function writeOutput(file: string, data: Uint8Array): Promise<void> {
  let fh: FileHandle;
  try {
    fh = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK, 0o666);
  } catch (err) {
    if (isSystemError(err) && err.code === 'ENXIO')
      throw new CliError(`cannot write ${file}: not a regular file (a FIFO with no reader, or a socket)`);
    if (isSystemError(err)) throw new CliError(describeSystemError(err, file));
    throw err;
  }
  try {
    const info = await fh.stat();
    if (info.isFIFO() || info.isCharacterDevice()) {
      // Non-blocking writes to a pipe or terminal could fail with EAGAIN: write through a blocking descriptor.
      const stream = await open(file, constants.O_WRONLY);
      try {
        await stream.writeFile(data);
      } finally {
        await stream.close();
      }
      return;
    }
    const kind = notRegular(info);
    if (kind !== null) throw new CliError(`cannot write ${file}: ${kind}, not a regular file`);
    await fh.truncate(0);
    await fh.writeFile(data);
  } catch (err) {
    if (isSystemError(err)) throw new CliError(describeSystemError(err, file));
    throw err;
  } finally {
    await fh.close();
  }
}

/** `--out` names this process's stdout (the picture itself goes there: no preview on top of it). */
function isStdout(out: string | undefined): boolean {
  return out === '-' || out === '/dev/stdout' || out === '/dev/fd/1' || out === '/proc/self/fd/1';
}
