#!/usr/bin/env node
/**
 * Structural checks of every prebuilt addon under prebuilds/ (runs on any Linux host; no target machine needed).
 *
 *   node scripts/check-prebuilds.mjs [PREBUILDS_DIR]     (default: prebuilds/)
 *
 * For each .node file, by format:
 *   ELF (linux glibc/musl)  via binutils `readelf`: machine matches the folder's arch; exported (defined, global) dynamic
 *                           symbols are exactly the two N-API entry points; NEEDED libraries are only system ones
 *                           (glibc: libc/libm/libpthread/libdl/ld-linux; musl: libc.so); undefined symbols are N-API
 *                           (bound by node) or libc; glibc builds need no symbol version above GLIBC_BASELINE and
 *                           no GLIBCXX/CXXABI (libc++ is linked in).
 *   Mach-O (darwin)         parsed here: 64-bit dylib of the folder's CPU; minimum OS from LC_BUILD_VERSION
 *                           (arm64: 11.0, x64: 10.15); only /usr/lib/libSystem.B.dylib linked; every undefined
 *                           symbol is N-API (flat lookup at load, `-undefined dynamic_lookup`) or libSystem's;
 *                           exports are the two N-API entry points (plus weak C++ runtime symbols zig's libc++
 *                           keeps visible); ad-hoc code signature present on arm64 (required there).
 *   PE (win32)              parsed here: PE32+ x86-64 DLL; imports only node.exe (N-API functions only), KERNEL32 and
 *                           the UCRT api sets (no MSVC runtime DLL, no libstdc++/libgcc DLL); exports the two entry
 *                           points (plus the C API of zig's LLVM libunwind, which it marks dllexport).
 * Prints one summary line per file; exits 1 listing every violation.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const GLIBC_BASELINE = '2.17';
const ENTRY = ['napi_register_module_v1', 'node_api_module_get_api_version_v1'];
const isNapi = (s) => /^_?(napi_|node_api_)/.test(s);

const verCmp = (a, b) => {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
};

function readelf(args, file) {
  return execFileSync('readelf', ['-W', ...args, file], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

export function checkElf(file, arch, libc) {
  const bad = [];
  const header = readelf(['-h'], file);
  const machine = header.match(/Machine:\s+(.+)/)?.[1]?.trim() ?? '?';
  const wantMachine = arch === 'x64' ? /X86-64/ : /AArch64/;
  if (!wantMachine.test(machine)) bad.push(`machine ${machine}, want ${wantMachine}`);
  if (!/Type:\s+DYN/.test(header)) bad.push('not a shared object');
  const needed = [...readelf(['-d'], file).matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map(
    (m) => m[1],
  );
  const allowed =
    libc === 'musl'
      ? /^libc\.so$/
      : /^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|ld-linux-[\w-]+\.so\.\d)$/;
  for (const n of needed) if (!allowed.test(n)) bad.push(`links ${n}`);
  const syms = readelf(['--dyn-syms'], file)
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((c) => c.length >= 8 && /^\d+:$/.test(c[0] ?? ''));
  const exported = syms
    .filter((c) => c[6] !== 'UND' && (c[4] === 'GLOBAL' || c[4] === 'WEAK') && c[3] !== 'SECTION')
    .map((c) => (c[7] ?? '').replace(/@.*/, ''));
  if (exported.sort().join() !== [...ENTRY].sort().join()) bad.push(`exports ${exported.join(', ')}`);
  const undef = syms.filter((c) => c[6] === 'UND' && c[7]).map((c) => c[7] ?? '');
  const napiUndef = undef.filter((s) => isNapi(s));
  const versions = [
    ...new Set(
      undef
        .map((s) => s.match(/@(\w+?)_([\d.]+)/))
        .filter(Boolean)
        .map((m) => `${m[1]}_${m[2]}`),
    ),
  ];
  let maxGlibc = '0';
  for (const v of versions) {
    const [lib, ver] = [v.slice(0, v.lastIndexOf('_')), v.slice(v.lastIndexOf('_') + 1)];
    if (lib === 'GLIBC' && verCmp(ver, maxGlibc) > 0) maxGlibc = ver;
    if (lib === 'GLIBCXX' || lib === 'CXXABI') bad.push(`needs ${v} (libstdc++)`);
  }
  if (libc === 'glibc' && verCmp(maxGlibc, GLIBC_BASELINE) > 0)
    bad.push(`needs GLIBC_${maxGlibc} > ${GLIBC_BASELINE}`);
  if (libc === 'musl' && versions.length) bad.push(`musl build has versioned symbols ${versions.join(', ')}`);
  return {
    bad,
    summary: `ELF ${machine}, NEEDED ${needed.join(' ') || '-'}, exports ${exported.join(' ')}, ${napiUndef.length} N-API imports${
      libc === 'glibc' ? `, max GLIBC_${maxGlibc}` : ''
    }`,
  };
}

// ---- Mach-O -------------------------------------------------------------------------------------------------------
const LC = {
  SYMTAB: 0x2,
  LOAD_DYLIB: 0xc,
  ID_DYLIB: 0xd,
  VERSION_MIN_MACOSX: 0x24,
  BUILD_VERSION: 0x32,
  CODE_SIGNATURE: 0x1d,
};
const LC_DYLD_EXPORTS_TRIE = 0x80000033;
const LC_DYLD_INFO_ONLY = 0x80000022;

/** Names in a Mach-O export trie (ULEB128-encoded nodes). */
function exportTrie(buf, start, size) {
  const out = [];
  const uleb = (p) => {
    let v = 0;
    let shift = 0;
    let b;
    do {
      b = buf[p.i++];
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    return v;
  };
  const walk = (off, prefix, depth) => {
    if (off >= size || depth > 64) return;
    const p = { i: start + off };
    const termSize = uleb(p);
    if (termSize > 0) out.push(prefix);
    p.i += termSize;
    const children = buf[p.i++];
    for (let c = 0; c < children; c++) {
      let end = p.i;
      while (buf[end] !== 0) end++;
      const label = buf.toString('latin1', p.i, end);
      p.i = end + 1;
      walk(uleb(p), prefix + label, depth + 1);
    }
  };
  walk(0, '', 0);
  return out;
}

export function checkMachO(file, arch) {
  const bad = [];
  const b = readFileSync(file);
  if (b.readUInt32LE(0) !== 0xfeedfacf)
    return { bad: ['not a 64-bit little-endian Mach-O'], summary: 'not Mach-O' };
  const cpu = b.readUInt32LE(4);
  const wantCpu = arch === 'arm64' ? 0x0100000c : 0x01000007;
  if (cpu !== wantCpu) bad.push(`cputype 0x${cpu.toString(16)}, want 0x${wantCpu.toString(16)}`);
  const filetype = b.readUInt32LE(12);
  if (filetype !== 6 && filetype !== 8) bad.push(`filetype ${filetype} (want MH_DYLIB or MH_BUNDLE)`);
  const ncmds = b.readUInt32LE(16);
  let off = 32;
  let minos;
  let signed = false;
  const dylibs = [];
  let exports = [];
  let undef = [];
  for (let i = 0; i < ncmds; i++) {
    const cmd = b.readUInt32LE(off);
    const size = b.readUInt32LE(off + 4);
    if (cmd === LC.BUILD_VERSION || cmd === LC.VERSION_MIN_MACOSX) {
      const v = b.readUInt32LE(off + (cmd === LC.BUILD_VERSION ? 12 : 8));
      minos = `${v >>> 16}.${(v >>> 8) & 0xff}`;
    } else if (cmd === LC.LOAD_DYLIB) {
      const nameOff = b.readUInt32LE(off + 8);
      dylibs.push(b.toString('latin1', off + nameOff, off + size).replace(/\0.*$/s, ''));
    } else if (cmd === LC.CODE_SIGNATURE) {
      signed = true;
    } else if (cmd === LC_DYLD_EXPORTS_TRIE) {
      exports = exportTrie(b, b.readUInt32LE(off + 8), b.readUInt32LE(off + 12));
    } else if (cmd === LC_DYLD_INFO_ONLY && b.readUInt32LE(off + 44) > 0) {
      exports = exportTrie(b, b.readUInt32LE(off + 40), b.readUInt32LE(off + 44));
    } else if (cmd === LC.SYMTAB) {
      const [symoff, nsyms, stroff] = [
        b.readUInt32LE(off + 8),
        b.readUInt32LE(off + 12),
        b.readUInt32LE(off + 16),
      ];
      for (let s = 0; s < nsyms; s++) {
        const e = symoff + s * 16;
        const type = b[e + 4];
        if ((type & 0x0e) === 0 && type & 0x01) {
          const str = stroff + b.readUInt32LE(e);
          let end = str;
          while (b[end] !== 0) end++;
          undef.push(b.toString('latin1', str, end));
        }
      }
    }
    off += size;
  }
  undef = [...new Set(undef)];
  const wantMin = arch === 'arm64' ? '11.0' : '10.15';
  if (minos !== wantMin) bad.push(`minos ${minos}, want ${wantMin}`);
  for (const d of dylibs) if (d !== '/usr/lib/libSystem.B.dylib') bad.push(`links ${d}`);
  if (arch === 'arm64' && !signed) bad.push('no code signature (arm64 macOS refuses unsigned code)');
  const entry = ENTRY.map((e) => `_${e}`);
  for (const e of entry) if (!exports.includes(e)) bad.push(`does not export ${e}`);
  // zig's bundled libc++ keeps operator new/delete and a few runtime hooks visible (weak), and its linker exports the
  // symbols it synthesizes for every dylib (__mh_dylib_header, ___dso_handle); nothing of ours or cdeps.
  const extra = exports.filter(
    (e) =>
      !entry.includes(e) &&
      !/^__Z(n[wa]|d[la])|^___cxa_|^__ZT[ISV]|^(__mh_dylib_header|___dso_handle)$/.test(e),
  );
  if (extra.length) bad.push(`exports ${extra.length} more symbols: ${extra.slice(0, 8).join(', ')}`);
  const napi = undef.filter(isNapi);
  return {
    bad,
    summary: `Mach-O ${arch} minos ${minos}, ${signed ? 'signed' : 'unsigned'}, links ${dylibs.join(' ')}, exports ${exports.length} (${
      exports.length - extra.length
    } allowed), ${napi.length} N-API dynamic_lookup`,
  };
}

// ---- PE -----------------------------------------------------------------------------------------------------------
export function checkPe(file) {
  const bad = [];
  const b = readFileSync(file);
  if (b.toString('latin1', 0, 2) !== 'MZ') return { bad: ['not a PE file'], summary: 'not PE' };
  const pe = b.readUInt32LE(0x3c);
  if (b.toString('latin1', pe, pe + 4) !== 'PE\0\0') return { bad: ['no PE signature'], summary: 'not PE' };
  const machine = b.readUInt16LE(pe + 4);
  if (machine !== 0x8664) bad.push(`machine 0x${machine.toString(16)}, want x86-64`);
  const nsec = b.readUInt16LE(pe + 6);
  const optSize = b.readUInt16LE(pe + 20);
  const chars = b.readUInt16LE(pe + 22);
  if (!(chars & 0x2000)) bad.push('not a DLL');
  const opt = pe + 24;
  if (b.readUInt16LE(opt) !== 0x20b) bad.push('not PE32+');
  const dirs = opt + 112;
  const secs = [];
  for (let i = 0; i < nsec; i++) {
    const s = opt + optSize + i * 40;
    secs.push({ va: b.readUInt32LE(s + 12), vsize: b.readUInt32LE(s + 8), raw: b.readUInt32LE(s + 20) });
  }
  const rva = (r) => {
    const s = secs.find((x) => r >= x.va && r < x.va + Math.max(x.vsize, 1));
    if (!s) throw new Error(`rva 0x${r.toString(16)} outside sections`);
    return r - s.va + s.raw;
  };
  const cstr = (o) => {
    let e = o;
    while (b[e] !== 0) e++;
    return b.toString('latin1', o, e);
  };
  const exports = [];
  const expRva = b.readUInt32LE(dirs);
  if (expRva) {
    const e = rva(expRva);
    const n = b.readUInt32LE(e + 24);
    const names = rva(b.readUInt32LE(e + 32));
    for (let i = 0; i < n; i++) exports.push(cstr(rva(b.readUInt32LE(names + i * 4))));
  }
  const imports = {};
  const impRva = b.readUInt32LE(dirs + 8);
  if (impRva) {
    for (let d = rva(impRva); b.readUInt32LE(d + 12) !== 0; d += 20) {
      const dll = cstr(rva(b.readUInt32LE(d + 12)));
      const thunk = rva(b.readUInt32LE(d) || b.readUInt32LE(d + 16));
      const fns = [];
      for (let t = thunk; ; t += 8) {
        const lo = b.readUInt32LE(t);
        const hi = b.readUInt32LE(t + 4);
        if (lo === 0 && hi === 0) break;
        fns.push(hi & 0x80000000 ? `#${lo & 0xffff}` : cstr(rva(lo) + 2));
      }
      imports[dll] = fns;
    }
  }
  for (const [dll, fns] of Object.entries(imports)) {
    const d = dll.toLowerCase();
    if (d === 'node.exe') {
      const other = fns.filter((f) => !isNapi(f));
      if (other.length) bad.push(`imports non-N-API ${other.join(', ')} from node.exe`);
    } else if (
      !(d === 'kernel32.dll' || d.startsWith('api-ms-win-crt-') || d === 'ucrtbase.dll' || d === 'ntdll.dll')
    )
      bad.push(`imports ${dll}`);
  }
  if (!imports['node.exe']) bad.push('does not import N-API from node.exe');
  // zig's bundled LLVM libunwind (C++ exceptions on windows-gnu) declares its C API __declspec(dllexport) and the
  // linker keeps that; harmless (Windows binds imports per DLL by name, nothing interposes), so those names are
  // allowed. Nothing else: no symbol of ours or of the C libraries.
  const runtime = /^(_Unwind_\w+|unw_\w+|_GCC_specific_handler)$/;
  for (const e of ENTRY) if (!exports.includes(e)) bad.push(`does not export ${e}`);
  const extra = exports.filter((e) => !ENTRY.includes(e) && !runtime.test(e));
  if (extra.length) bad.push(`exports ${extra.length} more symbols: ${extra.slice(0, 8).join(', ')}`);
  return {
    bad,
    summary: `PE32+ x86-64 DLL, imports ${Object.entries(imports)
      .map(([d, f]) => `${d}(${f.length})`)
      .join(' ')}, exports ${ENTRY.join(' ')} + ${exports.length - ENTRY.length} libunwind`,
  };
}

export function checkPrebuilds(dir) {
  const results = [];
  for (const folder of readdirSync(dir).sort()) {
    const m = folder.match(/^(linux|darwin|win32)-(x64|arm64)$/);
    if (!m) continue;
    const [, platform, arch] = m;
    for (const f of readdirSync(join(dir, folder)).filter((x) => x.endsWith('.node'))) {
      const file = join(dir, folder, f);
      const libc = f.includes('.musl.') ? 'musl' : 'glibc';
      const r =
        platform === 'linux'
          ? checkElf(file, arch, libc)
          : platform === 'darwin'
            ? checkMachO(file, arch)
            : checkPe(file);
      results.push({ file: `${folder}/${f}`, size: statSync(file).size, ...r });
    }
  }
  return results;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const dir = resolve(process.argv[2] ?? 'prebuilds');
  const results = checkPrebuilds(dir);
  let failed = 0;
  for (const r of results) {
    console.log(
      `${r.bad.length ? 'FAIL' : 'ok  '} ${r.file.padEnd(32)} ${(r.size / 1024).toFixed(0).padStart(5)} KiB  ${r.summary}`,
    );
    for (const v of r.bad) console.log(`       - ${v}`);
    if (r.bad.length) failed++;
  }
  if (results.length === 0) {
    console.log(`no prebuilds found under ${dir}`);
    process.exit(1);
  }
  console.log(`check-prebuilds: ${results.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
