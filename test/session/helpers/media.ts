/** Small real media for session tests: a valid PNG of any size and a valid one-page PDF, as base64. */

import { randomBytes } from 'node:crypto';
import { pngFile } from '../../helpers/png-file.js';

/** An RGB gradient PNG of `width` x `height`, base64. */
export function pngBase64(width: number, height: number, seed = 0): string {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width; x++) {
      raw[row + 1 + x * 3] = (x + seed) & 255;
      raw[row + 2 + x * 3] = (y * 3) & 255;
      raw[row + 3 + x * 3] = (x ^ y) & 255;
    }
  }
  return pngFile(width, height, 2, raw, 6).toString('base64');
}

/** A minimal valid one-page PDF, base64. */
export function pdfBase64(text = 'Hello'): string {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>',
  ];
  const stream = `BT /F1 12 Tf 20 100 Td (${text}) Tj ET`;
  objects.push(`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`);
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(pdf.length);
    pdf += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) pdf += `${String(off).padStart(10, '0')} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1').toString('base64');
}

/** A PNG of random RGB noise (incompressible: the file is ~3 x width x height bytes), base64. */
export function noisePngBase64(width: number, height: number): string {
  const raw = randomBytes((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) raw[y * (width * 3 + 1)] = 0; // filter type 0 on every row
  return pngFile(width, height, 2, raw).toString('base64');
}
