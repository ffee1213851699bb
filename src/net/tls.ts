/**
 * TLS material for outgoing webhook requests (issue 12, "`ca_file_path` pointing at `/dev/zero`").
 */
import { X509Certificate } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/** Largest CA file read (bytes). */
const MAX_CA_BYTES = 1024 * 1024;
/** The one message for every unusable CA file, so it reveals nothing about arbitrary paths. */
export const CA_FILE_UNUSABLE = "The CA file could not be used: it must be a readable PEM certificate file.";

/**
 * Read a CA bundle safely (issue 12): opened non-blocking (a FIFO cannot hang us), only a regular file, at
 * most 1 MiB, and it must hold at least one PEM certificate.
 * @returns the file's bytes, or undefined for any unusable path (never saying which reason).
 */
export function readCaFile(path: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_CA_BYTES) return undefined;
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < st.size) {
      const got = readSync(fd, buf, n, st.size - n, n);
      if (got <= 0) break;
      n += got;
    }
    const pem = buf.subarray(0, n);
    const first = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem.toString("latin1"));
    if (!first) return undefined;
    new X509Certificate(first[0]);
    return pem;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
