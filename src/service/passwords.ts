/**
 * Password hashing (scrypt, `scrypt$<salt hex>$<hash hex>`), always off the event loop (the async
 * `crypto.scrypt` runs in libuv's thread pool), with the same cost for unknown users (issue 12: guessing
 * clients must not stall other requests, and timing must not tell which usernames exist).
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

const scryptAsync = promisify(scrypt) as (password: string, salt: string, keylen: number) => Promise<Buffer>;

/** Hash a password for storage. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16).toString("hex");
  return `scrypt$${salt}$${(await scryptAsync(password, salt, 32)).toString("hex")}`;
}

/** A hash of a random password: verified against when the user does not exist, so both cost the same. */
const DUMMY = `scrypt$${randomBytes(16).toString("hex")}$${randomBytes(32).toString("hex")}`;

/**
 * Check `password` against a stored hash; `stored` undefined/null/malformed (unknown user, no password)
 * costs one scrypt like a real check and is false.
 */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const parts = (stored ?? "").split("$");
  const usable = parts.length === 3 && parts[0] === "scrypt" && !!parts[1] && !!parts[2];
  const [, salt, hash] = usable ? parts : DUMMY.split("$");
  const got = await scryptAsync(password, salt!, 32);
  const want = Buffer.from(hash!, "hex");
  return usable && want.length === got.length && timingSafeEqual(got, want);
}
