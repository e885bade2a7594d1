/**
 * Tool icons from an untrusted declaration (an MCP server's `tools/list`, a Lua tool file) made safe for a host UI:
 * at most `MAX_TOOL_ICONS`, each with an `src` that is an `https:` URL or a `data:image/...` URI of at most
 * `MAX_TOOL_ICON_SRC` characters (never `javascript:`, `file:`, `http:` or a huge inline image), an `image/*`
 * `mimeType`, `sizes` of the form `WxH` or `any`, `theme` `light` or `dark`. Pure.
 */

import type { ToolIcon } from '../tool.js';

/** Most icons kept per tool. */
export const MAX_TOOL_ICONS = 8;
/** Longest `src` kept (a data URI of a ~48 KB image). */
export const MAX_TOOL_ICON_SRC = 65_536;

/** The icons of `value` that are safe to show, and what was wrong with each one left out. */
export function checkToolIcons(value: unknown): { icons: ToolIcon[]; problems: string[] } {
  const icons: ToolIcon[] = [];
  const problems: string[] = [];
  if (!Array.isArray(value)) return { icons, problems: ['icons must be a list'] };
  for (const [i, item] of value.entries()) {
    const where = `icon ${i + 1}`;
    if (icons.length >= MAX_TOOL_ICONS) {
      problems.push(`${where}: more than ${MAX_TOOL_ICONS} icons`);
      continue;
    }
    const problem = iconProblem(item);
    if (problem) {
      problems.push(`${where}: ${problem}`);
      continue;
    }
    const it = item as Record<string, unknown>;
    const icon: ToolIcon = { src: it.src as string };
    if (it.mimeType !== undefined) icon.mimeType = it.mimeType as string;
    if (it.sizes !== undefined) icon.sizes = [...(it.sizes as string[])];
    if (it.theme !== undefined) icon.theme = it.theme as 'light' | 'dark';
    icons.push(icon);
  }
  return { icons, problems };
}

function iconProblem(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'not an object';
  const it = item as Record<string, unknown>;
  if (typeof it.src !== 'string') return 'src must be a string';
  if (it.src.length > MAX_TOOL_ICON_SRC) return `src is longer than ${MAX_TOOL_ICON_SRC} characters`;
  if (/^data:/i.test(it.src)) {
    if (!/^data:image\/[a-z0-9.+-]+(;[a-z0-9=.+-]+)*(;base64)?,/i.test(it.src))
      return 'a data URI must be an image';
  } else {
    let url: URL;
    try {
      url = new URL(it.src);
    } catch {
      return 'src is not a URL';
    }
    if (url.protocol !== 'https:') return `src must be https: or a data: image, got ${url.protocol}`;
  }
  if (
    it.mimeType !== undefined &&
    (typeof it.mimeType !== 'string' || !/^image\/[a-z0-9.+-]{1,80}$/i.test(it.mimeType))
  )
    return 'mimeType must be an image/* type';
  if (
    it.sizes !== undefined &&
    (!Array.isArray(it.sizes) ||
      it.sizes.length > 16 ||
      !it.sizes.every((s) => typeof s === 'string' && /^(any|\d{1,5}x\d{1,5})$/.test(s)))
  )
    return 'sizes must be a list of "WxH" or "any"';
  if (it.theme !== undefined && it.theme !== 'light' && it.theme !== 'dark')
    return 'theme must be "light" or "dark"';
  return undefined;
}
