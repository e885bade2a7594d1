/**
 * Tool icons from untrusted declarations: only https: URLs and bounded data: images reach a host UI.
 */

import { describe, expect, it } from 'vitest';
import { checkToolIcons, MAX_TOOL_ICON_SRC, MAX_TOOL_ICONS } from '../../src/tools/tool-icons.js';

describe('checkToolIcons', () => {
  it('keeps https: and data: image icons with their mimeType, sizes and theme', () => {
    const icons = [
      { src: 'https://example.com/a.png', mimeType: 'image/png', sizes: ['48x48', 'any'], theme: 'light' },
      { src: 'data:image/svg+xml;base64,PHN2Zy8+' },
    ];
    expect(checkToolIcons(icons)).toEqual({ icons, problems: [] });
  });

  it.each([
    [{ src: 'javascript:alert(1)' }, 'src must be https: or a data: image, got javascript:'],
    [{ src: 'file:///etc/passwd' }, 'src must be https: or a data: image, got file:'],
    [{ src: 'http://example.com/a.png' }, 'src must be https: or a data: image, got http:'],
    [{ src: 'data:text/html;base64,PHNjcmlwdD4=' }, 'a data URI must be an image'],
    [{ src: `data:image/png;base64,${'A'.repeat(MAX_TOOL_ICON_SRC)}` }, 'src is longer than'],
    [{ src: 'not a url' }, 'src is not a URL'],
    [{ src: 42 }, 'src must be a string'],
    [{ src: 'https://e.com/a.png', mimeType: 'text/html' }, 'mimeType must be an image/* type'],
    [{ src: 'https://e.com/a.png', sizes: '48x48' }, 'sizes must be a list'],
    [{ src: 'https://e.com/a.png', sizes: ['48x48; drop'] }, 'sizes must be a list'],
    [{ src: 'https://e.com/a.png', theme: 'neon' }, 'theme must be "light" or "dark"'],
    ['https://e.com/a.png', 'not an object'],
  ])('leaves out %j: %s', (icon, problem) => {
    const r = checkToolIcons([icon, { src: 'https://example.com/ok.png' }]);
    expect(r.icons).toEqual([{ src: 'https://example.com/ok.png' }]);
    expect(r.problems).toEqual([expect.stringContaining(`icon 1: ${problem}`)]);
  });

  it(`keeps at most ${MAX_TOOL_ICONS}; a non-list is no icons`, () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ src: `https://e.com/${i}.png` }));
    const r = checkToolIcons(many);
    expect(r.icons).toHaveLength(MAX_TOOL_ICONS);
    expect(r.problems).toHaveLength(1000 - MAX_TOOL_ICONS);
    expect(checkToolIcons({ src: 'https://e.com/a.png' })).toEqual({
      icons: [],
      problems: ['icons must be a list'],
    });
  });
});
