/**
 * The bearer token of `serveMcpHttp`: one generated per start unless the host gives one, checked in constant time.
 *
 * Both sides are hashed (SHA-256) before `timingSafeEqual`, so the comparison takes the same time whatever the
 * presented token's length or content. The scheme name is case-insensitive (RFC 7235); the token is not.
 */

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh token: 32 random bytes, base64url (43 characters). */
export function newBearerToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What an `Authorization` header proves. */
export type BearerCheck = 'ok' | 'missing' | 'invalid';

/** A checker for `token`. */
export function bearerChecker(token: string): (authorization: string | undefined) => BearerCheck {
  const expected = createHash('sha256').update(token, 'utf8').digest();
  return (authorization) => {
    if (authorization === undefined || authorization.trim() === '') return 'missing';
    const m = /^Bearer +(\S+) *$/i.exec(authorization);
    if (m === null) return 'invalid';
    const got = createHash('sha256')
      .update(m[1] as string, 'utf8')
      .digest();
    return timingSafeEqual(got, expected) ? 'ok' : 'invalid';
  };
}
