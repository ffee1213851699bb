/**
 * The text of a request body's JSON parse error as Nautobot 1.6 answers it: DRF's `JSONParser` runs
 * Python 3.11's `json.load` (its C scanner), so the detail reads
 * `JSON parse error - Expecting value: line 1 column 10 (char 9)`. This module re-scans a body that
 * `JSON.parse` refused and words the first error as Python does: its message, 1-based line and column and
 * 0-based character offset, counted in code points. Only used on the error path.
 */

const WS = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const HEX = /^[0-9a-fA-F]$/;

/** A Python `JSONDecodeError`: message and character offset. */
class Fail {
  readonly msg: string;
  readonly pos: number;
  constructor(msg: string, pos: number) {
    this.msg = msg;
    this.pos = pos;
  }
}
/** Python's scanner `StopIteration(idx)`: no value starts at `idx`. */
class Stop {
  readonly pos: number;
  constructor(pos: number) {
    this.pos = pos;
  }
}
/** DRF's `parse_constant`: NaN and Infinity are refused without a position. */
class OutOfRange {}

/** Recursive-descent scanner mirroring CPython 3.11 `Modules/_json.c` (strict mode). */
class Scanner {
  private readonly s: string[];
  constructor(chars: string[]) {
    this.s = chars;
  }

  ws(i: number): number {
    while (i < this.s.length && WS.has(this.s[i]!)) i++;
    return i;
  }

  /** Parse one value at `i`; @returns the index after it. */
  value(i: number): number {
    const s = this.s;
    if (i >= s.length) throw new Stop(i);
    const c = s[i]!;
    if (c === '"') return this.string(i + 1);
    if (c === "{") return this.object(i + 1);
    if (c === "[") return this.array(i + 1);
    for (const word of ["null", "true", "false"]) if (this.at(i, word)) return i + word.length;
    if (this.at(i, "NaN") || this.at(i, "Infinity") || this.at(i, "-Infinity")) throw new OutOfRange();
    return this.number(i);
  }

  private at(i: number, word: string): boolean {
    return this.s.slice(i, i + word.length).join("") === word;
  }

  private number(start: number): number {
    const s = this.s;
    const digit = (k: number) => k < s.length && s[k]! >= "0" && s[k]! <= "9";
    let i = start;
    if (s[i] === "-") i++;
    if (digit(i) && s[i] !== "0") while (digit(i)) i++;
    else if (s[i] === "0") i++;
    else throw new Stop(start);
    if (s[i] === "." && digit(i + 1)) {
      i += 2;
      while (digit(i)) i++;
    }
    if (s[i] === "e" || s[i] === "E") {
      let k = i + 1;
      if (s[k] === "+" || s[k] === "-") k++;
      if (digit(k)) {
        while (digit(k)) k++;
        i = k;
      }
    }
    return i;
  }

  /** `end` is the index after the opening quote. */
  private string(end: number): number {
    const s = this.s;
    const begin = end - 1;
    for (;;) {
      let next = end;
      let c = "";
      for (; next < s.length; next++) {
        c = s[next]!;
        if (c === '"' || c === "\\") break;
        if (c.codePointAt(0)! <= 0x1f) throw new Fail("Invalid control character at", next);
      }
      if (next >= s.length) throw new Fail("Unterminated string starting at", begin);
      next++;
      if (c === '"') return next;
      if (next === s.length) throw new Fail("Unterminated string starting at", begin);
      c = s[next]!;
      if (c !== "u") {
        end = next + 1;
        if (!ESCAPES.has(c)) throw new Fail("Invalid \\escape", end - 2);
        continue;
      }
      next++;
      end = next + 4;
      if (end >= s.length) throw new Fail("Invalid \\uXXXX escape", next - 1);
      let code = 0;
      for (; next < end; next++) {
        if (!HEX.test(s[next]!)) throw new Fail("Invalid \\uXXXX escape", end - 5);
        code = code * 16 + Number.parseInt(s[next]!, 16);
      }
      if (code >= 0xd800 && code <= 0xdbff && end + 6 < s.length && s[next] === "\\" && s[next + 1] === "u") {
        next += 2;
        end += 6;
        for (; next < end; next++) if (!HEX.test(s[next]!)) throw new Fail("Invalid \\uXXXX escape", end - 5);
      }
    }
  }

  private object(i: number): number {
    const s = this.s;
    i = this.ws(i);
    if (i < s.length && s[i] === "}") return i + 1;
    for (;;) {
      if (i >= s.length || s[i] !== '"')
        throw new Fail("Expecting property name enclosed in double quotes", i);
      i = this.ws(this.string(i + 1));
      if (i >= s.length || s[i] !== ":") throw new Fail("Expecting ':' delimiter", i);
      i = this.ws(this.value(this.ws(i + 1)));
      if (i < s.length && s[i] === "}") return i + 1;
      if (i >= s.length || s[i] !== ",") throw new Fail("Expecting ',' delimiter", i);
      i = this.ws(i + 1);
    }
  }

  private array(i: number): number {
    const s = this.s;
    i = this.ws(i);
    if (i < s.length && s[i] === "]") return i + 1;
    for (;;) {
      i = this.ws(this.value(i));
      if (i < s.length && s[i] === "]") return i + 1;
      if (i >= s.length || s[i] !== ",") throw new Fail("Expecting ',' delimiter", i);
      i = this.ws(i + 1);
    }
  }
}

/** Python's `JSONDecodeError` text: `msg: line L column C (char P)`. */
function located(chars: string[], msg: string, pos: number): string {
  let line = 1;
  let lastNewline = -1;
  for (let k = 0; k < pos && k < chars.length; k++)
    if (chars[k] === "\n") {
      line++;
      lastNewline = k;
    }
  return `${msg}: line ${line} column ${pos - lastNewline} (char ${pos})`;
}

/**
 * The error Python 3.11's `json.loads(text)` raises (with DRF's refusal of NaN and Infinity), e.g.
 * `Expecting ',' delimiter: line 1 column 4 (char 3)`, or undefined when Python would accept `text`.
 */
export function pythonJsonError(text: string): string | undefined {
  const chars = Array.from(text);
  if (chars[0] === "\ufeff") return located(chars, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
  const sc = new Scanner(chars);
  try {
    const end = sc.ws(sc.value(sc.ws(0)));
    return end === chars.length ? undefined : located(chars, "Extra data", end);
  } catch (e) {
    if (e instanceof Fail) return located(chars, e.msg, e.pos);
    if (e instanceof Stop) return located(chars, "Expecting value", e.pos);
    if (e instanceof OutOfRange) return "Out of range float values are not allowed";
    throw e;
  }
}
