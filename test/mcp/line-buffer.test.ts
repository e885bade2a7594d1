import { parseJSONRPCMessage } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { InvalidLineError, LineBuffer } from '../../src/mcp/line-buffer.js';

const msg = (id: number) => `${JSON.stringify({ jsonrpc: '2.0', id, result: { n: id } })}\n`;

describe('stdio line framing', () => {
  it('splits messages at newlines across arbitrary chunk boundaries', () => {
    const text = msg(1) + msg(2) + msg(3);
    for (const size of [1, 2, 7, 64, text.length]) {
      const buf = new LineBuffer(1024, parseJSONRPCMessage);
      const got: unknown[] = [];
      for (let i = 0; i < text.length; i += size) {
        buf.append(Buffer.from(text.slice(i, i + size)));
        for (let m = buf.readMessage(); m !== null; m = buf.readMessage()) got.push(m);
      }
      expect(got.map((m) => (m as { id: number }).id)).toEqual([1, 2, 3]);
    }
  });

  it('throws on a line that is not JSON-RPC, and keeps reading the next lines', () => {
    const buf = new LineBuffer(1024, parseJSONRPCMessage);
    buf.append(Buffer.from(`garbage\n[]\n${msg(5)}`));
    expect(() => buf.readMessage()).toThrow(expect.objectContaining({ rpcCode: -32700 }));
    expect(() => buf.readMessage()).toThrow(InvalidLineError);
    expect(buf.readMessage()).toMatchObject({ id: 5 });
  });

  it('a message over the byte cap throws at once (without waiting for its end) and frees what it held', () => {
    const buf = new LineBuffer(1000, parseJSONRPCMessage);
    buf.append(Buffer.alloc(600, 0x41));
    expect(() => buf.append(Buffer.alloc(600, 0x41))).toThrow(/over 1000 bytes/);
    buf.append(Buffer.from(msg(9)));
    expect(buf.readMessage()).toMatchObject({ id: 9 });
  });

  it('frames a multi-megabyte message arriving in 64 KiB chunks', () => {
    const buf = new LineBuffer(128 * 1024 * 1024, parseJSONRPCMessage);
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    const head = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"x":"');
    buf.append(head);
    for (let i = 0; i < 128; i++) buf.append(chunk);
    buf.append(Buffer.from('"}}\n'));
    const m = buf.readMessage() as unknown as { result: { x: string } };
    expect(m.result.x).toHaveLength(8 * 1024 * 1024);
  });
});
