/**
 * Real camera photos for `npm run bench:media`, fetched the way cdeps fetches sources: pinned Debian BINARY packages
 * (CC-licensed wallpapers: Debian's lomiri-wallpapers, bookworm main), each `.deb` sha256-checked, downloaded with
 * `apt-get download` through a private apt configuration (a deb list in a temp dir; the archive URI is read from the
 * machine's own apt sources, so no registry host name lives in this repo) into the git-ignored `.bench-tmp/photos/`,
 * then the pinned files extracted with `dpkg-deb --fsys-tarfile` and checked against their own sha256.
 *
 * Variants the originals do not cover are made from them at run time by a real encoder (sharp's libvips/mozjpeg and
 * libwebp, the bench's peer): a baseline re-encode, a copy stored sideways with EXIF orientation 6 and an sRGB ICC
 * profile, a lossy WebP and a PNG. They are deterministic for a given sharp version and are remade when missing.
 *
 * Licences (the packages' debian/copyright): Kleiber by Lukas Baubkus (CC-BY-SA-3.0), Dragonfly by "Bolly",
 * Picture_0B by Trevor "Freespace" (CC-BY-4.0), free and greentock by Peter Nerlich (CC-BY-SA-4.0), seeding by Clemens
 * Engelhardt (CC0-1.0), Wine by Jakub Mede (CC-BY-4.0), sunset by Aitzol Berasategi (CC-BY-4.0). Nothing is committed.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DIR = '/usr/share/backgrounds';
/** Pinned packages (bookworm main) and the files taken from each, with their sha256. */
const PACKAGES = [
  {
    name: 'lomiri-wallpapers-16.04',
    version: '20.04.0-2',
    deb: 'lomiri-wallpapers-16.04_20.04.0-2_all.deb',
    sha256: 'a99ff6a3bfe451e4cc0682ecb3cc82e71740626d59e4845ae34a0a0e45421eab',
    files: {
      'Dragonfly_by_Bolly.jpg': 'af5af17841009732def24b09bb1e669a1b09d2b4bdeee7812c371101c30d2bb3',
      'Picture_0B_by_freespace.jpg': 'c8c0ab18e48d9e0419fe42881112137f3afafc27dfddc29ec3a6d54c56d225ad',
      'free_by_Peter_Nerlich.jpg': '85a5453c2fed514c75973016f3d862aca62eb7ca087618822469274ac1092373',
      'greentock_by_Peter_Nerlich.jpg': 'e7b20e2db9dcd6e2b278ca55873c2110b35d89cd38b04d0b18728726888e6889',
      'seeding_by_Clements_Engelhardt.jpg':
        'a5634d1ab5e41a3568e92d4a894a500c92b891f9ff734e50bd224d6e185a605f',
      'Wine_by_Jakkub_Mede.jpg': 'd2e96e6d4da40dd804b3d0ce295e94de04a2d7d9b6785d42cd9d92ba58bced74',
      'sunset_by_Aitzol_Berasategi.jpg': '474dab6a4b9f94dc76c29dfe30e9f5db4af0fd2e33fe5d695f8152b371efca18',
    },
  },
  {
    name: 'lomiri-wallpapers-20.04',
    version: '20.04.0-2',
    deb: 'lomiri-wallpapers-20.04_20.04.0-2_all.deb',
    sha256: 'd44e89b8473aafe64a5b678f014862dc31335aaaf18665c544d985d854f1a709',
    files: {
      'Kleiber_by_Lukas_Baubkus.jpg': '6572410c09f4492c74ccadde133565a14c0161617d5917d4c820c66d65a44ba7',
    },
  },
];

/**
 * The bench rows over real photos: `name` (file in the photos folder), `label`, the output sharp makes (`jpeg`, `webp`,
 * `png-capped`) and, for a derived file, how it is made from an original (`from`, `make(sharp, input) -> Promise`).
 */
export const PHOTO_CASES = [
  {
    name: 'Kleiber_by_Lukas_Baubkus.jpg',
    label: 'photo 20 MP baseline 4:2:2 -> JPEG',
    sharp: 'jpeg',
  },
  {
    name: 'Dragonfly_by_Bolly.jpg',
    label: 'photo 13 MP progressive 4:2:2 -> JPEG',
    sharp: 'jpeg',
  },
  {
    name: 'Picture_0B_by_freespace.jpg',
    label: 'photo 4.5 MP progressive 4:2:0 -> JPEG',
    sharp: 'jpeg',
  },
  {
    name: 'photo-4mp-baseline.jpg',
    label: 'photo 4.5 MP baseline 4:2:0 q90 -> JPEG',
    sharp: 'jpeg',
    from: 'Picture_0B_by_freespace.jpg',
    make: (sharp, input) =>
      sharp(input).jpeg({ quality: 90, chromaSubsampling: '4:2:0', progressive: false }).toBuffer(),
  },
  {
    name: 'free_by_Peter_Nerlich.jpg',
    label: 'photo 6 MP baseline 4:4:4 -> JPEG',
    sharp: 'jpeg',
  },
  {
    name: 'greentock_by_Peter_Nerlich.jpg',
    label: 'photo 6 MP progressive 4:4:4 -> JPEG',
    sharp: 'jpeg',
  },
  {
    name: 'photo-exif6-icc.jpg',
    label: 'photo 10 MP EXIF 6 + ICC -> JPEG',
    sharp: 'jpeg',
    from: 'Wine_by_Jakkub_Mede.jpg',
    // Stored sideways (the portrait turned 90° counter-clockwise) with orientation 6: upright again when applied.
    make: (sharp, input) =>
      sharp(input)
        .rotate(270)
        .withMetadata({ orientation: 6 })
        .withIccProfile('srgb')
        .jpeg({ quality: 92, chromaSubsampling: '4:2:0' })
        .toBuffer(),
  },
  {
    name: 'photo-16mp.webp',
    label: 'photo 16 MP lossy WebP -> WebP',
    sharp: 'webp',
    from: 'seeding_by_Clements_Engelhardt.jpg',
    make: (sharp, input) => sharp(input).webp({ quality: 85 }).toBuffer(),
  },
  {
    name: 'photo-12mp.png',
    label: 'photo 12 MP PNG -> PNG/cap',
    sharp: 'png-capped',
    from: 'sunset_by_Aitzol_Berasategi.jpg',
    make: (sharp, input) => sharp(input).png().toBuffer(),
  },
];

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/** The main Debian archive URI and keyring from the system's apt sources (as scripts/fetch-cdeps.mjs reads them). */
function systemArchive() {
  const d822 = '/etc/apt/sources.list.d/debian.sources';
  if (existsSync(d822)) {
    for (const stanza of readFileSync(d822, 'utf8').split(/\n\s*\n/)) {
      const field = (k) => stanza.match(new RegExp(`^${k}:\\s*(.+)$`, 'mi'))?.[1]?.trim();
      const uris = field('URIs');
      if (!uris || /-security\b/.test(field('Suites') ?? '')) continue;
      return { uri: uris.split(/\s+/)[0], signedBy: field('Signed-By') };
    }
  }
  const list = '/etc/apt/sources.list';
  if (existsSync(list)) {
    for (const line of readFileSync(list, 'utf8').split('\n')) {
      const m = line.match(/^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/);
      if (m?.[1] && m[2] && !m[2].endsWith('-security')) return { uri: m[1], signedBy: undefined };
    }
  }
  return undefined;
}

/** `apt-get download name=version` for each package into `dir`, through a private apt configuration. */
function aptDownload(pkgs, dir) {
  const archive = systemArchive();
  if (!archive)
    throw new Error('real photos: no Debian archive in the apt sources (needs a Debian-like machine)');
  const work = mkdtempSync(join(tmpdir(), 'panto-photos-apt-'));
  try {
    const sources = join(work, 'photos.sources');
    writeFileSync(
      sources,
      `Types: deb\nURIs: ${archive.uri}\nSuites: bookworm\nComponents: main\n` +
        `Signed-By: ${archive.signedBy ?? '/usr/share/keyrings/debian-archive-keyring.gpg'}\n`,
    );
    for (const d of ['lists/partial', 'cache/archives/partial'])
      mkdirSync(join(work, d), { recursive: true });
    const opts = [
      `-o=Dir::Etc::sourcelist=${sources}`,
      '-o=Dir::Etc::sourceparts=-',
      `-o=Dir::State::Lists=${join(work, 'lists')}`,
      `-o=Dir::Cache=${join(work, 'cache')}`,
      '-o=Debug::NoLocking=1',
      '-o=APT::Get::List-Cleanup=0',
    ];
    if (process.getuid?.() === 0) opts.push('-o=APT::Sandbox::User=root');
    const run = (args) =>
      execFileSync('apt-get', [...opts, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    run(['-q', 'update']);
    run(['-q', 'download', ...pkgs.map((p) => `${p.name}=${p.version}`)]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Makes sure every photo of PHOTO_CASES is in `dir` (originals checked by sha256, derived ones made with sharp when
 * missing); returns the names made or extracted. Throws naming what failed (no apt, a hash mismatch).
 */
export async function ensureRealPhotos(dir) {
  mkdirSync(dir, { recursive: true });
  const made = [];
  const check = (f, want) => existsSync(join(dir, f)) && sha256(readFileSync(join(dir, f))) === want;
  const missing = PACKAGES.filter((p) => !Object.entries(p.files).every(([f, h]) => check(f, h)));
  const debs = join(dir, 'debs');
  mkdirSync(debs, { recursive: true });
  const debOk = (p) => existsSync(join(debs, p.deb)) && sha256(readFileSync(join(debs, p.deb))) === p.sha256;
  const toFetch = missing.filter((p) => !debOk(p));
  if (toFetch.length) {
    process.stderr.write(`real photos: apt-get download ${toFetch.map((p) => p.name).join(' ')}\n`);
    aptDownload(toFetch, debs);
  }
  for (const p of missing) {
    const path = join(debs, p.deb);
    const got = sha256(readFileSync(path));
    if (got !== p.sha256) {
      rmSync(path);
      throw new Error(
        `real photos: sha256 mismatch for ${p.deb}: expected ${p.sha256}, got ${got} (deleted)`,
      );
    }
    const x = mkdtempSync(join(dir, '.x-'));
    try {
      const members = Object.keys(p.files).map((f) => `.${DIR}/${f}`);
      const tar = execFileSync('dpkg-deb', ['--fsys-tarfile', path], { maxBuffer: 256 << 20 });
      execFileSync('tar', ['-x', '-C', x, ...members], { input: tar });
      for (const [f, want] of Object.entries(p.files)) {
        const bytes = readFileSync(join(x, DIR, f));
        if (sha256(bytes) !== want) throw new Error(`real photos: sha256 mismatch for ${f} in ${p.deb}`);
        renameSync(join(x, DIR, f), join(dir, f));
        made.push(f);
      }
    } finally {
      rmSync(x, { recursive: true, force: true });
    }
  }
  const derived = PHOTO_CASES.filter((c) => c.make && !existsSync(join(dir, c.name)));
  if (derived.length) {
    const sharp = (await import('sharp')).default;
    for (const c of derived) {
      const out = await c.make(sharp, readFileSync(join(dir, c.from)));
      writeFileSync(join(dir, c.name), out);
      made.push(c.name);
    }
  }
  return made;
}
